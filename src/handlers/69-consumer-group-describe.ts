// ConsumerGroupDescribe (key 69), v0-1: KIP-848 consumer groups, with each
// member's current and target assignment. v1: each member's type (KIP-1099).
// Authorization, as Kafka's KafkaApis: DESCRIBE on each group (refused ones
// are answered first, GROUP_AUTHORIZATION_FAILED), then DESCRIBE on every
// topic a described assignment names, else the whole group is
// TOPIC_AUTHORIZATION_FAILED.
import { ErrorCode } from '../protocol/errors.js';
import { ConsumerGroupDescribeApi, type ConsumerGroupDescribeResponseDescribedGroup } from '../protocol/messages/index.js';
import { AclOperation, NOT_REQUESTED, ResourceType, allowed, authorizedOperations } from './authorization.js';
import { routeGroup } from './group-routing.js';
import { defineHandler } from './types.js';

const failed = (groupId: string, errorCode: number, errorMessage: string | null = null): ConsumerGroupDescribeResponseDescribedGroup => ({
  errorCode,
  errorMessage,
  groupId,
  groupState: '',
  groupEpoch: 0,
  assignmentEpoch: 0,
  assignorName: '',
  members: [],
  authorizedOperations: NOT_REQUESTED,
});

export default defineHandler({
  codec: ConsumerGroupDescribeApi,
  minVersion: 0,
  maxVersion: 1,
  async handle(ctx, request) {
    // As Kafka's KafkaApis: without `consumer` in group.coordinator.rebalance.protocols, every group is answered UNSUPPORTED_VERSION.
    if (!ctx.broker.groups.settings.consumerProtocolEnabled) return { throttleTimeMs: 0, groups: request.groupIds.map((id) => failed(id, ErrorCode.UNSUPPORTED_VERSION)) };
    const refused: ConsumerGroupDescribeResponseDescribedGroup[] = [];
    const described: ConsumerGroupDescribeResponseDescribedGroup[] = [];
    for (const groupId of request.groupIds) {
      if (!allowed(ctx, AclOperation.DESCRIBE, ResourceType.GROUP, groupId)) {
        refused.push(failed(groupId, ErrorCode.GROUP_AUTHORIZATION_FAILED));
        continue;
      }
      const groups = routeGroup(ctx, groupId, { operation: null, invalidGroupId: 'notFound' });
      if (typeof groups === 'number') {
        described.push(failed(groupId, groups));
        continue;
      }
      const group = await groups.describeConsumerGroup(groupId);
      const topics = new Set(group.members.flatMap((m) => [...m.assignment.topicPartitions, ...m.targetAssignment.topicPartitions].map((tp) => tp.topicName)));
      if ([...topics].some((t) => !allowed(ctx, AclOperation.DESCRIBE, ResourceType.TOPIC, t))) {
        described.push(failed(groupId, ErrorCode.TOPIC_AUTHORIZATION_FAILED, 'The group has described topic(s) that the client is not authorized to describe.'));
        continue;
      }
      const operations = request.includeAuthorizedOperations && group.errorCode === ErrorCode.NONE ? authorizedOperations(ctx, ResourceType.GROUP, groupId) : NOT_REQUESTED;
      described.push({ ...group, authorizedOperations: operations });
    }
    return { throttleTimeMs: 0, groups: [...refused, ...described] };
  },
});
