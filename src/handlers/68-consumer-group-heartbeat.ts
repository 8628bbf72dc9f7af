// ConsumerGroupHeartbeat (key 68), v0-1: KIP-848's consumer group protocol.
// v1: SubscribedTopicRegex (an RE2/J pattern: INVALID_REGULAR_EXPRESSION when it
// does not compile; see coordinator/consumer-group-regex.ts), and the member id is the client's own (KIP-1082:
// an empty one is INVALID_REQUEST at every epoch).
// Checks in Kafka's order: READ on the group (KafkaApis), DESCRIBE on every
// subscribed topic (TOPIC_AUTHORIZATION_FAILED), the request's shape
// (GroupCoordinatorService: INVALID_REQUEST, UNSUPPORTED_ASSIGNOR), then the
// group's coordinator.
import { ASSIGNORS } from '../coordinator/consumer-assignors.js';
import { heartbeatError } from '../coordinator/consumer-group.js';
import { ErrorCode } from '../protocol/errors.js';
import { ConsumerGroupHeartbeatApi, type ConsumerGroupHeartbeatRequest } from '../protocol/messages/index.js';
import { AclOperation, ResourceType, allowed } from './authorization.js';
import { routeGroup } from './group-routing.js';
import { defineHandler } from './types.js';

const LEAVE_GROUP_MEMBER_EPOCH = -1;
const LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2;
/** From this version the consumer generates its member id (KIP-1082). */
const CONSUMER_GENERATED_MEMBER_ID_REQUIRED_VERSION = 1;

/** Kafka's throwIfConsumerGroupHeartbeatRequestIsInvalid: the error code and message, or null. */
function invalidRequest(r: ConsumerGroupHeartbeatRequest, apiVersion: number): [number, string] | null {
  const invalid = (message: string): [number, string] => [ErrorCode.INVALID_REQUEST, message];
  if ((apiVersion >= CONSUMER_GENERATED_MEMBER_ID_REQUIRED_VERSION || r.memberEpoch > 0 || r.memberEpoch === LEAVE_GROUP_MEMBER_EPOCH) && r.memberId.trim() === '') {
    return invalid("MemberId can't be empty.");
  }
  if (r.groupId.trim() === '') return invalid("GroupId can't be empty.");
  if (r.instanceId !== null && r.instanceId.trim() === '') return invalid("InstanceId can't be empty.");
  if (r.rackId !== null && r.rackId.trim() === '') return invalid("RackId can't be empty.");
  if (r.memberEpoch === 0) {
    if (r.rebalanceTimeoutMs === -1) return invalid('RebalanceTimeoutMs must be provided in first request.');
    if (r.topicPartitions === null || r.topicPartitions.length > 0) return invalid('TopicPartitions must be empty when (re-)joining.');
    if (r.subscribedTopicNames === null && r.subscribedTopicRegex === null) return invalid('Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining.');
  } else if (r.memberEpoch === LEAVE_GROUP_STATIC_MEMBER_EPOCH) {
    if (r.instanceId === null) return invalid("InstanceId can't be null.");
  } else if (r.memberEpoch < LEAVE_GROUP_STATIC_MEMBER_EPOCH) {
    return invalid('MemberEpoch is invalid.');
  }
  if (r.serverAssignor !== null && !ASSIGNORS.has(r.serverAssignor)) {
    return [ErrorCode.UNSUPPORTED_ASSIGNOR, `ServerAssignor ${r.serverAssignor} is not supported. Supported assignors: ${[...ASSIGNORS.keys()].join(', ')}.`];
  }
  return null;
}

export default defineHandler({
  codec: ConsumerGroupHeartbeatApi,
  minVersion: 0,
  maxVersion: 1,
  async handle(ctx, request) {
    const respond = (r: ReturnType<typeof heartbeatError>) => ({ throttleTimeMs: 0, ...r, assignment: r.assignment === null ? null : { topicPartitions: r.assignment } });
    // As Kafka's KafkaApis: without `consumer` in group.coordinator.rebalance.protocols, before any other check.
    if (!ctx.broker.groups.settings.consumerProtocolEnabled) return respond(heartbeatError(ErrorCode.UNSUPPORTED_VERSION, null));
    if (!allowed(ctx, AclOperation.READ, ResourceType.GROUP, request.groupId)) return respond(heartbeatError(ErrorCode.GROUP_AUTHORIZATION_FAILED, null));
    const names = request.subscribedTopicNames ?? [];
    if (names.some((t) => !allowed(ctx, AclOperation.DESCRIBE, ResourceType.TOPIC, t))) return respond(heartbeatError(ErrorCode.TOPIC_AUTHORIZATION_FAILED, null));
    const invalid = invalidRequest(request, ctx.apiVersion);
    if (invalid) return respond(heartbeatError(invalid[0], invalid[1]));
    // Authorized above: the routing checks only the group id and this broker's slot.
    const groups = routeGroup(ctx, request.groupId, { operation: null });
    if (typeof groups === 'number') return respond(heartbeatError(groups, null));
    const result = await groups.consumerGroupHeartbeat(request.groupId, {
      memberId: request.memberId,
      memberEpoch: request.memberEpoch,
      instanceId: request.instanceId,
      rackId: request.rackId,
      rebalanceTimeoutMs: request.rebalanceTimeoutMs,
      subscribedTopicNames: request.subscribedTopicNames,
      subscribedTopicRegex: request.subscribedTopicRegex,
      serverAssignor: request.serverAssignor,
      topicPartitions: request.topicPartitions?.map((tp) => ({ topicId: tp.topicId, partitions: tp.partitions })) ?? null,
      clientId: ctx.clientId ?? '',
      clientHost: ctx.clientHost,
      // A regular expression resolves to the topics this member may describe (KIP-848), checked as its heartbeat's principal.
      describableTopics: (topics) => new Set(topics.filter((t) => allowed(ctx, AclOperation.DESCRIBE, ResourceType.TOPIC, t))),
    });
    return respond(result);
  },
});
