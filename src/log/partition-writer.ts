// One flush of a partition, as the append queue hands it over: the
// producers' sequence checks, the rows and transaction changes of the
// statement, and, once it committed, the partition's new state, the tail
// cache and the announcement to other brokers; or, when it failed, the
// answers that tell the producers what to send again.
import type { Clock } from '../clock.js';
import type { Logger } from '../observability/logger.js';
import { ErrorCode } from '../protocol/errors.js';
import type { BatchHeader } from '../protocol/records/index.js';
import { OutcomeUnsettled } from '../storage/pg/append-outcome.js';
import type { Appended, BatchToAppend, StoreAppend, TxnChanges } from '../storage/log-types.js';
import { AppendError } from './append-error.js';
import type { PendingAppend } from './append-queue.js';
import type { PartitionLog } from './partition-log.js';
import { ProducerSequences, type SequencedBatch } from './producer-sequences.js';
import type { CachedBatch, TailCache } from './tail-cache.js';
import { LogCode } from '../observability/log-codes.js';

export interface PartitionWriterOptions {
  /** Sends a flush's statement (AppendQueue.send). */
  send: (append: StoreAppend, txn: TxnChanges | null) => Promise<Appended | null>;
  sequences: ProducerSequences;
  tail: TailCache;
  clock: Clock;
  log: Logger;
  /** Called after each committed flush (the announcement to other brokers). */
  onCommitted: (p: PartitionLog) => void;
  /** Called when a commit shows appends of another broker that this one has not seen (the partition's state is read back). */
  onUnseenAppends: (p: PartitionLog) => void;
  /** Whether other brokers share the database, and so may have ended a transaction this one still holds open (a marker not heard of yet). */
  othersAppend: () => boolean;
}

export class PartitionWriter {
  /** Told how long each flush's PostgreSQL statement took, in seconds (the produce metrics); unset when metrics are off. */
  commitObserver: ((seconds: number) => void) | null = null;
  private readonly o: PartitionWriterOptions;
  /** When a failed append was last logged, and how many failed since without a line. */
  private appendFailureLog = { loggedAt: 0, notLogged: 0 };

  constructor(options: PartitionWriterOptions) {
    this.o = options;
  }

  /** Runs one flush; never throws (every append of it is answered). */
  async flush(p: PartitionLog, taken: PendingAppend[]): Promise<void> {
    // Another broker appended since the last flush: the producers' state is read from the log again.
    p.takeStaleProducers();
    let items: PendingAppend[];
    let sequenced: SequencedBatch[];
    try {
      ({ items, sequenced } = ProducerSequences.needsCheck(taken) ? await this.o.sequences.check(p, taken) : { items: taken, sequenced: [] });
    } catch (err) {
      this.failed(p, taken, err, true);
      return;
    }
    if (items.length === 0) return;
    const rows: BatchToAppend[] = [];
    const firstRelative: bigint[] = [];
    const txn: TxnChanges = { opened: [], ended: [] };
    // A producer's transaction held open here may have been ended by another broker's marker this one has not
    // heard of yet, and its next batch then opens a new one: with other brokers about, every transactional batch
    // records its transaction as opened, and PostgreSQL keeps the first offset of one still open (ON CONFLICT).
    const mayBeStale = this.o.othersAppend();
    let relative = 0n;
    for (const item of items) {
      firstRelative.push(relative);
      for (const { data, header, marker } of item.batches) {
        if (header.isTransactional && header.producerId >= 0n) {
          if (marker) txn.ended.push({ producerId: header.producerId, relativeOffset: relative, commit: marker.commit });
          else if ((mayBeStale || !p.hasOpenTxn(header.producerId)) && !txn.opened.some((t) => t.producerId === header.producerId)) {
            txn.opened.push({ producerId: header.producerId, relativeOffset: relative });
          }
        }
        data.writeInt32BE(p.leaderEpoch, 12); // partitionLeaderEpoch lies outside the CRC, like the base offset
        rows.push(batchToAppend(data, header, relative));
        relative += BigInt(header.lastOffsetDelta) + 1n;
      }
    }
    try {
      const startedAt = this.commitObserver ? performance.now() : 0;
      const result = await this.o.send({ topicId: p.topicId, partition: p.partition, offsetCount: relative, batches: rows, logEnd: p.highWatermark }, txn);
      this.commitObserver?.((performance.now() - startedAt) / 1000);
      if (!result) {
        for (const item of items) item.reject(new AppendError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'partition no longer exists'));
        return;
      }
      const position = new Map(items.map((item, i) => [item, i]));
      this.o.sequences.committed(p, sequenced, (item) => result.baseOffset + firstRelative[position.get(item)!]!, items);
      this.o.tail.append(
        p,
        rows.map((row) => cachedCopy(row, result.baseOffset + row.relativeOffset)),
      );
      p.appended(result.baseOffset, result.highWatermark, result.logStartOffset, {
        opened: txn.opened.map((t) => ({ producerId: t.producerId, offset: result.baseOffset + t.relativeOffset })),
        ended: txn.ended.map((t) => ({ producerId: t.producerId, commit: t.commit })),
      });
      if (p.needsReload) this.o.onUnseenAppends(p);
      this.o.onCommitted(p);
      items.forEach((item, i) => item.resolve({ baseOffset: result.baseOffset + firstRelative[i]!, logStartOffset: result.logStartOffset, logAppendTimeMs: -1n }));
    } catch (err) {
      this.failed(p, items, err, err instanceof OutcomeUnsettled);
    }
  }

  private failed(p: PartitionLog, items: PendingAppend[], err: unknown, outcomeUnknown: boolean): void {
    // A PostgreSQL outage fails every flush of every partition: one line per second, counting the others.
    const now = this.o.clock.now();
    if (now - this.appendFailureLog.loggedAt >= 1000) {
      this.o.log.error({ err: (err as Error).message, code: LogCode.APPEND_FAILED, topicId: p.topicId, partition: p.partition, notLogged: this.appendFailureLog.notLogged }, 'append failed');
      this.appendFailureLog = { loggedAt: now, notLogged: 0 };
    } else {
      this.appendFailureLog.notLogged++;
    }
    this.o.sequences.failed(p, items, outcomeUnknown);
    for (const item of items) item.reject(new AppendError(ErrorCode.KAFKA_STORAGE_ERROR, (err as Error).message));
  }
}

/** A batch as the store appends it: its bytes and the columns read from its header. */
export function batchToAppend(data: Buffer, header: BatchHeader, relativeOffset: bigint): BatchToAppend {
  return {
    data,
    relativeOffset,
    lastOffsetDelta: header.lastOffsetDelta,
    recordCount: header.recordCount,
    firstTimestamp: header.baseTimestamp,
    maxTimestamp: header.maxTimestamp,
    producerId: header.producerId,
    producerEpoch: header.producerEpoch,
    baseSequence: header.baseSequence,
    isTransactional: header.isTransactional,
    isControl: header.isControl,
  };
}

/**
 * The batch as PostgreSQL now holds it (base offset written in), for the
 * tail cache. A batch that is a small view of a large request buffer is
 * copied, so the cache does not keep whole requests alive.
 */
export function cachedCopy(row: BatchToAppend, baseOffset: bigint): CachedBatch {
  const data = row.data.buffer.byteLength > 2 * row.data.length + 8192 ? Buffer.from(row.data) : row.data;
  data.writeBigInt64BE(baseOffset, 0);
  return { baseOffset, lastOffset: baseOffset + BigInt(row.lastOffsetDelta), data };
}
