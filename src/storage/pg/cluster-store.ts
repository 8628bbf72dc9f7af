import type pg from 'pg';
import type { BrokerRow, Registration } from '../cluster-types.js';

export type { BrokerRow, Registration } from '../cluster-types.js';

/** The application_name of a broker instance's connections: whether an instance still has a session tells a dead one from a live one at once. */
export function brokerApplicationName(instanceId: string): string {
  return `pgkafka ${instanceId}`;
}

/** SQL: whether the instance named by `instanceId` (an SQL expression) has a session open on this database. */
const HAS_SESSION = (instanceId: string) => `EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.datname = current_database() AND a.application_name = 'pgkafka ' || ${instanceId})`;

/** The cluster id and the registry of live broker processes. */
export class ClusterStore {
  constructor(private readonly pool: pg.Pool) {}

  /** Returns the stored cluster id, storing `candidate` if there is none yet. */
  async ensureClusterId(candidate: string): Promise<string> {
    await this.pool.query('INSERT INTO cluster (cluster_id) VALUES ($1) ON CONFLICT (singleton) DO NOTHING', [candidate]);
    const { rows } = await this.pool.query<{ cluster_id: string }>('SELECT cluster_id FROM cluster');
    return rows[0]!.cluster_id;
  }

  /** brokers_select_one: the registration of a node id, if any. */
  async registration(nodeId: number, livenessMs: number): Promise<Registration | null> {
    const { rows } = await this.pool.query<{ instance_id: string; host: string; port: number; started_at: Date; last_seen: Date; live: boolean; expires_in_ms: number; connected: boolean }>(
      `SELECT instance_id, host, port, started_at, last_seen, last_seen > now() - make_interval(secs => $2::float8 / 1000) AS live,
              GREATEST(0, extract(epoch FROM last_seen + make_interval(secs => $2::float8 / 1000) - now()) * 1000)::float8 AS expires_in_ms,
              ${HAS_SESSION('instance_id::text')} AS connected
       FROM brokers WHERE node_id = $1`,
      [nodeId, livenessMs],
    );
    const r = rows[0];
    return r
      ? { nodeId, instanceId: r.instance_id, host: r.host, port: r.port, startedAt: r.started_at, lastSeen: r.last_seen, live: r.live, expiresInMs: r.expires_in_ms, connected: r.connected }
      : null;
  }

  /**
   * brokers_register: registers the instance under its node id unless
   * another instance holds a live registration of it (seen within
   * `livenessMs`, and still connected). Returns whether it did.
   */
  async registerBroker(broker: BrokerRow, instanceId: string, livenessMs: number): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      `INSERT INTO brokers (node_id, host, port, rack, instance_id, listeners) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (node_id) DO UPDATE SET host = $2, port = $3, rack = $4, instance_id = $5, listeners = $6, started_at = now(), last_seen = now()
       WHERE brokers.instance_id = $5 OR brokers.last_seen <= now() - make_interval(secs => $7::float8 / 1000) OR NOT ${HAS_SESSION('brokers.instance_id::text')}`,
      [broker.nodeId, broker.host, broker.port, broker.rack, instanceId, broker.listeners ? JSON.stringify(broker.listeners) : null, livenessMs],
    );
    return rowCount === 1;
  }

  /** Refreshes the instance's registration; false when the node id is registered by another instance now. */
  async heartbeat(nodeId: number, instanceId: string): Promise<boolean> {
    const { rowCount } = await this.pool.query('UPDATE brokers SET last_seen = now() WHERE node_id = $1 AND instance_id = $2', [nodeId, instanceId]);
    return rowCount === 1;
  }

  async unregisterBroker(nodeId: number, instanceId: string): Promise<void> {
    await this.pool.query('DELETE FROM brokers WHERE node_id = $1 AND instance_id = $2', [nodeId, instanceId]);
  }

  /** The registered brokers seen within `maxAgeMs`, and the node ids of every registered one (live or not). */
  async liveBrokers(maxAgeMs: number): Promise<{ live: BrokerRow[]; registered: number[] }> {
    const { rows } = await this.pool.query<{ node_id: number; host: string; port: number; rack: string | null; listeners: BrokerRow['listeners']; expires_in_ms: number }>(
      `SELECT node_id, host, port, rack, listeners,
              GREATEST(0, extract(epoch FROM last_seen + make_interval(secs => $1::float8 / 1000) - now()) * 1000)::float8 AS expires_in_ms
       FROM brokers ORDER BY node_id`,
      [maxAgeMs],
    );
    return {
      live: rows.filter((r) => r.expires_in_ms > 0).map((r) => ({ nodeId: r.node_id, host: r.host, port: r.port, rack: r.rack, listeners: r.listeners, expiresInMs: r.expires_in_ms })),
      registered: rows.map((r) => r.node_id),
    };
  }
}
