// ConsumerGroupDescribe's view of a consumer group (Kafka's
// ConsumerGroup.asDescribedGroup): its epochs, assignor and state, and each
// member's subscription, current assignment (pending revocations included:
// the member is responsible for them until it revokes them) and target.
import type { ConsumerGroupDescribeResponseDescribedGroup, ConsumerGroupDescribeResponseTopicPartitions } from '../protocol/messages/index.js';
import { ErrorCode } from '../protocol/errors.js';
import { DEFAULT_ASSIGNOR } from './consumer-assignors.js';
import type { ConsumerGroup } from './consumer-group.js';

/** Topic id → partitions, named; topics that no longer exist are left out, as Kafka does. */
function named(partitions: Map<string, Iterable<number>>, nameOf: (topicId: string) => string | null): ConsumerGroupDescribeResponseTopicPartitions[] {
  const out: ConsumerGroupDescribeResponseTopicPartitions[] = [];
  for (const [topicId, ps] of partitions) {
    const topicName = nameOf(topicId);
    if (topicName !== null) out.push({ topicId, topicName, partitions: [...ps].sort((a, b) => a - b) });
  }
  return out;
}

export function describeConsumerGroup(group: ConsumerGroup, nameOf: (topicId: string) => string | null): Omit<ConsumerGroupDescribeResponseDescribedGroup, 'authorizedOperations'> {
  return {
    errorCode: ErrorCode.NONE,
    errorMessage: null,
    groupId: group.groupId,
    groupState: group.stateAsString(),
    groupEpoch: group.groupEpoch,
    assignmentEpoch: group.assignmentEpoch,
    assignorName: group.preferredServerAssignor() ?? DEFAULT_ASSIGNOR,
    members: [...group.members.values()].map((m) => {
      const current = new Map<string, Set<number>>();
      for (const source of [m.assigned, m.pendingRevocation]) {
        for (const [t, ps] of source) {
          const into = current.get(t) ?? new Set<number>();
          for (const p of ps.keys()) into.add(p);
          current.set(t, into);
        }
      }
      return {
        memberId: m.memberId,
        instanceId: m.instanceId,
        rackId: m.rackId,
        memberEpoch: m.memberEpoch,
        clientId: m.clientId,
        clientHost: m.clientHost,
        subscribedTopicNames: m.subscribedTopicNames,
        subscribedTopicRegex: m.subscribedTopicRegex,
        assignment: { topicPartitions: named(current, nameOf) },
        targetAssignment: { topicPartitions: named(group.targetOf(m.memberId), nameOf) },
        // 1: the member speaks the consumer protocol, 0: a classic member of a mixed group.
        memberType: m.classic === null ? 1 : 0,
      };
    }),
  };
}
