import type pg from 'pg';

export interface ProducerBatch {
  producerEpoch: number;
  firstSequence: number;
  lastSequence: number;
  baseOffset: bigint;
}

export interface StoredProducerBatch extends ProducerBatch {
  /** The batch's newest record timestamp (ms). */
  maxTimestamp: number;
}

/** Producer ids and the producer state recorded in the log itself. */
export class ProducerStore {
  constructor(private readonly pool: pg.Pool) {}

  async allocateProducerId(): Promise<bigint> {
    const { rows } = await this.pool.query<{ id: bigint }>("SELECT nextval('producer_ids')::int8 AS id");
    return rows[0]!.id;
  }

  /** The producer's newest batches on a partition (newest last), as kept in the log: what its sequence checks need. */
  async lastBatches(topicId: string, partition: number, producerId: bigint, limit: number): Promise<StoredProducerBatch[]> {
    const { rows } = await this.pool.query<{ producer_epoch: number; base_sequence: number; record_count: number; base_offset: bigint; last_offset: bigint; max_timestamp: bigint }>(
      `SELECT producer_epoch, base_sequence, record_count, base_offset, last_offset, max_timestamp FROM batches
       WHERE topic_id = $1 AND partition = $2 AND producer_id = $3 AND producer_id >= 0 AND NOT is_control
       ORDER BY base_offset DESC LIMIT $4`,
      [topicId, partition, producerId, limit],
    );
    return rows.reverse().map((r) => ({
      producerEpoch: r.producer_epoch,
      firstSequence: r.base_sequence,
      // The last sequence follows the offsets the batch spans (compaction may have removed records, not offsets).
      lastSequence: (r.base_sequence + Number(r.last_offset - r.base_offset)) % 2 ** 31,
      baseOffset: r.base_offset,
      maxTimestamp: Number(r.max_timestamp),
    }));
  }
}
