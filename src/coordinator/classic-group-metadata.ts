// What a classic group is, apart from how it rebalances (classic-group.ts):
// its state and the checked moves between states, its generation, protocol,
// leader and members, and the answers every group gives through the Group
// interface (offset checks, subscribed topics, ListGroups, DescribeGroups,
// the stored form). As Kafka keeps ClassicGroup apart from the protocol
// handling in GroupMetadataManager.
import type { Clock } from '../clock.js';
import type { StoredClassicGroup } from '../storage/pg/group-codec.js';
import { assertValidTransition, type ClassicGroupState } from './classic-group-state.js';
import { CONSUMER_PROTOCOL_TYPE, subscribedTopicsOf } from './consumer-protocol.js';
import type { DescribedGroup, Group, ListedGroup, OffsetCommitter } from './group.js';
import { protocolMetadata } from './group-protocols.js';
import { ErrorCode, UNKNOWN_MEMBER_ID, type JoinRequest, type JoinResult, type Member, type SyncResult } from './group-types.js';

const EMPTY = Buffer.alloc(0);

export abstract class ClassicGroupMetadata implements Group {
  readonly type = 'classic' as const;
  private current: ClassicGroupState = 'Empty';
  stateSince: number;
  generationId = 0;
  protocolType: string | null = null;
  protocolName: string | null = null;
  leaderId: string | null = null;
  readonly members = new Map<string, Member>();
  /** Group instance id → member id of the static members. */
  protected readonly staticMembers = new Map<string, string>();

  protected constructor(
    readonly groupId: string,
    protected readonly clock: Clock,
  ) {
    this.stateSince = clock.now();
  }

  get state(): ClassicGroupState {
    return this.current;
  }

  /** Kafka's transitionTo: only the moves ClassicGroupState.validPreviousStates allows. */
  protected transitionTo(state: ClassicGroupState): void {
    assertValidTransition(this.groupId, this.current, state);
    this.current = state;
    this.stateSince = this.clock.now();
  }

  /** A group read back from storage starts in its stored state, as Kafka's replay builds it (no transition). */
  protected loadState(state: 'Empty' | 'Stable'): void {
    this.current = state;
    this.stateSince = this.clock.now();
  }

  // ---- members -----------------------------------------------------------

  isLeader(memberId: string): boolean {
    return this.leaderId === memberId;
  }

  /** Member id of the static member with this instance id. */
  staticMemberId(groupInstanceId: string): string | undefined {
    return this.staticMembers.get(groupInstanceId);
  }

  protected maxRebalanceTimeoutMs(): number {
    let max = 0;
    for (const m of this.members.values()) max = Math.max(max, m.rebalanceTimeoutMs);
    return max;
  }

  /** A member that joins now; the first one names the group's protocol type and leads. */
  protected addMember(memberId: string, req: JoinRequest): Member {
    const member: Member = {
      memberId,
      groupInstanceId: req.groupInstanceId,
      clientId: req.clientId,
      clientHost: req.clientHost,
      sessionTimeoutMs: req.sessionTimeoutMs,
      rebalanceTimeoutMs: req.rebalanceTimeoutMs,
      protocols: req.protocols,
      assignment: EMPTY,
      awaitingJoin: null,
      awaitingSync: null,
      isNew: true,
      heartbeatTimer: null,
    };
    if (this.members.size === 0) this.protocolType = req.protocolType;
    this.members.set(memberId, member);
    if (req.groupInstanceId !== null) this.staticMembers.set(req.groupInstanceId, memberId);
    if (this.leaderId === null) this.leaderId = memberId;
    return member;
  }

  /** Drops the member from the member lists; leadership passes to the first remaining member. */
  protected forgetMember(member: Member): void {
    this.members.delete(member.memberId);
    if (member.groupInstanceId !== null && this.staticMembers.get(member.groupInstanceId) === member.memberId) {
      this.staticMembers.delete(member.groupInstanceId);
    }
    if (this.leaderId === member.memberId) this.leaderId = this.members.keys().next().value ?? null;
  }

  /** Kafka's maybeElectNewJoinedLeader: a leader that did not rejoin gives way to one that did; false if nobody rejoined. */
  protected electJoinedLeader(): boolean {
    if (this.leaderId !== null && this.members.get(this.leaderId)?.awaitingJoin) return true;
    for (const m of this.members.values()) {
      if (m.awaitingJoin) {
        this.leaderId = m.memberId;
        return true;
      }
    }
    return false;
  }

  /** The JoinGroup answer for a member of this generation; only the leader is shown the members. */
  protected joinResponse(member: Member, errorCode: number): JoinResult {
    const isLeader = this.isLeader(member.memberId);
    return {
      errorCode,
      generationId: this.generationId,
      protocolType: this.protocolType,
      protocolName: this.protocolName,
      leader: this.leaderId ?? '',
      memberId: member.memberId,
      skipAssignment: false,
      members: isLeader ? [...this.members.values()].map((m) => ({ memberId: m.memberId, groupInstanceId: m.groupInstanceId, metadata: protocolMetadata(m, this.protocolName) })) : [],
    };
  }

  protected syncResponse(member: Member): SyncResult {
    return { errorCode: ErrorCode.NONE, protocolType: this.protocolType, protocolName: this.protocolName, assignment: member.assignment };
  }

  /** Starts the member's session deadline afresh. */
  protected abstract scheduleHeartbeat(member: Member, timeoutMs?: number): void;

  /** Restores the group as last stored: Stable with its members, whose sessions start now. */
  restore(stored: StoredClassicGroup): void {
    this.protocolType = stored.protocolType;
    this.protocolName = stored.protocolName;
    this.generationId = stored.generation;
    this.leaderId = stored.leaderId;
    for (const m of stored.members) {
      const member: Member = { ...m, awaitingJoin: null, awaitingSync: null, isNew: false, heartbeatTimer: null };
      this.members.set(m.memberId, member);
      if (m.groupInstanceId !== null) this.staticMembers.set(m.groupInstanceId, m.memberId);
      this.scheduleHeartbeat(member);
    }
    this.loadState(this.members.size > 0 ? 'Stable' : 'Empty');
  }

  /** Kafka's validateMember: the error for an unknown or fenced member, or NONE. */
  validateMember(memberId: string, groupInstanceId: string | null): number {
    if (groupInstanceId !== null) {
      const existing = this.staticMembers.get(groupInstanceId);
      if (existing === undefined) return ErrorCode.UNKNOWN_MEMBER_ID;
      if (existing !== memberId) return ErrorCode.FENCED_INSTANCE_ID;
      return ErrorCode.NONE;
    }
    return this.members.has(memberId) ? ErrorCode.NONE : ErrorCode.UNKNOWN_MEMBER_ID;
  }

  // ---- the Group interface ----------------------------------------------

  stateAsString(): string {
    return this.current;
  }

  isInStates(lowerCaseStates: ReadonlySet<string>): boolean {
    return lowerCaseStates.has(this.current.toLowerCase());
  }

  isEmpty(): boolean {
    return this.current === 'Empty';
  }

  isDead(): boolean {
    return this.current === 'Dead';
  }

  numMembers(): number {
    return this.members.size;
  }

  hasMember(memberId: string): boolean {
    return this.members.has(memberId);
  }

  /** Preparing or completing a rebalance, or Stable since after `settledSince` (its followers may still be fetching their assignments). */
  isRebalancing(settledSince: number): boolean {
    return this.current === 'PreparingRebalance' || this.current === 'CompletingRebalance' || (this.current === 'Stable' && this.stateSince > settledSince);
  }

  /**
   * Kafka's validateOffsetCommit: may this member commit with this
   * generation now? A commit that names neither member nor generation comes
   * from outside group management: accepted while the group is Empty, and
   * always when transactional (older producers name neither). A member's
   * commit counts as a heartbeat.
   */
  validateOffsetCommit({ memberId, groupInstanceId, generationIdOrMemberEpoch: generationId, isTransactional }: OffsetCommitter): number {
    if (this.isDead()) return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    if (generationId < 0 && this.isEmpty()) return ErrorCode.NONE;
    if (generationId >= 0 || memberId !== UNKNOWN_MEMBER_ID || groupInstanceId !== null) {
      const error = this.validateMember(memberId, groupInstanceId);
      if (error !== ErrorCode.NONE) return error;
      if (generationId !== this.generationId) return ErrorCode.ILLEGAL_GENERATION;
    } else if (isTransactional) {
      return ErrorCode.NONE;
    } else if (!this.isEmpty()) {
      return ErrorCode.UNKNOWN_MEMBER_ID;
    }
    // Kafka does not hold a transactional commit to the group's state.
    if (!isTransactional && this.current === 'CompletingRebalance') return ErrorCode.REBALANCE_IN_PROGRESS;
    const member = this.members.get(memberId);
    if (member) this.scheduleHeartbeat(member);
    return ErrorCode.NONE;
  }

  /** A classic group's members name no epoch: any fetch of a live group is answered. */
  validateOffsetFetch(_memberId: string | null, _memberEpoch: number): number {
    return this.isDead() ? ErrorCode.GROUP_ID_NOT_FOUND : ErrorCode.NONE;
  }

  /** As Kafka: a group of another protocol type keeps its offsets while it has members. */
  validateOffsetDelete(): number {
    if (this.isDead()) return ErrorCode.GROUP_ID_NOT_FOUND;
    return this.isEmpty() || this.protocolType === CONSUMER_PROTOCOL_TYPE ? ErrorCode.NONE : ErrorCode.NON_EMPTY_GROUP;
  }

  validateDeleteGroup(): number {
    if (this.isDead()) return ErrorCode.GROUP_ID_NOT_FOUND;
    return this.isEmpty() ? ErrorCode.NONE : ErrorCode.NON_EMPTY_GROUP;
  }

  /**
   * The topics the members of a "consumer" group subscribe to, read from
   * their metadata for the group's protocol; none while the group is Empty
   * or runs another protocol type. null when a member's subscription does
   * not decode: Kafka then does not know the topics, and counts the group
   * as subscribed to every one.
   */
  subscribedTopics(): Set<string> | null {
    const topics = new Set<string>();
    if (this.isEmpty() || this.protocolType !== CONSUMER_PROTOCOL_TYPE) return topics;
    for (const m of this.members.values()) {
      const metadata = m.protocols.find((p) => p.name === this.protocolName)?.metadata;
      const named = metadata ? subscribedTopicsOf(metadata) : null;
      if (named === null) return null;
      for (const t of named) topics.add(t);
    }
    return topics;
  }

  isSubscribedToTopic(topic: string): boolean {
    return this.subscribedTopics()?.has(topic) ?? true;
  }

  asListedGroup(): ListedGroup {
    return { groupId: this.groupId, protocolType: this.protocolType ?? '', groupState: this.current, groupType: 'classic' };
  }

  /** Like Kafka, member metadata and assignments are shown only once the group is Stable. */
  describe(): DescribedGroup {
    const stable = this.current === 'Stable';
    return {
      errorCode: ErrorCode.NONE,
      errorMessage: null,
      groupState: this.current,
      protocolType: this.protocolType ?? '',
      protocolData: stable ? (this.protocolName ?? '') : '',
      members: [...this.members.values()].map((m) => ({
        memberId: m.memberId,
        groupInstanceId: m.groupInstanceId,
        clientId: m.clientId,
        clientHost: m.clientHost,
        memberMetadata: stable ? protocolMetadata(m, this.protocolName) : EMPTY,
        // Kafka's describeNoMetadata: outside Stable the assignment a member had before the rebalance still shows.
        memberAssignment: m.assignment,
      })),
    };
  }

  /** The group as stored: one stored while it completes a rebalance is stored as the Stable group it becomes. */
  toStored(): StoredClassicGroup {
    return {
      type: 'classic',
      groupId: this.groupId,
      protocolType: this.protocolType,
      protocolName: this.protocolName,
      generation: this.generationId,
      leaderId: this.leaderId,
      state: this.current === 'Empty' ? 'Empty' : 'Stable',
      stateSince: new Date(this.stateSince),
      members: [...this.members.values()].map((m) => ({
        memberId: m.memberId,
        groupInstanceId: m.groupInstanceId,
        clientId: m.clientId,
        clientHost: m.clientHost,
        sessionTimeoutMs: m.sessionTimeoutMs,
        rebalanceTimeoutMs: m.rebalanceTimeoutMs,
        protocols: m.protocols.map((p) => ({ name: p.name, metadata: p.metadata })),
        assignment: m.assignment,
      })),
    };
  }

  abstract markDead(): void;
  abstract unload(): void;
  abstract shutdown(): void;
}
