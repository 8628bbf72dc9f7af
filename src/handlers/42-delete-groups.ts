// DeleteGroups (key 42), v0-2.
// v2: flexible. Only an empty group can be deleted (NON_EMPTY_GROUP otherwise);
// its committed offsets go with it.
// A group named more than once is handled once and answered once (Kafka's
// KafkaApis.handleDeleteGroupsRequest takes the distinct ids, first
// occurrence first).
// Authorization, as Kafka: DELETE on each group; the others answer
// GROUP_AUTHORIZATION_FAILED, listed after the results of the deletable ones.
import { isValidGroupId } from '../coordinator/group-types.js';
import { ErrorCode } from '../protocol/errors.js';
import { DeleteGroupsApi } from '../protocol/messages/index.js';
import { AclOperation, ResourceType } from './authorization.js';
import { authorizedNames } from './authorized-names.js';
import { defineHandler } from './types.js';

export default defineHandler({
  codec: DeleteGroupsApi,
  minVersion: 0,
  maxVersion: 2,
  async handle(ctx, request) {
    const groupIds = [...new Set(request.groupsNames)];
    const deletable = authorizedNames(ctx, AclOperation.DELETE, ResourceType.GROUP, groupIds);
    const results = [];
    const refused = [];
    for (const groupId of groupIds) {
      if (!deletable.has(groupId)) {
        refused.push({ groupId, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED });
        continue;
      }
      const errorCode = !isValidGroupId(groupId)
        ? ErrorCode.INVALID_GROUP_ID
        : !ctx.broker.coordination.owns(groupId)
          ? ErrorCode.NOT_COORDINATOR
          : await ctx.broker.groups.deleteGroup(groupId);
      if (errorCode === ErrorCode.NONE) ctx.log.info({ group: groupId }, 'deleted group');
      results.push({ groupId, errorCode });
    }
    return { throttleTimeMs: 0, results: [...results, ...refused] };
  },
});
