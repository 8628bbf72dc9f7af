// Heartbeat (key 12), v0-4.
// v1: throttle time. v3: group instance id. v4: flexible.
// REBALANCE_IN_PROGRESS tells a member to rejoin.
// Authorization, as Kafka: READ on the group, else GROUP_AUTHORIZATION_FAILED.
import { isValidGroupId } from '../coordinator/group-types.js';
import { ErrorCode } from '../protocol/errors.js';
import { HeartbeatApi } from '../protocol/messages/index.js';
import { AclOperation, ResourceType, allowed } from './authorization.js';
import { defineHandler } from './types.js';

export default defineHandler({
  codec: HeartbeatApi,
  minVersion: 0,
  maxVersion: 4,
  async handle(ctx, request) {
    if (!allowed(ctx, AclOperation.READ, ResourceType.GROUP, request.groupId)) return { throttleTimeMs: 0, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED };
    if (isValidGroupId(request.groupId) && !ctx.broker.coordination.owns(request.groupId)) return { throttleTimeMs: 0, errorCode: ErrorCode.NOT_COORDINATOR };
    const group = ctx.broker.groups.get(request.groupId);
    const errorCode = group
      ? group.heartbeat(request.memberId, request.groupInstanceId, request.generationId)
      : !isValidGroupId(request.groupId)
        ? ErrorCode.INVALID_GROUP_ID
        : ErrorCode.UNKNOWN_MEMBER_ID;
    return { throttleTimeMs: 0, errorCode };
  },
});
