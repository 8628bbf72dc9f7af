import type { AppendAnnouncer } from '../storage/pg/append-announcer.js';
import type { BatchToAppend, LogStore, StoredBatch, TxnChanges } from '../storage/pg/log-store.js';
import type { LogStartChange, PartitionStore } from '../storage/pg/partition-store.js';
import type { Logger } from '../observability/logger.js';
import { ErrorCode } from '../protocol/errors.js';
import { decodeRecords, LAST_OFFSET_DELTA_OFFSET, readBatchHeaderAt } from '../protocol/records/index.js';
import { PartitionLog, type AppendResult, type IncomingBatch, type PendingAppend } from './partition-log.js';
import type { CachedBatch, TailCache } from './tail-cache.js';
import { ReadAhead } from './read-ahead.js';
import { checkSequence, isExpired, PRODUCER_BATCHES_KEPT, recordAppend, type ProducerEntry, type SequenceCheck } from './producer-state.js';
import type { BatchHeader } from '../protocol/records/index.js';
import type { ProducerStore } from '../storage/pg/producer-store.js';
import { OutcomeUnsettled } from '../storage/pg/append-outcome.js';

export class AppendError extends Error {
  constructor(
    readonly errorCode: number,
    message: string,
  ) {
    super(message);
  }
}

interface SequencedBatch {
  item: PendingAppend;
  header: BatchHeader;
}

export interface ReadResult {
  errorCode: number;
  highWatermark: bigint;
  lastStableOffset: bigint;
  logStartOffset: bigint;
  batches: Buffer[];
  bytes: number;
  /** read_committed: the aborted transactions overlapping the returned batches (null for read_uncommitted). */
  abortedTransactions: { producerId: bigint; firstOffset: bigint }[] | null;
}

/** Fetch and ListOffsets isolation levels. */
export const READ_UNCOMMITTED = 0;
export const READ_COMMITTED = 1;

export interface OffsetLookup {
  errorCode: number;
  offset: bigint;
  timestamp: bigint;
}

export const EARLIEST_TIMESTAMP = -2n;
export const LATEST_TIMESTAMP = -1n;
export const MAX_TIMESTAMP = -3n;
export const EARLIEST_LOCAL_TIMESTAMP = -4n;
export const LATEST_TIERED_TIMESTAMP = -5n;

const key = (topicId: string, partition: number) => `${topicId}:${partition}`;

/** Bytes that reads ahead of catching-up consumers may hold at once, over all partitions. */
const DEFAULT_READ_AHEAD_MAX_BYTES = 64 * 1024 * 1024;

/**
 * The partitions' logs as seen from this process: appends coalesced per
 * partition into one PostgreSQL statement (group commit), reads, offset
 * look-ups, and the wake-ups that end long-poll fetches.
 */
export class LogManager {
  private readonly partitions = new Map<string, PartitionLog>();
  private readonly loading = new Map<string, Promise<void>>();
  private readonly readAhead: ReadAhead;
  /** Told how long each flush's PostgreSQL statement took, in seconds (the produce metrics); unset when metrics are off. */
  commitObserver: ((seconds: number) => void) | null = null;
  /** Other broker processes share the database (setOthersListening). */
  private othersListening = false;
  /** When a failed append was last logged, and how many failed since without a line. */
  private appendFailureLog = { loggedAt: 0, notLogged: 0 };

  constructor(
    private readonly store: LogStore,
    private readonly announcer: AppendAnnouncer,
    private readonly partitionStore: PartitionStore,
    private readonly instanceId: string,
    private readonly flushMaxBytes: number,
    private readonly cleanerChunkBatches: number,
    private readonly tail: TailCache,
    private readonly producerStore: ProducerStore,
    private readonly log: Logger,
    private readonly producerIdExpirationMs = 86_400_000,
    readAheadMaxBytes = DEFAULT_READ_AHEAD_MAX_BYTES,
  ) {
    this.readAhead = new ReadAhead(readAheadMaxBytes);
    store.lostAppendObserver = (lost, appends, ms) =>
      log.warn({ err: lost.message, code: 'PGKAFKA_APPEND_OUTCOME_SETTLED', ms: Math.round(ms), appends }, 'connection lost during an append; its outcome was settled before answering');
  }

  /** CreatePartitions: raises the topic's partition count from `from` to `to`; false if it changed meanwhile. */
  addPartitions(topicId: string, topicName: string, from: number, to: number): Promise<boolean> {
    return this.partitionStore.addPartitions(topicId, from, to, topicName);
  }

  /** Stored bytes per partition of the given topics (all when null), and the database's total size. */
  async storedSizes(topicIds: string[] | null): Promise<{ partitions: { topicId: string; partition: number; bytes: bigint }[]; totalBytes: bigint }> {
    const [partitions, totalBytes] = await Promise.all([this.partitionStore.partitionSizes(topicIds), this.partitionStore.databaseBytes()]);
    return { partitions, totalBytes };
  }

  /** A producer id for InitProducerId, unique across every broker sharing the database. */
  allocateProducerId(): Promise<bigint> {
    return this.producerStore.allocateProducerId();
  }

  /** The store's retention look-up, for the cleaner. */
  retentionTarget(p: PartitionLog, cutoffTimestamp: bigint | null, retentionBytes: number | null): Promise<bigint | null> {
    return this.partitionStore.retentionTarget(p.topicId, p.partition, cutoffTimestamp, retentionBytes);
  }

  /** The partition's state, loaded from PostgreSQL the first time this process touches its topic. */
  async partition(topicId: string, partition: number): Promise<PartitionLog | null> {
    const cached = this.partitions.get(key(topicId, partition));
    if (cached) return cached;
    let loading = this.loading.get(topicId);
    if (!loading) {
      loading = this.loadTopic(topicId).finally(() => this.loading.delete(topicId));
      this.loading.set(topicId, loading);
    }
    await loading;
    return this.partitions.get(key(topicId, partition)) ?? null;
  }

  private async loadTopic(topicId: string): Promise<void> {
    const [states, open, aborted] = await Promise.all([
      this.store.partitionStates(topicId),
      this.store.openTransactions(topicId),
      this.store.partitionsWithAbortedTxns(topicId),
    ]);
    for (const state of states) {
      const k = key(topicId, state.partition);
      let p = this.partitions.get(k);
      if (!p) {
        p = new PartitionLog(topicId, state.partition);
        this.partitions.set(k, p);
      }
      p.leaderEpoch = state.leaderEpoch;
      if (!p.flushing) {
        p.openTxns.clear();
        for (const t of open) if (t.partition === state.partition) p.openTxns.set(t.producerId, t.firstOffset);
      }
      if (aborted.includes(state.partition)) p.hasAbortedTxns = true;
      p.advance(state.highWatermark, state.logStartOffset);
    }
  }

  /** Compaction rewrote the partition's batches below `offset`: this process's tail cache stops serving their old bytes. */
  forgetCachedBelow(p: PartitionLog, offset: bigint): void {
    this.tail.trimBelow(p, offset);
    this.readAhead.drop(p);
  }

  /** Forget a deleted topic's partitions; parked fetches wake and see it gone. */
  dropTopic(topicId: string): void {
    for (const [k, p] of this.partitions) {
      if (p.topicId !== topicId) continue;
      this.partitions.delete(k);
      this.tail.drop(p);
      this.readAhead.drop(p);
      p.wake();
    }
  }

  /** Shutdown: end every parked long poll now. */
  wakeAll(): void {
    for (const p of this.partitions.values()) p.wake();
  }

  /** Notifications may have been missed: reload every partition's state. */
  async resync(): Promise<void> {
    const topics = new Set([...this.partitions.values()].map((p) => p.topicId));
    await Promise.all([...topics].map((t) => this.loadTopic(t)));
  }

  /**
   * Whether other broker processes share the database, and so must hear of
   * this one's appends (a lone broker skips the extra statement per flush).
   * When one appears, every partition loaded here is announced as it stands,
   * in case it read a partition before this broker knew of it.
   */
  setOthersListening(present: boolean): void {
    if (present && !this.othersListening) for (const p of this.partitions.values()) this.announce(p);
    this.othersListening = present;
  }

  private announce(p: PartitionLog): void {
    const partitionKey = key(p.topicId, p.partition);
    this.announcer.announce(partitionKey, `${this.instanceId}:${partitionKey}:${p.highWatermark}:${p.logStartOffset}`);
  }

  /** Another broker process moved a partition's log: `instance:topicId:partition:highWatermark:logStartOffset`. */
  onAppendNotification(payload: string): void {
    const [instance, topicId, partition, hw, logStart] = payload.split(':');
    if (instance === this.instanceId || !topicId || partition === undefined || hw === undefined) return;
    this.partitions.get(key(topicId, Number(partition)))?.advance(BigInt(hw), logStart === undefined ? undefined : BigInt(logStart));
  }

  /**
   * Moves the log start forward (retention, DeleteRecords): reads below it
   * answer OFFSET_OUT_OF_RANGE at once; the batches below it are deleted in
   * bounded chunks afterwards. Returns the change, or null for a missing partition.
   */
  async advanceLogStart(p: PartitionLog, topicName: string, target: bigint, reason: string): Promise<LogStartChange | null> {
    const change = await this.partitionStore.advanceLogStart(p.topicId, topicName, p.partition, target, `${this.instanceId}:${p.topicId}:${p.partition}`);
    if (!change) return null;
    const moved = change.logStartOffset > p.logStartOffset;
    p.advance(change.highWatermark, change.logStartOffset);
    this.tail.trimBelow(p, change.logStartOffset);
    if (moved) {
      this.readAhead.drop(p);
      this.log.info({ topic: topicName, partition: p.partition, logStartOffset: change.logStartOffset, reason }, 'log start offset advanced');
      for (const lost of change.deletedUnread) {
        this.log.warn(
          { topic: topicName, partition: p.partition, group: lost.groupId, records: lost.records, reason, code: 'PGKAFKA_DELETED_UNREAD' },
          'records deleted before the group consumed them',
        );
      }
      void this.deleteBelowLogStart(p, topicName);
    }
    return change;
  }

  private readonly deleting = new Set<PartitionLog>();

  /** Deletes the batches below the log start in bounded chunks, in the background; one pass per partition at a time. */
  private async deleteBelowLogStart(p: PartitionLog, topicName: string): Promise<void> {
    if (this.deleting.has(p)) return;
    this.deleting.add(p);
    try {
      let deleted = 0;
      for (;;) {
        const n = await this.partitionStore.deleteBelowLogStart(p.topicId, p.partition, this.cleanerChunkBatches);
        deleted += n;
        if (n < this.cleanerChunkBatches) break;
      }
      if (deleted > 0) this.log.debug({ topic: topicName, partition: p.partition, batches: deleted }, 'deleted batches below the log start');
    } catch (err) {
      this.log.warn({ err: (err as Error).message, topic: topicName, partition: p.partition, code: 'PGKAFKA_CLEANER_DELETE_FAILED' }, 'deleting old batches failed; the next pass retries');
    } finally {
      this.deleting.delete(p);
    }
  }

  /** Appends the batches; resolves after the PostgreSQL commit with the first batch's offset. */
  append(p: PartitionLog, batches: IncomingBatch[]): Promise<AppendResult> {
    let bytes = 0;
    for (const b of batches) bytes += b.data.length;
    return new Promise((resolve, reject) => {
      p.pending.push({ batches, bytes, resolve, reject });
      if (!p.flushing) void this.flush(p);
    });
  }

  private async flush(p: PartitionLog): Promise<void> {
    p.flushing = true;
    try {
      while (p.pending.length > 0) {
        const taken = this.takeFlush(p);
        let items: PendingAppend[];
        let sequenced: SequencedBatch[];
        try {
          // Batches without a producer id (not idempotent) have no sequence to check.
          const idempotent = taken.some((item) => item.batches.some(({ header }) => header.producerId >= 0n && !header.isControl));
          ({ items, sequenced } = idempotent ? await this.checkSequences(p, taken) : { items: taken, sequenced: [] });
        } catch (err) {
          this.failFlush(p, taken, err, true);
          continue;
        }
        if (items.length === 0) continue;
        const rows: BatchToAppend[] = [];
        const firstRelative: bigint[] = [];
        const txn: TxnChanges = { opened: [], ended: [] };
        let relative = 0n;
        for (const item of items) {
          firstRelative.push(relative);
          for (const { data, header, marker } of item.batches) {
            if (header.isTransactional && header.producerId >= 0n) {
              if (marker) txn.ended.push({ producerId: header.producerId, relativeOffset: relative, commit: marker.commit });
              else if (!p.openTxns.has(header.producerId) && !txn.opened.some((t) => t.producerId === header.producerId)) {
                txn.opened.push({ producerId: header.producerId, relativeOffset: relative });
              }
            }
            data.writeInt32BE(p.leaderEpoch, 12); // partitionLeaderEpoch lies outside the CRC, like the base offset
            rows.push({
              data,
              relativeOffset: relative,
              lastOffsetDelta: header.lastOffsetDelta,
              recordCount: header.recordCount,
              firstTimestamp: header.baseTimestamp,
              maxTimestamp: header.maxTimestamp,
              producerId: header.producerId,
              producerEpoch: header.producerEpoch,
              baseSequence: header.baseSequence,
              isTransactional: header.isTransactional,
              isControl: header.isControl,
            });
            relative += BigInt(header.lastOffsetDelta) + 1n;
          }
        }
        try {
          const startedAt = this.commitObserver ? performance.now() : 0;
          const result = await this.store.append(p.topicId, p.partition, relative, rows, txn, p.highWatermark);
          this.commitObserver?.((performance.now() - startedAt) / 1000);
          if (!result) {
            for (const item of items) item.reject(new AppendError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'partition no longer exists'));
            continue;
          }
          const position = new Map(items.map((item, i) => [item, i]));
          const now = Date.now();
          for (const s of sequenced) {
            const offset = result.baseOffset + firstRelative[position.get(s.item)!]!;
            p.producers.set(s.header.producerId, recordAppend(p.producers.get(s.header.producerId), s.header, offset, now));
          }
          for (const t of txn.opened) p.openTxns.set(t.producerId, result.baseOffset + t.relativeOffset);
          for (const t of txn.ended) {
            if (!t.commit && p.openTxns.has(t.producerId)) p.hasAbortedTxns = true;
            p.openTxns.delete(t.producerId);
          }
          for (const { header, marker } of items.flatMap((item) => item.batches)) {
            const entry = marker && p.producers.get(header.producerId);
            if (entry) p.producers.set(header.producerId, { ...entry, lastTimestamp: header.maxTimestamp, coordinatorEpoch: marker.coordinatorEpoch });
          }
          this.tail.append(p, rows.map((row) => cachedCopy(row, result.baseOffset + row.relativeOffset)));
          p.advance(result.highWatermark, result.logStartOffset);
          if (this.othersListening) this.announce(p);
          items.forEach((item, i) =>
            item.resolve({ baseOffset: result.baseOffset + firstRelative[i]!, logStartOffset: result.logStartOffset, logAppendTimeMs: -1n }),
          );
        } catch (err) {
          this.failFlush(p, items, err, err instanceof OutcomeUnsettled);
        }
      }
    } finally {
      p.flushing = false;
    }
  }

  /**
   * The flush failed, its batches not stored. A producer with no batches
   * here must send the first of them again before anything later (see
   * checkSequence). When it is not known whether they were stored (the
   * store could not settle a lost connection's outcome, or the sequence
   * check could not read the log), the producers' states are read back from
   * the log before their retries are checked, and a retry of a stored batch
   * is recognised as a duplicate.
   */
  private failFlush(p: PartitionLog, items: PendingAppend[], err: unknown, outcomeUnknown: boolean): void {
    // A PostgreSQL outage fails every flush of every partition: one line per second, counting the others.
    const now = Date.now();
    if (now - this.appendFailureLog.loggedAt >= 1000) {
      this.log.error(
        { err: (err as Error).message, code: 'PGKAFKA_APPEND_FAILED', topicId: p.topicId, partition: p.partition, notLogged: this.appendFailureLog.notLogged },
        'append failed',
      );
      this.appendFailureLog = { loggedAt: now, notLogged: 0 };
    } else {
      this.appendFailureLog.notLogged++;
    }
    const marked = new Set<bigint>();
    for (const item of items) {
      for (const { header } of item.batches) {
        if (header.producerId < 0n || header.isControl) continue;
        const entry = p.producers.get(header.producerId);
        if (outcomeUnknown) p.producers.delete(header.producerId);
        else if ((!entry || entry.batches.length === 0) && !marked.has(header.producerId)) {
          p.producers.set(header.producerId, {
            producerEpoch: header.producerEpoch, lastAppendMs: now, lastTimestamp: entry?.lastTimestamp ?? -1n, coordinatorEpoch: entry?.coordinatorEpoch ?? -1,
            batches: [], expectedSequence: header.baseSequence,
          });
        }
        marked.add(header.producerId);
      }
      item.reject(new AppendError(ErrorCode.KAFKA_STORAGE_ERROR, (err as Error).message));
    }
  }

  /**
   * Idempotent producers' sequence checks, in queue order, for one flush:
   * duplicates are answered with their original offset, refusals with their
   * error; the rest are returned to be appended, with the batches whose
   * producer state the commit will advance.
   */
  private async checkSequences(p: PartitionLog, items: PendingAppend[]): Promise<{ items: PendingAppend[]; sequenced: SequencedBatch[] }> {
    const unknown = new Set<bigint>();
    for (const item of items) for (const { header } of item.batches) if (header.producerId >= 0n && !header.isControl && !p.producers.has(header.producerId)) unknown.add(header.producerId);
    for (const producerId of unknown) {
      const stored = await this.producerStore.lastBatches(p.topicId, p.partition, producerId, PRODUCER_BATCHES_KEPT);
      const batches = stored.map(({ maxTimestamp: _, ...b }) => b);
      // After a restart the newest stored batch's timestamp stands in for the last append time.
      const lastTimestamp = stored.at(-1)?.maxTimestamp;
      p.producers.set(producerId, { producerEpoch: batches.at(-1)?.producerEpoch ?? -1, lastAppendMs: lastTimestamp ?? 0, lastTimestamp: BigInt(lastTimestamp ?? -1), coordinatorEpoch: -1, batches });
    }
    const now = Date.now();
    const working = new Map<bigint, ProducerEntry | undefined>();
    const accepted: PendingAppend[] = [];
    const sequenced: SequencedBatch[] = [];
    for (const item of items) {
      let outcome: SequenceCheck = { kind: 'append' };
      const pending: SequencedBatch[] = [];
      for (const { header } of item.batches) {
        // Markers are the coordinator's own batches, outside the producer's sequence.
        if (header.producerId < 0n || header.isControl) continue;
        let entry = working.has(header.producerId) ? working.get(header.producerId) : p.producers.get(header.producerId);
        if (entry && isExpired(entry, now, this.producerIdExpirationMs)) {
          // producer.id.expiration.ms passed since its last append: the producer starts afresh, as on Kafka.
          p.producers.delete(header.producerId);
          entry = undefined;
        }
        outcome = checkSequence(entry, header);
        if (outcome.kind !== 'append') break;
        working.set(header.producerId, recordAppend(entry, header, -1n, now));
        pending.push({ item, header });
      }
      if (outcome.kind === 'error') {
        item.reject(new AppendError(outcome.errorCode, outcome.message));
      } else if (outcome.kind === 'duplicate') {
        // A retry of a batch still in this flush has no offset yet: Kafka's DUPLICATE_SEQUENCE_NUMBER, which clients take as success.
        if (outcome.baseOffset < 0n) item.reject(new AppendError(ErrorCode.DUPLICATE_SEQUENCE_NUMBER, 'duplicate of a batch being appended'));
        else item.resolve({ baseOffset: outcome.baseOffset, logStartOffset: p.logStartOffset, logAppendTimeMs: -1n });
      } else {
        accepted.push(item);
        sequenced.push(...pending);
      }
    }
    return { items: accepted, sequenced };
  }

  /**
   * The next flush: queued appends up to the byte limit. A transaction
   * marker is flushed on its own, so a flush never holds both a producer's
   * marker and its batches of another transaction.
   */
  private takeFlush(p: PartitionLog): PendingAppend[] {
    const isMarker = (item: PendingAppend) => item.batches.some((b) => b.marker !== undefined);
    if (isMarker(p.pending[0]!)) return p.pending.splice(0, 1);
    let bytes = 0;
    let n = 0;
    while (n < p.pending.length && (n === 0 || bytes + p.pending[n]!.bytes <= this.flushMaxBytes) && !isMarker(p.pending[n]!)) bytes += p.pending[n++]!.bytes;
    return p.pending.splice(0, n);
  }

  /**
   * Stored batches from `offset`, honouring the byte limit; OFFSET_OUT_OF_RANGE
   * outside [log start, high watermark]. read_committed reads stop at the last
   * stable offset and carry the aborted transactions of the range returned.
   */
  async read(p: PartitionLog, offset: bigint, maxBytes: number, minOne: boolean, isolationLevel = READ_UNCOMMITTED): Promise<ReadResult> {
    const highWatermark = p.highWatermark;
    const lastStableOffset = p.lastStableOffset;
    const logStartOffset = p.logStartOffset;
    const committedOnly = isolationLevel === READ_COMMITTED;
    const upTo = committedOnly ? lastStableOffset : highWatermark;
    const result = (errorCode: number, batches: Buffer[] = [], bytes = 0): ReadResult => ({
      errorCode,
      highWatermark,
      lastStableOffset,
      logStartOffset,
      batches,
      bytes,
      abortedTransactions: committedOnly ? [] : null,
    });
    if (offset < logStartOffset || offset > highWatermark) return result(ErrorCode.OFFSET_OUT_OF_RANGE);
    if (offset >= upTo || (maxBytes <= 0 && !minOne)) return result(ErrorCode.NONE);
    let batches = this.tail.read(p, offset, highWatermark, maxBytes, minOne, upTo);
    if (!batches) batches = (await this.readStored(p, offset, upTo, maxBytes, minOne)).map((b) => b.data);
    let bytes = 0;
    for (const b of batches) bytes += b.length;
    const read = result(ErrorCode.NONE, batches, bytes);
    if (committedOnly && p.hasAbortedTxns && batches.length > 0) {
      const last = batches[batches.length - 1]!;
      const end = last.readBigInt64BE(0) + BigInt(last.readInt32BE(LAST_OFFSET_DELTA_OFFSET)) + 1n;
      read.abortedTransactions = await this.store.abortedTransactions(p.topicId, p.partition, offset, end);
    }
    return read;
  }

  /**
   * Batches from PostgreSQL, taken from the read ahead when one waits at
   * `offset`; a read that stops short of `upTo` starts the next one.
   */
  private async readStored(p: PartitionLog, offset: bigint, upTo: bigint, maxBytes: number, minOne: boolean): Promise<StoredBatch[]> {
    const ahead = this.readAhead.take(p, offset);
    let stored = ahead ? await ahead : null;
    if (stored) stored = withinLimits(stored, upTo, maxBytes, minOne);
    if (!stored || stored.length === 0) stored = await this.store.read(p.topicId, p.partition, offset, upTo, maxBytes, minOne);
    const last = stored.at(-1);
    if (last && last.lastOffset + 1n < upTo && maxBytes > 0) {
      const next = last.lastOffset + 1n;
      this.readAhead.start(p, next, maxBytes, () => this.store.read(p.topicId, p.partition, next, upTo, maxBytes, true));
    }
    return stored;
  }

  /** Resolves when any of the partitions grows, or after timeoutMs; the returned cancel releases the wait early. */
  waitForAppend(partitions: PartitionLog[], timeoutMs: number): { done: Promise<void>; cancel: () => void } {
    let cancel = () => {};
    const done = new Promise<void>((resolve) => {
      const offs: (() => void)[] = [];
      const finish = () => {
        clearTimeout(timer);
        for (const off of offs) off();
        resolve();
      };
      const timer = setTimeout(finish, timeoutMs);
      for (const p of partitions) offs.push(p.onAppend(finish));
      cancel = finish;
    });
    return { done, cancel };
  }

  /** ListOffsets: the offset for a timestamp or one of the special timestamps (-1 latest, -2 earliest, -3 max timestamp, -4, -5). */
  async offsetForTimestamp(p: PartitionLog, timestamp: bigint, isolationLevel = READ_UNCOMMITTED): Promise<OffsetLookup> {
    const none = ErrorCode.NONE;
    if (timestamp === LATEST_TIMESTAMP) {
      return { errorCode: none, offset: isolationLevel === READ_COMMITTED ? p.lastStableOffset : p.highWatermark, timestamp: -1n };
    }
    if (timestamp === EARLIEST_TIMESTAMP || timestamp === EARLIEST_LOCAL_TIMESTAMP) return { errorCode: none, offset: p.logStartOffset, timestamp: -1n };
    // No tiered storage here: nothing is tiered, as Kafka answers when remote storage is disabled.
    if (timestamp === LATEST_TIERED_TIMESTAMP) return { errorCode: none, offset: -1n, timestamp: -1n };
    if (timestamp === MAX_TIMESTAMP) {
      const batch = await this.store.batchWithMaxTimestamp(p.topicId, p.partition, p.logStartOffset);
      if (!batch) return { errorCode: none, offset: -1n, timestamp: -1n };
      return this.findInBatch(batch.data, batch.baseOffset, (ts, best) => best === null || ts > best) ?? { errorCode: none, offset: -1n, timestamp: -1n };
    }
    if (timestamp < 0n) return { errorCode: ErrorCode.INVALID_REQUEST, offset: -1n, timestamp: -1n };
    const batch = await this.store.firstBatchWithTimestampAtLeast(p.topicId, p.partition, timestamp, p.logStartOffset);
    if (!batch) return { errorCode: none, offset: -1n, timestamp: -1n };
    const found = this.findInBatch(batch.data, batch.baseOffset, (ts, best) => best === null && ts >= timestamp);
    return found ?? { errorCode: none, offset: -1n, timestamp: -1n };
  }

  /** Scans a stored batch's records; `better(ts, best)` says whether a record should replace the current pick. */
  private findInBatch(data: Buffer, baseOffset: bigint, better: (ts: bigint, best: bigint | null) => boolean): OffsetLookup | null {
    const header = readBatchHeaderAt(data, 0);
    if (!header) return null;
    if (header.timestampType === 1) {
      // LogAppendTime: every record carries the batch's max timestamp.
      return better(header.maxTimestamp, null) ? { errorCode: ErrorCode.NONE, offset: baseOffset, timestamp: header.maxTimestamp } : null;
    }
    const { records, error } = decodeRecords(data, header);
    if (error) return null;
    let best: OffsetLookup | null = null;
    for (const r of records) {
      const ts = header.baseTimestamp + r.timestampDelta;
      if (better(ts, best?.timestamp ?? null)) best = { errorCode: ErrorCode.NONE, offset: baseOffset + BigInt(r.offsetDelta), timestamp: ts };
    }
    return best;
  }
}

/** Batches read ahead, cut to this read's limits: below `upTo`, about maxBytes (at least one if minOne). */
function withinLimits(batches: StoredBatch[], upTo: bigint, maxBytes: number, minOne: boolean): StoredBatch[] {
  const out: StoredBatch[] = [];
  let total = 0;
  for (const b of batches) {
    if (b.baseOffset >= upTo) break;
    if (total + b.data.length > maxBytes && !(minOne && out.length === 0)) break;
    out.push(b);
    total += b.data.length;
  }
  return out;
}

/**
 * The batch as PostgreSQL now holds it (base offset written in), for the
 * tail cache. A batch that is a small view of a large request buffer is
 * copied, so the cache does not keep whole requests alive.
 */
function cachedCopy(row: BatchToAppend, baseOffset: bigint): CachedBatch {
  const data = row.data.buffer.byteLength > 2 * row.data.length + 8192 ? Buffer.from(row.data) : row.data;
  data.writeBigInt64BE(baseOffset, 0);
  return { baseOffset, lastOffset: baseOffset + BigInt(row.lastOffsetDelta), data };
}
