// The log's rows in memory, as storage/pg/log-store.ts's statements keep
// them: an append moves the partition's next offset by the flush's offset
// count and stores its batches with their base offsets written into their
// first 8 bytes; a statement (one append, or several partitions' together)
// is checked whole before anything changes, so it applies whole or not at
// all. Nothing is lost between the broker and memory, so no append's
// outcome is ever unknown (lostAppendObserver is never told).
import type { Appended, BatchToAppend, PartitionSnapshotRow, StoreAppend, StoredBatch, TxnChanges } from '../log-types.js';
import { key, MemoryStorageError, type MemoryBatch, type MemoryDatabase, type MemoryPartition } from './database.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** Rows a read returns at most (READ_SQL's LIMIT). */
const READ_ROWS = 1000;

const stored = (b: MemoryBatch): StoredBatch => ({ baseOffset: b.baseOffset, lastOffset: b.lastOffset, data: Buffer.from(b.data) });

/** The rows one partition's append inserts, checked against the batches already stored. */
function stage(p: MemoryPartition, batches: readonly BatchToAppend[]): MemoryBatch[] {
  const base = p.nextOffset;
  const rows = batches.map((b): MemoryBatch => {
    const data = Buffer.from(b.data);
    data.writeBigInt64BE(base + b.relativeOffset, 0);
    return {
      baseOffset: base + b.relativeOffset,
      lastOffset: base + b.relativeOffset + BigInt(b.lastOffsetDelta),
      recordCount: b.recordCount,
      firstTimestamp: b.firstTimestamp,
      maxTimestamp: b.maxTimestamp,
      producerId: b.producerId,
      producerEpoch: b.producerEpoch,
      baseSequence: b.baseSequence,
      isTransactional: b.isTransactional,
      isControl: b.isControl,
      size: data.length,
      data,
    };
  });
  const taken = new Set(p.batches.map((b) => b.baseOffset));
  for (const r of rows) {
    if (taken.has(r.baseOffset)) throw new MemoryStorageError('duplicate key value violates unique constraint "batches_pkey"', '23505');
    taken.add(r.baseOffset);
  }
  return rows;
}

function apply(p: MemoryPartition, offsetCount: bigint, rows: MemoryBatch[]): Appended {
  const baseOffset = p.nextOffset;
  p.nextOffset += offsetCount;
  p.batches.push(...rows);
  p.batches.sort((a, b) => (a.baseOffset < b.baseOffset ? -1 : a.baseOffset > b.baseOffset ? 1 : 0));
  return { baseOffset, highWatermark: p.nextOffset, logStartOffset: p.logStartOffset };
}

export class MemoryLogStore {
  lostAppendObserver: ((lost: Error, settled: { topicId: string; partition: number; outcome: string }[], ms: number) => void) | null = null;

  constructor(private readonly db: MemoryDatabase) {}

  async append(topicId: string, partition: number, offsetCount: bigint, batches: readonly BatchToAppend[], txn: TxnChanges | null = null, _logEnd = 0n): Promise<Appended | null> {
    const p = this.db.partitions.get(key(topicId, partition));
    if (!p) return null;
    const rows = stage(p, batches);
    const base = p.nextOffset;
    const appended = apply(p, offsetCount, rows);
    if (txn) {
      // As the statement's data-modifying CTEs, which all see the rows as they were before it:
      // a marker ends only a transaction open before this flush; an open one is not opened again.
      const ended = txn.ended.filter((e) => p.openTxns.has(e.producerId)).map((e) => ({ ...e, firstOffset: p.openTxns.get(e.producerId)! }));
      for (const o of txn.opened) if (!p.openTxns.has(o.producerId)) p.openTxns.set(o.producerId, base + o.relativeOffset);
      for (const e of ended) {
        p.openTxns.delete(e.producerId);
        if (!e.commit) p.abortedTxns.push({ producerId: e.producerId, firstOffset: e.firstOffset, lastOffset: base + e.relativeOffset });
      }
    }
    return appended;
  }

  async appendMany(appends: readonly StoreAppend[]): Promise<(Appended | null)[]> {
    for (const a of appends) if (!UUID.test(a.topicId)) throw new Error(`not a topic id: ${a.topicId}`);
    // Every partition checked before any changes: one statement, one transaction.
    const staged = appends.map((a) => {
      const p = this.db.partitions.get(key(a.topicId, a.partition));
      return p ? { p, a, rows: stage(p, a.batches) } : null;
    });
    return staged.map((s) => (s ? apply(s.p, s.a.offsetCount, s.rows) : null));
  }

  async read(topicId: string, partition: number, from: bigint, highWatermark: bigint, maxBytes: number, minOne: boolean): Promise<StoredBatch[]> {
    if (from >= highWatermark) return [];
    if (!UUID.test(topicId)) throw new Error(`not a topic id: ${topicId}`);
    const batches = this.db.partitions.get(key(topicId, partition))?.batches ?? [];
    // The batch holding `from` (or the first after it) starts the read, as READ_SQL's lower bound.
    let start = from;
    for (const b of batches) if (b.baseOffset <= from) start = b.baseOffset;
    const limit = Math.max(Math.trunc(maxBytes), 1);
    const out: StoredBatch[] = [];
    let before = 0;
    let total = 0;
    for (const b of batches) {
      if (b.lastOffset < from || b.baseOffset >= highWatermark || b.baseOffset < start) continue;
      if (out.length >= READ_ROWS || before >= limit) break;
      before += b.size;
      if (total + b.size > maxBytes && !(minOne && out.length === 0)) break;
      total += b.size;
      out.push(stored(b));
    }
    return out;
  }

  async abortedTransactions(topicId: string, partition: number, from: bigint, to: bigint): Promise<{ producerId: bigint; firstOffset: bigint }[]> {
    const aborted = this.db.partitions.get(key(topicId, partition))?.abortedTxns ?? [];
    return aborted
      .filter((a) => a.lastOffset >= from && a.firstOffset < to)
      .sort((a, b) => (a.firstOffset < b.firstOffset ? -1 : a.firstOffset > b.firstOffset ? 1 : 0))
      .map((a) => ({ producerId: a.producerId, firstOffset: a.firstOffset }));
  }

  async partitionSnapshots(topicId: string, partition: number | null = null): Promise<PartitionSnapshotRow[]> {
    const out: PartitionSnapshotRow[] = [];
    for (const p of this.db.partitions.values()) {
      if (p.topicId !== topicId || (partition !== null && p.partition !== partition)) continue;
      out.push({
        partition: p.partition,
        highWatermark: p.nextOffset,
        logStartOffset: p.logStartOffset,
        leaderEpoch: p.leaderEpoch,
        openTxns: new Map(p.openTxns),
        hasAbortedTxns: p.abortedTxns.length > 0,
      });
    }
    return out.sort((a, b) => a.partition - b.partition);
  }

  async firstBatchWithTimestampAtLeast(topicId: string, partition: number, timestamp: bigint, logStartOffset: bigint): Promise<StoredBatch | null> {
    const batches = this.db.partitions.get(key(topicId, partition))?.batches ?? [];
    const b = batches.find((b) => b.maxTimestamp >= timestamp && b.lastOffset >= logStartOffset && !b.isControl);
    return b ? stored(b) : null;
  }

  async batchWithMaxTimestamp(topicId: string, partition: number, logStartOffset: bigint): Promise<StoredBatch | null> {
    let best: MemoryBatch | null = null;
    for (const b of this.db.partitions.get(key(topicId, partition))?.batches ?? []) {
      // Offset order: a later batch wins only with a strictly larger timestamp.
      if (b.lastOffset >= logStartOffset && !b.isControl && (best === null || b.maxTimestamp > best.maxTimestamp)) best = b;
    }
    return best ? stored(best) : null;
  }
}
