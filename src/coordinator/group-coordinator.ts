// The group coordinator: owns the groups of the coordinator slots this broker
// holds (see coordination.ts), restores them from PostgreSQL when it takes a
// slot, drops them when the slot moves on, and keeps committed offsets. It
// sees a group only through the Group interface (group.ts), except where a
// classic-protocol API asks for a classic group.
// Every write of group state is fenced by the slot's lease in the database;
// a refused write means another broker holds the slot now, and the slot's
// groups stop being served here at once.
import type { Logger } from '../observability/logger.js';
import { ErrorCode } from '../protocol/errors.js';
import type { StoredGroup } from '../storage/pg/group-codec.js';
import type { GroupStore, OffsetToCommit } from '../storage/pg/group-store.js';
import { LeaseLostError, type CoordinatorLease } from '../storage/coordinator-lease.js';
import type { TopicManager } from '../log/topic-manager.js';
import { ClassicGroup, type GroupSettings } from './classic-group.js';
import { systemClock, type Clock, type Timer } from '../clock.js';
import { slotOf, type SlotOwner } from './coordination.js';
import type { Group, ListedGroup, OffsetCommitter } from './group.js';
import { LogCode } from '../observability/log-codes.js';
import { ConsumerGroup, heartbeatError, type ConsumerHeartbeat, type ConsumerHeartbeatResult, type TopicImage } from './consumer-group.js';
import type { ConsumerGroupDescribeResponseDescribedGroup } from '../protocol/messages/index.js';
import { describeConsumerGroup } from './consumer-group-describe.js';
import { classicHeartbeat, classicJoin, classicLeave, classicSync, downgradeEnabled, joinTopicNames, upgradeEnabled, type MigrationPolicy } from './consumer-group-classic.js';
import { classicGroupFromConsumer, classicGroupTopicNames, consumerGroupFromClassic, upgradeRefusal } from './group-migration.js';
import { joinError, syncError, type JoinRequest, type JoinResult, type MemberIdentity, type SyncRequest, type SyncResult } from './group-types.js';
import { resolveRegularExpressions } from './consumer-group-regex.js';
import type { GroupConfigs } from './group-configs.js';

/** How long a group is left where it is after a rebalance completes, before its slot may be handed to another broker. */
const SETTLE_MS = 5000;

export interface CoordinatorSettings extends GroupSettings {
  minSessionTimeoutMs: number;
  maxSessionTimeoutMs: number;
  offsetsRetentionMs: number;
  offsetsRetentionCheckIntervalMs: number;
  offsetMetadataMaxBytes: number;
  /** KIP-848 consumer groups: Kafka's group.consumer.session.timeout.ms, group.consumer.heartbeat.interval.ms, group.consumer.max.size. */
  consumerSessionTimeoutMs: number;
  consumerHeartbeatIntervalMs: number;
  consumerMaxSize: number;
  consumerAssignmentIntervalMs: number;
  /** Kafka's group.consumer.migration.policy: online upgrade and downgrade between the protocols. */
  consumerMigrationPolicy: MigrationPolicy;
  /** `consumer` is among Kafka's group.coordinator.rebalance.protocols: the KIP-848 APIs are served. */
  consumerProtocolEnabled: boolean;
  /** Kafka's group.consumer.regex.refresh.interval.ms: regular-expression subscriptions are resolved again at least this often. */
  consumerRegexRefreshIntervalMs: number;
}

export interface CommitPartition {
  topic: string;
  partition: number;
  committedOffset: bigint;
  leaderEpoch: number;
  metadata: string | null;
  /** OffsetCommit v1: the client's commit timestamp (ms), -1 for the broker's clock. */
  commitTimestampMs?: bigint;
  /** OffsetCommit v2-v4: retention time (ms), -1 for offsets.retention.minutes. */
  retentionTimeMs?: bigint;
}

/**
 * Kafka compares the metadata's String.length() (UTF-16 code units, as a
 * JavaScript string's length) with offset.metadata.max.bytes, not its bytes.
 */
export function metadataTooLarge(metadata: string | null, maxBytes: number): boolean {
  return metadata !== null && metadata.length > maxBytes;
}

export interface FetchedOffset {
  topic: string;
  partition: number;
  committedOffset: bigint;
  leaderEpoch: number;
  metadata: string | null;
  errorCode: number;
}

export interface GroupCoordinatorOptions {
  store: GroupStore;
  topics: TopicManager;
  settings: CoordinatorSettings;
  log: Logger;
  /** This broker instance: its slot leases fence every write of group state. */
  instanceId: string;
  clock?: Clock;
  /** Configs set per group: a consumer group's session timeout, heartbeat and assignment intervals come from them when set. */
  groupConfigs?: GroupConfigs;
}

/** A committer of OffsetCommit or TxnOffsetCommit, as the request names it. */
export type Committer = Omit<OffsetCommitter, 'isTransactional'>;

export class GroupCoordinator implements SlotOwner {
  private readonly groups = new Map<string, Group>();
  private expiryTimer: Timer | null = null;
  /** Writes of one group's metadata are applied in order. */
  private readonly persistChains = new Map<string, Promise<void>>();
  /** ConsumerGroupHeartbeats of one group are applied one at a time (topic look-ups included). */
  private readonly heartbeatChains = new Map<string, Promise<unknown>>();
  /** The lease epoch of each slot whose groups are loaded here: every write of their state is fenced by it. */
  private readonly slotEpochs = new Map<number, bigint>();
  /** Tells the slot's keeper (Coordination) that a write under the slot's lease was refused. */
  private reportLeaseLost: (slot: number) => void = () => {};

  private readonly store: GroupStore;
  private readonly topics: TopicManager;
  readonly settings: CoordinatorSettings;
  private readonly log: Logger;
  private readonly instanceId: string;
  private readonly clock: Clock;
  private readonly groupConfigs: GroupConfigs | undefined;

  constructor(options: GroupCoordinatorOptions) {
    this.groupConfigs = options.groupConfigs;
    this.store = options.store;
    this.topics = options.topics;
    this.settings = options.settings;
    this.log = options.log;
    this.instanceId = options.instanceId;
    this.clock = options.clock ?? systemClock;
  }

  /** The lease a write of the group's state is made under (epoch -1, refused, when its slot is not loaded here). */
  private lease(groupId: string): CoordinatorLease {
    const slot = slotOf(groupId);
    return { slot, instanceId: this.instanceId, epoch: this.slotEpochs.get(slot) ?? -1n };
  }

  onLeaseLost(report: (slot: number) => void): void {
    this.reportLeaseLost = report;
  }

  /**
   * A write of `groupId`'s state was refused: the slot's lease is another
   * broker's now (this one paused past it, or lost the database for longer),
   * and nothing was written. Every group of the slot is unloaded — members
   * waiting in JoinGroup or SyncGroup are answered NOT_COORDINATOR — and the
   * slot stops being served, so the next request for its groups is answered
   * NOT_COORDINATOR too; the slot's holder serves them from what it stored.
   */
  private leaseLost(err: LeaseLostError, groupId: string, write: string): void {
    this.slotEpochs.delete(err.slot);
    const unloaded = [...this.groups.values()].filter((g) => slotOf(g.groupId) === err.slot);
    for (const g of unloaded) {
      g.unload();
      this.groups.delete(g.groupId);
    }
    this.log.warn(
      { group: groupId, slot: err.slot, write, groupsUnloaded: unloaded.length, code: LogCode.COORDINATOR_LEASE_LOST },
      'coordinator slot lost to another broker: write refused, its groups are no longer served here',
    );
    this.reportLeaseLost(err.slot);
  }

  /** Restores the stored groups of the slots (and groups that only have offsets) before the slots are served. */
  async acquire(slots: ReadonlyMap<number, bigint>): Promise<void> {
    for (const [slot, epoch] of slots) this.slotEpochs.set(slot, epoch);
    let restored = 0;
    for (const stored of await this.store.loadGroups()) {
      if (!slots.has(slotOf(stored.groupId))) continue;
      this.groups.get(stored.groupId)?.unload();
      restored++;
      this.restoreGroup(stored);
    }
    for (const groupId of await this.store.offsetOnlyGroupIds()) if (slots.has(slotOf(groupId)) && !this.groups.has(groupId)) this.newClassicGroup(groupId);
    if (restored > 0) this.log.info({ groups: restored }, 'restored consumer groups');
    if (!this.expiryTimer) this.scheduleExpiry();
  }

  /** The slots moved to another broker: their groups are unloaded once their pending writes have landed, so the next coordinator reads them whole. */
  async release(slots: ReadonlySet<number>): Promise<void> {
    for (const slot of slots) this.slotEpochs.delete(slot);
    const leaving = [...this.groups.values()].filter((g) => slots.has(slotOf(g.groupId)));
    for (const g of leaving) {
      g.unload();
      this.groups.delete(g.groupId);
    }
    await Promise.all(leaving.map((g) => this.persistChains.get(g.groupId)?.catch(() => {})));
  }

  /**
   * Whether a group of the slot is in a rebalance: preparing or completing
   * one, or Stable for less than SETTLE_MS (its followers may still be
   * fetching their assignments with SyncGroup; a group just restored here
   * may still be finding its members). Its slot is then not handed over.
   */
  rebalancing(slot: number): boolean {
    const settled = this.clock.now() - SETTLE_MS;
    for (const g of this.groups.values()) if (slotOf(g.groupId) === slot && g.isRebalancing(settled)) return true;
    return false;
  }

  /** A group as last stored, by its type. */
  private restoreGroup(stored: StoredGroup): Group {
    switch (stored.type) {
      case 'classic': {
        const group = this.newClassicGroup(stored.groupId);
        group.restore(stored);
        return group;
      }
      case 'consumer': {
        const group = this.newConsumerGroup(stored.groupId);
        group.restore(stored);
        return group;
      }
    }
  }

  private newConsumerGroup(groupId: string): ConsumerGroup {
    const { settings, groupConfigs } = this;
    const group = new ConsumerGroup({
      groupId,
      clock: this.clock,
      // Read at each use: the group's configs may change while it runs (Kafka's consumerGroupSessionTimeoutMs(groupId)).
      settings: {
        get sessionTimeoutMs() {
          return groupConfigs?.consumerSessionTimeoutMs(groupId) ?? settings.consumerSessionTimeoutMs;
        },
        get heartbeatIntervalMs() {
          return groupConfigs?.consumerHeartbeatIntervalMs(groupId) ?? settings.consumerHeartbeatIntervalMs;
        },
        maxSize: settings.consumerMaxSize,
        get assignmentIntervalMs() {
          return groupConfigs?.consumerAssignmentIntervalMs(groupId) ?? settings.consumerAssignmentIntervalMs;
        },
      },
      persist: (g) => this.persist(g),
      log: this.log,
      downgrade: (g, leavingMemberIds) => this.maybeDowngrade(g, leavingMemberIds),
    });
    this.groups.set(groupId, group);
    return group;
  }

  /**
   * Kafka's online downgrade (validateOnlineDowngradeWithFencedMembers and
   * convertToClassicGroup): when the members about to be fenced are the
   * last consumer-protocol ones and classic members remain, the group
   * becomes a classic group at its epoch, each member keeping its target
   * assignment, and rebalances so the members rejoin it.
   */
  private maybeDowngrade(group: ConsumerGroup, leavingMemberIds: ReadonlySet<string>): boolean {
    const remaining = [...group.members.keys()].filter((id) => !leavingMemberIds.has(id)).length;
    if (!group.allMembersUseClassicProtocolExcept(leavingMemberIds) || remaining === 0) return false;
    if (!downgradeEnabled(this.settings.consumerMigrationPolicy) || remaining > this.settings.maxSize) {
      this.log.info({ group: group.groupId }, 'the consumer group keeps the consumer protocol: online downgrade is disabled or the group is larger than a classic group may be');
      return false;
    }
    const stored = classicGroupFromConsumer(group, leavingMemberIds, (topicId) => this.topics.getById(topicId)?.name ?? null);
    if (!stored) return false;
    group.unload();
    const classic = this.newClassicGroup(group.groupId);
    classic.restore(stored);
    this.log.info({ group: group.groupId, generation: stored.generation, members: stored.members.length, code: LogCode.GROUP_MIGRATED }, 'downgraded the consumer group to a classic group');
    classic.rebalance(`Downgrade group ${group.groupId} from consumer to classic.`);
    void this.persist(classic).catch(() => {});
    return true;
  }

  /**
   * Kafka's online upgrade (validateOnlineUpgrade and convertToConsumerGroup):
   * the classic group becomes a consumer group whose members keep their
   * generation and partitions; its waiting members are told to rejoin. The
   * message Kafka refuses it with (GROUP_ID_NOT_FOUND) otherwise.
   */
  private async upgrade(classic: ClassicGroup): Promise<ConsumerGroup | string> {
    const refusal = upgradeRefusal(classic, upgradeEnabled(this.settings.consumerMigrationPolicy), this.settings.consumerMaxSize);
    if (refusal !== null) return refusal;
    const image = await this.topicImage(classicGroupTopicNames(classic));
    if (this.groups.get(classic.groupId) !== classic || classic.isDead()) return `Group ${classic.groupId} is not a consumer group.`;
    const stored = consumerGroupFromClassic(classic, (name) => image.byName(name)?.topicId ?? null);
    if (typeof stored === 'string') return stored;
    classic.yieldToConsumerGroup();
    const group = this.newConsumerGroup(classic.groupId);
    group.restore(stored);
    this.log.info({ group: classic.groupId, generation: stored.groupEpoch, members: stored.members.length, code: LogCode.GROUP_MIGRATED }, 'upgraded the classic group to a consumer group');
    return group;
  }

  private newClassicGroup(groupId: string): ClassicGroup {
    const group = new ClassicGroup({ groupId, clock: this.clock, settings: this.settings, persist: (g) => this.persist(g), log: this.log });
    this.groups.set(groupId, group);
    return group;
  }

  /** The group this broker serves under the id (none once deleted or unloaded). */
  get(groupId: string): Group | undefined {
    const group = this.groups.get(groupId);
    return group && !group.isDead() ? group : undefined;
  }

  /** The group, if it is a classic group: what JoinGroup, SyncGroup, Heartbeat and LeaveGroup act on. */
  classicGroup(groupId: string): ClassicGroup | undefined {
    const group = this.get(groupId);
    return group instanceof ClassicGroup ? group : undefined;
  }

  /**
   * JoinGroup: a consumer group with members serves the classic member
   * itself (consumer-group-classic.ts); otherwise the classic group, created
   * Empty if the id is unknown or an empty consumer group has it (Kafka
   * deletes that one).
   */
  async joinGroup(groupId: string, req: JoinRequest): Promise<JoinResult> {
    if (this.get(groupId) instanceof ConsumerGroup) {
      const served = await this.serially(groupId, async () => {
        const group = this.get(groupId);
        if (!(group instanceof ConsumerGroup) || group.isEmpty()) return null;
        const image = await this.topicImage([...group.subscribedTopicNames(), ...joinTopicNames(req)]);
        if (group.isDead()) return joinError(ErrorCode.NOT_COORDINATOR, req.memberId);
        const result = classicJoin(group, req, this.settings.consumerMigrationPolicy, image, this.settings.consumerMaxSize);
        if (result.errorCode !== ErrorCode.NONE) return result;
        return this.persistCurrent(groupId, group).then(
          () => result,
          (err) => joinError(err instanceof LeaseLostError ? ErrorCode.NOT_COORDINATOR : ErrorCode.COORDINATOR_NOT_AVAILABLE, req.memberId),
        );
      });
      if (served) return served;
    }
    let group = this.get(groupId);
    if (!(group instanceof ClassicGroup)) {
      group?.shutdown();
      group = this.newClassicGroup(groupId);
    }
    return (group as ClassicGroup).join(req);
  }

  /** SyncGroup: the classic group's, or a classic member's of a consumer group (UNKNOWN_MEMBER_ID for an empty or unknown group). */
  async syncGroup(groupId: string, req: SyncRequest): Promise<SyncResult> {
    const group = this.get(groupId);
    if (group instanceof ClassicGroup) return group.sync(req);
    if (!(group instanceof ConsumerGroup) || group.isEmpty()) return syncError(ErrorCode.UNKNOWN_MEMBER_ID);
    // The assigned topics' names (a broker just started may not have them cached yet).
    const names = new Map<string, string | null>();
    for (const topicId of group.members.get(req.memberId)?.assigned.keys() ?? []) names.set(topicId, (await this.topics.getByIdLoading(topicId))?.name ?? null);
    return classicSync(group, req, (topicId) => names.get(topicId) ?? this.topics.getById(topicId)?.name ?? null);
  }

  /** Heartbeat: the classic group's, or a classic member's of a consumer group. */
  heartbeatGroup(groupId: string, memberId: string, groupInstanceId: string | null, generationId: number): number {
    const group = this.get(groupId);
    if (group instanceof ClassicGroup) return group.heartbeat(memberId, groupInstanceId, generationId);
    if (group instanceof ConsumerGroup) return classicHeartbeat(group, memberId, groupInstanceId, generationId);
    return ErrorCode.UNKNOWN_MEMBER_ID;
  }

  /** LeaveGroup: one error per member (UNKNOWN_MEMBER_ID for each when the group is unknown), or null when the group is unknown. */
  async leaveGroup(groupId: string, members: MemberIdentity[]): Promise<number[] | null> {
    const group = this.get(groupId);
    if (group instanceof ClassicGroup) return group.leave(members);
    if (!(group instanceof ConsumerGroup)) return null;
    return this.serially(groupId, async () => {
      const current = this.get(groupId);
      if (!(current instanceof ConsumerGroup)) return current instanceof ClassicGroup ? current.leave(members) : null;
      const image = await this.topicImage(current.subscribedTopicNames());
      const errors = classicLeave(current, members, image);
      if (errors.some((e) => e === ErrorCode.NONE)) await this.persistCurrent(groupId, current).catch(() => {});
      return errors;
    });
  }

  /** Stores the group now served under the id: the one given, or the group that replaced it in an online migration. */
  private persistCurrent(groupId: string, group: Group): Promise<void> {
    const current = this.groups.get(groupId);
    return this.persist(current && !current.isDead() ? current : group);
  }

  /** The group, if it is a KIP-848 consumer group. */
  consumerGroup(groupId: string): ConsumerGroup | undefined {
    const group = this.get(groupId);
    return group instanceof ConsumerGroup ? group : undefined;
  }

  /**
   * ConsumerGroupHeartbeat (validated as Kafka's GroupCoordinatorService
   * does): finds or creates the group as Kafka's
   * getOrMaybeCreateConsumerGroup, applies the heartbeat, and answers once
   * the group is stored.
   */
  consumerGroupHeartbeat(groupId: string, req: ConsumerHeartbeat): Promise<ConsumerHeartbeatResult> {
    return this.serially(groupId, () => this.applyHeartbeat(groupId, req)).then(async ({ group, result }) => {
      if (!group || result.errorCode !== 0) return result;
      try {
        await this.persistCurrent(groupId, group);
      } catch (err) {
        return heartbeatError(err instanceof LeaseLostError ? ErrorCode.NOT_COORDINATOR : ErrorCode.COORDINATOR_NOT_AVAILABLE, null);
      }
      return result;
    });
  }

  /** Runs a consumer group's event after the events before it (heartbeats, classic members' joins and leaves, resolved regular expressions), topic look-ups included. */
  private serially<T>(groupId: string, event: () => Promise<T>): Promise<T> {
    const previous = this.heartbeatChains.get(groupId) ?? Promise.resolve();
    const applied = previous.catch(() => {}).then(event);
    this.heartbeatChains.set(groupId, applied);
    void applied.finally(() => {
      if (this.heartbeatChains.get(groupId) === applied) this.heartbeatChains.delete(groupId);
    });
    return applied;
  }

  /**
   * Kafka's maybeUpdateRegularExpressions, after a heartbeat: when the
   * group's patterns are due, they are resolved off the heartbeat against
   * every topic, keeping the topics this heartbeat's member may describe,
   * and the result is applied as the group's next event.
   */
  private maybeResolveRegularExpressions(group: ConsumerGroup, describable: (names: string[]) => Set<string>): void {
    const due = group.regexes.due(group.subscribedRegularExpressions(), this.clock.now(), this.topics.version, this.settings.consumerRegexRefreshIntervalMs);
    if (!due) return;
    group.regexes.startRefresh();
    const version = this.topics.version;
    const started = this.clock.now();
    void this.topics
      .list()
      .then((topics) => {
        const results = resolveRegularExpressions(
          due,
          topics.map((t) => t.name),
          describable,
          version,
          started,
        );
        this.log.info({ group: group.groupId, topics: topics.length, regexes: due, code: LogCode.GROUP_REGEX_RESOLVED }, 'resolved the regular expressions of a consumer group');
        return this.serially(group.groupId, async () => {
          const image = await this.topicImage([...group.subscribedTopicNames(), ...[...results.values()].flatMap((r) => [...r.topics])]);
          if (this.get(group.groupId) !== group) return;
          group.applyResolvedRegularExpressions(results, image);
          await this.persist(group);
        });
      })
      .catch((err: Error) => this.log.warn({ err: err.message, group: group.groupId, code: LogCode.GROUP_REGEX_RESOLVE_FAILED }, 'resolving the regular expressions of a consumer group failed'))
      .finally(() => group.regexes.endRefresh());
  }

  private async applyHeartbeat(groupId: string, req: ConsumerHeartbeat): Promise<{ group: ConsumerGroup | null; result: ConsumerHeartbeatResult }> {
    const leaving = req.memberEpoch < 0;
    const existing = this.get(groupId);
    let group: ConsumerGroup;
    if (existing instanceof ConsumerGroup) {
      group = existing;
    } else if (leaving || req.memberEpoch > 0) {
      const message = existing ? `Group ${groupId} is not a consumer group.` : leaving ? `Group ${groupId} not found.` : `Consumer group ${groupId} not found.`;
      return { group: null, result: heartbeatError(ErrorCode.GROUP_ID_NOT_FOUND, message) };
    } else if (existing instanceof ClassicGroup && !existing.isEmpty()) {
      const upgraded = await this.upgrade(existing);
      if (typeof upgraded === 'string') return { group: null, result: heartbeatError(ErrorCode.GROUP_ID_NOT_FOUND, upgraded) };
      group = upgraded;
    } else {
      // An empty classic group (or one that only has offsets) gives way to the consumer group; its offsets stay.
      existing?.shutdown();
      group = this.newConsumerGroup(groupId);
      // Measured against Kafka 4.3.1: a new group's first member is answered with epoch 2, so its epoch starts at 1.
      group.groupEpoch = 1;
      group.assignmentEpoch = 1;
    }
    const image = await this.topicImage([...group.subscribedTopicNames(), ...(req.subscribedTopicNames ?? [])]);
    if (group.isDead()) return { group: null, result: heartbeatError(ErrorCode.NOT_COORDINATOR, null) };
    const result = group.heartbeat(req, image);
    if (result.errorCode === ErrorCode.NONE) this.maybeResolveRegularExpressions(group, req.describableTopics ?? ((names) => new Set(names)));
    // A group created for a member it then refused is not kept (what it replaced comes back).
    if (result.errorCode !== 0 && group !== existing && group.numMembers() === 0 && this.groups.get(groupId) === group) {
      if (existing) this.groups.set(groupId, existing);
      else this.groups.delete(groupId);
    }
    return { group, result };
  }

  /** The named topics as they are now, for a consumer group event. */
  private async topicImage(names: Iterable<string>): Promise<TopicImage> {
    const byName = new Map<string, { topicId: string; partitionCount: number }>();
    for (const name of new Set(names)) {
      const topic = await this.topics.get(name);
      if (topic) byName.set(name, { topicId: topic.topicId, partitionCount: topic.partitionCount });
    }
    return { byName: (name) => byName.get(name) ?? null, nameOf: (topicId) => this.topics.getById(topicId)?.name ?? null };
  }

  /** ConsumerGroupDescribe: the consumer group, or GROUP_ID_NOT_FOUND as Kafka answers. */
  async describeConsumerGroup(groupId: string): Promise<Omit<ConsumerGroupDescribeResponseDescribedGroup, 'authorizedOperations'>> {
    const group = this.get(groupId);
    if (!(group instanceof ConsumerGroup)) {
      const message = group ? `Group ${groupId} is not a consumer group.` : `Group ${groupId} not found.`;
      return { errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: message, groupId, groupState: '', groupEpoch: 0, assignmentEpoch: 0, assignorName: '', members: [] };
    }
    const names = new Map<string, string | null>();
    for (const m of group.members.values()) {
      for (const t of [...m.assigned.keys(), ...m.pendingRevocation.keys(), ...group.targetOf(m.memberId).keys()]) {
        if (!names.has(t)) names.set(t, (await this.topics.getByIdLoading(t))?.name ?? null);
      }
    }
    return describeConsumerGroup(group, (topicId) => names.get(topicId) ?? null);
  }

  private persist(group: Group): Promise<void> {
    const snapshot = group.toStored();
    const lease = this.lease(group.groupId);
    const previous = this.persistChains.get(group.groupId) ?? Promise.resolve();
    const next = previous
      .catch(() => {})
      .then(() => this.store.saveGroup(snapshot, lease))
      .catch((err: Error) => {
        // Unloaded before the group sees the failure, so its waiting members are told NOT_COORDINATOR.
        if (err instanceof LeaseLostError) this.leaseLost(err, group.groupId, 'group metadata');
        throw err;
      });
    this.persistChains.set(group.groupId, next);
    next.then(
      () => {
        if (this.persistChains.get(group.groupId) === next) this.persistChains.delete(group.groupId);
      },
      (err: Error) => {
        if (!(err instanceof LeaseLostError)) this.log.error({ err: err.message, group: group.groupId, code: LogCode.GROUP_STORE_FAILED }, 'storing group failed');
      },
    );
    return next;
  }

  validSessionTimeout(ms: number): boolean {
    return ms >= this.settings.minSessionTimeoutMs && ms <= this.settings.maxSessionTimeoutMs;
  }

  // ---- offsets -----------------------------------------------------------

  /** OffsetCommit: validates membership, then stores every valid partition's offset. One error per partition, in order. */
  async commitOffsets(groupId: string, committer: Committer, partitions: CommitPartition[]): Promise<number[]> {
    let group = this.get(groupId);
    if (!group) {
      // Offsets-only use (standalone consumers, admin tools) creates an Empty group; a generation needs a real one
      // (GROUP_ID_NOT_FOUND from v9, for both group protocols; ILLEGAL_GENERATION before, as Kafka answers).
      if (committer.generationIdOrMemberEpoch >= 0) return partitions.map(() => (committer.apiVersion >= 9 ? ErrorCode.GROUP_ID_NOT_FOUND : ErrorCode.ILLEGAL_GENERATION));
      group = this.newClassicGroup(groupId);
    }
    const groupError = group.validateOffsetCommit({ ...committer, isTransactional: false });
    if (groupError !== ErrorCode.NONE) return partitions.map(() => groupError);
    const errors: number[] = [];
    // A partition named twice: the last entry wins, as on Kafka.
    const accepted = new Map<string, OffsetToCommit>();
    for (const p of partitions) {
      const topic = await this.topics.get(p.topic);
      const partitionError = topic ? (group.validateOffsetCommitPartition?.({ ...committer, isTransactional: false }, topic.topicId, p.partition) ?? ErrorCode.NONE) : ErrorCode.NONE;
      if (!topic || p.partition < 0 || p.partition >= topic.partitionCount) {
        errors.push(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
      } else if (partitionError !== ErrorCode.NONE) {
        errors.push(partitionError);
      } else if (metadataTooLarge(p.metadata, this.settings.offsetMetadataMaxBytes)) {
        errors.push(ErrorCode.OFFSET_METADATA_TOO_LARGE);
      } else {
        errors.push(ErrorCode.NONE);
        accepted.set(`${p.topic}\u0000${p.partition}`, p);
      }
    }
    try {
      await this.store.commitOffsets(groupId, [...accepted.values()], this.lease(groupId));
    } catch (err) {
      // The slot moved to another broker meanwhile: nothing was stored; the client finds the new coordinator.
      if (!(err instanceof LeaseLostError)) throw err;
      this.leaseLost(err, groupId, 'offset commit');
      return partitions.map(() => ErrorCode.NOT_COORDINATOR);
    }
    return errors;
  }

  /**
   * TxnOffsetCommit's group check: a commit that names a member or a
   * generation (KIP-447) must match the group's; one without either is
   * accepted, as Kafka accepts it from older producers.
   */
  validateTxnOffsetCommit(groupId: string, committer: Committer): number {
    const group = this.get(groupId);
    if (!group) return committer.generationIdOrMemberEpoch >= 0 ? ErrorCode.ILLEGAL_GENERATION : ErrorCode.NONE;
    return group.validateOffsetCommit({ ...committer, isTransactional: true });
  }

  /** Offsets committed by a transaction make the group known, as an OffsetCommit does. */
  noteOffsetsGroup(groupId: string): void {
    if (!this.get(groupId)) this.newClassicGroup(groupId);
  }

  /** OffsetFetch's group check (member id and epoch from v9, for groups that have them): NONE for a group this broker does not know. */
  validateOffsetFetch(groupId: string, memberId: string | null, memberEpoch: number): number {
    return this.get(groupId)?.validateOffsetFetch(memberId, memberEpoch) ?? ErrorCode.NONE;
  }

  /** OffsetFetch: committed offsets of the named partitions, or of every partition the group has committed (topics = null). */
  async fetchOffsets(groupId: string, topics: { name: string; partitions: number[] }[] | null): Promise<FetchedOffset[]> {
    // No topic name holds a NUL (PostgreSQL text cannot): such names simply have no offsets.
    const stored = await this.store.fetchOffsets(
      groupId,
      topics?.map((t) => t.name).filter((name) => !name.includes('\0')),
    );
    if (topics === null) return stored.map((o) => ({ ...o, errorCode: ErrorCode.NONE }));
    const byKey = new Map(stored.map((o) => [`${o.topic}\u0000${o.partition}`, o]));
    return topics.flatMap((t) =>
      t.partitions.map((partition) => {
        const o = byKey.get(`${t.name}\u0000${partition}`);
        return o ? { ...o, errorCode: ErrorCode.NONE } : { topic: t.name, partition, committedOffset: -1n, leaderEpoch: -1, metadata: '', errorCode: ErrorCode.NONE };
      }),
    );
  }

  /** OffsetDelete: refused for the group as its type decides, and per partition while the group is subscribed to the topic. */
  async deleteOffsets(groupId: string, partitions: { topic: string; partition: number }[]): Promise<{ errorCode: number; partitionErrors: number[] }> {
    const group = this.get(groupId);
    if (!group) return { errorCode: ErrorCode.GROUP_ID_NOT_FOUND, partitionErrors: [] };
    const groupError = group.validateOffsetDelete();
    if (groupError !== ErrorCode.NONE) return { errorCode: groupError, partitionErrors: [] };
    // Asked once per topic: a classic group reads every member's subscription to answer.
    const subscribed = new Map<string, boolean>();
    const partitionErrors = partitions.map((p) => {
      if (!subscribed.has(p.topic)) subscribed.set(p.topic, group.isSubscribedToTopic(p.topic));
      return subscribed.get(p.topic) ? ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC : ErrorCode.NONE;
    });
    try {
      await this.store.deleteOffsets(
        groupId,
        partitions.filter((p, i) => partitionErrors[i] === ErrorCode.NONE && !p.topic.includes('\0')),
        this.lease(groupId),
      );
    } catch (err) {
      if (!(err instanceof LeaseLostError)) throw err;
      this.leaseLost(err, groupId, 'offset delete');
      return { errorCode: ErrorCode.NOT_COORDINATOR, partitionErrors: [] };
    }
    return { errorCode: ErrorCode.NONE, partitionErrors };
  }

  // ---- administration ----------------------------------------------------

  /** ListGroups: the groups in one of the states and of one of the types (lower-case names; an empty filter takes all), by group id. */
  list(states: ReadonlySet<string>, types: ReadonlySet<string>): ListedGroup[] {
    return [...this.groups.values()]
      .filter((g) => !g.isDead() && (states.size === 0 || g.isInStates(states)) && (types.size === 0 || types.has(g.type)))
      .sort((a, b) => (a.groupId < b.groupId ? -1 : 1))
      .map((g) => g.asListedGroup());
  }

  /** DeleteGroups: an empty group and its offsets go; one with members is NON_EMPTY_GROUP. */
  async deleteGroup(groupId: string): Promise<number> {
    const group = this.get(groupId);
    if (!group) return ErrorCode.GROUP_ID_NOT_FOUND;
    const groupError = group.validateDeleteGroup();
    if (groupError !== ErrorCode.NONE) return groupError;
    group.markDead();
    try {
      await (this.persistChains.get(groupId) ?? Promise.resolve()).catch(() => {});
      await this.store.deleteGroup(groupId, this.lease(groupId));
    } catch (err) {
      // Nothing was deleted: the group stays as the slot's holder keeps it.
      if (!(err instanceof LeaseLostError)) throw err;
      this.leaseLost(err, groupId, 'group delete');
      return ErrorCode.NOT_COORDINATOR;
    } finally {
      this.groups.delete(groupId);
    }
    return ErrorCode.NONE;
  }

  private scheduleExpiry(): void {
    this.expiryTimer = this.clock.setTimeout(() => {
      this.store
        .expireOffsets(this.settings.offsetsRetentionMs)
        .then((n) => {
          if (n > 0) this.log.info({ offsets: n }, 'expired committed offsets (offsets.retention.minutes)');
        })
        .catch((err: Error) => this.log.warn({ err: err.message, code: LogCode.OFFSET_EXPIRY_FAILED }, 'offset expiry failed'))
        .finally(() => {
          if (this.expiryTimer) this.scheduleExpiry();
        });
    }, this.settings.offsetsRetentionCheckIntervalMs);
  }

  shutdown(): void {
    this.expiryTimer?.cancel();
    this.expiryTimer = null;
    for (const g of this.groups.values()) g.shutdown();
  }
}
