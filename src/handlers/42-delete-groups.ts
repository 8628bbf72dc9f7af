// DeleteGroups (key 42), v0-2.
// v2: flexible. Only an empty group can be deleted (NON_EMPTY_GROUP otherwise);
// its committed offsets go with it.
import { isValidGroupId } from '../coordinator/group-types.js';
import { ErrorCode } from '../protocol/errors.js';
import { DeleteGroupsApi } from '../protocol/messages/index.js';
import { defineHandler } from './types.js';

export default defineHandler({
  codec: DeleteGroupsApi,
  minVersion: 0,
  maxVersion: 2,
  async handle(ctx, request) {
    const results = [];
    for (const groupId of request.groupsNames) {
      const errorCode = !isValidGroupId(groupId) ? ErrorCode.INVALID_GROUP_ID : await ctx.broker.groups.deleteGroup(groupId);
      if (errorCode === ErrorCode.NONE) ctx.log.info({ group: groupId }, 'deleted group');
      results.push({ groupId, errorCode });
    }
    return { throttleTimeMs: 0, results };
  },
});
