// Heartbeat (key 12), v0-4.
// v1: throttle time. v3: group instance id. v4: flexible.
// REBALANCE_IN_PROGRESS tells a member to rejoin.
import { isValidGroupId } from '../coordinator/group-types.js';
import { ErrorCode } from '../protocol/errors.js';
import { HeartbeatApi } from '../protocol/messages/index.js';
import { defineHandler } from './types.js';

export default defineHandler({
  codec: HeartbeatApi,
  minVersion: 0,
  maxVersion: 4,
  async handle(ctx, request) {
    const group = ctx.broker.groups.get(request.groupId);
    const errorCode = group
      ? group.heartbeat(request.memberId, request.groupInstanceId, request.generationId)
      : !isValidGroupId(request.groupId)
        ? ErrorCode.INVALID_GROUP_ID
        : ErrorCode.UNKNOWN_MEMBER_ID;
    return { throttleTimeMs: 0, errorCode };
  },
});
