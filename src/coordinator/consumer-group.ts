// A KIP-848 consumer group, as Kafka's group coordinator runs it
// (GroupMetadataManager.consumerGroupHeartbeat and ConsumerGroup): members
// heartbeat with ConsumerGroupHeartbeat; a change of membership, subscription
// or subscribed topics bumps the group epoch; the next heartbeat computes a
// new target assignment (assignment epoch = group epoch) with the group's
// server assignor; each member then converges on its target on its own
// heartbeats (consumer-group-member.ts), so members that keep their
// partitions never stop. Every event is applied synchronously to the one
// object that holds the group's state and timers, so no two interleave.
import { randomUUID } from 'node:crypto';
import type { Clock, Timer } from '../clock.js';
import { ErrorCode } from '../protocol/errors.js';
import { LogCode } from '../observability/log-codes.js';
import type { StoredConsumerGroup, StoredConsumerMember, StoredPartitionEpochs } from '../storage/pg/group-codec.js';
import { ASSIGNORS, DEFAULT_ASSIGNOR, type TopicPartitions } from './consumer-assignors.js';
import {
  isReconciledTo,
  LEAVE_GROUP_MEMBER_EPOCH,
  LEAVE_GROUP_STATIC_MEMBER_EPOCH,
  newMember,
  ownedIsSubset,
  partitionsOf,
  reconcile,
  sameAssigned,
  type ClassicMemberMetadata,
  type ConsumerGroupMember,
  type MemberState,
  type OwnedPartitions,
  type PartitionEpochs,
} from './consumer-group-member.js';
import { GroupRegularExpressions } from './consumer-group-regex.js';
import type { DescribedGroup, Group, ListedGroup, OffsetCommitter } from './group.js';
import type { PersistGroup, GroupLog } from './classic-group.js';

/** What the group needs to know of the cluster's topics; built fresh by the coordinator for each event. */
export interface TopicImage {
  byName(name: string): { topicId: string; partitionCount: number } | null;
  nameOf(topicId: string): string | null;
}

export interface ConsumerGroupSettings {
  sessionTimeoutMs: number;
  heartbeatIntervalMs: number;
  maxSize: number;
  /** Kafka's group.consumer.assignment.interval.ms: a new target at most this often (0: on every epoch bump). */
  assignmentIntervalMs: number;
}

export interface ConsumerHeartbeat {
  memberId: string;
  memberEpoch: number;
  instanceId: string | null;
  rackId: string | null;
  rebalanceTimeoutMs: number;
  subscribedTopicNames: string[] | null;
  subscribedTopicRegex: string | null;
  serverAssignor: string | null;
  topicPartitions: OwnedPartitions;
  clientId: string;
  clientHost: string;
  /** A classic member's JoinGroup, served by this group (consumer-group-classic.ts); absent for ConsumerGroupHeartbeat. */
  classic?: ClassicMemberMetadata;
  /** Of these topics, those the member may describe (its regular expression resolves to no others); all when absent. */
  describableTopics?: (names: string[]) => Set<string>;
}

export interface ConsumerHeartbeatResult {
  errorCode: number;
  errorMessage: string | null;
  memberId: string | null;
  memberEpoch: number;
  heartbeatIntervalMs: number;
  assignment: { topicId: string; partitions: number[] }[] | null;
}

export type ConsumerGroupState = 'Empty' | 'Assigning' | 'Reconciling' | 'Stable' | 'Dead';

/** A Kafka error a group event ends with (Kafka throws an ApiException). */
export class GroupEventError extends Error {
  constructor(
    readonly errorCode: number,
    message: string,
  ) {
    super(message);
  }
}

export const heartbeatError = (errorCode: number, errorMessage: string | null): ConsumerHeartbeatResult => ({
  errorCode,
  errorMessage,
  memberId: null,
  memberEpoch: 0,
  heartbeatIntervalMs: 0,
  assignment: null,
});

export interface ConsumerGroupOptions {
  groupId: string;
  clock: Clock;
  settings: ConsumerGroupSettings;
  persist: PersistGroup;
  log?: GroupLog;
  /**
   * Asked before members are fenced: whether the group becomes a classic
   * group instead (Kafka's online downgrade, when only classic members
   * remain). The coordinator then replaces this group, and this one is
   * unloaded.
   */
  downgrade?: (group: ConsumerGroup, leavingMemberIds: ReadonlySet<string>) => boolean;
}

const sameNames = (a: readonly string[], b: readonly string[]): boolean => {
  const sa = new Set(a);
  const sb = new Set(b);
  return sa.size === sb.size && [...sa].every((n) => sb.has(n));
};

export class ConsumerGroup implements Group {
  readonly type = 'consumer' as const;
  groupEpoch = 0;
  assignmentEpoch = 0;
  /** When the target assignment was last computed (clock ms); 0: never, or the group emptied (the next one is computed at once). */
  assignmentTimestamp = 0;
  readonly members = new Map<string, ConsumerGroupMember>();
  /** Instance id → member id of the static members. */
  private readonly staticMembers = new Map<string, string>();
  /** Member id → its partitions in the target assignment. */
  private readonly targetAssignment = new Map<string, TopicPartitions>();
  /** Topic id → partition → epoch of the member holding it (assigned or pending revocation). */
  private readonly partitionEpochs = new Map<string, Map<number, number>>();
  /** The members' regular-expression subscriptions and what they resolved to (consumer-group-regex.ts). */
  readonly regexes = new GroupRegularExpressions((regex) => {
    let n = 0;
    for (const m of this.members.values()) if (m.subscribedTopicRegex === regex) n++;
    return n;
  });
  /** Subscribed topic name → id and partition count, as of the last group epoch. */
  subscriptionMetadata = new Map<string, { topicId: string; partitionCount: number }>();
  private readonly sessionTimers = new Map<string, Timer>();
  private readonly rebalanceTimers = new Map<string, Timer>();
  /** Deadlines of classic members: to rejoin after REBALANCE_IN_PROGRESS ('join'), to sync after joining ('sync'); keyed kind + member id. */
  private readonly classicDeadlines = new Map<string, Timer>();
  private readonly downgrade: ConsumerGroupOptions['downgrade'];
  private dead = false;
  private stateSince: number;
  private lastState: ConsumerGroupState = 'Empty';
  readonly groupId: string;
  private readonly clock: Clock;
  private readonly settings: ConsumerGroupSettings;
  private readonly persist: PersistGroup;
  private readonly log: GroupLog;

  constructor(options: ConsumerGroupOptions) {
    this.groupId = options.groupId;
    this.clock = options.clock;
    this.settings = options.settings;
    this.persist = options.persist;
    this.log = options.log ?? { info: () => {} };
    this.downgrade = options.downgrade;
    this.stateSince = this.clock.now();
  }

  // ---- state ---------------------------------------------------------------

  /** Kafka's ConsumerGroup.maybeUpdateGroupState, computed on demand. */
  get state(): ConsumerGroupState {
    if (this.dead) return 'Dead';
    if (this.members.size === 0) return 'Empty';
    if (this.groupEpoch > this.assignmentEpoch) return 'Assigning';
    for (const m of this.members.values()) if (!isReconciledTo(m, this.assignmentEpoch)) return 'Reconciling';
    return 'Stable';
  }

  private noteState(): void {
    const state = this.state;
    if (state !== this.lastState) {
      this.lastState = state;
      this.stateSince = this.clock.now();
    }
  }

  stateAsString(): string {
    return this.state;
  }

  isInStates(lowerCaseStates: ReadonlySet<string>): boolean {
    return lowerCaseStates.has(this.state.toLowerCase());
  }

  isEmpty(): boolean {
    return this.state === 'Empty';
  }

  isDead(): boolean {
    return this.dead;
  }

  numMembers(): number {
    return this.members.size;
  }

  hasMember(memberId: string): boolean {
    return this.members.has(memberId);
  }

  /** Members converge on their own heartbeats: the slot moves only when the group is Stable or Empty. */
  isRebalancing(_settledSince: number): boolean {
    const state = this.state;
    return state === 'Assigning' || state === 'Reconciling';
  }

  staticMember(instanceId: string | null): ConsumerGroupMember | undefined {
    if (instanceId === null) return undefined;
    const memberId = this.staticMembers.get(instanceId);
    return memberId === undefined ? undefined : this.members.get(memberId);
  }

  /** Kafka's currentPartitionEpoch: the epoch of the member holding the partition, -1 when none does. */
  currentPartitionEpoch(topicId: string, partition: number): number {
    return this.partitionEpochs.get(topicId)?.get(partition) ?? -1;
  }

  targetOf(memberId: string): TopicPartitions {
    return this.targetAssignment.get(memberId) ?? new Map();
  }

  /** The server assignor most members prefer (Kafka's preferredServerAssignor), if any names one. */
  preferredServerAssignor(): string | null {
    const counts = new Map<string, number>();
    for (const m of this.members.values()) if (m.serverAssignor !== null) counts.set(m.serverAssignor, (counts.get(m.serverAssignor) ?? 0) + 1);
    let best: string | null = null;
    for (const [name, n] of counts) if (best === null || n > counts.get(best)!) best = name;
    return best;
  }

  /** The topic names the members subscribe to, by name or through a resolved regular expression. */
  subscribedTopicNames(): Set<string> {
    const names = new Set<string>();
    for (const m of this.members.values()) {
      for (const n of m.subscribedTopicNames) names.add(n);
      for (const n of this.regexes.topicsOf(m.subscribedTopicRegex)) names.add(n);
    }
    return names;
  }

  /** The regular expressions the members subscribe with. */
  subscribedRegularExpressions(): Set<string> {
    const regexes = new Set<string>();
    for (const m of this.members.values()) if (m.subscribedTopicRegex) regexes.add(m.subscribedTopicRegex);
    return regexes;
  }

  /** The subscribed topics' partitions as `image` has them; true when they changed (the group's epoch must move). */
  private refreshSubscriptionMetadata(image: TopicImage): boolean {
    const metadata = this.resolveSubscriptions(image);
    if (sameMetadata(metadata, this.subscriptionMetadata)) return false;
    this.subscriptionMetadata = metadata;
    return true;
  }

  /**
   * A resolution of the group's regular expressions landed (Kafka's
   * handleRegularExpressionsResult): the group epoch is bumped when a
   * pattern's topics or the subscribed topics' metadata changed, so the next
   * heartbeat computes a new target assignment. True when it was.
   */
  applyResolvedRegularExpressions(results: Parameters<GroupRegularExpressions['apply']>[0], image: TopicImage): boolean {
    if (this.dead) return false;
    let bump = this.regexes.apply(results);
    if (this.refreshSubscriptionMetadata(image)) bump = true;
    if (bump) {
      this.groupEpoch += 1;
      this.log.info(
        { group: this.groupId, groupEpoch: this.groupEpoch, regexes: [...results.keys()], code: LogCode.GROUP_REGEX_EPOCH_BUMPED },
        'bumped the consumer group epoch: regular expressions resolved to other topics',
      );
      this.noteState();
    }
    return bump;
  }

  // ---- membership bookkeeping ---------------------------------------------

  private forEachPartition(epochs: PartitionEpochs, fn: (topicId: string, partition: number, epoch: number) => void): void {
    for (const [t, ps] of epochs) for (const [p, e] of ps) fn(t, p, e);
  }

  private releasePartitions(member: ConsumerGroupMember): void {
    const release = (t: string, p: number) => {
      const ps = this.partitionEpochs.get(t);
      ps?.delete(p);
      if (ps?.size === 0) this.partitionEpochs.delete(t);
    };
    this.forEachPartition(member.assigned, release);
    this.forEachPartition(member.pendingRevocation, release);
  }

  private holdPartitions(member: ConsumerGroupMember): void {
    const hold = (t: string, p: number, e: number) => {
      let ps = this.partitionEpochs.get(t);
      if (!ps) this.partitionEpochs.set(t, (ps = new Map()));
      ps.set(p, e);
    };
    this.forEachPartition(member.assigned, hold);
    this.forEachPartition(member.pendingRevocation, hold);
  }

  /** Puts the member in (replacing its previous self), keeping the partition epochs and static ids in step. */
  private updateMember(member: ConsumerGroupMember): void {
    const previous = this.members.get(member.memberId);
    if (previous) this.releasePartitions(previous);
    this.members.set(member.memberId, member);
    this.holdPartitions(member);
    if (member.instanceId !== null) this.staticMembers.set(member.instanceId, member.memberId);
  }

  private removeMember(memberId: string): void {
    const member = this.members.get(memberId);
    if (!member) return;
    this.releasePartitions(member);
    this.members.delete(memberId);
    this.targetAssignment.delete(memberId);
    if (member.instanceId !== null && this.staticMembers.get(member.instanceId) === memberId) this.staticMembers.delete(member.instanceId);
    this.sessionTimers.get(memberId)?.cancel();
    this.sessionTimers.delete(memberId);
    this.rebalanceTimers.get(memberId)?.cancel();
    this.rebalanceTimers.delete(memberId);
    for (const kind of ['join', 'sync'] as const) this.cancelClassicDeadline(kind, memberId);
  }

  // ---- ConsumerGroupHeartbeat ---------------------------------------------

  /**
   * One heartbeat (the request already validated as Kafka's
   * GroupCoordinatorService does). Applied synchronously; the caller stores
   * the group before answering.
   */
  heartbeat(req: ConsumerHeartbeat, image: TopicImage): ConsumerHeartbeatResult {
    try {
      const result = req.memberEpoch === LEAVE_GROUP_MEMBER_EPOCH || req.memberEpoch === LEAVE_GROUP_STATIC_MEMBER_EPOCH ? this.leave(req, image) : this.regularHeartbeat(req, image);
      this.noteState();
      return result;
    } catch (err) {
      if (err instanceof GroupEventError) return heartbeatError(err.errorCode, err.message);
      throw err;
    }
  }

  private throwIfFull(memberId: string, instanceId: string | null): void {
    // A known static member is replaced or refused, never added.
    if (instanceId !== null && this.staticMembers.has(instanceId)) return;
    if (this.members.size >= this.settings.maxSize && (memberId === '' || !this.members.has(memberId))) {
      throw new GroupEventError(ErrorCode.GROUP_MAX_SIZE_REACHED, `The consumer group has reached its maximum capacity of ${this.settings.maxSize} members.`);
    }
  }

  private throwIfEpochInvalid(member: ConsumerGroupMember, receivedEpoch: number, owned: OwnedPartitions): void {
    // Epoch 0: the member (re)joins, which is always allowed.
    if (receivedEpoch === 0) return;
    if (receivedEpoch > member.memberEpoch) {
      throw new GroupEventError(
        ErrorCode.FENCED_MEMBER_EPOCH,
        `The consumer group member has a greater member epoch (${receivedEpoch}) than the one known by the group coordinator (${member.memberEpoch}). The member must abandon all its partitions and rejoin.`,
      );
    }
    // The previous epoch with a subset of the assignment: the response with the new epoch was lost.
    if (receivedEpoch < member.memberEpoch && (receivedEpoch !== member.previousMemberEpoch || !ownedIsSubset(owned, member.assigned))) {
      throw new GroupEventError(
        ErrorCode.FENCED_MEMBER_EPOCH,
        `The consumer group member has a smaller member epoch (${receivedEpoch}) than the one known by the group coordinator (${member.memberEpoch}). The member must abandon all its partitions and rejoin.`,
      );
    }
  }

  private unknownMember(memberId: string): GroupEventError {
    return new GroupEventError(ErrorCode.UNKNOWN_MEMBER_ID, `Member ${memberId} is not a member of group ${this.groupId}.`);
  }

  /** The member the heartbeat is from: found, created (epoch 0) or, for a static member, taking its instance's place. */
  private memberFor(req: ConsumerHeartbeat, memberId: string, joining: boolean): ConsumerGroupMember {
    if (req.instanceId === null) {
      const existing = this.members.get(memberId);
      if (!existing) {
        if (!joining) throw this.unknownMember(memberId);
        this.log.info({ group: this.groupId, member: memberId }, 'member joins the consumer group');
        return newMember(memberId);
      }
      this.throwIfEpochInvalid(existing, req.memberEpoch, req.topicPartitions);
      return existing;
    }
    const existing = this.staticMember(req.instanceId);
    if (joining) {
      if (!existing) return newMember(memberId);
      if (existing.memberId === memberId && existing.memberEpoch !== LEAVE_GROUP_STATIC_MEMBER_EPOCH) return existing;
      // Between consumer-protocol members, the instance must have left (epoch -2) first; a
      // classic member on either side replaces the other at once, as a classic group does.
      if (existing.memberEpoch !== LEAVE_GROUP_STATIC_MEMBER_EPOCH && req.classic === undefined && existing.classic === null) {
        throw new GroupEventError(
          ErrorCode.UNRELEASED_INSTANCE_ID,
          `Static member ${memberId} with instance id ${req.instanceId} cannot join the group because the instance id is owned by ${existing.memberId} member.`,
        );
      }
      // The instance is back under a new member id: it takes the old member's place,
      // assignment and target, so no other member notices.
      const replacement: ConsumerGroupMember = { ...existing, memberId, memberEpoch: 0, previousMemberEpoch: 0 };
      const target = this.targetAssignment.get(existing.memberId);
      this.removeMember(existing.memberId);
      if (target) this.targetAssignment.set(memberId, target);
      this.updateMember(replacement);
      this.log.info({ group: this.groupId, member: memberId, instance: req.instanceId, replaced: existing.memberId }, 'static member rejoins the consumer group');
      return replacement;
    }
    if (!existing) throw new GroupEventError(ErrorCode.UNKNOWN_MEMBER_ID, `Instance id ${req.instanceId} is unknown.`);
    if (existing.memberId !== memberId) {
      throw new GroupEventError(ErrorCode.FENCED_INSTANCE_ID, `Static member ${memberId} with instance id ${req.instanceId} was fenced by member ${existing.memberId}.`);
    }
    this.throwIfEpochInvalid(existing, req.memberEpoch, req.topicPartitions);
    return existing;
  }

  private regularHeartbeat(req: ConsumerHeartbeat, image: TopicImage): ConsumerHeartbeatResult {
    const joining = req.memberEpoch === 0;
    this.throwIfFull(req.memberId, req.instanceId);
    const memberId = req.memberId === '' ? randomUUID() : req.memberId;
    const member = this.memberFor(req, memberId, joining);
    const isNew = !this.members.has(member.memberId);

    const updated: ConsumerGroupMember = {
      ...member,
      instanceId: req.instanceId ?? member.instanceId,
      rackId: req.rackId ?? member.rackId,
      rebalanceTimeoutMs: req.rebalanceTimeoutMs !== -1 ? req.rebalanceTimeoutMs : member.rebalanceTimeoutMs,
      serverAssignor: req.serverAssignor ?? member.serverAssignor,
      subscribedTopicNames: req.subscribedTopicNames ?? member.subscribedTopicNames,
      subscribedTopicRegex: req.subscribedTopicRegex ?? member.subscribedTopicRegex,
      clientId: req.clientId,
      clientHost: req.clientHost,
      classic: req.classic ?? null,
    };
    const namesChanged = !sameNames(member.subscribedTopicNames, updated.subscribedTopicNames);
    const regex = this.regexes.memberChanges(member.subscribedTopicRegex, updated.subscribedTopicRegex);
    if (regex.invalid !== null) throw new GroupEventError(ErrorCode.INVALID_REGULAR_EXPRESSION, regex.invalid);
    const subscriptionChanged = namesChanged || regex.update !== 'none';
    const assignorBefore = this.preferredServerAssignor();
    // The member as the group will hold it, for the subscription and assignor counts.
    const previousSelf = this.members.get(updated.memberId);
    this.members.set(updated.memberId, updated);
    if (updated.instanceId !== null) this.staticMembers.set(updated.instanceId, updated.memberId);
    const assignorChanged = !isNew && assignorBefore !== this.preferredServerAssignor();

    // A new pattern bumps the epoch once it is resolved (off the heartbeat), not now.
    let bump = namesChanged || regex.update === 'updated_and_resolved' || assignorChanged || (isNew && member.subscribedTopicNames.length > 0);
    if (this.refreshSubscriptionMetadata(image)) bump = true;
    if (bump) {
      this.groupEpoch += 1;
      this.log.info({ group: this.groupId, groupEpoch: this.groupEpoch, members: this.members.size }, 'bumped the consumer group epoch');
    }
    if (this.groupEpoch > this.assignmentEpoch && this.canComputeTargetAssignment()) this.computeTargetAssignment();

    // Put back the stored self so updateMember releases its partition epochs correctly.
    if (previousSelf) this.members.set(updated.memberId, previousSelf);
    else this.members.delete(updated.memberId);
    let reconciled = updated;
    if (subscriptionChanged || !isReconciledTo(updated, this.assignmentEpoch)) {
      reconciled = reconcile(updated, {
        targetEpoch: this.assignmentEpoch,
        target: this.targetOf(updated.memberId),
        subscribedTopicIds: this.topicIdsOf(updated),
        hasSubscriptionChanged: subscriptionChanged,
        currentPartitionEpoch: (t, p) => this.currentPartitionEpoch(t, p),
        owned: req.topicPartitions,
      });
    }
    this.updateMember(reconciled);
    if (reconciled !== updated || isNew) this.scheduleRebalanceTimeout(reconciled);
    this.scheduleSessionTimeout(reconciled.memberId);

    const isFullRequest = req.rebalanceTimeoutMs !== -1 && (req.subscribedTopicNames !== null || req.subscribedTopicRegex !== null) && req.topicPartitions !== null;
    const assignmentChanged = !sameAssigned(member.assigned, reconciled.assigned) || isNew;
    return {
      errorCode: ErrorCode.NONE,
      errorMessage: null,
      memberId: reconciled.memberId,
      memberEpoch: reconciled.memberEpoch,
      heartbeatIntervalMs: this.settings.heartbeatIntervalMs,
      assignment: joining || isFullRequest || assignmentChanged ? [...partitionsOf(reconciled.assigned)].map(([topicId, partitions]) => ({ topicId, partitions })) : null,
    };
  }

  /** Subscribed topic name → its id and partitions, for the names that exist now. */
  private resolveSubscriptions(image: TopicImage): Map<string, { topicId: string; partitionCount: number }> {
    const metadata = new Map<string, { topicId: string; partitionCount: number }>();
    for (const name of [...this.subscribedTopicNames()].sort()) {
      const topic = image.byName(name);
      if (topic) metadata.set(name, topic);
    }
    return metadata;
  }

  private topicIdsOf(member: ConsumerGroupMember): Set<string> {
    const ids = new Set<string>();
    for (const name of [...member.subscribedTopicNames, ...this.regexes.topicsOf(member.subscribedTopicRegex)]) {
      const topic = this.subscriptionMetadata.get(name);
      if (topic) ids.add(topic.topicId);
    }
    return ids;
  }

  /** Kafka's canComputeNextTargetAssignment: at once for a new (or emptied) group or with no interval, else once the interval has passed. */
  private canComputeTargetAssignment(): boolean {
    const interval = this.settings.assignmentIntervalMs;
    return this.assignmentTimestamp === 0 || interval === 0 || this.clock.now() >= this.assignmentTimestamp + interval;
  }

  /** Kafka's TargetAssignmentBuilder: the assignor's answer for every member, at the group epoch. */
  private computeTargetAssignment(): void {
    const name = this.preferredServerAssignor() ?? DEFAULT_ASSIGNOR;
    const assignor = ASSIGNORS.get(name) ?? ASSIGNORS.get(DEFAULT_ASSIGNOR)!;
    const partitionCounts = new Map<string, number>();
    for (const t of this.subscriptionMetadata.values()) partitionCounts.set(t.topicId, t.partitionCount);
    const result = assignor({
      members: [...this.members.values()].map((m) => ({ memberId: m.memberId, instanceId: m.instanceId, subscribedTopicIds: this.topicIdsOf(m), target: this.targetOf(m.memberId) })),
      partitionCounts,
    });
    this.targetAssignment.clear();
    for (const [memberId, partitions] of result) this.targetAssignment.set(memberId, partitions);
    this.assignmentEpoch = this.groupEpoch;
    this.assignmentTimestamp = this.clock.now();
    this.log.info({ group: this.groupId, assignmentEpoch: this.assignmentEpoch, assignor: name, members: this.members.size }, 'computed a new target assignment');
  }

  // ---- leaving and fencing -------------------------------------------------

  private leave(req: ConsumerHeartbeat, image: TopicImage): ConsumerHeartbeatResult {
    const answer = (memberEpoch: number): ConsumerHeartbeatResult => ({
      errorCode: ErrorCode.NONE,
      errorMessage: null,
      memberId: req.memberId,
      memberEpoch,
      heartbeatIntervalMs: 0,
      assignment: null,
    });
    if (req.instanceId === null) {
      const member = this.members.get(req.memberId);
      if (!member) throw this.unknownMember(req.memberId);
      this.log.info({ group: this.groupId, member: req.memberId }, 'member left the consumer group');
      this.fence(member, image);
      return answer(req.memberEpoch);
    }
    const member = this.staticMember(req.instanceId);
    if (!member) throw new GroupEventError(ErrorCode.UNKNOWN_MEMBER_ID, `Instance id ${req.instanceId} is unknown.`);
    if (member.memberId !== req.memberId) {
      throw new GroupEventError(ErrorCode.FENCED_INSTANCE_ID, `Static member ${req.memberId} with instance id ${req.instanceId} was fenced by member ${member.memberId}.`);
    }
    if (req.memberEpoch === LEAVE_GROUP_STATIC_MEMBER_EPOCH) {
      // The instance will be back: it keeps its partitions (their epochs reset to 0, so nobody else
      // takes them) until it rejoins or its session times out.
      const zeroed: PartitionEpochs = new Map([...member.assigned].map(([t, ps]) => [t, new Map([...ps.keys()].map((p) => [p, 0]))]));
      this.updateMember({ ...member, memberEpoch: LEAVE_GROUP_STATIC_MEMBER_EPOCH, pendingRevocation: new Map(), assigned: zeroed });
      this.rebalanceTimers.get(member.memberId)?.cancel();
      this.rebalanceTimers.delete(member.memberId);
      this.log.info({ group: this.groupId, member: req.memberId, instance: req.instanceId }, 'static member temporarily left the consumer group');
      return answer(LEAVE_GROUP_STATIC_MEMBER_EPOCH);
    }
    this.fence(member, image);
    return answer(req.memberEpoch);
  }

  private fence(member: ConsumerGroupMember, image: TopicImage | null): void {
    this.fenceMembers([member], image);
  }

  /**
   * Kafka's consumerGroupFenceMembers: the members go (or the group is
   * downgraded without them) and the group epoch is bumped once, so the
   * others get a new target. A LeaveGroup naming several members is one
   * fencing, one epoch.
   */
  fenceMembers(members: readonly ConsumerGroupMember[], image: TopicImage | null): void {
    if (members.length === 0 || this.dead) return;
    if (this.downgrade?.(this, new Set(members.map((m) => m.memberId)))) return;
    for (const member of members) {
      this.removeMember(member.memberId);
      this.regexes.memberLeft(member.subscribedTopicRegex);
    }
    if (image) this.subscriptionMetadata = this.resolveSubscriptions(image);
    else for (const name of [...this.subscriptionMetadata.keys()]) if (!this.subscribedTopicNames().has(name)) this.subscriptionMetadata.delete(name);
    this.groupEpoch += 1;
    // An emptied group needs no assignment: it is Empty, not Assigning.
    if (this.members.size === 0) {
      this.assignmentEpoch = this.groupEpoch;
      this.assignmentTimestamp = 0;
    }
    this.log.info({ group: this.groupId, groupEpoch: this.groupEpoch, fenced: members.map((m) => m.memberId), members: this.members.size }, 'fenced consumer group members');
    this.noteState();
  }

  /** A timer fired: the member goes if it is still the same member at the same epoch. */
  private expire(memberId: string, why: string, epoch: number | null): void {
    const member = this.members.get(memberId);
    if (!member || this.dead) return;
    if (epoch !== null && (member.memberEpoch !== epoch || member.state !== 'unrevoked_partitions')) return;
    this.log.info({ group: this.groupId, member: memberId, reason: why }, 'fencing consumer group member');
    this.fence(member, null);
    // Downgraded instead: the classic group that took its place stores itself.
    if (this.dead) return;
    this.noteState();
    void this.persist(this).catch(() => {});
  }

  /** Starts the member's session afresh: the group's session timeout, or a classic member's own. */
  scheduleSessionTimeout(memberId: string): void {
    this.sessionTimers.get(memberId)?.cancel();
    const timeoutMs = this.members.get(memberId)?.classic?.sessionTimeoutMs ?? this.settings.sessionTimeoutMs;
    this.sessionTimers.set(
      memberId,
      this.clock.setTimeout(() => {
        this.sessionTimers.delete(memberId);
        this.expire(memberId, 'the member session expired', null);
      }, timeoutMs),
    );
  }

  /** A classic member's deadline to rejoin ('join') or to sync ('sync'): it is fenced when it passes. 'join' keeps a running deadline. */
  scheduleClassicDeadline(kind: 'join' | 'sync', memberId: string, timeoutMs: number): void {
    const key = `${kind}\u0000${memberId}`;
    if (kind === 'join' && this.classicDeadlines.has(key)) return;
    this.classicDeadlines.get(key)?.cancel();
    const why = kind === 'join' ? 'the classic member failed to join within the rebalance timeout' : 'the member failed to sync within timeout';
    this.classicDeadlines.set(
      key,
      this.clock.setTimeout(
        () => {
          this.classicDeadlines.delete(key);
          this.expire(memberId, why, null);
        },
        Math.max(timeoutMs, 0),
      ),
    );
  }

  cancelClassicDeadline(kind: 'join' | 'sync', memberId: string): void {
    const key = `${kind}\u0000${memberId}`;
    this.classicDeadlines.get(key)?.cancel();
    this.classicDeadlines.delete(key);
  }

  /** Kafka's waitingOnUnreleasedPartition: a partition of the member's target is still held by another member. */
  waitingOnUnreleasedPartition(member: ConsumerGroupMember): boolean {
    if (member.state !== 'unreleased_partitions') return false;
    for (const [t, ps] of this.targetOf(member.memberId)) {
      for (const p of ps) if (!(member.assigned.get(t)?.has(p) ?? false) && this.currentPartitionEpoch(t, p) !== -1) return true;
    }
    return false;
  }

  /** Kafka's allMembersUseClassicProtocolExcept: every member but these speaks the classic protocol. */
  allMembersUseClassicProtocolExcept(memberIds: ReadonlySet<string>): boolean {
    for (const m of this.members.values()) if (!memberIds.has(m.memberId) && m.classic === null) return false;
    return true;
  }

  /** A member asked to revoke partitions has its rebalance timeout to do so, or is fenced. */
  private scheduleRebalanceTimeout(member: ConsumerGroupMember): void {
    this.rebalanceTimers.get(member.memberId)?.cancel();
    this.rebalanceTimers.delete(member.memberId);
    if (member.state !== 'unrevoked_partitions') return;
    const epoch = member.memberEpoch;
    this.rebalanceTimers.set(
      member.memberId,
      this.clock.setTimeout(
        () => {
          this.rebalanceTimers.delete(member.memberId);
          this.expire(member.memberId, 'the member failed to revoke partitions within the rebalance timeout', epoch);
        },
        Math.max(member.rebalanceTimeoutMs, 0),
      ),
    );
  }

  // ---- the Group interface -------------------------------------------------

  validateOffsetCommit(committer: OffsetCommitter): number {
    const epoch = committer.generationIdOrMemberEpoch;
    // Admin clients and consumers outside group management commit while the group is empty.
    if (epoch < 0 && this.members.size === 0) return ErrorCode.NONE;
    // TxnOffsetCommit names neither member nor epoch from older producers.
    if (committer.isTransactional && epoch === -1 && committer.memberId === '' && committer.groupInstanceId === null) return ErrorCode.NONE;
    const member = this.members.get(committer.memberId);
    if (!member) return ErrorCode.UNKNOWN_MEMBER_ID;
    // A classic member of a mixed group commits with its classic client: any version, its generation being its epoch.
    if (!committer.isTransactional && member.classic === null && committer.apiVersion < 9) return ErrorCode.UNSUPPORTED_VERSION;
    if (epoch > member.memberEpoch) return member.classic === null ? ErrorCode.STALE_MEMBER_EPOCH : ErrorCode.ILLEGAL_GENERATION;
    // An older epoch is judged per partition (validateOffsetCommitPartition).
    return ErrorCode.NONE;
  }

  /** Kafka's assignment epoch validator: an older epoch may commit a partition it held since that epoch. */
  validateOffsetCommitPartition(committer: OffsetCommitter, topicId: string, partition: number): number {
    const member = this.members.get(committer.memberId);
    if (!member || committer.generationIdOrMemberEpoch >= member.memberEpoch) return ErrorCode.NONE;
    const assignedAt = member.assigned.get(topicId)?.get(partition) ?? member.pendingRevocation.get(topicId)?.get(partition);
    if (assignedAt === undefined || committer.generationIdOrMemberEpoch < assignedAt) return ErrorCode.STALE_MEMBER_EPOCH;
    return ErrorCode.NONE;
  }

  validateOffsetFetch(memberId: string | null, memberEpoch: number): number {
    if (memberId === null && memberEpoch < 0) return ErrorCode.NONE;
    const member = memberId === null ? undefined : this.members.get(memberId);
    if (!member) return ErrorCode.UNKNOWN_MEMBER_ID;
    if (memberEpoch === member.memberEpoch) return ErrorCode.NONE;
    return member.classic === null ? ErrorCode.STALE_MEMBER_EPOCH : ErrorCode.ILLEGAL_GENERATION;
  }

  validateOffsetDelete(): number {
    return ErrorCode.NONE;
  }

  validateDeleteGroup(): number {
    return this.state === 'Empty' ? ErrorCode.NONE : ErrorCode.NON_EMPTY_GROUP;
  }

  isSubscribedToTopic(topic: string): boolean {
    return this.subscribedTopicNames().has(topic);
  }

  asListedGroup(): ListedGroup {
    return { groupId: this.groupId, protocolType: 'consumer', groupState: this.state, groupType: 'consumer' };
  }

  /** DescribeGroups describes classic groups only; a consumer group is not found there (ConsumerGroupDescribe describes it). */
  describe(): DescribedGroup {
    return { errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: `Group ${this.groupId} is not a classic group.`, groupState: 'Dead', protocolType: '', protocolData: '', members: [] };
  }

  toStored(): StoredConsumerGroup {
    const epochs = (e: PartitionEpochs): StoredPartitionEpochs => Object.fromEntries([...e].map(([t, ps]) => [t, Object.fromEntries([...ps].map(([p, ep]) => [String(p), ep]))]));
    return {
      type: 'consumer',
      groupId: this.groupId,
      groupEpoch: this.groupEpoch,
      assignmentEpoch: this.assignmentEpoch,
      // Stored in wall-clock time, restored in this clock's.
      assignmentTimestamp: this.assignmentTimestamp === 0 ? 0 : Date.now() - (this.clock.now() - this.assignmentTimestamp),
      state: this.state,
      stateSince: new Date(Date.now() - (this.clock.now() - this.stateSince)),
      subscriptionMetadata: Object.fromEntries(this.subscriptionMetadata),
      resolvedRegularExpressions: Object.fromEntries(
        [...this.regexes.resolved].map(([regex, r]) => [regex, { topics: [...r.topics].sort(), timestamp: Date.now() - (this.clock.now() - r.timestamp) }]),
      ),
      members: [...this.members.values()].map((m) => ({
        memberId: m.memberId,
        instanceId: m.instanceId,
        rackId: m.rackId,
        clientId: m.clientId,
        clientHost: m.clientHost,
        rebalanceTimeoutMs: m.rebalanceTimeoutMs,
        subscribedTopicNames: m.subscribedTopicNames,
        subscribedTopicRegex: m.subscribedTopicRegex,
        serverAssignor: m.serverAssignor,
        memberEpoch: m.memberEpoch,
        previousMemberEpoch: m.previousMemberEpoch,
        state: m.state,
        assigned: epochs(m.assigned),
        pendingRevocation: epochs(m.pendingRevocation),
        target: Object.fromEntries([...this.targetOf(m.memberId)].map(([t, ps]) => [t, [...ps].sort((a, b) => a - b)])),
        classic: m.classic && {
          sessionTimeoutMs: m.classic.sessionTimeoutMs,
          supportedProtocols: m.classic.supportedProtocols.map((p) => ({ name: p.name, metadata: p.metadata.toString('base64') })),
        },
      })),
    };
  }

  /** The group as last stored; every member's session restarts now, as on Kafka when a coordinator loads a group. */
  restore(stored: StoredConsumerGroup): void {
    const epochs = (e: StoredPartitionEpochs): PartitionEpochs => new Map(Object.entries(e).map(([t, ps]) => [t, new Map(Object.entries(ps).map(([p, ep]) => [Number(p), ep]))]));
    this.groupEpoch = stored.groupEpoch;
    this.assignmentEpoch = stored.assignmentEpoch;
    this.assignmentTimestamp = stored.assignmentTimestamp === 0 ? 0 : Math.max(1, this.clock.now() - (Date.now() - stored.assignmentTimestamp));
    this.subscriptionMetadata = new Map(Object.entries(stored.subscriptionMetadata));
    // The topic list's version is this process's: a restored resolution is refreshed once topics may have changed.
    for (const [regex, r] of Object.entries(stored.resolvedRegularExpressions)) {
      this.regexes.resolved.set(regex, { topics: new Set(r.topics), version: -1, timestamp: this.clock.now() - (Date.now() - r.timestamp) });
    }
    for (const m of stored.members) this.restoreMember(m, epochs);
    this.lastState = this.state;
    for (const m of this.members.values()) {
      this.scheduleSessionTimeout(m.memberId);
      this.scheduleRebalanceTimeout(m);
    }
  }

  private restoreMember(m: StoredConsumerMember, epochs: (e: StoredPartitionEpochs) => PartitionEpochs): void {
    this.updateMember({
      memberId: m.memberId,
      instanceId: m.instanceId,
      rackId: m.rackId,
      clientId: m.clientId,
      clientHost: m.clientHost,
      rebalanceTimeoutMs: m.rebalanceTimeoutMs,
      subscribedTopicNames: m.subscribedTopicNames,
      subscribedTopicRegex: m.subscribedTopicRegex,
      serverAssignor: m.serverAssignor,
      memberEpoch: m.memberEpoch,
      previousMemberEpoch: m.previousMemberEpoch,
      state: m.state as MemberState,
      assigned: epochs(m.assigned),
      pendingRevocation: epochs(m.pendingRevocation),
      classic: m.classic
        ? { sessionTimeoutMs: m.classic.sessionTimeoutMs, supportedProtocols: m.classic.supportedProtocols.map((p) => ({ name: p.name, metadata: Buffer.from(p.metadata, 'base64') })) }
        : null,
    });
    this.targetAssignment.set(m.memberId, new Map(Object.entries(m.target).map(([t, ps]) => [t, new Set(ps)])));
  }

  markDead(): void {
    this.dead = true;
    this.shutdown();
  }

  unload(): void {
    this.dead = true;
    this.shutdown();
  }

  shutdown(): void {
    for (const t of [...this.sessionTimers.values(), ...this.rebalanceTimers.values(), ...this.classicDeadlines.values()]) t.cancel();
    this.sessionTimers.clear();
    this.rebalanceTimers.clear();
    this.classicDeadlines.clear();
  }
}

function sameMetadata(a: ReadonlyMap<string, { topicId: string; partitionCount: number }>, b: ReadonlyMap<string, { topicId: string; partitionCount: number }>): boolean {
  if (a.size !== b.size) return false;
  for (const [name, t] of a) {
    const o = b.get(name);
    if (!o || o.topicId !== t.topicId || o.partitionCount !== t.partitionCount) return false;
  }
  return true;
}
