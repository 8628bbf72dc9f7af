// The transaction coordinator: one TransactionMetadata per transactional id,
// its state machine (Empty → Ongoing → PrepareCommit/PrepareAbort →
// CompleteCommit/CompleteAbort), producer ids and epochs (fencing), the
// COMMIT/ABORT markers written to every partition of a transaction, offsets
// committed inside transactions, and the timer that aborts transactions open
// longer than their timeout. Every state change is stored (PostgreSQL in the broker)
// before it is acted on; the requests of one transactional id are applied one
// at a time.
// Brokers sharing the database split the transactional ids by the coordinator
// slots groups use (coordination.ts; Kafka's 50 partitions of
// __transaction_state, same hash): this coordinator keeps in memory only the
// ids of the slots it holds, loads a slot's ids when it takes the slot
// (completing what a dead holder left prepared, as Kafka's coordinator does
// when it loads a partition) and drops them when the slot moves on. Other
// brokers answer NOT_COORDINATOR for them, and check produce requests and
// transactional offset commits against the stored state. Every write of an
// id's state is fenced by the slot's lease at the epoch this coordinator
// loaded the id with (Kafka's coordinator epoch): a coordinator that lost
// the slot (paused, or cut off from the database, past its lease) has its
// write refused, answers NOT_COORDINATOR, and drops the slot's ids. Errors are Kafka's newest (PRODUCER_FENCED); handlers map them to
// what older request versions expect.
import type { Logger } from '../observability/logger.js';
import { ErrorCode } from '../protocol/errors.js';
import type { TopicManager } from '../log/topic-manager.js';
import type { PendingTxnOffset, ProducerIdStorage, StoredTransaction, TransactionStorage, TxnPartition } from './transaction-storage.js';
import type { TxnMarkerWriter } from './txn-markers.js';
import { systemClock, type Clock, type Timer } from '../clock.js';
import { slotOf, type SlotOwner } from './coordination.js';
import { LogCode } from '../observability/log-codes.js';
import { LeaseLostError, type CoordinatorLease } from '../storage/coordinator-lease.js';

// Handlers name the offsets they hand to commitOffsets through the coordinator, not the storage layer.
export type { PendingTxnOffset };

export type TxnState = 'Empty' | 'Ongoing' | 'PrepareCommit' | 'PrepareAbort' | 'CompleteCommit' | 'CompleteAbort';
export const TXN_STATES: readonly TxnState[] = ['Empty', 'Ongoing', 'PrepareCommit', 'PrepareAbort', 'CompleteCommit', 'CompleteAbort'];

/** Kafka's transaction.max.timeout.ms default. */
export const MAX_TRANSACTION_TIMEOUT_MS = 900_000;
/** The largest epoch; a producer id whose epoch would pass it is replaced by a new one. */
const MAX_EPOCH = 32767;
/** How often open transactions are checked against their timeout (Kafka's transaction.abort.timed.out.transaction.cleanup.interval.ms is 10 s). */
const DEFAULT_TIMEOUT_CHECK_MS = 1000;

export interface TxnMetadata {
  transactionalId: string;
  producerId: bigint;
  producerEpoch: number;
  lastProducerEpoch: number;
  timeoutMs: number;
  state: TxnState;
  /** When the newest transaction began (ms), kept once it completed as Kafka keeps txnStartTimestamp; -1 before any (Empty). */
  startTimeMs: number;
  partitions: Map<string, TxnPartition>;
  groups: Set<string>;
  /** When a request for this transactional id last ran (ms): idle ids expire after transactional.id.expiration.ms. */
  lastUsedMs: number;
  /**
   * The producer id this one replaced when a transactions-v2 EndTxn exhausted its epochs, so that a
   * retry of that EndTxn is recognised (Kafka's prevProducerId); -1 otherwise. Kept in memory only.
   */
  previousProducerId: bigint;
  /**
   * The lease epoch of the id's slot this state was loaded (or created)
   * under, as Kafka's coordinator epoch: its writes are fenced by it, and
   * its markers carry it.
   */
  coordinatorEpoch: bigint;
}

export interface ProducerResult {
  errorCode: number;
  producerId: bigint;
  producerEpoch: number;
}

export interface TransactionCoordinatorOptions {
  store: TransactionStorage;
  producerIds: ProducerIdStorage;
  /** Where COMMIT/ABORT markers go (the log). */
  markers: TxnMarkerWriter;
  /** Resolves AddPartitionsToTxn's topic names. */
  topics: Pick<TopicManager, 'get'>;
  log: Logger;
  /** This broker instance: the holder its slot leases name, which every write of transaction state is fenced by. */
  instanceId: string;
  clock?: Clock;
  /** How often open transactions are checked against their timeout (ms). */
  timeoutCheckMs?: number;
  /** Kafka's transactional.id.expiration.ms (default 7 days). */
  transactionalIdExpirationMs?: number;
  /** Whether this broker's lease of the id's slot is live now (Coordination.owns); always, when not given. */
  leaseHeld?: (transactionalId: string) => boolean;
}

const partitionKey = (topicId: string, partition: number) => `${topicId}:${partition}`;
/**
 * A marker's coordinator epoch, as Kafka counts it: from 0 for the first holder (Kafka's is the leader epoch of the
 * transaction-state partition, 0 on a new cluster; a slot's first lease has epoch 1), an int32 (reached only after
 * two billion changes of holder).
 */
const markerEpoch = (epoch: bigint) => Number(epoch <= 0n ? 0n : epoch - 1n < 0x7fffffffn ? epoch - 1n : 0x7fffffffn);
/** Produce verifications remembered at most (a full cache is emptied: each entry is one query to read again). */
const VERIFIED_MAX = 100_000;

/** Kafka's checks of a transactional batch against its transaction: the producer id, its epoch, an ongoing transaction the partition was added to. */
function produceError(t: { producerId: bigint; producerEpoch: number; state: string } | null | undefined, producerId: bigint, producerEpoch: number, partitionAdded: () => boolean): number {
  if (!t || t.producerId !== producerId) return ErrorCode.INVALID_PRODUCER_ID_MAPPING;
  if (producerEpoch < t.producerEpoch) return ErrorCode.PRODUCER_FENCED;
  if (producerEpoch > t.producerEpoch || t.state !== 'Ongoing' || !partitionAdded()) return ErrorCode.INVALID_TXN_STATE;
  return ErrorCode.NONE;
}

export class TransactionCoordinator implements SlotOwner {
  private readonly txns = new Map<string, TxnMetadata>();
  /** The coordinator slots whose transactional ids are loaded here, with the lease epoch they were loaded under. */
  private readonly served = new Map<number, bigint>();
  /** Tells the slot's keeper (Coordination) that a write under the slot's lease was refused. */
  private reportLeaseLost: (slot: number) => void = () => {};
  /** Batches of transactions coordinated elsewhere found valid: transactional id, producer id, topic id and partition → epoch (see verifyStoredProduce). */
  private readonly verified = new Map<string, number>();
  private readonly leaseHeld: (transactionalId: string) => boolean;
  private readonly byProducerId = new Map<bigint, TxnMetadata>();
  /** The tail of each transactional id's request chain. */
  private readonly queues = new Map<string, Promise<unknown>>();
  private timer: Timer | null = null;
  private readonly store: TransactionStorage;
  private readonly producerIds: ProducerIdStorage;
  private readonly markers: TxnMarkerWriter;
  private readonly topics: Pick<TopicManager, 'get'>;
  private readonly log: Logger;
  private readonly instanceId: string;
  private readonly clock: Clock;
  private readonly timeoutCheckMs: number;
  private readonly transactionalIdExpirationMs: number;

  constructor(options: TransactionCoordinatorOptions) {
    this.store = options.store;
    this.producerIds = options.producerIds;
    this.markers = options.markers;
    this.topics = options.topics;
    this.log = options.log;
    this.instanceId = options.instanceId;
    this.clock = options.clock ?? systemClock;
    this.timeoutCheckMs = options.timeoutCheckMs ?? DEFAULT_TIMEOUT_CHECK_MS;
    this.transactionalIdExpirationMs = options.transactionalIdExpirationMs ?? 604_800_000;
    this.leaseHeld = options.leaseHeld ?? (() => true);
  }

  onLeaseLost(report: (slot: number) => void): void {
    this.reportLeaseLost = report;
  }

  /**
   * Takes the slots over: loads their transactional ids from storage, as
   * Kafka's TransactionStateManager loads a partition of __transaction_state.
   * A transaction left in PrepareCommit/PrepareAbort (its coordinator died
   * or lost the slot mid-completion) is completed: its markers are written
   * again (a marker for a transaction already ended on a partition changes
   * nothing there) and its offsets applied or dropped. An Ongoing one is
   * left to its timeout, which aborts it, or to its producer.
   */
  async acquire(slots: ReadonlyMap<number, bigint>): Promise<void> {
    const { transactions } = await this.store.loadAll();
    const loaded: TxnMetadata[] = [];
    for (const t of transactions) {
      const coordinatorEpoch = slots.get(slotOf(t.transactionalId));
      if (coordinatorEpoch === undefined) continue;
      const meta: TxnMetadata = {
        transactionalId: t.transactionalId,
        producerId: t.producerId,
        producerEpoch: t.producerEpoch,
        lastProducerEpoch: t.lastProducerEpoch,
        timeoutMs: t.timeoutMs,
        state: t.state as TxnState,
        startTimeMs: t.startTime ? t.startTime.getTime() : -1,
        partitions: new Map(t.partitions.map((p) => [partitionKey(p.topicId, p.partition), p])),
        groups: new Set(t.groups),
        lastUsedMs: t.updatedAt ? t.updatedAt.getTime() : this.clock.now(),
        previousProducerId: -1n,
        coordinatorEpoch,
      };
      this.register(meta);
      loaded.push(meta);
    }
    for (const [slot, epoch] of slots) this.served.set(slot, epoch);
    for (const meta of loaded) {
      if (meta.state !== 'PrepareCommit' && meta.state !== 'PrepareAbort') continue;
      this.log.info({ transactionalId: meta.transactionalId, state: meta.state }, 'completing a transaction left in preparation');
      // Queued ahead of any request for the id; a failure is retried by the timeout check.
      this.run(meta.transactionalId, async () => {
        if (meta.state === 'PrepareCommit' || meta.state === 'PrepareAbort') await this.completePrepared(meta);
      }).catch((err: Error) => {
        if (!(err instanceof LeaseLostError))
          this.log.warn({ err: err.message, transactionalId: meta.transactionalId, code: LogCode.TXN_ABORT_FAILED }, 'completing a prepared transaction failed; retrying');
      });
    }
    if (loaded.length > 0) this.log.info({ transactionalIds: loaded.length, slots: slots.size }, 'loaded transactional ids');
  }

  /** The slots moved to another broker: their ids are dropped once the requests under way for them have ended; the next holder reads them from storage. */
  async release(slots: ReadonlySet<number>): Promise<void> {
    for (const slot of slots) this.served.delete(slot);
    const leaving = [...this.txns.values()].filter((m) => slots.has(slotOf(m.transactionalId)));
    await Promise.all(leaving.map((m) => this.queues.get(m.transactionalId)?.catch(() => {})));
    for (const meta of leaving) {
      if (this.served.has(slotOf(meta.transactionalId))) continue; // taken back meanwhile
      this.forget(meta);
    }
  }

  private forget(meta: TxnMetadata): void {
    if (this.txns.get(meta.transactionalId) === meta) this.txns.delete(meta.transactionalId);
    if (this.byProducerId.get(meta.producerId) === meta) this.byProducerId.delete(meta.producerId);
  }

  /** Whether `meta` is the state this coordinator serves now: loaded under the slot's lease epoch it still holds. */
  private current(meta: TxnMetadata): boolean {
    return this.served.get(slotOf(meta.transactionalId)) === meta.coordinatorEpoch && this.txns.get(meta.transactionalId) === meta;
  }

  /** The lease a write of the id's state is made under: the epoch its state was loaded with. */
  private lease(meta: TxnMetadata): CoordinatorLease {
    return { slot: slotOf(meta.transactionalId), instanceId: this.instanceId, epoch: meta.coordinatorEpoch };
  }

  /**
   * A write of `meta`'s state was refused: the slot's lease is another
   * broker's now (this one paused past it, or lost the database for longer),
   * and nothing was written. If the slot is still served here at that epoch,
   * it stops being served at once, its ids are dropped, and the slot's
   * keeper is told; the slot's holder serves them from what it stored. A
   * write of state loaded under an older epoch (the slot lost and taken back
   * since) changes nothing here.
   */
  private leaseLost(meta: TxnMetadata, write: string): void {
    const slot = slotOf(meta.transactionalId);
    if (this.served.get(slot) !== meta.coordinatorEpoch) return;
    this.served.delete(slot);
    const dropped = [...this.txns.values()].filter((m) => slotOf(m.transactionalId) === slot);
    for (const m of dropped) this.forget(m);
    this.log.warn(
      { transactionalId: meta.transactionalId, slot, write, transactionalIdsDropped: dropped.length, code: LogCode.COORDINATOR_LEASE_LOST },
      'coordinator slot lost to another broker: transaction state write refused, its transactional ids are no longer served here',
    );
    this.reportLeaseLost(slot);
  }

  /** Stores the state under `meta`'s lease; a refused write drops the slot (see leaseLost) and throws LeaseLostError. */
  private async fenced(meta: TxnMetadata, write: string, store: (lease: CoordinatorLease) => Promise<void>): Promise<void> {
    try {
      await store(this.lease(meta));
    } catch (err) {
      if (err instanceof LeaseLostError) this.leaseLost(meta, write);
      throw err;
    }
  }

  /** Whether this broker coordinates the transactional id now: it holds the id's slot, loaded, under a live lease. */
  serves(transactionalId: string): boolean {
    return this.served.has(slotOf(transactionalId)) && this.leaseHeld(transactionalId);
  }

  start(): void {
    this.timer = this.clock.setTimeout(() => {
      this.abortTimedOut()
        .catch((err: Error) => this.log.warn({ err: err.message, code: LogCode.TXN_TIMEOUT_CHECK_FAILED }, 'transaction timeout check failed'))
        .finally(() => {
          if (this.timer) this.start();
        });
    }, this.timeoutCheckMs);
  }

  shutdown(): void {
    this.timer?.cancel();
    this.timer = null;
  }

  private register(meta: TxnMetadata): void {
    this.txns.set(meta.transactionalId, meta);
    this.byProducerId.set(meta.producerId, meta);
  }

  /** Runs `work` after every earlier request of the transactional id. */
  private run<T>(transactionalId: string, work: () => Promise<T>): Promise<T> {
    const previous = this.queues.get(transactionalId) ?? Promise.resolve();
    const next = previous
      .catch(() => {})
      .then(() => {
        const meta = this.txns.get(transactionalId);
        if (meta) meta.lastUsedMs = this.clock.now();
        return work();
      });
    this.queues.set(transactionalId, next);
    void next
      .finally(() => {
        if (this.queues.get(transactionalId) === next) this.queues.delete(transactionalId);
      })
      .catch(() => {});
    return next;
  }

  private snapshot(meta: TxnMetadata): StoredTransaction {
    return {
      transactionalId: meta.transactionalId,
      producerId: meta.producerId,
      producerEpoch: meta.producerEpoch,
      lastProducerEpoch: meta.lastProducerEpoch,
      timeoutMs: meta.timeoutMs,
      state: meta.state,
      startTime: meta.startTimeMs >= 0 ? new Date(meta.startTimeMs) : null,
      partitions: [...meta.partitions.values()],
      groups: [...meta.groups],
    };
  }

  // ---- InitProducerId ----------------------------------------------------

  /**
   * A transactional producer starts (or restarts): the id keeps its producer
   * id and gets the next epoch, which fences every older instance. An
   * ongoing transaction of the old epoch is aborted first. With an expected
   * producer id and epoch (KIP-360), only the current instance may bump.
   */
  initProducerId(transactionalId: string, timeoutMs: number, expectedProducerId: bigint, expectedEpoch: number): Promise<ProducerResult> {
    return this.runServed(transactionalId, this.failed(ErrorCode.NOT_COORDINATOR), async () => {
      let meta = this.txns.get(transactionalId);
      if (!meta) {
        meta = {
          transactionalId,
          producerId: await this.producerIds.allocateProducerId(),
          producerEpoch: 0,
          lastProducerEpoch: -1,
          timeoutMs,
          state: 'Empty',
          startTimeMs: -1,
          partitions: new Map(),
          groups: new Set(),
          lastUsedMs: this.clock.now(),
          previousProducerId: -1n,
          coordinatorEpoch: this.served.get(slotOf(transactionalId)) ?? -1n,
        };
        await this.save(meta, 'init producer id');
        this.register(meta);
        return { errorCode: ErrorCode.NONE, producerId: meta.producerId, producerEpoch: meta.producerEpoch };
      }
      if (expectedProducerId >= 0n) {
        const retried = expectedProducerId === meta.producerId && expectedEpoch === meta.lastProducerEpoch && (meta.state === 'Empty' || meta.state.startsWith('Complete'));
        if (retried) return { errorCode: ErrorCode.NONE, producerId: meta.producerId, producerEpoch: meta.producerEpoch };
        if (expectedProducerId !== meta.producerId || expectedEpoch !== meta.producerEpoch) return this.failed(ErrorCode.PRODUCER_FENCED);
      }
      if (meta.state === 'PrepareCommit' || meta.state === 'PrepareAbort') await this.completePrepared(meta);
      if (meta.state === 'Ongoing') await this.endTransaction(meta, false, 'fence', 'fenced by a new producer instance');
      if (meta.producerEpoch + 1 >= MAX_EPOCH) {
        this.byProducerId.delete(meta.producerId);
        meta.producerId = await this.producerIds.allocateProducerId();
        meta.producerEpoch = 0;
        meta.lastProducerEpoch = -1;
      } else {
        meta.lastProducerEpoch = meta.producerEpoch;
        meta.producerEpoch += 1;
      }
      meta.timeoutMs = timeoutMs;
      meta.state = 'Empty';
      meta.startTimeMs = -1;
      await this.save(meta, 'init producer id');
      this.register(meta);
      return { errorCode: ErrorCode.NONE, producerId: meta.producerId, producerEpoch: meta.producerEpoch };
    });
  }

  /**
   * Runs `work` in the id's queue if this broker coordinates the id when its
   * turn comes, else answers `notServed` (NOT_COORDINATOR); so is a request
   * whose write was refused because the slot moved on meanwhile, as Kafka's
   * coordinator answers when the coordinator epoch changed under an append.
   */
  private runServed<T>(transactionalId: string, notServed: T, work: () => Promise<T>): Promise<T> {
    return this.run(transactionalId, () => (this.serves(transactionalId) ? work() : Promise.resolve(notServed))).catch((err: unknown) => {
      if (err instanceof LeaseLostError) return notServed;
      throw err;
    });
  }

  private failed(errorCode: number): ProducerResult {
    return { errorCode, producerId: -1n, producerEpoch: -1 };
  }

  /** The common checks of a client's transactional request: the id's producer, its epoch, and no completion under way. */
  private check(meta: Pick<TxnMetadata, 'producerId' | 'producerEpoch' | 'state'> | null | undefined, producerId: bigint, producerEpoch: number): number {
    if (!meta || meta.producerId !== producerId) return ErrorCode.INVALID_PRODUCER_ID_MAPPING;
    if (meta.producerEpoch !== producerEpoch) return ErrorCode.PRODUCER_FENCED;
    if (meta.state === 'PrepareCommit' || meta.state === 'PrepareAbort') return ErrorCode.CONCURRENT_TRANSACTIONS;
    return ErrorCode.NONE;
  }

  private async begin(meta: TxnMetadata): Promise<void> {
    if (meta.state !== 'Ongoing') {
      meta.state = 'Ongoing';
      meta.startTimeMs = this.clock.now();
    }
    await this.save(meta, 'add to transaction');
  }

  private save(meta: TxnMetadata, write: string): Promise<void> {
    const snapshot = this.snapshot(meta);
    return this.fenced(meta, write, (lease) => this.store.save(snapshot, lease));
  }

  // ---- AddPartitionsToTxn / AddOffsetsToTxn -------------------------------

  /** Adds partitions to the producer's transaction; one error per partition, in order. verifyOnly answers whether they are in it already (KIP-890). */
  addPartitions(transactionalId: string, producerId: bigint, producerEpoch: number, partitions: { topic: string; partition: number }[], verifyOnly: boolean): Promise<number[]> {
    return this.runServed(
      transactionalId,
      partitions.map(() => ErrorCode.NOT_COORDINATOR),
      async () => {
        const meta = this.txns.get(transactionalId);
        const error = this.check(meta, producerId, producerEpoch);
        if (error !== ErrorCode.NONE) return partitions.map(() => error);
        const resolved: (TxnPartition | null)[] = [];
        for (const p of partitions) {
          const topic = await this.topics.get(p.topic);
          resolved.push(topic && p.partition >= 0 && p.partition < topic.partitionCount ? { topicId: topic.topicId, topic: topic.name, partition: p.partition } : null);
        }
        if (verifyOnly) {
          return resolved.map((r) => (r && meta!.state === 'Ongoing' && meta!.partitions.has(partitionKey(r.topicId, r.partition)) ? ErrorCode.NONE : ErrorCode.INVALID_TXN_STATE));
        }
        // As Kafka: when some partitions are unknown, none is added and the others are OPERATION_NOT_ATTEMPTED.
        if (resolved.some((r) => r === null)) return resolved.map((r) => (r ? ErrorCode.OPERATION_NOT_ATTEMPTED : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION));
        // As Kafka: partitions already in the ongoing transaction change nothing (and are not stored again).
        if (meta!.state === 'Ongoing' && resolved.every((r) => meta!.partitions.has(partitionKey(r!.topicId, r!.partition)))) return resolved.map(() => ErrorCode.NONE);
        for (const r of resolved) meta!.partitions.set(partitionKey(r!.topicId, r!.partition), r!);
        await this.begin(meta!);
        return resolved.map(() => ErrorCode.NONE);
      },
    );
  }

  /** AddOffsetsToTxn: the transaction will carry offsets of the group. */
  addOffsets(transactionalId: string, producerId: bigint, producerEpoch: number, groupId: string): Promise<number> {
    return this.runServed(transactionalId, ErrorCode.NOT_COORDINATOR as number, async () => {
      const meta = this.txns.get(transactionalId);
      const error = this.check(meta, producerId, producerEpoch);
      if (error !== ErrorCode.NONE) return error;
      if (meta!.state === 'Ongoing' && meta!.groups.has(groupId)) return ErrorCode.NONE;
      meta!.groups.add(groupId);
      await this.begin(meta!);
      return ErrorCode.NONE;
    });
  }

  /**
   * TxnOffsetCommit's transaction verification, as Kafka's group coordinator
   * asks the transaction coordinator before it looks at the group (KIP-890):
   * an empty id is INVALID_REQUEST; an unknown id or another producer id
   * INVALID_PRODUCER_ID_MAPPING; another epoch PRODUCER_FENCED; a
   * transaction completing CONCURRENT_TRANSACTIONS; a group not added to an
   * ongoing transaction TRANSACTION_ABORTABLE. The group's coordinator may
   * be another broker than the transaction's: it then checks the stored state.
   */
  async verifyOffsetCommit(transactionalId: string, producerId: bigint, producerEpoch: number, groupId: string): Promise<number> {
    if (transactionalId === '') return ErrorCode.INVALID_REQUEST;
    let txn: { producerId: bigint; producerEpoch: number; state: TxnState; groups: ReadonlySet<string> } | null | undefined = this.txns.get(transactionalId);
    if (!this.serves(transactionalId)) {
      const stored = await this.store.get(transactionalId);
      txn = stored && { producerId: stored.producerId, producerEpoch: stored.producerEpoch, state: stored.state as TxnState, groups: new Set(stored.groups) };
    }
    const error = this.check(txn, producerId, producerEpoch);
    if (error !== ErrorCode.NONE) return error;
    return txn!.state === 'Ongoing' && txn!.groups.has(groupId) ? ErrorCode.NONE : ErrorCode.TRANSACTION_ABORTABLE;
  }

  /**
   * TxnOffsetCommit, on the group's coordinator: stages the group's offsets
   * under the transaction; they become the group's committed offsets when it
   * commits. Staged only while the stored transaction is ongoing with the
   * group added (AddOffsetsToTxn), atomically with that check, whichever
   * broker coordinates the transaction. Returns NONE, or the verification's
   * error when the transaction moved on.
   */
  async commitOffsets(transactionalId: string, producerId: bigint, producerEpoch: number, groupId: string, offsets: PendingTxnOffset[]): Promise<number> {
    if (await this.store.stageOffsets({ transactionalId, producerId, producerEpoch, groupId }, offsets)) return ErrorCode.NONE;
    const error = await this.verifyOffsetCommit(transactionalId, producerId, producerEpoch, groupId);
    return error === ErrorCode.NONE ? ErrorCode.TRANSACTION_ABORTABLE : error;
  }

  /** Partitions (topic\0partition) of the group with offsets staged by a transaction not yet completed, whichever broker coordinates it: OffsetFetch with requireStable answers UNSTABLE_OFFSET_COMMIT for them. */
  async pendingOffsets(groupId: string): Promise<Set<string>> {
    return new Set((await this.store.pendingOffsets(groupId)).map((o) => `${o.topic}\u0000${o.partition}`));
  }

  // ---- Produce -----------------------------------------------------------

  /**
   * May this transactional batch be appended to the partition? Only the
   * current epoch of the producer, into an ongoing transaction the partition
   * was added to. For transactions coordinated here. Synchronous, so that a
   * batch that passes is queued before any marker of its transaction (see
   * endTransaction).
   */
  verifyProduce(producerId: bigint, producerEpoch: number, topicId: string, partition: number): number {
    const meta = this.byProducerId.get(producerId);
    return produceError(meta, producerId, producerEpoch, () => meta!.partitions.has(partitionKey(topicId, partition)));
  }

  /**
   * The same checks for a transaction another broker coordinates, against its
   * stored state (KIP-890 part 1's verification, which Kafka's partition
   * leader asks the coordinator for). A batch found valid is remembered for
   * the producer's epoch on the partition, and trusted without asking again
   * while `openHere` says the partition's transaction index still has the
   * producer's transaction open; once its marker is there, the next batch is
   * checked again, so a producer whose transaction ended (or was aborted
   * with a bumped epoch) is refused.
   */
  async verifyStoredProduce(transactionalId: string, producerId: bigint, producerEpoch: number, topicId: string, partition: number, openHere: boolean): Promise<number> {
    if (this.verifiedElsewhere(transactionalId, producerId, producerEpoch, topicId, partition, openHere)) return ErrorCode.NONE;
    const stored = await this.store.get(transactionalId);
    const error = produceError(stored, producerId, producerEpoch, () => stored!.partitions.some((p) => p.topicId === topicId && p.partition === partition));
    this.noteVerifiedElsewhere(transactionalId, producerId, producerEpoch, topicId, partition, error === ErrorCode.NONE);
    return error;
  }

  /**
   * Whether a batch of a transaction another broker coordinates was found in
   * it on the partition at this epoch (by verifyStoredProduce, or by the
   * coordinator's answer to an implicit add), while `openHere` says the
   * partition's transaction index still has the producer's transaction open.
   */
  verifiedElsewhere(transactionalId: string, producerId: bigint, producerEpoch: number, topicId: string, partition: number, openHere: boolean): boolean {
    return openHere && this.verified.get(`${transactionalId}\u0000${producerId}:${topicId}:${partition}`) === producerEpoch;
  }

  /** Remembers (or forgets) that the partition is in the producer's transaction at this epoch, coordinated elsewhere. */
  noteVerifiedElsewhere(transactionalId: string, producerId: bigint, producerEpoch: number, topicId: string, partition: number, inTransaction: boolean): void {
    const key = `${transactionalId}\u0000${producerId}:${topicId}:${partition}`;
    if (!inTransaction) this.verified.delete(key);
    else {
      if (this.verified.size >= VERIFIED_MAX) this.verified.clear();
      this.verified.set(key, producerEpoch);
    }
  }

  // ---- EndTxn --------------------------------------------------------------

  /**
   * EndTxn. `epochBump` is transactions version 2 (EndTxn v5, KIP-890 part 2):
   * every commit or abort bumps the epoch, the markers carry the new one, and
   * the answer names the producer id and epoch the producer goes on with.
   */
  endTxn(transactionalId: string, producerId: bigint, producerEpoch: number, commit: boolean, epochBump = false): Promise<ProducerResult> {
    return this.runServed(transactionalId, this.failed(ErrorCode.NOT_COORDINATOR), async () => {
      const meta = this.txns.get(transactionalId);
      if (epochBump) return this.endTxnBumpingEpoch(meta, producerId, producerEpoch, commit);
      const error = this.check(meta, producerId, producerEpoch);
      if (error !== ErrorCode.NONE) return this.failed(error);
      const result = (errorCode: number) => ({ errorCode, producerId: meta!.producerId, producerEpoch: meta!.producerEpoch });
      switch (meta!.state) {
        case 'Ongoing':
          await this.endTransaction(meta!, commit, 'none', commit ? 'committed' : 'aborted');
          return result(ErrorCode.NONE);
        case 'CompleteCommit':
          // A retry of the EndTxn that completed it is answered as it was.
          return result(commit ? ErrorCode.NONE : ErrorCode.INVALID_TXN_STATE);
        case 'CompleteAbort':
          return result(commit ? ErrorCode.INVALID_TXN_STATE : ErrorCode.NONE);
        default:
          return result(ErrorCode.INVALID_TXN_STATE);
      }
    });
  }

  /**
   * EndTxn under transactions version 2, as Kafka 4's coordinator: the epoch
   * in the request must be the current one, except for a retry of the EndTxn
   * that bumped it (the previous epoch, or the last epoch of the previous
   * producer id when the bump ran out of epochs), which is answered as it
   * was. An abort with nothing to abort (Empty, or a transaction already
   * completed) still bumps the epoch, so the producer can always abort.
   */
  private async endTxnBumpingEpoch(meta: TxnMetadata | undefined, producerId: bigint, producerEpoch: number, commit: boolean): Promise<ProducerResult> {
    if (!meta) return this.failed(ErrorCode.INVALID_PRODUCER_ID_MAPPING);
    const retryOnOverflow = meta.previousProducerId === producerId && producerEpoch === MAX_EPOCH - 1 && meta.producerEpoch === 0;
    const retryOnEpochBump = meta.producerEpoch === producerEpoch + 1;
    const isRetry = retryOnEpochBump || retryOnOverflow;
    const sameEpoch = producerEpoch === meta.producerEpoch;
    const validEpoch = meta.state === 'Ongoing' || meta.state === 'Empty' ? sameEpoch : meta.state.startsWith('Prepare') ? retryOnEpochBump : isRetry || sameEpoch;
    if (meta.producerId !== producerId && !retryOnOverflow) return this.failed(ErrorCode.INVALID_PRODUCER_ID_MAPPING);
    if (!validEpoch) return this.failed(ErrorCode.PRODUCER_FENCED);
    const current = (): ProducerResult => ({ errorCode: ErrorCode.NONE, producerId: meta.producerId, producerEpoch: meta.producerEpoch });
    const end = async (asCommit: boolean, reason: string) => {
      await this.endTransaction(meta, asCommit, 'next-transaction', reason);
      return current();
    };
    switch (meta.state) {
      case 'Ongoing':
        return end(commit, commit ? 'committed' : 'aborted');
      case 'CompleteCommit':
        if (commit) return isRetry ? current() : this.failed(ErrorCode.INVALID_TXN_STATE);
        return isRetry ? this.failed(ErrorCode.INVALID_TXN_STATE) : end(false, 'aborted with nothing to abort');
      case 'CompleteAbort':
        if (commit) return this.failed(ErrorCode.INVALID_TXN_STATE);
        return isRetry ? current() : end(false, 'aborted with nothing to abort');
      case 'Empty':
        return commit ? this.failed(ErrorCode.INVALID_TXN_STATE) : end(false, 'aborted with nothing to abort');
      default:
        // PrepareCommit/PrepareAbort: a completion under way (it finishes before EndTxn answers, so only after a failure).
        return this.failed((meta.state === 'PrepareCommit') === commit ? ErrorCode.CONCURRENT_TRANSACTIONS : ErrorCode.INVALID_TXN_STATE);
    }
  }

  /**
   * Ends the ongoing transaction: PrepareCommit/PrepareAbort is stored, the
   * marker goes to every partition through the normal append path (so it
   * takes the next offset in order), then the staged offsets are applied or
   * dropped together with the Complete state. The epoch is bumped first when
   * `bump` says so: 'fence' for a new instance or a timeout (the old instance
   * is refused from then on), 'next-transaction' for every commit and abort
   * under transactions version 2 (a producer id whose epochs ran out is
   * replaced by a new one once the markers are written). The state leaves
   * Ongoing synchronously, so no batch of the transaction can be queued
   * behind its marker.
   */
  private async endTransaction(meta: TxnMetadata, commit: boolean, bump: 'none' | 'fence' | 'next-transaction', reason: string): Promise<void> {
    let nextProducerId = -1n;
    if (bump === 'next-transaction') {
      // Kafka's isEpochExhausted: the bump takes the last epoch, and the producer goes on with a new id.
      if (meta.producerEpoch >= MAX_EPOCH - 1) nextProducerId = await this.producerIds.allocateProducerId();
      meta.lastProducerEpoch = meta.producerEpoch;
      meta.producerEpoch += 1;
    } else if (bump === 'fence' && meta.producerEpoch + 1 < MAX_EPOCH) {
      meta.lastProducerEpoch = meta.producerEpoch;
      meta.producerEpoch += 1;
    }
    meta.state = commit ? 'PrepareCommit' : 'PrepareAbort';
    await this.save(meta, meta.state);
    const partitions = meta.partitions.size; // completePrepared empties the set
    await this.completePrepared(meta, nextProducerId);
    this.log.info(
      { transactionalId: meta.transactionalId, producerId: meta.producerId, producerEpoch: meta.producerEpoch, partitions, reason },
      commit ? 'transaction committed' : 'transaction aborted',
    );
  }

  /** Writes the markers of a prepared transaction and completes it. Safe to repeat: a marker for a transaction already ended on a partition changes nothing there. */
  private async completePrepared(meta: TxnMetadata, nextProducerId = -1n): Promise<void> {
    const commit = meta.state === 'PrepareCommit';
    // As Kafka's marker channel drops the markers of a coordinator epoch that has moved on: the slot's holder writes them now.
    if (!this.current(meta) || !this.leaseHeld(meta.transactionalId)) throw new LeaseLostError(slotOf(meta.transactionalId));
    const coordinatorEpoch = markerEpoch(meta.coordinatorEpoch);
    await Promise.all(
      [...meta.partitions.values()].map((tp) =>
        this.markers.writeMarker(tp.topicId, tp.partition, { commit, producerId: meta.producerId, producerEpoch: meta.producerEpoch, coordinatorEpoch, timestamp: this.clock.now() }),
      ),
    );
    // The start time stays: Kafka describes a completed transaction with it (and ListTransactions filters by it).
    meta.state = commit ? 'CompleteCommit' : 'CompleteAbort';
    meta.partitions.clear();
    meta.groups.clear();
    if (nextProducerId >= 0n) {
      if (this.byProducerId.get(meta.producerId) === meta) this.byProducerId.delete(meta.producerId);
      meta.previousProducerId = meta.producerId;
      meta.producerId = nextProducerId;
      meta.lastProducerEpoch = meta.producerEpoch;
      meta.producerEpoch = 0;
      this.register(meta);
    }
    const snapshot = this.snapshot(meta);
    await this.fenced(meta, meta.state, (lease) => this.store.complete(snapshot, commit, lease));
  }

  /**
   * Aborts, with an epoch bump, every transaction open longer than its
   * timeout; retries completions that failed; forgets transactional ids idle
   * (no transaction open) for longer than transactional.id.expiration.ms.
   */
  private async abortTimedOut(): Promise<void> {
    const now = this.clock.now();
    for (const meta of [...this.txns.values()]) {
      const idle = meta.state === 'Empty' || meta.state === 'CompleteCommit' || meta.state === 'CompleteAbort';
      if (idle && now - meta.lastUsedMs > this.transactionalIdExpirationMs && !this.queues.has(meta.transactionalId)) {
        await this.run(meta.transactionalId, async () => {
          if (!this.current(meta)) return;
          let expired = false;
          await this.fenced(meta, 'expire', async (lease) => void (expired = await this.store.expire(meta.transactionalId, lease)));
          if (!expired) return;
          this.forget(meta);
          this.log.info({ transactionalId: meta.transactionalId }, 'transactional id expired');
        }).catch((err: Error) => {
          if (!(err instanceof LeaseLostError)) this.log.warn({ err: err.message, transactionalId: meta.transactionalId, code: LogCode.TXN_ID_EXPIRY_FAILED }, 'expiring a transactional id failed');
        });
        continue;
      }
      const expired = meta.state === 'Ongoing' && meta.startTimeMs >= 0 && now - meta.startTimeMs > meta.timeoutMs;
      const stuck = (meta.state === 'PrepareCommit' || meta.state === 'PrepareAbort') && !this.queues.has(meta.transactionalId);
      if (!expired && !stuck) continue;
      await this.run(meta.transactionalId, async () => {
        if (!this.current(meta)) return; // the slot moved on: its next holder times it out
        if (meta.state === 'PrepareCommit' || meta.state === 'PrepareAbort') await this.completePrepared(meta);
        else if (meta.state === 'Ongoing' && this.clock.now() - meta.startTimeMs > meta.timeoutMs) {
          await this.endTransaction(meta, false, 'fence', `timed out after ${meta.timeoutMs} ms`);
        }
      }).catch((err: Error) => {
        if (!(err instanceof LeaseLostError))
          this.log.warn({ err: err.message, transactionalId: meta.transactionalId, code: LogCode.TXN_ABORT_FAILED }, 'aborting a timed-out transaction failed; retrying');
      });
    }
  }

  // ---- tooling -------------------------------------------------------------

  describe(transactionalId: string): TxnMetadata | undefined {
    return this.txns.get(transactionalId);
  }

  list(): TxnMetadata[] {
    return [...this.txns.values()].sort((a, b) => (a.transactionalId < b.transactionalId ? -1 : 1));
  }

  /** The producer's ongoing transaction, if any (DescribeProducers). */
  byProducer(producerId: bigint): TxnMetadata | undefined {
    return this.byProducerId.get(producerId);
  }
}
