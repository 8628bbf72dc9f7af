// Classic members inside a KIP-848 consumer group (a mixed group, while a
// group migrates between the protocols), as Kafka's GroupMetadataManager
// serves them (classicGroupJoinToConsumerGroup, classicGroupSyncToConsumerGroup,
// classicGroupHeartbeatToConsumerGroup, classicGroupLeaveToConsumerGroup):
// a JoinGroup is a heartbeat of the consumer protocol made from the member's
// ConsumerProtocolSubscription, its generation is its member epoch, SyncGroup
// hands it its reconciled partitions (the coordinator assigns; nobody leads),
// and Heartbeat answers REBALANCE_IN_PROGRESS when it must rejoin to move on.
import { ErrorCode } from '../protocol/errors.js';
import type { ConsumerGroup, TopicImage } from './consumer-group.js';
import type { ConsumerGroupMember } from './consumer-group-member.js';
import { assignmentBytes, CONSUMER_PROTOCOL_TYPE, protocolVersionOf, subscriptionOf } from './consumer-protocol.js';
import { joinError, syncError, UNKNOWN_MEMBER_ID, type JoinRequest, type JoinResult, type MemberIdentity, type SyncRequest, type SyncResult } from './group-types.js';
import { randomUUID } from 'node:crypto';

/** Kafka's group.consumer.migration.policy. */
export type MigrationPolicy = 'disabled' | 'upgrade' | 'downgrade' | 'bidirectional';

export const upgradeEnabled = (p: MigrationPolicy): boolean => p === 'upgrade' || p === 'bidirectional';
export const downgradeEnabled = (p: MigrationPolicy): boolean => p === 'downgrade' || p === 'bidirectional';

/** The topic names a JoinGroup's subscription names, owned partitions included (for the coordinator's topic look-ups). */
export function joinTopicNames(req: JoinRequest): string[] {
  const subscription = req.protocols[0] ? subscriptionOf(req.protocols[0].metadata) : null;
  return subscription ? [...subscription.topics, ...subscription.ownedPartitions.map((tp) => tp.topic)] : [];
}

/** Kafka's supportsClassicProtocols: the consumer protocol type, and a protocol every classic member supports. */
function supportsClassicProtocols(group: ConsumerGroup, protocolType: string, names: string[]): boolean {
  if (protocolType !== CONSUMER_PROTOCOL_TYPE) return false;
  const classic = [...group.members.values()].filter((m) => m.classic !== null);
  return names.some((name) => classic.every((m) => m.classic!.supportedProtocols.some((p) => p.name === name)));
}

/** JoinGroup from a classic member into a consumer group with members. */
export function classicJoin(group: ConsumerGroup, req: JoinRequest, policy: MigrationPolicy, image: TopicImage, maxSize: number): JoinResult {
  if (policy === 'disabled') return joinError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
  const unknown = req.memberId === UNKNOWN_MEMBER_ID;
  const memberId = unknown ? randomUUID() : req.memberId;
  if (group.numMembers() >= maxSize && !group.hasMember(memberId)) return joinError(ErrorCode.GROUP_MAX_SIZE_REACHED);
  if (
    !supportsClassicProtocols(
      group,
      req.protocolType,
      req.protocols.map((p) => p.name),
    )
  ) {
    return joinError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
  }
  // KIP-394: a new dynamic member is first given its id.
  if (unknown && req.groupInstanceId === null && req.requireKnownMemberId) return joinError(ErrorCode.MEMBER_ID_REQUIRED, memberId);
  const subscription = subscriptionOf(req.protocols[0]!.metadata);
  if (!subscription) return joinError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
  const owned = new Map<string, number[]>();
  for (const tp of subscription.ownedPartitions) {
    const topic = image.byName(tp.topic);
    if (topic) owned.set(topic.topicId, [...(owned.get(topic.topicId) ?? []), ...tp.partitions]);
  }
  const result = group.heartbeat(
    {
      memberId,
      memberEpoch: 0,
      instanceId: req.groupInstanceId,
      rackId: subscription.rackId,
      rebalanceTimeoutMs: req.rebalanceTimeoutMs,
      subscribedTopicNames: subscription.topics,
      subscribedTopicRegex: null,
      serverAssignor: null,
      topicPartitions: [...owned].map(([topicId, partitions]) => ({ topicId, partitions })),
      clientId: req.clientId,
      clientHost: req.clientHost,
      classic: { sessionTimeoutMs: req.sessionTimeoutMs, supportedProtocols: req.protocols },
    },
    image,
  );
  if (result.errorCode !== ErrorCode.NONE) return joinError(result.errorCode);
  group.cancelClassicDeadline('join', memberId);
  group.scheduleClassicDeadline('sync', memberId, req.rebalanceTimeoutMs);
  return {
    errorCode: ErrorCode.NONE,
    generationId: result.memberEpoch,
    protocolType: CONSUMER_PROTOCOL_TYPE,
    protocolName: req.protocols[0]!.name,
    leader: '',
    memberId,
    skipAssignment: false,
    members: [],
  };
}

/** Kafka's validateConsumerGroupMember and throwIfMemberDoesNotUseClassicProtocol: the classic member, or the error code. */
function classicMember(group: ConsumerGroup, memberId: string, instanceId: string | null): ConsumerGroupMember | number {
  let member: ConsumerGroupMember | undefined;
  if (instanceId === null) {
    member = group.members.get(memberId);
  } else {
    member = group.staticMember(instanceId);
    if (member && member.memberId !== memberId) return ErrorCode.FENCED_INSTANCE_ID;
  }
  if (!member || member.classic === null) return ErrorCode.UNKNOWN_MEMBER_ID;
  return member;
}

/** Whether the classic member must rejoin (Kafka's conditions for REBALANCE_IN_PROGRESS on Heartbeat). */
function mustRejoin(group: ConsumerGroup, member: ConsumerGroupMember): boolean {
  return member.memberEpoch < group.groupEpoch || member.state === 'unrevoked_partitions' || (member.state === 'unreleased_partitions' && !group.waitingOnUnreleasedPartition(member));
}

/** SyncGroup from a classic member: its reconciled partitions, as ConsumerProtocolAssignment in its own version. */
export function classicSync(group: ConsumerGroup, req: SyncRequest, nameOf: (topicId: string) => string | null): SyncResult {
  const member = classicMember(group, req.memberId, req.groupInstanceId);
  if (typeof member === 'number') return syncError(member);
  if (req.generationId !== member.memberEpoch) return syncError(ErrorCode.ILLEGAL_GENERATION);
  const protocol = member.classic!.supportedProtocols[0]!;
  if ((req.protocolType !== null && req.protocolType !== CONSUMER_PROTOCOL_TYPE) || (req.protocolName !== null && req.protocolName !== protocol.name)) {
    return syncError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
  }
  // A member revoking partitions has rejoined already: it finishes first.
  if (group.groupEpoch > member.memberEpoch && member.state !== 'unrevoked_partitions') {
    group.scheduleClassicDeadline('join', member.memberId, member.rebalanceTimeoutMs);
    return syncError(ErrorCode.REBALANCE_IN_PROGRESS);
  }
  group.cancelClassicDeadline('sync', member.memberId);
  group.scheduleSessionTimeout(member.memberId);
  const partitions: { topic: string; partitions: number[] }[] = [];
  for (const [topicId, ps] of member.assigned) {
    const topic = nameOf(topicId);
    if (topic !== null) partitions.push({ topic, partitions: [...ps.keys()].sort((a, b) => a - b) });
  }
  return { errorCode: ErrorCode.NONE, protocolType: req.protocolType, protocolName: req.protocolName, assignment: assignmentBytes(protocolVersionOf(protocol.metadata) ?? 0, partitions) };
}

/** Heartbeat from a classic member: NONE, or REBALANCE_IN_PROGRESS when it must rejoin (within its rebalance timeout). */
export function classicHeartbeat(group: ConsumerGroup, memberId: string, instanceId: string | null, generationId: number): number {
  const member = classicMember(group, memberId, instanceId);
  if (typeof member === 'number') return member;
  if (generationId !== member.memberEpoch) return ErrorCode.ILLEGAL_GENERATION;
  group.scheduleSessionTimeout(member.memberId);
  if (!mustRejoin(group, member)) return ErrorCode.NONE;
  group.scheduleClassicDeadline('join', member.memberId, member.rebalanceTimeoutMs);
  return ErrorCode.REBALANCE_IN_PROGRESS;
}

/**
 * LeaveGroup to a consumer group (Kafka's classicGroupLeaveToConsumerGroup):
 * one error code per member, in order (an admin may name a static member by
 * instance id alone); the members found leave together, as one fencing that
 * bumps the group epoch once (or downgrades the group).
 */
export function classicLeave(group: ConsumerGroup, members: MemberIdentity[], image: TopicImage): number[] {
  const leaving = new Map<string, ConsumerGroupMember>();
  const errors = members.map(({ memberId, groupInstanceId }) => {
    let member: ConsumerGroupMember | undefined;
    if (groupInstanceId === null) {
      member = group.members.get(memberId);
    } else {
      member = group.staticMember(groupInstanceId);
      if (member && memberId !== UNKNOWN_MEMBER_ID && member.memberId !== memberId) return ErrorCode.FENCED_INSTANCE_ID;
    }
    if (!member) return ErrorCode.UNKNOWN_MEMBER_ID;
    leaving.set(member.memberId, member);
    return ErrorCode.NONE;
  });
  group.fenceMembers([...leaving.values()], image);
  return errors;
}
