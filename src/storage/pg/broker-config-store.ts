import type pg from 'pg';
import { inTransaction, Rollback } from './pool.js';

/** Dynamic broker configs (table broker_configs), keyed by Kafka's resource name: '' for the cluster default, else a node id. */
export class BrokerConfigStore {
  constructor(
    private readonly pool: pg.Pool,
    readonly channel: string,
  ) {}

  /** broker_configs_select: the cluster default and this broker's own configs. */
  async load(nodeId: number): Promise<{ clusterDefault: Record<string, string>; broker: Record<string, string> }> {
    const { rows } = await this.pool.query<{ resource_name: string; configs: Record<string, string> }>('SELECT resource_name, configs FROM broker_configs WHERE resource_name IN ($1, $2)', [
      '',
      String(nodeId),
    ]);
    const of = (name: string) => rows.find((r) => r.resource_name === name)?.configs ?? {};
    return { clusterDefault: of(''), broker: of(String(nodeId)) };
  }

  /**
   * broker_configs_update: replaces a resource's configs with what `change`
   * makes of the stored ones, under the row's lock (concurrent incremental
   * alterations keep each other's changes), and notifies every broker.
   * `change` returns null to leave them as they are.
   */
  async update(resourceName: string, change: (current: Record<string, string>) => Record<string, string> | null): Promise<void> {
    await inTransaction(this.pool, async (client) => {
      await client.query('INSERT INTO broker_configs (resource_name) VALUES ($1) ON CONFLICT DO NOTHING', [resourceName]);
      const { rows } = await client.query<{ configs: Record<string, string> }>('SELECT configs FROM broker_configs WHERE resource_name = $1 FOR UPDATE', [resourceName]);
      const next = change(rows[0]!.configs);
      if (next === null) throw new Rollback(undefined);
      await client.query('UPDATE broker_configs SET configs = $2 WHERE resource_name = $1', [resourceName, JSON.stringify(next)]);
      await client.query('SELECT pg_notify($1, $2)', [this.channel, resourceName]);
    });
  }
}
