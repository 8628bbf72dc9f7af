// Online migration of a group between the classic and the consumer protocol,
// as Kafka's ConsumerGroup.fromClassicGroup and ClassicGroup.fromConsumerGroup:
// a classic group a consumer-protocol member joins becomes a consumer group
// whose members keep their generation as member epoch and their last
// assignment as current and target; a consumer group whose last
// consumer-protocol member leaves becomes a classic group again, Stable at
// the group epoch with each member's target as its assignment, and
// rebalances. Both produce the group's stored form, which the coordinator
// restores into the new group object, so the conversion is also what is
// written to PostgreSQL.
import type { StoredClassicGroup, StoredConsumerGroup, StoredPartitionEpochs } from '../storage/pg/group-codec.js';
import type { ClassicGroup } from './classic-group.js';
import type { ConsumerGroup } from './consumer-group.js';
import { assignmentBytes, assignmentOf, CONSUMER_PROTOCOL_TYPE, protocolVersionOf, subscriptionOf } from './consumer-protocol.js';
import { selectProtocol } from './group-protocols.js';
import type { Member } from './group-types.js';

/** Why an upgrade is refused (Kafka answers GROUP_ID_NOT_FOUND with this message), or null. */
export function upgradeRefusal(classic: ClassicGroup, upgradeAllowed: boolean, consumerMaxSize: number): string | null {
  const id = classic.groupId;
  if (!upgradeAllowed) return `Cannot upgrade classic group ${id} to consumer group because online upgrade is disabled.`;
  if (classic.protocolType !== CONSUMER_PROTOCOL_TYPE) return `Cannot upgrade classic group ${id} to consumer group because the group does not use the consumer embedded protocol.`;
  if (classic.numMembers() > consumerMaxSize) return `Cannot upgrade classic group ${id} to consumer group because the group size exceeds the consumer group maximum size.`;
  return null;
}

/** The topic names a classic group's members subscribe to or are assigned (for the coordinator's topic look-ups). */
export function classicGroupTopicNames(classic: ClassicGroup): string[] {
  const names: string[] = [];
  for (const m of classic.members.values()) {
    const metadata = m.protocols.find((p) => p.name === classic.protocolName)?.metadata;
    names.push(...(metadata ? (subscriptionOf(metadata)?.topics ?? []) : []));
    names.push(...(assignmentOf(m.assignment)?.assignedPartitions.map((tp) => tp.topic) ?? []));
  }
  return names;
}

/**
 * Kafka's ConsumerGroup.fromClassicGroup, as the stored consumer group, or
 * the message Kafka refuses the upgrade with (GROUP_ID_NOT_FOUND): a
 * subscription or assignment that does not decode, or an assignment carrying
 * a custom assignor's user data, which the consumer protocol would lose.
 */
export function consumerGroupFromClassic(classic: ClassicGroup, topicIdOf: (name: string) => string | null): StoredConsumerGroup | string {
  const id = classic.groupId;
  const malformed = `Cannot upgrade classic group ${id} to consumer group because the embedded consumer protocol is malformed.`;
  const generation = classic.generationId;
  const members: StoredConsumerGroup['members'] = [];
  for (const m of classic.members.values()) {
    const assignment = assignmentOf(m.assignment);
    const metadata = m.protocols.find((p) => p.name === classic.protocolName)?.metadata;
    const subscription = metadata ? subscriptionOf(metadata) : null;
    if (!assignment || !subscription) return malformed;
    if (assignment.userData !== null && assignment.userData.length > 0) {
      return `Cannot upgrade classic group ${id} to consumer group because an unsupported custom assignor is in use. Please refer to the documentation or switch to a default assignor before re-attempting the upgrade.`;
    }
    const assigned: StoredPartitionEpochs = {};
    const target: Record<string, number[]> = {};
    for (const tp of assignment.assignedPartitions) {
      const topicId = topicIdOf(tp.topic);
      if (topicId === null) continue;
      assigned[topicId] = { ...assigned[topicId], ...Object.fromEntries(tp.partitions.map((p) => [String(p), generation])) };
      target[topicId] = [...(target[topicId] ?? []), ...tp.partitions].sort((a, b) => a - b);
    }
    members.push({
      memberId: m.memberId,
      instanceId: m.groupInstanceId,
      rackId: subscription.rackId,
      clientId: m.clientId,
      clientHost: m.clientHost,
      rebalanceTimeoutMs: m.rebalanceTimeoutMs,
      subscribedTopicNames: subscription.topics,
      subscribedTopicRegex: '',
      serverAssignor: null,
      memberEpoch: generation,
      previousMemberEpoch: generation,
      state: 'stable',
      assigned,
      pendingRevocation: {},
      target,
      classic: { sessionTimeoutMs: m.sessionTimeoutMs, supportedProtocols: m.protocols.map((p) => ({ name: p.name, metadata: p.metadata.toString('base64') })) },
    });
  }
  return {
    type: 'consumer',
    groupId: id,
    groupEpoch: generation,
    assignmentEpoch: generation,
    assignmentTimestamp: 0,
    state: 'Stable',
    stateSince: new Date(),
    // Resolved by the heartbeat that triggered the upgrade, which then bumps the group epoch.
    subscriptionMetadata: {},
    // Classic members subscribe by topic names only.
    resolvedRegularExpressions: {},
    members,
  };
}

/**
 * Kafka's ClassicGroup.fromConsumerGroup, as the stored classic group: every
 * member but the leaving ones, Stable at the group epoch, each with its target
 * partitions as its assignment (in the version of its own subscription); null
 * when a member's subscription does not decode.
 */
export function classicGroupFromConsumer(group: ConsumerGroup, leavingMemberIds: ReadonlySet<string>, nameOf: (topicId: string) => string | null): StoredClassicGroup | null {
  const members: Member[] = [];
  for (const m of group.members.values()) {
    if (leavingMemberIds.has(m.memberId) || m.classic === null) continue;
    members.push({
      memberId: m.memberId,
      groupInstanceId: m.instanceId,
      clientId: m.clientId,
      clientHost: m.clientHost,
      sessionTimeoutMs: m.classic.sessionTimeoutMs,
      rebalanceTimeoutMs: m.rebalanceTimeoutMs,
      protocols: m.classic.supportedProtocols,
      assignment: Buffer.alloc(0),
      awaitingJoin: null,
      awaitingSync: null,
      isNew: false,
      heartbeatTimer: null,
    });
  }
  if (members.length === 0) return null;
  const protocolName = selectProtocol(members);
  for (const m of members) {
    const version = protocolVersionOf(m.protocols.find((p) => p.name === protocolName)?.metadata ?? Buffer.alloc(0));
    if (version === null) return null;
    const partitions = [...group.targetOf(m.memberId)].flatMap(([topicId, ps]) => {
      const topic = nameOf(topicId);
      return topic === null ? [] : [{ topic, partitions: [...ps].sort((a, b) => a - b) }];
    });
    m.assignment = assignmentBytes(version, partitions);
  }
  return {
    type: 'classic',
    groupId: group.groupId,
    protocolType: CONSUMER_PROTOCOL_TYPE,
    protocolName,
    generation: group.groupEpoch,
    leaderId: members[0]!.memberId,
    state: 'Stable',
    stateSince: new Date(),
    members: members.map((m) => ({
      memberId: m.memberId,
      groupInstanceId: m.groupInstanceId,
      clientId: m.clientId,
      clientHost: m.clientHost,
      sessionTimeoutMs: m.sessionTimeoutMs,
      rebalanceTimeoutMs: m.rebalanceTimeoutMs,
      protocols: m.protocols,
      assignment: m.assignment,
    })),
  };
}
