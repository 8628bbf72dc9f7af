import type pg from 'pg';
import { metadataString } from './group-store.js';

export { consumerOffsetsPartition } from './group-store.js';

/** The newest entry of one key of __consumer_offsets: an offset commit, or a tombstone (committedOffset null) of a deleted one. */
export interface ConsumerOffsetsEntry {
  position: bigint;
  groupId: string;
  topic: string;
  partition: number;
  /** null: a tombstone. */
  committedOffset: bigint | null;
  leaderEpoch: number;
  metadata: string | null;
  /** Commit time, or deletion time for a tombstone (ms). */
  timestampMs: bigint;
  /** An offset committed with a retention time (OffsetCommit v2-v4): when it expires (ms). */
  expireTimestampMs: bigint | null;
}

export interface ConsumerOffsetsSlice {
  /** The partition's next position: its high watermark. */
  highWatermark: bigint;
  entries: ConsumerOffsetsEntry[];
}

interface EntryRow {
  log_position: bigint;
  group_id: string;
  topic: string;
  partition: number;
  committed_offset: bigint | null;
  leader_epoch: number | null;
  metadata: Buffer | null;
  timestamp_ms: bigint;
  expire_timestamp_ms: bigint | null;
  high_watermark: bigint;
}

/**
 * Reads the positions the migration's triggers give every change of
 * committed_offsets (see 0022_consumer_offsets_topic.sql): one statement, one
 * snapshot, so the entries and the high watermark agree.
 */
export class ConsumerOffsetsStore {
  constructor(private readonly pool: pg.Pool) {}

  /** Entries of the partition at positions ≥ from, in position order, at most `limit` of them. */
  async read(partition: number, from: bigint, limit: number): Promise<ConsumerOffsetsSlice> {
    const { rows } = await this.pool.query<EntryRow>(
      `WITH hw AS (SELECT next_position FROM consumer_offsets_partitions WHERE partition = $1)
       SELECT e.*, hw.next_position AS high_watermark FROM hw LEFT JOIN LATERAL (
         (SELECT log_position, group_id, topic, partition, committed_offset, leader_epoch, metadata,
                 (extract(epoch FROM commit_timestamp) * 1000)::int8 AS timestamp_ms,
                 (extract(epoch FROM expire_timestamp) * 1000)::int8 AS expire_timestamp_ms
          FROM committed_offsets WHERE log_partition = $1 AND log_position >= $2 ORDER BY log_position LIMIT $3)
         UNION ALL
         (SELECT log_position, group_id, topic, partition, NULL, NULL, NULL, (extract(epoch FROM deleted_at) * 1000)::int8, NULL
          FROM consumer_offsets_tombstones WHERE log_partition = $1 AND log_position >= $2 ORDER BY log_position LIMIT $3)
         ORDER BY log_position LIMIT $3
       ) e ON true`,
      [partition, from.toString(), limit],
    );
    const highWatermark = BigInt(rows[0]?.high_watermark ?? 0);
    const entries = rows
      .filter((r) => r.log_position !== null)
      .map((r) => ({
        position: BigInt(r.log_position),
        groupId: r.group_id,
        topic: r.topic,
        partition: r.partition,
        committedOffset: r.committed_offset === null ? null : BigInt(r.committed_offset),
        leaderEpoch: r.leader_epoch ?? -1,
        metadata: metadataString(r.metadata),
        timestampMs: BigInt(r.timestamp_ms),
        expireTimestampMs: r.expire_timestamp_ms === null ? null : BigInt(r.expire_timestamp_ms),
      }));
    return { highWatermark, entries };
  }

  /** The partition's next position. */
  async highWatermark(partition: number): Promise<bigint> {
    const { rows } = await this.pool.query<{ next_position: bigint }>('SELECT next_position FROM consumer_offsets_partitions WHERE partition = $1', [partition]);
    return BigInt(rows[0]?.next_position ?? 0);
  }

  /** The first position of the partition whose entry's timestamp is ≥ timestampMs, and that timestamp; null if none. */
  async positionForTimestamp(partition: number, timestampMs: bigint): Promise<{ position: bigint; timestampMs: bigint } | null> {
    const { rows } = await this.pool.query<{ log_position: bigint; timestamp_ms: string }>(
      `SELECT log_position, timestamp_ms FROM (
         SELECT log_position, (extract(epoch FROM commit_timestamp) * 1000)::int8 AS timestamp_ms FROM committed_offsets WHERE log_partition = $1
         UNION ALL
         SELECT log_position, (extract(epoch FROM deleted_at) * 1000)::int8 FROM consumer_offsets_tombstones WHERE log_partition = $1
       ) e WHERE timestamp_ms >= $2 ORDER BY log_position LIMIT 1`,
      [partition, timestampMs.toString()],
    );
    return rows[0] ? { position: BigInt(rows[0].log_position), timestampMs: BigInt(rows[0].timestamp_ms) } : null;
  }

  /** Whether any offset was ever committed in the cluster: Kafka creates __consumer_offsets with the first group. */
  async everCommitted(): Promise<boolean> {
    const { rows } = await this.pool.query<{ any: boolean }>('SELECT EXISTS (SELECT 1 FROM consumer_offsets_partitions WHERE next_position > 0) AS any');
    return rows[0]!.any;
  }
}
