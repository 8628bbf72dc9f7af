import type pg from 'pg';
import { inTransaction, Rollback } from './pool.js';

export interface LogStartChange {
  logStartOffset: bigint;
  highWatermark: bigint;
  /** Per group whose committed offset lay below the new log start: how many records it never read. */
  deletedUnread: { groupId: string; records: bigint }[];
}

/** A partition's bounds: moving its log start (retention, DeleteRecords) and adding partitions (CreatePartitions). */
export class PartitionStore {
  constructor(
    private readonly pool: pg.Pool,
    private readonly appendChannel: string,
    private readonly topicsChannel: string,
  ) {}

  /**
   * The log start that retention asks for: the first batch (in offset order)
   * that is neither older than `cutoffTimestamp` nor outside the newest
   * `retentionBytes`; the high watermark if every batch goes.
   */
  async retentionTarget(topicId: string, partition: number, cutoffTimestamp: bigint | null, retentionBytes: number | null): Promise<bigint | null> {
    // Time: the first batch whose newest record is not older than the cutoff.
    // Size: Kafka deletes the oldest batch only while what is newer still
    // holds at least retention.bytes.
    const { rows } = await this.pool.query<{ target: bigint }>(
      `SELECT greatest(
         CASE WHEN $3::int8 IS NULL THEN p.log_start_offset ELSE coalesce(
           (SELECT base_offset FROM batches WHERE topic_id = $1 AND partition = $2 AND max_timestamp >= $3 ORDER BY base_offset LIMIT 1),
           p.next_offset) END,
         CASE WHEN $4::int8 IS NULL THEN p.log_start_offset ELSE coalesce(
           (SELECT min(base_offset) FROM (
              SELECT base_offset, sum(size) OVER (ORDER BY base_offset DESC) - size AS newer_bytes
              FROM batches WHERE topic_id = $1 AND partition = $2) s
            WHERE newer_bytes < $4),
           p.next_offset) END) AS target
       FROM partitions p WHERE p.topic_id = $1 AND p.partition = $2`,
      [topicId, partition, cutoffTimestamp, retentionBytes],
    );
    return rows[0]?.target ?? null;
  }

  /**
   * Moves the log start forward to `target` (never back, never past the high
   * watermark), records what each group lost unread and forgets aborted
   * transactions that ended below it. Batches wholly below
   * the new start are deleted afterwards by deleteBelowLogStart.
   */
  async advanceLogStart(topicId: string, topicName: string, partition: number, target: bigint, notifyPrefix: string): Promise<LogStartChange | null> {
    return inTransaction(this.pool, async (client) => {
      const locked = await client.query<{ old_start: bigint }>('SELECT log_start_offset AS old_start FROM partitions WHERE topic_id = $1 AND partition = $2 FOR UPDATE', [topicId, partition]);
      const oldStart = locked.rows[0]?.old_start;
      if (oldStart === undefined) throw new Rollback(null);
      const { rows } = await client.query<{ new_start: bigint; hw: bigint }>(
        `UPDATE partitions SET log_start_offset = greatest(log_start_offset, least($3::int8, next_offset))
         WHERE topic_id = $1 AND partition = $2 RETURNING log_start_offset AS new_start, next_offset AS hw`,
        [topicId, partition, target],
      );
      const row = rows[0]!;
      let deletedUnread: { groupId: string; records: bigint }[] = [];
      if (row.new_start > oldStart) {
        const lost = await client.query<{ group_id: string; records: bigint }>(
          `WITH lost AS (
             SELECT group_id, $3::int8 - greatest(committed_offset, $4::int8) AS records
             FROM committed_offsets WHERE topic = $1 AND partition = $2 AND committed_offset < $3
           ), counted AS (
             INSERT INTO deleted_unread (group_id, topic, partition, records)
             SELECT group_id, $1, $2, records FROM lost WHERE records > 0
             ON CONFLICT (group_id, topic, partition) DO UPDATE
               SET records = deleted_unread.records + excluded.records, last_deleted_at = now()
           )
           SELECT group_id, records FROM lost WHERE records > 0 ORDER BY group_id`,
          [topicName, partition, row.new_start, oldStart],
        );
        deletedUnread = lost.rows.map((r) => ({ groupId: r.group_id, records: r.records }));
        // Aborted transactions whose ABORT marker is below the new start: no Fetch can reach them any more.
        await client.query('DELETE FROM aborted_txns WHERE topic_id = $1 AND partition = $2 AND last_offset < $3', [topicId, partition, row.new_start]);
        await client.query('SELECT pg_notify($1, $2)', [this.appendChannel, `${notifyPrefix}:${row.hw}:${row.new_start}`]);
      }
      return { logStartOffset: row.new_start, highWatermark: row.hw, deletedUnread };
    });
  }

  /** Deletes up to `limit` batches lying wholly below the log start; returns how many went (bounded chunks keep the cleaner from stalling appends). */
  async deleteBelowLogStart(topicId: string, partition: number, limit: number): Promise<number> {
    const { rowCount } = await this.pool.query(
      `DELETE FROM batches WHERE (topic_id, partition, base_offset) IN (
         SELECT b.topic_id, b.partition, b.base_offset FROM batches b JOIN partitions p USING (topic_id, partition)
         WHERE b.topic_id = $1 AND b.partition = $2 AND b.last_offset < p.log_start_offset
         ORDER BY b.base_offset LIMIT $3)`,
      [topicId, partition, limit],
    );
    return rowCount ?? 0;
  }

  /** CreatePartitions: raises the topic's partition count; false if it changed meanwhile. */
  async addPartitions(topicId: string, from: number, to: number, topicName: string): Promise<boolean> {
    const { rows } = await this.pool.query<{ ok: boolean }>(
      `WITH t AS (UPDATE topics SET partition_count = $3 WHERE topic_id = $1 AND partition_count = $2 RETURNING topic_id),
            p AS (INSERT INTO partitions (topic_id, partition) SELECT t.topic_id, g FROM t, generate_series($2, $3 - 1) g)
       SELECT EXISTS (SELECT 1 FROM t) AS ok, pg_notify($4, $5)`,
      [topicId, from, to, this.topicsChannel, topicName],
    );
    return rows[0]?.ok ?? false;
  }

  /** Bytes stored per partition (batch bytes as kept in PostgreSQL), for DescribeLogDirs. */
  async partitionSizes(topicIds: readonly string[] | null): Promise<{ topicId: string; partition: number; bytes: bigint }[]> {
    const { rows } = await this.pool.query<{ topic_id: string; partition: number; bytes: bigint }>(
      `SELECT p.topic_id, p.partition, coalesce(sum(b.size), 0)::int8 AS bytes
       FROM partitions p LEFT JOIN batches b USING (topic_id, partition)
       WHERE $1::uuid[] IS NULL OR p.topic_id = ANY($1)
       GROUP BY p.topic_id, p.partition ORDER BY p.topic_id, p.partition`,
      [topicIds],
    );
    return rows.map((r) => ({ topicId: r.topic_id, partition: r.partition, bytes: r.bytes }));
  }

  /** The database's size on disk, reported as the "log dir" total. */
  async databaseBytes(): Promise<bigint> {
    const { rows } = await this.pool.query<{ bytes: bigint }>('SELECT pg_database_size(current_database())::int8 AS bytes');
    return rows[0]!.bytes;
  }
}
