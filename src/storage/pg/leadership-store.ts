import type pg from 'pg';

/** A partition's leadership as stored: its leader (or last leader), epoch, and how long the leader's lease has left. */
export interface PartitionLeaderRow {
  topicId: string;
  partition: number;
  /** The leading (or last leading) node id; -1 if never led. */
  nodeId: number;
  epoch: number;
  /** How long the leader's lease has left by the database's clock: 0 when nobody leads it, or its leader lapsed or has no session left. */
  expiresInMs: number;
}

/** A broker instance whose lease is live: registered within the liveness timeout and connected. */
export interface LeaseHolder {
  nodeId: number;
  instanceId: string;
  expiresInMs: number;
}

/**
 * A broker instance holds its leases while its registration is live and it
 * has a session on the database: a killed broker's sessions end with it, so
 * its partitions are free at once rather than when its registration lapses.
 */
const LIVE = `
  SELECT b.node_id, b.instance_id::text AS instance_id,
         GREATEST(0, extract(epoch FROM b.last_seen + make_interval(secs => $1::float8 / 1000) - now()) * 1000)::float8 AS expires_in_ms
  FROM brokers b
  WHERE b.last_seen > now() - make_interval(secs => $1::float8 / 1000)
    AND EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.datname = current_database() AND a.application_name = 'pgkafka ' || b.instance_id::text)`;

/** Leases of partition leadership (partitions.leader_node_id, leader_instance, leader_epoch; migration 0018). */
export class LeadershipStore {
  constructor(
    private readonly pool: pg.Pool,
    /** Changes are announced here so the other brokers look again at once. */
    readonly channel: string,
  ) {}

  /** brokers_select_lease_holders: the instances whose leases are live. */
  async holders(livenessMs: number): Promise<LeaseHolder[]> {
    const { rows } = await this.pool.query<{ node_id: number; instance_id: string; expires_in_ms: number }>(`${LIVE} ORDER BY b.node_id`, [livenessMs]);
    return rows.map((r) => ({ nodeId: r.node_id, instanceId: r.instance_id, expiresInMs: r.expires_in_ms }));
  }

  /** partitions_select_leaders: every partition with its leader and the time the leader's lease has left. */
  async leaders(livenessMs: number): Promise<PartitionLeaderRow[]> {
    const { rows } = await this.pool.query<{ topic_id: string; partition: number; leader_node_id: number; leader_epoch: number; expires_in_ms: number | null }>(
      `WITH live AS (${LIVE})
       SELECT p.topic_id, p.partition, p.leader_node_id, p.leader_epoch, l.expires_in_ms
       FROM partitions p LEFT JOIN live l ON l.instance_id = p.leader_instance
       ORDER BY p.topic_id, p.partition`,
      [livenessMs],
    );
    return rows.map((r) => ({ topicId: r.topic_id, partition: r.partition, nodeId: r.leader_node_id, epoch: r.leader_epoch, expiresInMs: r.expires_in_ms ?? 0 }));
  }

  /**
   * partitions_claim_leadership: takes the leadership of the partitions that
   * nobody leads, whose leader's lease lapsed, or that this instance leads
   * already; the epoch grows when the leader changes (not for the first
   * leader ever, whose epoch stays 0 as a Kafka partition's first leader's
   * does). A partition another live instance leads is never taken. Returns
   * the partitions now led, with their epochs.
   */
  async claim(nodeId: number, instanceId: string, wanted: readonly { topicId: string; partition: number }[], livenessMs: number): Promise<{ topicId: string; partition: number; epoch: number }[]> {
    if (wanted.length === 0) return [];
    // The other brokers are told when a partition changed hands, so they name its new leader at once.
    const { rows } = await this.pool.query<{ topic_id: string; partition: number; leader_epoch: number }>(
      `WITH live AS (${LIVE}),
       claimed AS (
         UPDATE partitions p
         SET leader_epoch = CASE WHEN p.leader_instance = $3 OR (p.leader_instance = '' AND p.leader_node_id = -1) THEN p.leader_epoch ELSE p.leader_epoch + 1 END,
             leader_node_id = $2, leader_instance = $3
         FROM unnest($4::uuid[], $5::int[]) AS w(topic_id, partition)
         WHERE p.topic_id = w.topic_id AND p.partition = w.partition
           AND (p.leader_instance = $3 OR NOT EXISTS (SELECT 1 FROM live WHERE live.instance_id = p.leader_instance))
         RETURNING p.topic_id, p.partition, p.leader_epoch
       ),
       told AS (SELECT pg_notify($6, 'claimed') FROM (SELECT 1 FROM claimed LIMIT 1) c)
       SELECT topic_id, partition, leader_epoch FROM claimed, (SELECT count(*) FROM told) t`,
      [livenessMs, nodeId, instanceId, wanted.map((w) => w.topicId), wanted.map((w) => w.partition), this.channel],
    );
    return rows.map((r) => ({ topicId: r.topic_id, partition: r.partition, epoch: r.leader_epoch }));
  }

  /** partitions_release_leadership: gives up this instance's leadership of the partitions (all of them if none are named) and tells the other brokers. */
  async release(instanceId: string, partitions: readonly { topicId: string; partition: number }[] | null): Promise<void> {
    await this.pool.query(
      `WITH released AS (
         UPDATE partitions p SET leader_instance = ''
         WHERE p.leader_instance = $1
           AND ($2::uuid[] IS NULL OR (p.topic_id, p.partition) IN (SELECT * FROM unnest($2::uuid[], $3::int[])))
         RETURNING 1
       )
       SELECT pg_notify($4, 'released') FROM (SELECT count(*) FROM released) r`,
      [instanceId, partitions?.map((p) => p.topicId) ?? null, partitions?.map((p) => p.partition) ?? null, this.channel],
    );
  }
}
