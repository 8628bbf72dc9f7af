// JoinGroup (key 11), v0-9.
// v1: rebalance timeout (v0 uses the session timeout). v2: throttle time.
// v4: a new member without an id gets MEMBER_ID_REQUIRED and an id to
// rejoin with (KIP-394). v5: group instance id (static membership, KIP-345).
// v6: flexible. v7: protocol type in the answer. v8: reason. v9: skip
// assignment for a static leader that rejoined without a rebalance.
// Authorization, as Kafka: READ on the group, else GROUP_AUTHORIZATION_FAILED.
import { ErrorCode } from '../protocol/errors.js';
import { JoinGroupApi } from '../protocol/messages/index.js';
import { joinError, UNKNOWN_MEMBER_ID } from '../coordinator/group-types.js';
import { AclOperation } from './authorization.js';
import { routeGroup } from './group-routing.js';
import { defineHandler } from './types.js';

export default defineHandler({
  codec: JoinGroupApi,
  minVersion: 0,
  maxVersion: 9,
  async handle(ctx, request) {
    const respond = (r: ReturnType<typeof joinError>) => ({ throttleTimeMs: 0, ...r });
    const groups = routeGroup(ctx, request.groupId, { operation: AclOperation.READ });
    // Refused by the ACL, the answer names no member (Kafka's KafkaApis); the coordinator's refusals echo the request's.
    if (typeof groups === 'number') return respond(joinError(groups, groups === ErrorCode.GROUP_AUTHORIZATION_FAILED ? UNKNOWN_MEMBER_ID : request.memberId));
    if (!groups.validSessionTimeout(request.sessionTimeoutMs)) return respond(joinError(ErrorCode.INVALID_SESSION_TIMEOUT, request.memberId));
    // A consumer group with members serves the classic member itself (refused while group.consumer.migration.policy is disabled).
    const result = await groups.joinGroup(request.groupId, {
      groupId: request.groupId,
      memberId: request.memberId,
      groupInstanceId: request.groupInstanceId,
      sessionTimeoutMs: request.sessionTimeoutMs,
      rebalanceTimeoutMs: ctx.apiVersion >= 1 && request.rebalanceTimeoutMs > 0 ? request.rebalanceTimeoutMs : request.sessionTimeoutMs,
      protocolType: request.protocolType,
      protocols: request.protocols.map((p) => ({ name: p.name, metadata: Buffer.from(p.metadata) })),
      reason: request.reason,
      clientId: ctx.clientId ?? '',
      clientHost: ctx.clientHost,
      requireKnownMemberId: ctx.apiVersion >= 4,
    });
    if (result.errorCode !== ErrorCode.NONE && result.errorCode !== ErrorCode.MEMBER_ID_REQUIRED) {
      ctx.log.info({ group: request.groupId, memberId: request.memberId, errorCode: result.errorCode }, 'join refused');
    }
    return respond(result);
  },
});
