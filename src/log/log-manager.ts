// The partitions' logs as seen from this process, put together from the
// pieces that each own one job (see docs/design.md, "The partition write
// path"): the partitions loaded here (partitions.ts), the append queue and
// its two levels of group commit (append-queue.ts), one flush of a partition
// (partition-writer.ts) with its producers' sequence checks
// (producer-sequences.ts), announcements between brokers (announcements.ts),
// log start moves (log-start.ts), reads (log-reader.ts), ListOffsets
// (offset-lookup.ts) and long-poll waits (long-poll.ts). Handlers and the
// coordinators use this façade; the partition's state is read through
// PartitionLog's getters.
import type { Clock } from '../clock.js';
import type { Logger } from '../observability/logger.js';
import type { Appended, BatchToAppend, LogStartChange } from '../storage/log-types.js';
import type { LogStorage, PartitionStorage, ProducerStorage } from './log-storage.js';
import { Announcements, type Announcer } from './announcements.js';
import { AppendQueue, type AppendQueueBounds } from './append-queue.js';
import { LogReader, READ_COMMITTED, READ_UNCOMMITTED, type ReadResult } from './log-reader.js';
import { LogStartMover } from './log-start.js';
import { waitForAppend } from './long-poll.js';
import { LATEST_TIMESTAMP, legacyOffsetsBefore, offsetForTimestamp, type OffsetLookup } from './offset-lookup.js';
import type { AppendResult, IncomingBatch, PartitionLog } from './partition-log.js';
import { Partitions } from './partitions.js';
import { cachedCopy, PartitionWriter } from './partition-writer.js';
import { ProducerSequences } from './producer-sequences.js';
import { ReadAhead } from './read-ahead.js';
import type { TailCache } from './tail-cache.js';
import { LogCode } from '../observability/log-codes.js';

export { AppendError } from './append-error.js';
export { READ_COMMITTED, READ_UNCOMMITTED, type ReadResult } from './log-reader.js';
export { EARLIEST_LOCAL_TIMESTAMP, EARLIEST_TIMESTAMP, LATEST_TIERED_TIMESTAMP, LATEST_TIMESTAMP, MAX_TIMESTAMP, type OffsetLookup } from './offset-lookup.js';

export interface LogManagerOptions {
  store: LogStorage;
  announcer: Announcer;
  partitionStore: PartitionStorage;
  producerStore: ProducerStorage;
  tail: TailCache;
  /** This broker process's instance id (it names its announcements). */
  instanceId: string;
  appendQueue: AppendQueueBounds;
  /** Batches deleted per statement below a new log start. */
  cleanerChunkBatches: number;
  producerIdExpirationMs: number;
  /** Bytes that reads ahead of catching-up consumers may hold at once, over all partitions. */
  readAheadMaxBytes: number;
  clock: Clock;
  log: Logger;
}

export class LogManager {
  private readonly o: LogManagerOptions;
  private readonly partitions: Partitions;
  private readonly announcements: Announcements;
  private readonly queue: AppendQueue;
  private readonly writer: PartitionWriter;
  private readonly logStart: LogStartMover;
  private readonly readAhead: ReadAhead;
  private readonly reader: LogReader;
  /** Partitions whose read-back is queued and not yet started, with the promise of its landing. */
  private readonly readBackQueued = new Map<PartitionLog, Promise<void>>();

  constructor(options: LogManagerOptions) {
    this.o = options;
    const { store, tail, clock, log } = options;
    this.partitions = new Partitions({ store, log, readBackLater: (p) => this.readBackLater(p) });
    this.announcements = new Announcements({ announcer: options.announcer, partitions: this.partitions, instanceId: options.instanceId, readBackLater: (p) => this.readBackLater(p) });
    this.writer = new PartitionWriter({
      send: (append, txn) => this.queue.send(append, txn),
      sequences: new ProducerSequences({ store: options.producerStore, clock, producerIdExpirationMs: options.producerIdExpirationMs }),
      tail,
      clock,
      log,
      onCommitted: (p) => this.announcements.committed(p),
      onUnseenAppends: (p) => this.readBackLater(p),
      othersAppend: () => this.announcements.othersPresent,
    });
    this.queue = new AppendQueue({ bounds: options.appendQueue, statements: store, flush: (p, items) => this.writer.flush(p, items) });
    this.readAhead = new ReadAhead(options.readAheadMaxBytes, undefined, clock);
    this.reader = new LogReader({ store, tail, readAhead: this.readAhead });
    this.logStart = new LogStartMover({
      store: options.partitionStore,
      chunkBatches: options.cleanerChunkBatches,
      payloadPrefix: (p) => this.announcements.payloadPrefix(p),
      forgetBelow: (p, offset, moved) => {
        tail.trimBelow(p, offset);
        if (moved) this.readAhead.drop(p);
      },
      log,
    });
    store.lostAppendObserver = (lost, appends, ms) =>
      log.warn({ err: lost.message, code: LogCode.APPEND_OUTCOME_SETTLED, ms: Math.round(ms), appends }, 'connection lost during an append; its outcome was settled before answering');
  }

  /**
   * Another broker's appends made the partition's write-side state stale:
   * it is read back next, between two of the partition's flushes (so none
   * changes it meanwhile), once however often this is asked before it starts.
   */
  private readBackLater(p: PartitionLog): void {
    void this.readBack(p);
  }

  /** Reads the partition back between two of its flushes; a read-back queued and not yet started is shared, as its snapshot is taken after now. Never rejects. */
  private readBack(p: PartitionLog): Promise<void> {
    const queued = this.readBackQueued.get(p);
    if (queued) return queued;
    let landed = () => {};
    const promise = new Promise<void>((resolve) => (landed = resolve));
    // Recorded before it is queued: an idle queue starts it at once, and it must find itself to forget.
    this.readBackQueued.set(p, promise);
    this.queue.between(p, async () => {
      this.readBackQueued.delete(p);
      await this.partitions.readBack(p);
      landed();
    });
    return promise;
  }

  /**
   * read_committed requests (Fetch, ListOffsets at isolation level 1) call
   * this once on arrival. A transaction open here may have been ended by
   * another broker, its coordinator, whose marker this one hears of only by
   * NOTIFY, a few milliseconds after EndTxn answered; a client that saw
   * EndTxn answer is owed the outcome. So while other brokers share the
   * database and an open transaction holds the last stable offset back, the
   * partition is read back first (one query, shared by the requests that
   * arrive before it starts). Undefined when there is nothing to wait for,
   * as always for a broker alone.
   */
  catchUpLastStableOffset(p: PartitionLog): Promise<void> | undefined {
    if (!this.announcements.othersPresent || p.lastStableOffset >= p.highWatermark) return undefined;
    return this.readBack(p);
  }

  /** Told how long each flush's PostgreSQL statement took, in seconds (the produce metrics). */
  set commitObserver(observe: ((seconds: number) => void) | null) {
    this.writer.commitObserver = observe;
  }

  /** CreatePartitions: raises the topic's partition count from `from` to `to`; false if it changed meanwhile. */
  addPartitions(topicId: string, topicName: string, from: number, to: number): Promise<boolean> {
    return this.o.partitionStore.addPartitions(topicId, from, to, topicName);
  }

  /** Stored bytes per partition of the given topics (all when null), and the database's total size. */
  async storedSizes(topicIds: string[] | null): Promise<{ partitions: { topicId: string; partition: number; bytes: bigint }[]; totalBytes: bigint }> {
    const [partitions, totalBytes] = await Promise.all([this.o.partitionStore.partitionSizes(topicIds), this.o.partitionStore.databaseBytes()]);
    return { partitions, totalBytes };
  }

  /** A producer id for InitProducerId, unique across every broker sharing the database. */
  allocateProducerId(): Promise<bigint> {
    return this.o.producerStore.allocateProducerId();
  }

  /** The store's retention look-up, for the cleaner. */
  retentionTarget(p: PartitionLog, cutoffTimestamp: bigint | null, retentionBytes: number | null): Promise<bigint | null> {
    return this.o.partitionStore.retentionTarget(p.topicId, p.partition, cutoffTimestamp, retentionBytes);
  }

  /** The partition's state, loaded from PostgreSQL the first time this process touches its topic. */
  partition(topicId: string, partition: number): Promise<PartitionLog | null> {
    return this.partitions.partition(topicId, partition);
  }

  /** The partition's state if this process has loaded it (no PostgreSQL read). */
  loadedPartition(topicId: string, partition: number): PartitionLog | undefined {
    return this.partitions.loaded(topicId, partition);
  }

  /**
   * This broker took the partition's leadership: other brokers may have
   * appended while they led it, so its state is read back from PostgreSQL
   * (between two of its flushes) and its producers' state from the log.
   */
  takeLeadership(p: PartitionLog): Promise<void> {
    p.markProducersStale();
    return this.readBack(p);
  }

  /** Resolves once every append queued for the partition so far has committed or failed (a partition handed over waits for it). */
  flushed(p: PartitionLog): Promise<void> {
    return new Promise((resolve) => this.queue.afterQueued(p, async () => resolve()));
  }

  /** Compaction rewrote the partition's batches below `offset`: this process's tail cache stops serving their old bytes. */
  forgetCachedBelow(p: PartitionLog, offset: bigint): void {
    this.o.tail.trimBelow(p, offset);
    this.readAhead.drop(p);
  }

  /** Forget a deleted topic's partitions; parked fetches wake and see it gone. */
  dropTopic(topicId: string): void {
    for (const p of this.partitions.dropTopic(topicId)) {
      this.o.tail.drop(p);
      this.readAhead.drop(p);
      p.wake();
    }
  }

  /** Shutdown: end every parked long poll now. */
  wakeAll(): void {
    for (const p of this.partitions.all()) p.wake();
  }

  /** Notifications may have been missed: reload every partition's state. */
  resync(): Promise<void> {
    return this.partitions.resync();
  }

  /** Whether other broker processes share the database (see Announcements.setOthersListening). */
  setOthersListening(present: boolean): void {
    this.announcements.setOthersListening(present);
  }

  /** Another broker process moved a partition's log: `instance:topicId:partition:highWatermark:logStartOffset`. */
  onAppendNotification(payload: string): void {
    this.announcements.received(payload);
  }

  /** Moves the log start forward (retention, DeleteRecords); the change, or null for a missing partition. */
  advanceLogStart(p: PartitionLog, topicName: string, target: bigint, reason: string): Promise<LogStartChange | null> {
    return this.logStart.advance(p, topicName, target, reason);
  }

  /** Appends the batches; resolves after the PostgreSQL commit with the first batch's offset. */
  append(p: PartitionLog, batches: IncomingBatch[]): Promise<AppendResult> {
    return this.queue.enqueue(p, batches);
  }

  /**
   * Runs an append made in a statement of its own (the outbox relay's,
   * outbox-relay.ts) between two of the partition's flushes, so no flush of
   * this broker runs beside it; once it committed, the partition's state, the
   * tail cache and the announcement to other brokers follow as after a flush.
   * `run` is given the log end as this broker knows it and answers what it
   * appended, or null for nothing.
   */
  appendBetweenFlushes(p: PartitionLog, run: (logEnd: bigint) => Promise<{ appended: Appended; batches: readonly BatchToAppend[] } | null>): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.between(p, async () => {
        try {
          const done = await run(p.highWatermark);
          if (done) {
            const { appended, batches } = done;
            this.o.tail.append(
              p,
              batches.map((b) => cachedCopy(b, appended.baseOffset + b.relativeOffset)),
            );
            p.appended(appended.baseOffset, appended.highWatermark, appended.logStartOffset, { opened: [], ended: [] });
            if (p.needsReload) this.readBackLater(p);
            this.announcements.committed(p);
          }
          resolve();
        } catch (err) {
          reject(err as Error);
        }
      });
    });
  }

  /** Fetch's read (see LogReader.read). */
  read(p: PartitionLog, offset: bigint, maxBytes: number, minOne: boolean, isolationLevel = READ_UNCOMMITTED): ReadResult | Promise<ReadResult> {
    return this.reader.read(p, offset, maxBytes, minOne, isolationLevel);
  }

  /** Resolves when any of the partitions grows, or after timeoutMs; the returned cancel releases the wait early. */
  waitForAppend(partitions: PartitionLog[], timeoutMs: number): { done: Promise<void>; cancel: () => void } {
    return waitForAppend(this.o.clock, partitions, timeoutMs);
  }

  /** ListOffsets: the offset for a timestamp or one of the special timestamps. */
  async offsetForTimestamp(p: PartitionLog, timestamp: bigint, isolationLevel = READ_UNCOMMITTED): Promise<OffsetLookup> {
    if (isolationLevel === READ_COMMITTED && timestamp === LATEST_TIMESTAMP) await this.catchUpLastStableOffset(p);
    return offsetForTimestamp(this.o.store, p, timestamp, isolationLevel);
  }

  /** ListOffsets v0: up to maxNumOffsets offsets before a timestamp, newest first (Kafka 3.9's legacy look-up). */
  legacyOffsetsBefore(p: PartitionLog, timestamp: bigint, maxNumOffsets: number): Promise<bigint[]> {
    return legacyOffsetsBefore(this.o.store, p, timestamp, maxNumOffsets, BigInt(this.o.clock.now()));
  }
}
