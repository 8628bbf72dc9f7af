// Fetch's reads of a partition: from the tail cache when it holds the range,
// else from PostgreSQL (through the read-ahead when one waits at the offset),
// bounded by the high watermark or, for read_committed, the last stable
// offset, with the aborted transactions of the range returned.
import { ErrorCode } from '../protocol/errors.js';
import { LAST_OFFSET_DELTA_OFFSET } from '../protocol/records/index.js';
import type { StoredBatch } from '../storage/log-types.js';
import type { PartitionLog } from './partition-log.js';
import type { ReadAhead } from './read-ahead.js';
import type { TailCache } from './tail-cache.js';

/** Fetch and ListOffsets isolation levels. */
export const READ_UNCOMMITTED = 0;
export const READ_COMMITTED = 1;

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

/** What reads ask of the log's rows (LogStorage). */
export interface StoredReads {
  read(topicId: string, partition: number, from: bigint, highWatermark: bigint, maxBytes: number, minOne: boolean): Promise<StoredBatch[]>;
  abortedTransactions(topicId: string, partition: number, from: bigint, to: bigint): Promise<{ producerId: bigint; firstOffset: bigint }[]>;
}

export class LogReader {
  private readonly store: StoredReads;
  private readonly tail: TailCache;
  private readonly readAhead: ReadAhead;

  constructor(options: { store: StoredReads; tail: TailCache; readAhead: ReadAhead }) {
    this.store = options.store;
    this.tail = options.tail;
    this.readAhead = options.readAhead;
  }

  /**
   * Stored batches from `offset`, honouring the byte limit; OFFSET_OUT_OF_RANGE
   * outside [log start, high watermark]. read_committed reads stop at the last
   * stable offset and carry the aborted transactions of the range returned.
   * Answered at once (no promise) when nothing needs PostgreSQL: nothing new,
   * or the range is in the tail cache (an incremental fetch session reads
   * every partition of the session each time, most of them with nothing new).
   */
  read(p: PartitionLog, offset: bigint, maxBytes: number, minOne: boolean, isolationLevel = READ_UNCOMMITTED): ReadResult | Promise<ReadResult> {
    const committedOnly = isolationLevel === READ_COMMITTED;
    const highWatermark = p.highWatermark;
    const upTo = committedOnly ? p.lastStableOffset : highWatermark;
    if (offset < p.logStartOffset || offset > highWatermark) return readResult(p, committedOnly, ErrorCode.OFFSET_OUT_OF_RANGE);
    if (offset >= upTo || (maxBytes <= 0 && !minOne)) return readResult(p, committedOnly, ErrorCode.NONE);
    // The offsets as they stand now, before any wait for PostgreSQL.
    const read = readResult(p, committedOnly, ErrorCode.NONE);
    const cached = this.tail.read(p, offset, highWatermark, maxBytes, minOne, upTo);
    if (cached) return this.finish(p, read, offset, cached);
    const stored = this.readStored(p, offset, upTo, maxBytes, minOne);
    return stored.then((batches) =>
      this.finish(
        p,
        read,
        offset,
        batches.map((b) => b.data),
      ),
    );
  }

  /** Fills in the batches; read_committed with aborted transactions in the partition looks up those overlapping them. */
  private finish(p: PartitionLog, read: ReadResult, offset: bigint, batches: Buffer[]): ReadResult | Promise<ReadResult> {
    read.batches = batches;
    for (const b of batches) read.bytes += b.length;
    if (!read.abortedTransactions || !p.hasAbortedTxns || batches.length === 0) return read;
    const last = batches[batches.length - 1]!;
    const end = last.readBigInt64BE(0) + BigInt(last.readInt32BE(LAST_OFFSET_DELTA_OFFSET)) + 1n;
    return this.store.abortedTransactions(p.topicId, p.partition, offset, end).then((aborted) => {
      read.abortedTransactions = aborted;
      return read;
    });
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
}

/** Batches read ahead, cut to this read's limits: below `upTo`, about maxBytes (at least one if minOne). */
export function withinLimits(batches: StoredBatch[], upTo: bigint, maxBytes: number, minOne: boolean): StoredBatch[] {
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

/** The partition's offsets as of now, with no batches yet. */
function readResult(p: PartitionLog, committedOnly: boolean, errorCode: number): ReadResult {
  return {
    errorCode,
    highWatermark: p.highWatermark,
    lastStableOffset: p.lastStableOffset,
    logStartOffset: p.logStartOffset,
    batches: [],
    bytes: 0,
    abortedTransactions: committedOnly ? [] : null,
  };
}
