// The log cleaner's SQL (compaction): where a partition's cleanable range
// ends and how dirty it is, reading batches in bounded chunks, rewriting or
// deleting compacted batches in place, and the per-partition checkpoint.
import type pg from 'pg';
import { byteaArray, int4Array, int8Array } from './wire/binary-array.js';
import { copyRows } from './wire/copy-binary.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** What the cleaner needs to decide whether, and how far, to compact a partition. */
export interface CleanerState {
  logStartOffset: bigint;
  highWatermark: bigint;
  /** First offset not yet compacted: the checkpoint, or the log start if that is further. */
  dirtyStart: bigint;
  /** First uncleanable offset: the newest batch, the first dirty batch younger than min.compaction.lag.ms, or the high watermark. */
  rangeEnd: bigint;
  /** Bytes of batches in [dirtyStart, rangeEnd). */
  dirtyBytes: number;
  /** Bytes of batches in [logStartOffset, rangeEnd). */
  totalBytes: number;
  /** Smallest first timestamp (≥ 0) of a dirty batch below the newest one, for max.compaction.lag.ms. */
  firstDirtyTimestamp: number | null;
  /** Earliest delete horizon of a tombstone the last pass kept. */
  tombstonesDueAt: number | null;
}

export interface StoredLogBatch {
  baseOffset: bigint;
  lastOffset: bigint;
  data: Buffer;
}

/** A compacted batch: new bytes and columns, or null data for a batch left without records. */
export interface BatchRewrite {
  baseOffset: bigint;
  /** CRC of the bytes the rewrite was computed from: a row changed meanwhile (another cleaner) is left alone. */
  expectedCrc: number;
  data: Buffer | null;
  recordCount: number;
  firstTimestamp: bigint;
  maxTimestamp: bigint;
}

// $3: now − min.compaction.lag.ms. Batches below the log start that are not
// deleted yet do not count. The newest batch (the "active segment") is never
// in the cleanable range.
const STATE_SQL = `
WITH p AS (
  SELECT p.next_offset, p.log_start_offset,
         greatest(p.log_start_offset, coalesce(c.cleaned_offset, 0)) AS dirty_start, c.tombstones_due_at
  FROM partitions p LEFT JOIN cleaner_checkpoints c USING (topic_id, partition)
  WHERE p.topic_id = $1 AND p.partition = $2
), r AS MATERIALIZED (
  SELECT p.*, least(
    p.next_offset,
    coalesce((SELECT max(base_offset) FROM batches WHERE topic_id = $1 AND partition = $2), p.next_offset),
    coalesce((SELECT base_offset FROM batches WHERE topic_id = $1 AND partition = $2 AND base_offset >= p.dirty_start AND max_timestamp > $3
              ORDER BY base_offset LIMIT 1), p.next_offset)
  ) AS range_end
  FROM p
)
SELECT r.next_offset, r.log_start_offset, r.dirty_start, r.range_end, r.tombstones_due_at,
       coalesce(sum(b.size) FILTER (WHERE b.base_offset >= r.dirty_start), 0)::int8 AS dirty_bytes,
       coalesce(sum(b.size), 0)::int8 AS total_bytes,
       min(b.first_timestamp) FILTER (WHERE b.base_offset >= r.dirty_start AND b.first_timestamp >= 0) AS first_dirty_ts
FROM r LEFT JOIN batches b ON b.topic_id = $1 AND b.partition = $2 AND b.last_offset >= r.log_start_offset AND b.base_offset < r.range_end
GROUP BY r.next_offset, r.log_start_offset, r.dirty_start, r.range_end, r.tombstones_due_at`;

// Batches holding offsets in [from, to), oldest first, at most $5 of them
// (binary COPY: values are numbers and a checked uuid, formatted here). The
// lower bound on base_offset keeps the primary-key scan starting at `from`.
const READ_SQL = `
SELECT base_offset, last_offset, data FROM batches
WHERE topic_id = $1 AND partition = $2 AND last_offset >= $3 AND base_offset < $4
  AND base_offset >= coalesce((SELECT max(base_offset) FROM batches WHERE topic_id = $1 AND partition = $2 AND base_offset <= $3), $3)
ORDER BY base_offset LIMIT $5`;

// One statement, so one transaction per chunk: rows whose CRC is no longer
// the one the rewrite was computed from are skipped.
const REWRITE_SQL = `
WITH u AS (
  UPDATE batches b SET data = c.data, size = length(c.data), record_count = c.cnt, first_timestamp = c.first_ts, max_timestamp = c.max_ts
  FROM unnest($3::int8[], $4::int4[], $5::bytea[], $6::int4[], $7::int8[], $8::int8[]) AS c(base, crc, data, cnt, first_ts, max_ts)
  WHERE b.topic_id = $1 AND b.partition = $2 AND b.base_offset = c.base AND substring(b.data from 18 for 4) = int4send(c.crc)
  RETURNING 1
), d AS (
  DELETE FROM batches b USING unnest($9::int8[], $10::int4[]) AS c(base, crc)
  WHERE b.topic_id = $1 AND b.partition = $2 AND b.base_offset = c.base AND substring(b.data from 18 for 4) = int4send(c.crc)
  RETURNING 1
)
SELECT (SELECT count(*) FROM u)::int AS updated, (SELECT count(*) FROM d)::int AS deleted`;

const CHECKPOINT_SQL = `
INSERT INTO cleaner_checkpoints AS c (topic_id, partition, cleaned_offset, tombstones_due_at)
SELECT $1::uuid, $2::int, $3::int8, $4::int8 WHERE EXISTS (SELECT 1 FROM partitions WHERE topic_id = $1 AND partition = $2)
ON CONFLICT (topic_id, partition) DO UPDATE
  SET cleaned_offset = greatest(c.cleaned_offset, excluded.cleaned_offset), tombstones_due_at = excluded.tombstones_due_at, cleaned_at = now()`;

export class CompactionStore {
  constructor(private readonly pool: pg.Pool) {}

  /** The partition's cleanable range and dirtiness; null if the partition is gone. */
  async cleanerState(topicId: string, partition: number, minCompactionTimestamp: bigint): Promise<CleanerState | null> {
    const { rows } = await this.pool.query<{
      next_offset: bigint;
      log_start_offset: bigint;
      dirty_start: bigint;
      range_end: bigint;
      tombstones_due_at: bigint | null;
      dirty_bytes: bigint;
      total_bytes: bigint;
      first_dirty_ts: bigint | null;
    }>(STATE_SQL, [topicId, partition, minCompactionTimestamp]);
    const r = rows[0];
    if (!r) return null;
    return {
      logStartOffset: r.log_start_offset,
      highWatermark: r.next_offset,
      dirtyStart: r.dirty_start,
      rangeEnd: r.range_end,
      dirtyBytes: Number(r.dirty_bytes),
      totalBytes: Number(r.total_bytes),
      firstDirtyTimestamp: r.first_dirty_ts === null ? null : Number(r.first_dirty_ts),
      tombstonesDueAt: r.tombstones_due_at === null ? null : Number(r.tombstones_due_at),
    };
  }

  /** Up to `limit` batches holding offsets in [from, to), in offset order. */
  async readBatches(topicId: string, partition: number, from: bigint, to: bigint, limit: number): Promise<StoredLogBatch[]> {
    if (from >= to) return [];
    if (!UUID.test(topicId)) throw new Error(`not a topic id: ${topicId}`);
    const args = [`'${topicId}'::uuid`, String(Math.trunc(partition)), `${BigInt(from)}::int8`, `${BigInt(to)}::int8`, String(Math.max(1, Math.trunc(limit)))];
    const rows = await copyRows(
      this.pool,
      READ_SQL.replace(/\$(\d)/g, (_, n: string) => args[Number(n) - 1]!),
    );
    return rows.map(([base, last, data]) => ({ baseOffset: base!.readBigInt64BE(0), lastOffset: last!.readBigInt64BE(0), data: data! }));
  }

  /** Each producer id's newest batch in the partition (base offset), by the producer index. */
  async producersNewestBatch(topicId: string, partition: number): Promise<Map<bigint, bigint>> {
    const { rows } = await this.pool.query<{ producer_id: bigint; base_offset: bigint }>(
      `SELECT producer_id, max(base_offset) AS base_offset FROM batches
       WHERE topic_id = $1 AND partition = $2 AND producer_id >= 0 GROUP BY producer_id`,
      [topicId, partition],
    );
    return new Map(rows.map((r) => [r.producer_id, r.base_offset]));
  }

  /** Applies one chunk of rewrites in one transaction; returns how many rows were updated and deleted. */
  async rewrite(topicId: string, partition: number, changes: readonly BatchRewrite[]): Promise<{ updated: number; deleted: number }> {
    const updates = changes.filter((c): c is BatchRewrite & { data: Buffer } => c.data !== null);
    const deletes = changes.filter((c) => c.data === null);
    const { rows } = await this.pool.query<{ updated: number; deleted: number }>(REWRITE_SQL, [
      topicId,
      partition,
      int8Array(updates.map((c) => c.baseOffset)),
      int4Array(updates.map((c) => c.expectedCrc)),
      byteaArray(updates.map((c) => c.data)),
      int4Array(updates.map((c) => c.recordCount)),
      int8Array(updates.map((c) => c.firstTimestamp)),
      int8Array(updates.map((c) => c.maxTimestamp)),
      int8Array(deletes.map((c) => c.baseOffset)),
      int4Array(deletes.map((c) => c.expectedCrc)),
    ]);
    return rows[0] ?? { updated: 0, deleted: 0 };
  }

  /** Records a finished pass: offsets below `cleanedOffset` are clean (never moves back). */
  async saveCheckpoint(topicId: string, partition: number, cleanedOffset: bigint, tombstonesDueAt: number | null): Promise<void> {
    await this.pool.query(CHECKPOINT_SQL, [topicId, partition, cleanedOffset, tombstonesDueAt === null ? null : BigInt(tombstonesDueAt)]);
  }
}
