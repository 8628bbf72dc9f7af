// One consumer group under the classic protocol, as Kafka's coordinator runs
// it: Empty → PreparingRebalance → CompletingRebalance → Stable (and Dead).
// This file is how it rebalances (JoinGroup, SyncGroup, Heartbeat,
// LeaveGroup and their timers); what the group is, and what it answers as a
// Group, is classic-group-metadata.ts. All of a group's state and timers live
// in the one object; every event is applied synchronously to that state, so
// no two events interleave.
import { randomUUID } from 'node:crypto';
import type { Clock, Timer } from '../clock.js';
import { ClassicGroupMetadata } from './classic-group-metadata.js';
import type { Group } from './group.js';
import { protocolInconsistent, sameProtocols, selectProtocol, supportsProtocols } from './group-protocols.js';
import { ErrorCode, joinError, syncError, UNKNOWN_MEMBER_ID, type JoinRequest, type JoinResult, type Member, type MemberIdentity, type SyncRequest, type SyncResult } from './group-types.js';

export interface GroupSettings {
  initialRebalanceDelayMs: number;
  maxSize: number;
}

/** Where the group reports its rebalances (a pino child logger in the broker). */
export interface GroupLog {
  info(fields: object, message: string): void;
}

/** Persists the group as it is now; the group awaits it where Kafka does (sync completion). */
export type PersistGroup = (group: Group) => Promise<void>;

export interface ClassicGroupOptions {
  groupId: string;
  clock: Clock;
  settings: GroupSettings;
  persist: PersistGroup;
  log?: GroupLog;
}

const EMPTY = Buffer.alloc(0);

/**
 * How long a new member may wait in its first JoinGroup (Kafka's
 * classic-group new-member join timeout, fixed at 5 minutes): it has no
 * generation to heartbeat with, so its session timeout does not apply yet.
 */
export const NEW_MEMBER_JOIN_TIMEOUT_MS = 5 * 60 * 1000;

export class ClassicGroup extends ClassicGroupMetadata {
  private readonly pendingMembers = new Map<string, Timer>();
  private rebalanceTimer: Timer | null = null;
  /** This join phase started from Empty (Kafka: previous state Empty): only the initial delay ends it. */
  private initialRebalance = false;
  /** A member joined since the initial delay last ended. */
  private newMemberAdded = false;
  private syncTimer: Timer | null = null;
  /** Members of this generation that have not sent SyncGroup yet (Kafka's pending sync members). */
  private readonly pendingSyncMembers = new Set<string>();
  private readonly settings: GroupSettings;
  private readonly persist: PersistGroup;
  private readonly log: GroupLog;

  constructor(options: ClassicGroupOptions) {
    super(options.groupId, options.clock);
    this.settings = options.settings;
    this.persist = options.persist;
    this.log = options.log ?? { info: () => {} };
  }

  // ---- JoinGroup ---------------------------------------------------------

  join(req: JoinRequest): Promise<JoinResult> {
    if (this.state === 'Dead') return Promise.resolve(joinError(ErrorCode.COORDINATOR_NOT_AVAILABLE, req.memberId));
    if (!supportsProtocols([...this.members.values()], this.protocolType, req.protocolType, req.protocols)) return Promise.resolve(joinError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, req.memberId));

    if (req.memberId === UNKNOWN_MEMBER_ID) {
      const newMemberId = `${req.clientId}-${randomUUID()}`;
      if (req.groupInstanceId !== null) {
        const existing = this.staticMembers.get(req.groupInstanceId);
        if (existing !== undefined) return this.replaceStaticMember(existing, newMemberId, req);
        return this.addMemberAndRebalance(newMemberId, req);
      }
      if (this.members.size >= this.settings.maxSize) return Promise.resolve(joinError(ErrorCode.GROUP_MAX_SIZE_REACHED));
      if (req.requireKnownMemberId) {
        // KIP-394: hand out the id first, so a client that times out and retries does not leave a ghost member.
        this.pendingMembers.get(newMemberId)?.cancel();
        this.pendingMembers.set(
          newMemberId,
          this.clock.setTimeout(() => this.onPendingMemberExpired(newMemberId), req.sessionTimeoutMs),
        );
        return Promise.resolve(joinError(ErrorCode.MEMBER_ID_REQUIRED, newMemberId));
      }
      return this.addMemberAndRebalance(newMemberId, req);
    }

    const pending = this.pendingMembers.get(req.memberId);
    if (pending) {
      pending.cancel();
      this.pendingMembers.delete(req.memberId);
      if (this.members.size >= this.settings.maxSize) return Promise.resolve(joinError(ErrorCode.GROUP_MAX_SIZE_REACHED, req.memberId));
      return this.addMemberAndRebalance(req.memberId, req);
    }
    const error = this.validateMember(req.memberId, req.groupInstanceId);
    if (error !== ErrorCode.NONE) return Promise.resolve(joinError(error, req.memberId));
    const member = this.members.get(req.memberId)!;
    switch (this.state) {
      case 'PreparingRebalance':
        return this.updateMemberAndRebalance(member, req);
      case 'CompletingRebalance':
        if (sameProtocols(member, req.protocols)) {
          // A retried join of this generation: answer it again.
          return Promise.resolve(this.joinResponse(member, ErrorCode.NONE));
        }
        return this.updateMemberAndRebalance(member, req);
      case 'Stable':
        if (this.isLeader(member.memberId) || !sameProtocols(member, req.protocols)) return this.updateMemberAndRebalance(member, req);
        this.scheduleHeartbeat(member);
        return Promise.resolve({ ...this.joinResponse(member, ErrorCode.NONE), members: [] });
      default:
        return Promise.resolve(joinError(ErrorCode.UNKNOWN_MEMBER_ID, req.memberId));
    }
  }

  private addMemberAndRebalance(memberId: string, req: JoinRequest): Promise<JoinResult> {
    const member = this.addMember(memberId, req);
    const result = new Promise<JoinResult>((resolve) => (member.awaitingJoin = resolve));
    this.scheduleHeartbeat(member, NEW_MEMBER_JOIN_TIMEOUT_MS);
    if (this.state === 'PreparingRebalance') {
      if (this.initialRebalance) this.newMemberAdded = true;
      this.maybeCompleteJoin();
    } else {
      this.prepareRebalance(`member ${memberId} joined`);
    }
    return result;
  }

  private updateMemberAndRebalance(member: Member, req: JoinRequest): Promise<JoinResult> {
    member.protocols = req.protocols;
    member.sessionTimeoutMs = req.sessionTimeoutMs;
    member.rebalanceTimeoutMs = req.rebalanceTimeoutMs;
    member.clientId = req.clientId;
    member.clientHost = req.clientHost;
    // A duplicate join while one is parked: the older one is superseded.
    member.awaitingJoin?.(joinError(ErrorCode.UNKNOWN_MEMBER_ID, member.memberId));
    // No new session deadline: a member waiting in JoinGroup is kept alive until the join phase ends.
    const result = new Promise<JoinResult>((resolve) => (member.awaitingJoin = resolve));
    if (this.state === 'PreparingRebalance') this.maybeCompleteJoin();
    else this.prepareRebalance(`member ${member.memberId} rejoined`);
    return result;
  }

  /**
   * A static member came back with a new member id (it restarted): it takes
   * the old member's place and assignment. In a Stable group with unchanged
   * protocols nobody else notices: no rebalance, same generation.
   */
  private replaceStaticMember(oldMemberId: string, newMemberId: string, req: JoinRequest): Promise<JoinResult> {
    const old = this.members.get(oldMemberId)!;
    old.heartbeatTimer?.cancel();
    old.awaitingJoin?.(joinError(ErrorCode.FENCED_INSTANCE_ID, oldMemberId));
    old.awaitingSync?.(syncError(ErrorCode.FENCED_INSTANCE_ID));
    this.members.delete(oldMemberId);
    const member: Member = { ...old, memberId: newMemberId, awaitingJoin: null, awaitingSync: null, heartbeatTimer: null, clientId: req.clientId, clientHost: req.clientHost };
    this.members.set(newMemberId, member);
    this.staticMembers.set(req.groupInstanceId!, newMemberId);
    if (this.leaderId === oldMemberId) this.leaderId = newMemberId;
    this.scheduleHeartbeat(member);

    if (this.state === 'Stable' && sameProtocols(old, req.protocols)) {
      member.sessionTimeoutMs = req.sessionTimeoutMs;
      member.rebalanceTimeoutMs = req.rebalanceTimeoutMs;
      const response = this.joinResponse(member, ErrorCode.NONE);
      return this.persist(this).then(
        () => ({ ...response, skipAssignment: this.isLeader(newMemberId) }),
        () => joinError(ErrorCode.COORDINATOR_NOT_AVAILABLE, newMemberId),
      );
    }
    return this.updateMemberAndRebalance(member, req);
  }

  // ---- rebalance ---------------------------------------------------------

  /** A rebalance from outside the group's own events: a consumer group just downgraded to this one (its members rejoin). */
  rebalance(reason: string): void {
    if (this.state === 'Stable' || this.state === 'CompletingRebalance') this.prepareRebalance(reason);
  }

  /**
   * The group becomes a consumer group (Kafka's online upgrade): members
   * waiting in JoinGroup or SyncGroup are answered REBALANCE_IN_PROGRESS, so
   * they rejoin the consumer group, and this object stops serving.
   */
  yieldToConsumerGroup(): void {
    for (const m of this.members.values()) {
      m.awaitingJoin?.(joinError(ErrorCode.REBALANCE_IN_PROGRESS, m.memberId));
      m.awaitingSync?.(syncError(ErrorCode.REBALANCE_IN_PROGRESS));
      m.awaitingJoin = null;
      m.awaitingSync = null;
    }
    this.transitionTo('Dead');
    this.shutdown();
  }

  private prepareRebalance(reason: string): void {
    this.log.info({ group: this.groupId, state: this.state, generation: this.generationId, members: this.members.size, reason }, 'preparing to rebalance');
    this.syncTimer?.cancel();
    this.syncTimer = null;
    this.pendingSyncMembers.clear();
    if (this.state === 'CompletingRebalance') {
      for (const m of this.members.values()) {
        m.assignment = EMPTY;
        this.answerSync(m, syncError(ErrorCode.REBALANCE_IN_PROGRESS));
      }
    }
    const wasEmpty = this.state === 'Empty';
    this.transitionTo('PreparingRebalance');
    this.rebalanceTimer?.cancel();
    this.newMemberAdded = false;
    const delayMs = this.settings.initialRebalanceDelayMs;
    if (wasEmpty && delayMs > 0) {
      // group.initial.rebalance.delay.ms: give other members of a starting group time to join.
      this.initialRebalance = true;
      this.scheduleInitialDelay(delayMs, Math.max(this.maxRebalanceTimeoutMs() - delayMs, 0));
      return;
    }
    this.initialRebalance = false;
    this.rebalanceTimer = this.clock.setTimeout(() => this.completeJoin(), this.maxRebalanceTimeoutMs());
    this.maybeCompleteJoin();
  }

  /**
   * Kafka's initial delayed join: when the delay ends and members joined
   * during it, wait one more delay, until the first member's rebalance
   * timeout is used up; otherwise the join phase ends.
   */
  private scheduleInitialDelay(delayMs: number, remainingMs: number): void {
    this.rebalanceTimer = this.clock.setTimeout(() => {
      if (!this.newMemberAdded || remainingMs === 0) return this.completeJoin();
      this.newMemberAdded = false;
      this.scheduleInitialDelay(Math.min(this.settings.initialRebalanceDelayMs, remainingMs), Math.max(remainingMs - delayMs, 0));
    }, delayMs);
  }

  /** Kafka's hasAllMembersJoined: every member waits in JoinGroup and no handed-out member id is still unused. */
  private allMembersJoined(): boolean {
    for (const m of this.members.values()) if (!m.awaitingJoin) return false;
    return this.pendingMembers.size === 0;
  }

  /** Ends the join phase early once everyone has joined, except in the initial delay. */
  private maybeCompleteJoin(): void {
    if (this.state === 'PreparingRebalance' && !this.initialRebalance && this.allMembersJoined()) this.completeJoin();
  }

  /**
   * Ends the join phase: drops dynamic members that did not rejoin (a static
   * member stays, for its session timeout to judge), starts the next
   * generation, answers every parked join.
   */
  private completeJoin(): void {
    if (this.state !== 'PreparingRebalance') return;
    this.rebalanceTimer?.cancel();
    this.rebalanceTimer = null;
    this.initialRebalance = false;
    this.newMemberAdded = false;
    for (const m of [...this.members.values()]) {
      if (!m.awaitingJoin && m.groupInstanceId === null) this.removeMemberOnly(m);
    }
    if (this.members.size > 0 && !this.electJoinedLeader()) {
      // Only static members that did not rejoin are left: wait another rebalance timeout for them.
      this.rebalanceTimer = this.clock.setTimeout(() => this.completeJoin(), this.maxRebalanceTimeoutMs());
      return;
    }
    this.generationId += 1;
    if (this.members.size === 0) {
      this.protocolName = null;
      this.leaderId = null;
      this.transitionTo('Empty');
      void this.persist(this).catch(() => {});
      return;
    }
    this.protocolName = selectProtocol([...this.members.values()]);
    this.transitionTo('CompletingRebalance');
    this.log.info({ group: this.groupId, generation: this.generationId, protocol: this.protocolName, members: this.members.size }, 'generation started');
    for (const m of this.members.values()) {
      m.isNew = false;
      const respond = m.awaitingJoin;
      m.awaitingJoin = null;
      respond?.(this.joinResponse(m, ErrorCode.NONE));
      this.scheduleHeartbeat(m);
      this.pendingSyncMembers.add(m.memberId);
    }
    // Members that never send SyncGroup are dropped after the rebalance timeout, even once the
    // group is Stable, and the group rebalances again.
    const generation = this.generationId;
    this.syncTimer = this.clock.setTimeout(() => {
      if ((this.state !== 'CompletingRebalance' && this.state !== 'Stable') || this.generationId !== generation) return;
      if (this.pendingSyncMembers.size === 0) return;
      // An id that a restarted static member replaced stays pending, as on Kafka: the group rebalances.
      for (const memberId of [...this.pendingSyncMembers]) {
        const m = this.members.get(memberId);
        if (m) this.removeMemberOnly(m);
      }
      this.prepareRebalance('members failed to sync');
    }, this.maxRebalanceTimeoutMs());
  }

  /** A member sent SyncGroup for this generation; once all have, the sync deadline goes. */
  private syncReceived(memberId: string): void {
    this.pendingSyncMembers.delete(memberId);
    if (this.pendingSyncMembers.size > 0) return;
    this.syncTimer?.cancel();
    this.syncTimer = null;
  }

  // ---- SyncGroup ---------------------------------------------------------

  sync(req: SyncRequest): Promise<SyncResult> {
    if (this.state === 'Dead') return Promise.resolve(syncError(ErrorCode.COORDINATOR_NOT_AVAILABLE));
    const error = this.validateMember(req.memberId, req.groupInstanceId);
    if (error !== ErrorCode.NONE) return Promise.resolve(syncError(error));
    if (req.generationId !== this.generationId) return Promise.resolve(syncError(ErrorCode.ILLEGAL_GENERATION));
    // Kafka's isProtocolInconsistent: only when both the request and the group name one (a group
    // waiting for its first generation has no protocol yet, and the request then meets its state).
    if (protocolInconsistent(req.protocolType, this.protocolType) || protocolInconsistent(req.protocolName, this.protocolName)) {
      return Promise.resolve(syncError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL));
    }
    const member = this.members.get(req.memberId)!;
    switch (this.state) {
      case 'PreparingRebalance':
        return Promise.resolve(syncError(ErrorCode.REBALANCE_IN_PROGRESS));
      case 'Stable':
        this.syncReceived(member.memberId);
        this.scheduleHeartbeat(member);
        return Promise.resolve(this.syncResponse(member));
      case 'CompletingRebalance': {
        this.syncReceived(member.memberId);
        const result = new Promise<SyncResult>((resolve) => (member.awaitingSync = resolve));
        this.scheduleHeartbeat(member);
        if (this.isLeader(member.memberId)) void this.completeSync(req.assignments);
        return result;
      }
      default:
        return Promise.resolve(syncError(ErrorCode.UNKNOWN_MEMBER_ID));
    }
  }

  /** The leader's assignment arrived: store the group, then hand every member its share. */
  private async completeSync(assignments: { memberId: string; assignment: Buffer }[]): Promise<void> {
    const generation = this.generationId;
    const byMember = new Map(assignments.map((a) => [a.memberId, a.assignment]));
    for (const m of this.members.values()) m.assignment = byMember.get(m.memberId) ?? EMPTY;
    let failed = false;
    await this.persist(this).catch(() => (failed = true));
    if (this.state !== 'CompletingRebalance' || this.generationId !== generation) return;
    if (failed) {
      for (const m of this.members.values()) {
        m.assignment = EMPTY;
        this.answerSync(m, syncError(ErrorCode.COORDINATOR_NOT_AVAILABLE));
      }
      this.prepareRebalance('storing the group failed');
      return;
    }
    this.transitionTo('Stable');
    for (const m of this.members.values()) this.answerSync(m, this.syncResponse(m));
  }

  /**
   * Answers a member waiting in SyncGroup and starts its session afresh
   * (Kafka's propagateAssignment): while it waited, its expiry was ignored,
   * and a deadline from before the answer would drop it before it can act.
   */
  private answerSync(member: Member, result: SyncResult): void {
    const respond = member.awaitingSync;
    if (!respond) return;
    member.awaitingSync = null;
    respond(result);
    this.scheduleHeartbeat(member);
  }

  // ---- Heartbeat and LeaveGroup ------------------------------------------

  heartbeat(memberId: string, groupInstanceId: string | null, generationId: number): number {
    if (this.state === 'Dead') return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    const error = this.validateMember(memberId, groupInstanceId);
    if (error !== ErrorCode.NONE) return error;
    if (generationId !== this.generationId) return ErrorCode.ILLEGAL_GENERATION;
    this.scheduleHeartbeat(this.members.get(memberId)!);
    return this.state === 'PreparingRebalance' ? ErrorCode.REBALANCE_IN_PROGRESS : ErrorCode.NONE;
  }

  /** Removes the named members; one error code per member, in order. */
  leave(members: MemberIdentity[]): number[] {
    if (this.state === 'Dead') return members.map(() => ErrorCode.COORDINATOR_NOT_AVAILABLE);
    let changed = false;
    const errors = members.map(({ memberId, groupInstanceId }) => {
      if (groupInstanceId !== null) {
        const existing = this.staticMembers.get(groupInstanceId);
        if (existing === undefined) return ErrorCode.UNKNOWN_MEMBER_ID;
        if (memberId !== UNKNOWN_MEMBER_ID && existing !== memberId) return ErrorCode.FENCED_INSTANCE_ID;
        this.removeMemberOnly(this.members.get(existing)!);
        changed = true;
        return ErrorCode.NONE;
      }
      const pending = this.pendingMembers.get(memberId);
      if (pending) {
        pending.cancel();
        this.pendingMembers.delete(memberId);
        changed = true;
        return ErrorCode.NONE;
      }
      const member = this.members.get(memberId);
      if (!member) return ErrorCode.UNKNOWN_MEMBER_ID;
      this.removeMemberOnly(member);
      changed = true;
      return ErrorCode.NONE;
    });
    if (changed) this.afterMembershipChange('members left');
    return errors;
  }

  private removeMemberOnly(member: Member): void {
    member.heartbeatTimer?.cancel();
    // Kafka answers a removed member's parked join without a member id: the client starts over.
    member.awaitingJoin?.(joinError(ErrorCode.UNKNOWN_MEMBER_ID));
    member.awaitingSync?.(syncError(ErrorCode.UNKNOWN_MEMBER_ID));
    this.forgetMember(member);
    this.pendingSyncMembers.delete(member.memberId);
  }

  private afterMembershipChange(reason: string): void {
    switch (this.state) {
      case 'Stable':
      case 'CompletingRebalance':
        this.prepareRebalance(reason);
        break;
      case 'PreparingRebalance':
        this.maybeCompleteJoin();
        break;
      default:
        break;
    }
  }

  protected scheduleHeartbeat(member: Member, timeoutMs = member.sessionTimeoutMs): void {
    member.heartbeatTimer?.cancel();
    member.heartbeatTimer = this.clock.setTimeout(() => this.onSessionExpired(member), timeoutMs);
  }

  /**
   * The member's deadline passed without a heartbeat. A known member parked
   * in a join or sync is kept (Kafka's hasSatisfiedHeartbeat): the rebalance
   * deadlines govern it, and its session restarts when it is answered. A new
   * member's deadline is the new-member join timeout.
   */
  private onSessionExpired(member: Member): void {
    if (this.members.get(member.memberId) !== member) return;
    if ((member.awaitingJoin && !member.isNew) || member.awaitingSync) {
      this.scheduleHeartbeat(member);
      return;
    }
    this.removeMemberOnly(member);
    // Kafka's removeMemberAndUpdateGroup: a join phase waiting only for this member ends now, initial delay or not.
    if (this.state === 'PreparingRebalance') {
      if (this.allMembersJoined()) this.completeJoin();
    } else {
      this.afterMembershipChange(`member ${member.memberId} session expired`);
    }
  }

  /** A member id handed out with MEMBER_ID_REQUIRED was not used within the session timeout: the join phase stops waiting for it. */
  private onPendingMemberExpired(memberId: string): void {
    this.pendingMembers.delete(memberId);
    if (this.state === 'PreparingRebalance' && this.allMembersJoined()) this.completeJoin();
  }

  // ---- offsets, restore, deletion ----------------------------------------

  /** DeleteGroups: only an empty group may go. */
  markDead(): void {
    this.transitionTo('Dead');
    this.shutdown();
  }

  /**
   * This broker stops coordinating the group (its slot moved to another
   * broker): like Kafka's unload, members waiting in JoinGroup or SyncGroup
   * are answered NOT_COORDINATOR and find the new coordinator, which
   * restores the group from its last stored state.
   */
  unload(): void {
    this.transitionTo('Dead');
    this.shutdown();
    for (const m of this.members.values()) {
      m.awaitingJoin?.(joinError(ErrorCode.NOT_COORDINATOR, m.memberId));
      m.awaitingSync?.(syncError(ErrorCode.NOT_COORDINATOR));
      m.awaitingJoin = null;
      m.awaitingSync = null;
    }
  }

  /** Cancels every timer (broker shutdown). */
  shutdown(): void {
    this.rebalanceTimer?.cancel();
    this.syncTimer?.cancel();
    for (const t of this.pendingMembers.values()) t.cancel();
    for (const m of this.members.values()) m.heartbeatTimer?.cancel();
  }
}
