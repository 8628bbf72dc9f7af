// Heartbeat (key 12), v0-4.
// v1: throttle time. v3: group instance id. v4: flexible.
// REBALANCE_IN_PROGRESS tells a member to rejoin.
// Authorization, as Kafka: READ on the group, else GROUP_AUTHORIZATION_FAILED.
import { HeartbeatApi } from '../protocol/messages/index.js';
import { AclOperation } from './authorization.js';
import { routeGroup } from './group-routing.js';
import { defineHandler } from './types.js';

export default defineHandler({
  codec: HeartbeatApi,
  minVersion: 0,
  maxVersion: 4,
  async handle(ctx, request) {
    const groups = routeGroup(ctx, request.groupId, { operation: AclOperation.READ });
    if (typeof groups === 'number') return { throttleTimeMs: 0, errorCode: groups };
    return { throttleTimeMs: 0, errorCode: groups.heartbeatGroup(request.groupId, request.memberId, request.groupInstanceId, request.generationId) };
  },
});
