import type pg from 'pg';
import type { CoordinatorLease } from '../coordinator-lease.js';
import { leaseHeldSql, leaseLost, leaseParams } from './coordinator-store.js';
import { decodeGroup, encodeGroup, type GroupRow, type StoredGroup } from './group-codec.js';

/**
 * Offset commit metadata is stored as its UTF-8 bytes (bytea), as Kafka
 * writes the string to __consumer_offsets: NUL characters and all.
 */
export const metadataBytes = (metadata: string | null): Buffer | null => (metadata === null ? null : Buffer.from(metadata, 'utf8'));
export const metadataString = (stored: Buffer | null): string | null => (stored === null ? null : stored.toString('utf8'));

/**
 * The partition of __consumer_offsets that holds a group's commits: Kafka's
 * Utils.abs(groupId.hashCode()) % 50 (Java's String.hashCode over UTF-16 code
 * units; abs of Integer.MIN_VALUE is 0), as the migration's SQL function
 * consumer_offsets_partition computes it for rows written without it.
 */
export function consumerOffsetsPartition(groupId: string): number {
  let h = 0;
  for (let i = 0; i < groupId.length; i++) h = (Math.imul(31, h) + groupId.charCodeAt(i)) | 0;
  return (h === -0x80000000 ? 0 : Math.abs(h)) % 50;
}

export interface CommittedOffset {
  topic: string;
  partition: number;
  committedOffset: bigint;
  leaderEpoch: number;
  metadata: string | null;
  commitTimestamp: Date;
}

export interface OffsetToCommit {
  topic: string;
  partition: number;
  committedOffset: bigint;
  leaderEpoch: number;
  metadata: string | null;
  /** OffsetCommit v1's commit timestamp (ms); the database's clock when absent or -1. */
  commitTimestampMs?: bigint;
  /** OffsetCommit v2-v4's retention time (ms): the offset expires this long after the commit. Absent or -1: offsets.retention.minutes applies. */
  retentionTimeMs?: bigint;
}

/** Group metadata and committed offsets. */
export class GroupStore {
  constructor(private readonly pool: pg.Pool) {}

  /** Every stored group this broker knows the type of. */
  async loadGroups(): Promise<StoredGroup[]> {
    const { rows } = await this.pool.query<GroupRow>('SELECT * FROM groups ORDER BY group_id');
    return rows.map(decodeGroup).filter((g) => g !== null);
  }

  /**
   * Stores the group's metadata snapshot, but only while `lease` is still
   * this broker's, as commitOffsets: a coordinator that lost its slot cannot
   * overwrite the row the slot's new holder writes.
   */
  async saveGroup(g: StoredGroup, lease: CoordinatorLease): Promise<void> {
    const { rowCount } = await this.pool.query(
      `INSERT INTO groups (group_id, type, protocol_type, protocol_name, generation, leader_id, state, state_since, members)
       SELECT $1::text, $2::text, $3::text, $4::text, $5::int4, $6::text, $7::text, $8::timestamptz, $9::jsonb WHERE ${leaseHeldSql('$10', '$11', '$12')}
       ON CONFLICT (group_id) DO UPDATE SET type = excluded.type, protocol_type = excluded.protocol_type, protocol_name = excluded.protocol_name,
         generation = excluded.generation, leader_id = excluded.leader_id, state = excluded.state, state_since = excluded.state_since,
         members = excluded.members`,
      [...encodeGroup(g), ...leaseParams(lease)],
    );
    if (rowCount === 0) throw leaseLost(lease);
  }

  /** Deletes the group and its committed offsets, only while `lease` is still this broker's. */
  async deleteGroup(groupId: string, lease: CoordinatorLease): Promise<void> {
    const { rows } = await this.pool.query<{ held: boolean }>(
      `WITH lease AS (SELECT ${leaseHeldSql('$2', '$3', '$4')} AS held),
         o AS (DELETE FROM committed_offsets WHERE group_id = $1 AND (SELECT held FROM lease)),
         g AS (DELETE FROM groups WHERE group_id = $1 AND (SELECT held FROM lease))
       SELECT held FROM lease`,
      [groupId, ...leaseParams(lease)],
    );
    if (!rows[0]!.held) throw leaseLost(lease);
  }

  /**
   * Stores the offsets, but only while `lease` (the group's coordinator slot)
   * is still this broker's in the database: a coordinator that lost its slot
   * (paused past its lease) cannot overwrite what the new one accepts.
   */
  async commitOffsets(groupId: string, offsets: readonly OffsetToCommit[], lease: CoordinatorLease): Promise<void> {
    if (offsets.length === 0) return;
    const { rowCount } = await this.pool.query(
      `INSERT INTO committed_offsets (group_id, topic, partition, committed_offset, leader_epoch, metadata, commit_timestamp, expire_timestamp, log_partition)
       SELECT $1, t, p, o, e, m, CASE WHEN ct < 0 THEN now() ELSE to_timestamp(ct / 1000.0) END,
              CASE WHEN rt < 0 THEN NULL ELSE now() + make_interval(secs => rt / 1000.0) END, $11::int4
       FROM unnest($2::text[], $3::int4[], $4::int8[], $5::int4[], $6::bytea[], $9::int8[], $10::int8[]) AS u(t, p, o, e, m, ct, rt)
       WHERE ${leaseHeldSql('$7', '$8', '$12')}
       ON CONFLICT (group_id, topic, partition) DO UPDATE SET committed_offset = excluded.committed_offset,
         leader_epoch = excluded.leader_epoch, metadata = excluded.metadata, commit_timestamp = excluded.commit_timestamp,
         expire_timestamp = excluded.expire_timestamp`,
      [
        groupId,
        offsets.map((o) => o.topic),
        offsets.map((o) => o.partition),
        offsets.map((o) => o.committedOffset.toString()),
        offsets.map((o) => o.leaderEpoch),
        offsets.map((o) => metadataBytes(o.metadata)),
        lease.slot,
        lease.instanceId,
        offsets.map((o) => (o.commitTimestampMs ?? -1n).toString()),
        offsets.map((o) => (o.retentionTimeMs ?? -1n).toString()),
        consumerOffsetsPartition(groupId),
        lease.epoch.toString(),
      ],
    );
    if (rowCount === 0) throw leaseLost(lease);
  }

  /** Committed offsets of a group, all of them or only those of the given topics. */
  async fetchOffsets(groupId: string, topics?: readonly string[]): Promise<CommittedOffset[]> {
    const { rows } = await this.pool.query<{ topic: string; partition: number; committed_offset: bigint; leader_epoch: number; metadata: Buffer | null; commit_timestamp: Date }>(
      `SELECT topic, partition, committed_offset, leader_epoch, metadata, commit_timestamp FROM committed_offsets
       WHERE group_id = $1 AND ($2::text[] IS NULL OR topic = ANY($2)) ORDER BY topic, partition`,
      [groupId, topics ?? null],
    );
    return rows.map((r) => ({
      topic: r.topic,
      partition: r.partition,
      committedOffset: r.committed_offset,
      leaderEpoch: r.leader_epoch,
      metadata: metadataString(r.metadata),
      commitTimestamp: r.commit_timestamp,
    }));
  }

  /** Deletes committed offsets of the group, only while `lease` is still this broker's. */
  async deleteOffsets(groupId: string, partitions: readonly { topic: string; partition: number }[], lease: CoordinatorLease): Promise<void> {
    if (partitions.length === 0) return;
    const { rows } = await this.pool.query<{ held: boolean }>(
      `WITH lease AS (SELECT ${leaseHeldSql('$4', '$5', '$6')} AS held),
         d AS (DELETE FROM committed_offsets c USING unnest($2::text[], $3::int4[]) AS u(t, p)
               WHERE c.group_id = $1 AND c.topic = u.t AND c.partition = u.p AND (SELECT held FROM lease))
       SELECT held FROM lease`,
      [groupId, partitions.map((p) => p.topic), partitions.map((p) => p.partition), ...leaseParams(lease)],
    );
    if (!rows[0]!.held) throw leaseLost(lease);
  }

  /** Groups that have committed offsets but no group row (offsets-only users such as standalone consumers). */
  async offsetOnlyGroupIds(): Promise<string[]> {
    const { rows } = await this.pool.query<{ group_id: string }>('SELECT DISTINCT c.group_id FROM committed_offsets c WHERE NOT EXISTS (SELECT 1 FROM groups g WHERE g.group_id = c.group_id)');
    return rows.map((r) => r.group_id);
  }

  /**
   * Offset expiry (Kafka's offsets.retention.minutes): offsets of groups that
   * have been Empty for longer than the retention go, and so do offsets that
   * groups without members committed longer ago than the retention. An
   * offset committed with a retention time (OffsetCommit v2-v4) goes at its
   * own expire timestamp instead, as Kafka's old expiration semantics.
   */
  async expireOffsets(retentionMs: number): Promise<number> {
    const { rowCount } = await this.pool.query(
      `DELETE FROM committed_offsets c
       WHERE NOT EXISTS (SELECT 1 FROM groups g WHERE g.group_id = c.group_id AND g.state <> 'Empty')
         AND CASE WHEN c.expire_timestamp IS NOT NULL THEN c.expire_timestamp <= now()
             ELSE coalesce((SELECT g.state_since FROM groups g WHERE g.group_id = c.group_id AND g.protocol_type IS NOT NULL), c.commit_timestamp)
                  < now() - make_interval(secs => $1::float8 / 1000) END`,
      [retentionMs],
    );
    return rowCount ?? 0;
  }

  async deleteOffsetsOfTopic(topic: string): Promise<void> {
    await this.pool.query('DELETE FROM committed_offsets WHERE topic = $1', [topic]);
  }
}
