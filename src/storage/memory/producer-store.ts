// The producers' state as the log keeps it, in memory (storage/pg/producer-store.ts).
import type { StoredProducerBatch } from '../log-types.js';
import { key, type MemoryDatabase } from './database.js';

/** Producer ids (the shared producer_ids sequence) and the producers' batches as the log keeps them. */
export class MemoryProducerStore {
  constructor(private readonly db: MemoryDatabase) {}

  async allocateProducerId(): Promise<bigint> {
    return this.db.nextProducerId++;
  }

  async lastBatches(topicId: string, partition: number, producerId: bigint, limit: number): Promise<StoredProducerBatch[]> {
    const batches = this.db.partitions.get(key(topicId, partition))?.batches ?? [];
    return batches
      .filter((b) => b.producerId === producerId && b.producerId >= 0n && !b.isControl)
      .slice(-limit)
      .map((b) => ({
        producerEpoch: b.producerEpoch,
        firstSequence: b.baseSequence,
        // The last sequence follows the offsets the batch spans (compaction may have removed records, not offsets).
        lastSequence: (b.baseSequence + Number(b.lastOffset - b.baseOffset)) % 2 ** 31,
        baseOffset: b.baseOffset,
        maxTimestamp: Number(b.maxTimestamp),
      }));
  }
}
