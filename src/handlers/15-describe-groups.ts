// DescribeGroups (key 15), v0-6.
// v1: throttle time. v3: authorized operations. v4: group instance ids.
// v5: flexible. v6: GROUP_ID_NOT_FOUND (and a message) for unknown groups;
// earlier versions describe them as Dead with no error.
import { ErrorCode } from '../protocol/errors.js';
import { DescribeGroupsApi } from '../protocol/messages/index.js';
import { AclOperation, NOT_REQUESTED, ResourceType, authorizedOperations } from './authorization.js';
import { routeGroup } from './group-routing.js';
import { defineHandler } from './types.js';

export default defineHandler({
  codec: DescribeGroupsApi,
  minVersion: 0,
  maxVersion: 6,
  async handle(ctx, request) {
    const described = request.groups.map((groupId) => {
      const groups = routeGroup(ctx, groupId, { operation: AclOperation.DESCRIBE, invalidGroupId: 'notFound' });
      if (typeof groups === 'number') {
        return { groupId, errorCode: groups, errorMessage: null, groupState: '', protocolType: '', protocolData: '', members: [], authorizedOperations: NOT_REQUESTED };
      }
      const operations = request.includeAuthorizedOperations ? authorizedOperations(ctx, ResourceType.GROUP, groupId) : NOT_REQUESTED;
      const group = groups.get(groupId);
      if (!group) {
        const notFound = ctx.apiVersion >= 6;
        return {
          groupId,
          // The empty group id is described like any unknown group, as Kafka's coordinator does.
          errorCode: notFound ? ErrorCode.GROUP_ID_NOT_FOUND : ErrorCode.NONE,
          errorMessage: notFound ? `Group ${groupId} not found.` : null,
          groupState: 'Dead',
          protocolType: '',
          protocolData: '',
          members: [],
          authorizedOperations: operations,
        };
      }
      const description = group.describe();
      // A group of another type is not found (v6+) or Dead (before), as an unknown group.
      if (description.errorCode === ErrorCode.GROUP_ID_NOT_FOUND && ctx.apiVersion < 6)
        return { groupId, ...description, errorCode: ErrorCode.NONE, errorMessage: null, authorizedOperations: operations };
      return { groupId, ...description, authorizedOperations: operations };
    });
    return { throttleTimeMs: 0, groups: described };
  },
});
