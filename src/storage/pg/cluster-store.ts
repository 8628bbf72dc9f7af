import type pg from 'pg';

export interface BrokerRow {
  nodeId: number;
  host: string;
  port: number;
  rack: string | null;
  /** The advertised endpoint per listener name (null: registered by a broker before listeners existed). */
  listeners?: Record<string, { host: string; port: number }> | null;
}

/** The cluster id and the registry of live broker processes. */
export class ClusterStore {
  constructor(private readonly pool: pg.Pool) {}

  /** Returns the stored cluster id, storing `candidate` if there is none yet. */
  async ensureClusterId(candidate: string): Promise<string> {
    await this.pool.query('INSERT INTO cluster (cluster_id) VALUES ($1) ON CONFLICT (singleton) DO NOTHING', [candidate]);
    const { rows } = await this.pool.query<{ cluster_id: string }>('SELECT cluster_id FROM cluster');
    return rows[0]!.cluster_id;
  }

  async registerBroker(broker: BrokerRow, instanceId: string): Promise<void> {
    await this.pool.query(
      `INSERT INTO brokers (node_id, host, port, rack, instance_id, listeners) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (node_id) DO UPDATE SET host = $2, port = $3, rack = $4, instance_id = $5, listeners = $6, started_at = now(), last_seen = now()`,
      [broker.nodeId, broker.host, broker.port, broker.rack, instanceId, broker.listeners ? JSON.stringify(broker.listeners) : null],
    );
  }

  async heartbeat(nodeId: number, instanceId: string): Promise<void> {
    await this.pool.query('UPDATE brokers SET last_seen = now() WHERE node_id = $1 AND instance_id = $2', [nodeId, instanceId]);
  }

  async unregisterBroker(nodeId: number, instanceId: string): Promise<void> {
    await this.pool.query('DELETE FROM brokers WHERE node_id = $1 AND instance_id = $2', [nodeId, instanceId]);
  }

  /** The registered brokers seen within `maxAgeMs`, and the node ids of every registered one (live or not). */
  async liveBrokers(maxAgeMs: number): Promise<{ live: BrokerRow[]; registered: number[] }> {
    const { rows } = await this.pool.query<{ node_id: number; host: string; port: number; rack: string | null; listeners: BrokerRow['listeners']; live: boolean }>(
      `SELECT node_id, host, port, rack, listeners, last_seen > now() - make_interval(secs => $1::float8 / 1000) AS live FROM brokers ORDER BY node_id`,
      [maxAgeMs],
    );
    return {
      live: rows.filter((r) => r.live).map((r) => ({ nodeId: r.node_id, host: r.host, port: r.port, rack: r.rack, listeners: r.listeners })),
      registered: rows.map((r) => r.node_id),
    };
  }
}
