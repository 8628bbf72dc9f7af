// DescribeGroups (key 15), v0-6.
// v1: throttle time. v3: authorized operations. v4: group instance ids.
// v5: flexible. v6: GROUP_ID_NOT_FOUND (and a message) for unknown groups;
// earlier versions describe them as Dead with no error.
import { isValidGroupId } from '../coordinator/group-types.js';
import { ErrorCode } from '../protocol/errors.js';
import { DescribeGroupsApi } from '../protocol/messages/index.js';
import { AclOperation, NOT_REQUESTED, ResourceType, allowed, authorizedOperations } from './authorization.js';
import { defineHandler } from './types.js';

export default defineHandler({
  codec: DescribeGroupsApi,
  minVersion: 0,
  maxVersion: 6,
  async handle(ctx, request) {
    const groups = request.groups.map((groupId) => {
      if (!allowed(ctx, AclOperation.DESCRIBE, ResourceType.GROUP, groupId)) {
        return { groupId, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, errorMessage: null, groupState: '', protocolType: '', protocolData: '', members: [], authorizedOperations: NOT_REQUESTED };
      }
      if (isValidGroupId(groupId) && !ctx.broker.coordination.owns(groupId)) {
        return { groupId, errorCode: ErrorCode.NOT_COORDINATOR, errorMessage: null, groupState: '', protocolType: '', protocolData: '', members: [], authorizedOperations: NOT_REQUESTED };
      }
      const operations = request.includeAuthorizedOperations ? authorizedOperations(ctx, ResourceType.GROUP, groupId) : NOT_REQUESTED;
      const group = ctx.broker.groups.get(groupId);
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
      // Like Kafka, member metadata and the protocol are shown only once the group is Stable; a member's
      // assignment always (during a rebalance, the one it had before, until SyncGroup hands out new ones).
      const stable = group.state === 'Stable';
      return {
        groupId,
        errorCode: ErrorCode.NONE,
        groupState: group.state,
        protocolType: group.protocolType ?? '',
        protocolData: stable ? (group.protocolName ?? '') : '',
        members: [...group.members.values()].map((m) => ({
          memberId: m.memberId,
          groupInstanceId: m.groupInstanceId,
          clientId: m.clientId,
          clientHost: m.clientHost,
          memberMetadata: stable ? (m.protocols.find((p) => p.name === group.protocolName)?.metadata ?? Buffer.alloc(0)) : Buffer.alloc(0),
          memberAssignment: m.assignment,
        })),
        authorizedOperations: operations,
      };
    });
    return { throttleTimeMs: 0, groups };
  },
});
