import type pg from 'pg';
import { decodeGroup, type GroupRow, type StoredClassicMember, type StoredGroup } from './group-codec.js';

/** A committed offset beside its partition's offsets and, when the group lags, the batch holding the committed offset. */
export interface CommittedOffsetPosition {
  groupId: string;
  topic: string;
  partition: number;
  committedOffset: bigint;
  /** null when the topic or partition no longer exists */
  logEndOffset: bigint | null;
  logStartOffset: bigint | null;
  /**
   * Only when committedOffset < logEndOffset: the first batch whose last
   * offset is at or past the committed offset (the batch holding it, or the
   * next one when compaction or retention left a gap); null if none is stored.
   */
  batch: { baseOffset: bigint; firstTimestamp: bigint; data: Buffer } | null;
}

export interface DeletedUnread {
  groupId: string;
  topic: string;
  partition: number;
  records: bigint;
}

export interface PartitionOffsets {
  topic: string;
  topicId: string;
  partition: number;
  partitionCount: number;
  highWatermark: bigint;
  logStartOffset: bigint;
}

/** A group as the coordinator last persisted it; groups that only have committed offsets read as Empty classic groups. */
export type PersistedGroup = StoredGroup;
export type PersistedMember = StoredClassicMember;

// The batch lookup walks the primary key twice at most: the last batch
// starting at or before the committed offset (kept only if it reaches it),
// else the first batch after it. Batches are looked up only for lagging rows.
const COMMITTED_OFFSET_POSITIONS_SQL = `
SELECT c.group_id, c.topic, c.partition, c.committed_offset,
       p.next_offset AS log_end_offset, p.log_start_offset,
       b.base_offset, b.first_timestamp, b.data
FROM committed_offsets c
LEFT JOIN topics t ON t.name = c.topic
LEFT JOIN partitions p ON p.topic_id = t.topic_id AND p.partition = c.partition
LEFT JOIN LATERAL (
  (SELECT * FROM (
     SELECT base_offset, last_offset, first_timestamp, data FROM batches
     WHERE topic_id = p.topic_id AND partition = p.partition AND base_offset <= c.committed_offset
       AND c.committed_offset < p.next_offset
     ORDER BY base_offset DESC LIMIT 1
   ) containing WHERE containing.last_offset >= c.committed_offset)
  UNION ALL
  (SELECT base_offset, last_offset, first_timestamp, data FROM batches
   WHERE topic_id = p.topic_id AND partition = p.partition AND base_offset > c.committed_offset
     AND c.committed_offset < p.next_offset
   ORDER BY base_offset LIMIT 1)
  LIMIT 1
) b ON true
WHERE $1::text[] IS NULL OR c.group_id = ANY($1)
ORDER BY c.group_id, c.topic, c.partition`;

const PARTITION_OFFSETS_SQL = `
SELECT t.name AS topic, t.topic_id, p.partition, t.partition_count, p.next_offset, p.log_start_offset
FROM topics t JOIN partitions p USING (topic_id)
WHERE $1::text[] IS NULL OR t.name = ANY($1)
ORDER BY t.name, p.partition`;

// Groups with a row, plus groups that only have committed offsets.
const GROUPS_SQL = `
SELECT group_id, type, protocol_type, protocol_name, generation, leader_id, state, state_since, members FROM groups
WHERE $1::text[] IS NULL OR group_id = ANY($1)
UNION ALL
SELECT DISTINCT c.group_id, 'classic', NULL, NULL, 0, NULL, 'Empty', now(), '[]'::jsonb FROM committed_offsets c
WHERE ($1::text[] IS NULL OR c.group_id = ANY($1))
  AND NOT EXISTS (SELECT 1 FROM groups g WHERE g.group_id = c.group_id)
ORDER BY 1`;

interface PositionRecord {
  group_id: string;
  topic: string;
  partition: number;
  committed_offset: bigint;
  log_end_offset: bigint | null;
  log_start_offset: bigint | null;
  base_offset: bigint | null;
  first_timestamp: bigint | null;
  data: Buffer | null;
}

/** Read-only queries behind consumer lag: the `groups` CLI and the metrics endpoint. */
export class LagStore {
  constructor(private readonly pool: pg.Pool) {}

  /** Every committed offset (of the given groups only, if any) with its partition's log end and log start offsets. */
  async committedOffsetPositions(groupIds?: readonly string[]): Promise<CommittedOffsetPosition[]> {
    const { rows } = await this.pool.query<PositionRecord>(COMMITTED_OFFSET_POSITIONS_SQL, [groupIds ?? null]);
    return rows.map((r) => ({
      groupId: r.group_id,
      topic: r.topic,
      partition: r.partition,
      committedOffset: r.committed_offset,
      logEndOffset: r.log_end_offset,
      logStartOffset: r.log_start_offset,
      batch: r.base_offset !== null && r.data !== null ? { baseOffset: r.base_offset, firstTimestamp: r.first_timestamp ?? -1n, data: r.data } : null,
    }));
  }

  /** High watermark and log start offset of every partition (of the given topics only, if any). */
  async partitionOffsets(topics?: readonly string[]): Promise<PartitionOffsets[]> {
    const { rows } = await this.pool.query<{ topic: string; topic_id: string; partition: number; partition_count: number; next_offset: bigint; log_start_offset: bigint }>(PARTITION_OFFSETS_SQL, [
      topics ?? null,
    ]);
    return rows.map((r) => ({ topic: r.topic, topicId: r.topic_id, partition: r.partition, partitionCount: r.partition_count, highWatermark: r.next_offset, logStartOffset: r.log_start_offset }));
  }

  /** Groups (of the given ids only, if any) with their persisted members, ordered by group id. */
  async groups(groupIds?: readonly string[]): Promise<PersistedGroup[]> {
    const { rows } = await this.pool.query<GroupRow>(GROUPS_SQL, [groupIds ?? null]);
    return rows.map(decodeGroup).filter((g) => g !== null);
  }

  /** Records retention or DeleteRecords removed before each group read them. */
  async deletedUnread(): Promise<DeletedUnread[]> {
    const { rows } = await this.pool.query<{ group_id: string; topic: string; partition: number; records: bigint }>(
      'SELECT group_id, topic, partition, records FROM deleted_unread ORDER BY group_id, topic, partition',
    );
    return rows.map((r) => ({ groupId: r.group_id, topic: r.topic, partition: r.partition, records: r.records }));
  }
}
