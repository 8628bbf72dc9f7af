// A member of a KIP-848 consumer group and how its assignment converges on
// the target, as Kafka's ConsumerGroupMember and CurrentAssignmentBuilder:
// a member first gives up (revokes) what the target takes from it, staying
// at its epoch; once it no longer reports those partitions it moves to the
// target epoch and is given the target's partitions that no other member
// still holds (those wait: UNRELEASED_PARTITIONS). So a partition is never
// handed to a member before its previous owner has revoked it.

/** Topic id → partition → the epoch at which the member was given it. */
export type PartitionEpochs = Map<string, Map<number, number>>;

/** What a member that joined with the classic protocol (JoinGroup) said of itself: Kafka's ClassicMemberMetadata. */
export interface ClassicMemberMetadata {
  sessionTimeoutMs: number;
  /** The JoinGroup protocols (assignor name and ConsumerProtocolSubscription bytes), in the member's order of preference. */
  supportedProtocols: { name: string; metadata: Buffer }[];
}

/** Kafka's MemberState. */
export type MemberState = 'stable' | 'unrevoked_partitions' | 'unreleased_partitions';

export interface ConsumerGroupMember {
  memberId: string;
  instanceId: string | null;
  rackId: string | null;
  clientId: string;
  clientHost: string;
  rebalanceTimeoutMs: number;
  subscribedTopicNames: string[];
  subscribedTopicRegex: string | null;
  serverAssignor: string | null;
  memberEpoch: number;
  previousMemberEpoch: number;
  state: MemberState;
  /** Partitions the member owns and may consume. */
  assigned: PartitionEpochs;
  /** Partitions the member must give up before it moves on. */
  pendingRevocation: PartitionEpochs;
  /** Set for a member that speaks the classic protocol inside this consumer group (a mixed group); null for a consumer-protocol member. */
  classic: ClassicMemberMetadata | null;
}

export const LEAVE_GROUP_MEMBER_EPOCH = -1;
export const LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2;

export function newMember(memberId: string): ConsumerGroupMember {
  return {
    memberId,
    instanceId: null,
    rackId: null,
    clientId: '',
    clientHost: '',
    rebalanceTimeoutMs: -1,
    subscribedTopicNames: [],
    // Kafka's member starts with an empty regex (ConsumerGroupDescribe shows "" for a member that sent none).
    subscribedTopicRegex: '',
    serverAssignor: null,
    memberEpoch: 0,
    previousMemberEpoch: 0,
    state: 'stable',
    assigned: new Map(),
    pendingRevocation: new Map(),
    classic: null,
  };
}

export const isReconciledTo = (m: ConsumerGroupMember, targetEpoch: number): boolean => m.state === 'stable' && m.memberEpoch === targetEpoch;

/** The member's partitions as topic id → partitions (what the heartbeat response names). */
export function partitionsOf(epochs: PartitionEpochs): Map<string, number[]> {
  return new Map([...epochs].map(([t, ps]) => [t, [...ps.keys()].sort((a, b) => a - b)]));
}

export function sameAssigned(a: PartitionEpochs, b: PartitionEpochs): boolean {
  if (a.size !== b.size) return false;
  for (const [t, ps] of a) {
    const other = b.get(t);
    if (!other || other.size !== ps.size) return false;
    for (const p of ps.keys()) if (!other.has(p)) return false;
  }
  return true;
}

/** What the member reported owning in the heartbeat (null: not sent, so unknown). */
export type OwnedPartitions = { topicId: string; partitions: number[] }[] | null;

/** Whether the owned partitions are a subset of the assigned ones (Kafka's isSubset, for a lost response). */
export function ownedIsSubset(owned: OwnedPartitions, assigned: PartitionEpochs): boolean {
  if (owned === null) return false;
  return owned.every((tp) => tp.partitions.every((p) => assigned.get(tp.topicId)?.has(p) ?? false));
}

function ownsAnyOf(owned: OwnedPartitions, partitions: PartitionEpochs): boolean {
  // Without the owned partitions, the coordinator cannot know they were revoked.
  if (owned === null) return true;
  return owned.some((tp) => tp.partitions.some((p) => partitions.get(tp.topicId)?.has(p) ?? false));
}

export interface ReconcileInput {
  targetEpoch: number;
  /** The member's partitions in the target assignment. */
  target: ReadonlyMap<string, ReadonlySet<number>>;
  /** The topic ids the member's subscription resolves to now. */
  subscribedTopicIds: ReadonlySet<string>;
  hasSubscriptionChanged: boolean;
  /** The epoch of the member that holds the partition (assigned or pending revocation), -1 for none. */
  currentPartitionEpoch: (topicId: string, partition: number) => number;
  owned: OwnedPartitions;
}

const withEpoch = (m: ConsumerGroupMember, epoch: number): Pick<ConsumerGroupMember, 'memberEpoch' | 'previousMemberEpoch'> => ({ memberEpoch: epoch, previousMemberEpoch: m.memberEpoch });

/** Kafka's CurrentAssignmentBuilder.build: the member one step closer to the target (or unchanged). */
export function reconcile(member: ConsumerGroupMember, input: ReconcileInput): ConsumerGroupMember {
  switch (member.state) {
    case 'stable':
      if (member.memberEpoch !== input.targetEpoch) return computeNextAssignment(member, input);
      if (input.hasSubscriptionChanged) return updateCurrentAssignment(member, input);
      return member;
    case 'unrevoked_partitions':
      if (ownsAnyOf(input.owned, member.pendingRevocation)) return input.hasSubscriptionChanged ? updateCurrentAssignment(member, input) : member;
      return computeNextAssignment(member, input);
    case 'unreleased_partitions':
      return computeNextAssignment(member, input);
  }
}

/** The subscription changed without a new target: partitions of topics no longer subscribed are revoked. */
function updateCurrentAssignment(member: ConsumerGroupMember, input: ReconcileInput): ConsumerGroupMember {
  const assigned: PartitionEpochs = new Map();
  const pending: PartitionEpochs = new Map([...member.pendingRevocation].map(([t, ps]) => [t, new Map(ps)]));
  let removed = false;
  for (const [t, ps] of member.assigned) {
    if (input.subscribedTopicIds.has(t)) {
      assigned.set(t, ps);
    } else {
      removed = true;
      const into = pending.get(t) ?? new Map<number, number>();
      for (const [p, e] of ps) into.set(p, e);
      pending.set(t, into);
    }
  }
  if (!removed) return member;
  if (pending.size > 0 && ownsAnyOf(input.owned, pending)) {
    return { ...member, state: 'unrevoked_partitions', ...withEpoch(member, member.memberEpoch), assigned, pendingRevocation: pending };
  }
  return { ...member, ...withEpoch(member, member.memberEpoch), assigned };
}

function computeNextAssignment(member: ConsumerGroupMember, input: ReconcileInput): ConsumerGroupMember {
  const assigned: PartitionEpochs = new Map();
  const pendingRevocation: PartitionEpochs = new Map();
  const pendingAssignment = new Map<string, number[]>();
  let hasUnreleased = false;
  const topics = new Set([...input.target.keys(), ...member.assigned.keys()]);
  for (const t of topics) {
    const target = input.subscribedTopicIds.has(t) ? (input.target.get(t) ?? new Set<number>()) : new Set<number>();
    const current = member.assigned.get(t) ?? new Map<number, number>();
    // Kept = current ∩ target; revoked = current − kept.
    const kept = new Map<number, number>();
    const revoked = new Map<number, number>();
    for (const [p, e] of current) (target.has(p) ? kept : revoked).set(p, e);
    // To assign = target − kept − partitions another member still holds.
    const toAssign: number[] = [];
    for (const p of target) {
      if (kept.has(p)) continue;
      const heldByOther = input.currentPartitionEpoch(t, p) !== -1 && !(member.pendingRevocation.get(t)?.has(p) ?? false);
      if (heldByOther) hasUnreleased = true;
      else toAssign.push(p);
    }
    if (kept.size > 0) assigned.set(t, kept);
    if (revoked.size > 0) pendingRevocation.set(t, revoked);
    if (toAssign.length > 0) pendingAssignment.set(t, toAssign);
  }
  if (pendingRevocation.size > 0 && ownsAnyOf(input.owned, pendingRevocation)) {
    // Revoke first, at the current epoch.
    return { ...member, state: 'unrevoked_partitions', ...withEpoch(member, member.memberEpoch), assigned, pendingRevocation };
  }
  for (const [t, ps] of pendingAssignment) {
    const into = assigned.get(t) ?? new Map<number, number>();
    for (const p of ps) into.set(p, input.targetEpoch);
    assigned.set(t, into);
  }
  return {
    ...member,
    state: hasUnreleased ? 'unreleased_partitions' : 'stable',
    ...withEpoch(member, input.targetEpoch),
    assigned,
    pendingRevocation: new Map(),
  };
}
