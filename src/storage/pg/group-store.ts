import type pg from 'pg';

export interface StoredMember {
  memberId: string;
  groupInstanceId: string | null;
  clientId: string;
  clientHost: string;
  sessionTimeoutMs: number;
  rebalanceTimeoutMs: number;
  protocols: { name: string; metadata: string /* base64 */ }[];
  assignment: string; // base64
}

export interface StoredGroup {
  groupId: string;
  protocolType: string | null;
  protocolName: string | null;
  generation: number;
  leaderId: string | null;
  state: string;
  stateSince: Date;
  members: StoredMember[];
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
}

interface GroupRecord {
  group_id: string;
  protocol_type: string | null;
  protocol_name: string | null;
  generation: number;
  leader_id: string | null;
  state: string;
  state_since: Date;
  members: StoredMember[];
}

const toGroup = (r: GroupRecord): StoredGroup => ({
  groupId: r.group_id,
  protocolType: r.protocol_type,
  protocolName: r.protocol_name,
  generation: r.generation,
  leaderId: r.leader_id,
  state: r.state,
  stateSince: r.state_since,
  members: r.members,
});

/** Group metadata and committed offsets. */
/** The coordinator slot a write is made under, and this broker instance. */
export interface CoordinatorLease {
  slot: number;
  instanceId: string;
}

export class LeaseLostError extends Error {}

export class GroupStore {
  constructor(private readonly pool: pg.Pool) {}

  async loadGroups(): Promise<StoredGroup[]> {
    const { rows } = await this.pool.query<GroupRecord>('SELECT * FROM groups ORDER BY group_id');
    return rows.map(toGroup);
  }

  async saveGroup(g: StoredGroup): Promise<void> {
    await this.pool.query(
      `INSERT INTO groups (group_id, protocol_type, protocol_name, generation, leader_id, state, state_since, members)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (group_id) DO UPDATE SET protocol_type = $2, protocol_name = $3, generation = $4, leader_id = $5,
         state = $6, state_since = $7, members = $8`,
      [g.groupId, g.protocolType, g.protocolName, g.generation, g.leaderId, g.state, g.stateSince, JSON.stringify(g.members)],
    );
  }

  /** Deletes the group and its committed offsets. */
  async deleteGroup(groupId: string): Promise<void> {
    await this.pool.query('WITH o AS (DELETE FROM committed_offsets WHERE group_id = $1) DELETE FROM groups WHERE group_id = $1', [groupId]);
  }

  /**
   * Stores the offsets, but only while `lease` (the group's coordinator slot)
   * is still this broker's in the database: a coordinator that lost its slot
   * (paused past its lease) cannot overwrite what the new one accepts.
   */
  async commitOffsets(groupId: string, offsets: readonly OffsetToCommit[], lease: CoordinatorLease): Promise<void> {
    if (offsets.length === 0) return;
    const { rowCount } = await this.pool.query(
      `INSERT INTO committed_offsets (group_id, topic, partition, committed_offset, leader_epoch, metadata, commit_timestamp)
       SELECT $1, t, p, o, e, m, now() FROM unnest($2::text[], $3::int4[], $4::int8[], $5::int4[], $6::text[]) AS u(t, p, o, e, m)
       WHERE EXISTS (SELECT 1 FROM coordinator_slots WHERE slot = $7 AND instance_id = $8 AND expires_at > now())
       ON CONFLICT (group_id, topic, partition) DO UPDATE SET committed_offset = excluded.committed_offset,
         leader_epoch = excluded.leader_epoch, metadata = excluded.metadata, commit_timestamp = excluded.commit_timestamp`,
      [
        groupId,
        offsets.map((o) => o.topic),
        offsets.map((o) => o.partition),
        offsets.map((o) => o.committedOffset.toString()),
        offsets.map((o) => o.leaderEpoch),
        offsets.map((o) => o.metadata),
        lease.slot,
        lease.instanceId,
      ],
    );
    if (rowCount === 0) throw new LeaseLostError(`coordinator slot ${lease.slot} is no longer this broker's`);
  }

  /** Committed offsets of a group, all of them or only those of the given topics. */
  async fetchOffsets(groupId: string, topics?: readonly string[]): Promise<CommittedOffset[]> {
    const { rows } = await this.pool.query<{ topic: string; partition: number; committed_offset: bigint; leader_epoch: number; metadata: string | null; commit_timestamp: Date }>(
      `SELECT topic, partition, committed_offset, leader_epoch, metadata, commit_timestamp FROM committed_offsets
       WHERE group_id = $1 AND ($2::text[] IS NULL OR topic = ANY($2)) ORDER BY topic, partition`,
      [groupId, topics ?? null],
    );
    return rows.map((r) => ({ topic: r.topic, partition: r.partition, committedOffset: r.committed_offset, leaderEpoch: r.leader_epoch, metadata: r.metadata, commitTimestamp: r.commit_timestamp }));
  }

  async deleteOffsets(groupId: string, partitions: readonly { topic: string; partition: number }[]): Promise<void> {
    if (partitions.length === 0) return;
    await this.pool.query(
      `DELETE FROM committed_offsets c USING unnest($2::text[], $3::int4[]) AS u(t, p)
       WHERE c.group_id = $1 AND c.topic = u.t AND c.partition = u.p`,
      [groupId, partitions.map((p) => p.topic), partitions.map((p) => p.partition)],
    );
  }

  /** Groups that have committed offsets but no group row (offsets-only users such as standalone consumers). */
  async offsetOnlyGroupIds(): Promise<string[]> {
    const { rows } = await this.pool.query<{ group_id: string }>(
      'SELECT DISTINCT c.group_id FROM committed_offsets c WHERE NOT EXISTS (SELECT 1 FROM groups g WHERE g.group_id = c.group_id)',
    );
    return rows.map((r) => r.group_id);
  }

  /**
   * Offset expiry (Kafka's offsets.retention.minutes): offsets of groups that
   * have been Empty for longer than the retention go, and so do offsets that
   * groups without members committed longer ago than the retention.
   */
  async expireOffsets(retentionMs: number): Promise<number> {
    const { rowCount } = await this.pool.query(
      `DELETE FROM committed_offsets c
       WHERE NOT EXISTS (SELECT 1 FROM groups g WHERE g.group_id = c.group_id AND g.state <> 'Empty')
         AND coalesce((SELECT g.state_since FROM groups g WHERE g.group_id = c.group_id AND g.protocol_type IS NOT NULL), c.commit_timestamp)
             < now() - make_interval(secs => $1::float8 / 1000)`,
      [retentionMs],
    );
    return rowCount ?? 0;
  }

  async deleteOffsetsOfTopic(topic: string): Promise<void> {
    await this.pool.query('DELETE FROM committed_offsets WHERE topic = $1', [topic]);
  }
}
