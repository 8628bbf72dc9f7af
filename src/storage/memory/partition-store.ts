// A partition's bounds in memory, as storage/pg/partition-store.ts keeps
// them: log start moves with what groups lost unread, chunked deletes below
// the log start, CreatePartitions, stored sizes.
import type { LogStartChange } from '../log-types.js';
import { compareText, key, newPartition, type MemoryDatabase, type MemoryPartition } from './database.js';

const max = (a: bigint, b: bigint) => (a > b ? a : b);
const min = (a: bigint, b: bigint) => (a < b ? a : b);

export class MemoryPartitionStore {
  constructor(private readonly db: MemoryDatabase) {}

  private get(topicId: string, partition: number): MemoryPartition | undefined {
    return this.db.partitions.get(key(topicId, partition));
  }

  async retentionTarget(topicId: string, partition: number, cutoffTimestamp: bigint | null, retentionBytes: number | null): Promise<bigint | null> {
    const p = this.get(topicId, partition);
    if (!p) return null;
    const byTime = cutoffTimestamp === null ? p.logStartOffset : (p.batches.find((b) => b.maxTimestamp >= cutoffTimestamp)?.baseOffset ?? p.nextOffset);
    let bySize = p.logStartOffset;
    if (retentionBytes !== null) {
      // The oldest batch whose newer batches hold less than retention.bytes.
      bySize = p.nextOffset;
      let newer = 0;
      for (let i = p.batches.length - 1; i >= 0; i--) {
        if (newer < retentionBytes) bySize = p.batches[i]!.baseOffset;
        newer += p.batches[i]!.size;
      }
    }
    return max(byTime, bySize);
  }

  async advanceLogStart(topicId: string, topicName: string, partition: number, target: bigint, _notifyPrefix: string): Promise<LogStartChange | null> {
    const p = this.get(topicId, partition);
    if (!p) return null;
    const oldStart = p.logStartOffset;
    p.logStartOffset = max(p.logStartOffset, min(target, p.nextOffset));
    const deletedUnread: { groupId: string; records: bigint }[] = [];
    if (p.logStartOffset > oldStart) {
      for (const o of this.db.committedOffsets.values()) {
        if (o.topic !== topicName || o.partition !== partition || o.committedOffset >= p.logStartOffset) continue;
        const records = p.logStartOffset - max(o.committedOffset, oldStart);
        if (records <= 0n) continue;
        deletedUnread.push({ groupId: o.groupId, records });
        const k = key(o.groupId, topicName, partition);
        this.db.deletedUnread.set(k, (this.db.deletedUnread.get(k) ?? 0n) + records);
      }
      deletedUnread.sort((a, b) => compareText(a.groupId, b.groupId));
      // Aborted transactions whose ABORT marker is below the new start: no Fetch can reach them any more.
      p.abortedTxns = p.abortedTxns.filter((a) => a.lastOffset >= p.logStartOffset);
    }
    return { logStartOffset: p.logStartOffset, highWatermark: p.nextOffset, deletedUnread };
  }

  async deleteBelowLogStart(topicId: string, partition: number, limit: number): Promise<number> {
    const p = this.get(topicId, partition);
    if (!p) return 0;
    let n = 0;
    p.batches = p.batches.filter((b) => !(b.lastOffset < p.logStartOffset && n++ < limit));
    return Math.min(n, limit);
  }

  async addPartitions(topicId: string, from: number, to: number, topicName: string): Promise<boolean> {
    const t = this.db.topics.get(topicId);
    const ok = t !== undefined && t.partitionCount === from;
    if (ok) {
      this.db.topics.set(topicId, { ...t, partitionCount: to });
      for (let i = from; i < to; i++) this.db.partitions.set(key(topicId, i), newPartition(topicId, i));
    }
    // As the PostgreSQL statement, which notifies whether or not it changed the topic.
    this.db.notify('topics', topicName);
    return ok;
  }

  async partitionSizes(topicIds: readonly string[] | null): Promise<{ topicId: string; partition: number; bytes: bigint }[]> {
    return [...this.db.partitions.values()]
      .filter((p) => topicIds === null || topicIds.includes(p.topicId))
      .sort((a, b) => compareText(a.topicId, b.topicId) || a.partition - b.partition)
      .map((p) => ({ topicId: p.topicId, partition: p.partition, bytes: p.batches.reduce((sum, b) => sum + BigInt(b.size), 0n) }));
  }

  /** The batches' bytes (there is no database on disk). */
  async databaseBytes(): Promise<bigint> {
    let total = 0n;
    for (const p of this.db.partitions.values()) for (const b of p.batches) total += BigInt(b.size);
    return total;
  }
}
