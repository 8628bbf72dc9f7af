// DeleteGroups (key 42), v0-2.
// v2: flexible. Only an empty group can be deleted (NON_EMPTY_GROUP otherwise);
// its committed offsets go with it.
// A group named more than once is handled once and answered once (Kafka's
// KafkaApis.handleDeleteGroupsRequest takes the distinct ids, first
// occurrence first). The empty group id is looked up like any other, as
// Kafka 4's coordinator does "for backwards compatibility" (no group can be
// created under it here, so it answers GROUP_ID_NOT_FOUND).
// Authorization, as Kafka: DELETE on each group; the others answer
// GROUP_AUTHORIZATION_FAILED, listed after the results of the deletable ones.
import { ErrorCode } from '../protocol/errors.js';
import { DeleteGroupsApi } from '../protocol/messages/index.js';
import { AclOperation, ResourceType } from './authorization.js';
import { authorizedNames } from './authorized-names.js';
import { routeGroup } from './group-routing.js';
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
      const groups = routeGroup(ctx, groupId, { operation: null, invalidGroupId: 'lookUp' });
      const errorCode = typeof groups === 'number' ? groups : await groups.deleteGroup(groupId);
      if (errorCode === ErrorCode.NONE) ctx.log.info({ group: groupId }, 'deleted group');
      results.push({ groupId, errorCode });
    }
    return { throttleTimeMs: 0, results: [...results, ...refused] };
  },
});
