// LeaveGroup (key 13), v0-5.
// v1: throttle time. v3: a batch of members, by member id or group instance
// id, each with its own error (KIP-345). v4: flexible. v5: reason.
// Authorization, as Kafka: READ on the group, else GROUP_AUTHORIZATION_FAILED
// as the request's error (no member results).
import { ErrorCode } from '../protocol/errors.js';
import { LeaveGroupApi } from '../protocol/messages/index.js';
import { AclOperation } from './authorization.js';
import { routeGroup } from './group-routing.js';
import { defineHandler } from './types.js';

export default defineHandler({
  codec: LeaveGroupApi,
  minVersion: 0,
  maxVersion: 5,
  async handle(ctx, request) {
    const groups = routeGroup(ctx, request.groupId, { operation: AclOperation.READ });
    if (typeof groups === 'number') return { throttleTimeMs: 0, errorCode: groups, members: [] };
    const batched = ctx.apiVersion >= 3;
    const members = batched ? request.members.map((m) => ({ memberId: m.memberId, groupInstanceId: m.groupInstanceId })) : [{ memberId: request.memberId, groupInstanceId: null }];
    const errors = await groups.leaveGroup(request.groupId, members);
    if (!errors) {
      // Kafka answers a group it does not know as if none of the members were in it.
      if (!batched) return { throttleTimeMs: 0, errorCode: ErrorCode.UNKNOWN_MEMBER_ID };
      return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, members: members.map((m) => ({ ...m, errorCode: ErrorCode.UNKNOWN_MEMBER_ID })) };
    }
    ctx.log.info({ group: request.groupId, members: members.map((m) => m.groupInstanceId ?? m.memberId), errors }, 'members left');
    if (!batched) return { throttleTimeMs: 0, errorCode: errors[0]! };
    return {
      throttleTimeMs: 0,
      errorCode: ErrorCode.NONE,
      members: members.map((m, i) => ({ memberId: m.memberId, groupInstanceId: m.groupInstanceId, errorCode: errors[i]! })),
    };
  },
});
