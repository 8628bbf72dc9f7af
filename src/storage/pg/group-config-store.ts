import type pg from 'pg';
import { inTransaction, Rollback } from './pool.js';

/** Group configs (table group_configs): the configs set on each group. */
export class GroupConfigStore {
  constructor(
    private readonly pool: pg.Pool,
    readonly channel: string,
  ) {}

  /** group_configs_select: every group's configs. */
  async load(): Promise<Map<string, Record<string, string>>> {
    const { rows } = await this.pool.query<{ group_id: string; configs: Record<string, string> }>('SELECT group_id, configs FROM group_configs');
    return new Map(rows.map((r) => [r.group_id, r.configs]));
  }

  /**
   * group_configs_update: replaces a group's configs with what `change` makes
   * of the stored ones ({} when none), under the row's lock, and notifies
   * every broker. `change` returns null to leave them as they are; a group
   * left with no configs loses its row.
   */
  async update(groupId: string, change: (current: Record<string, string>) => Record<string, string> | null): Promise<void> {
    await inTransaction(this.pool, async (client) => {
      await client.query('INSERT INTO group_configs (group_id) VALUES ($1) ON CONFLICT DO NOTHING', [groupId]);
      const { rows } = await client.query<{ configs: Record<string, string> }>('SELECT configs FROM group_configs WHERE group_id = $1 FOR UPDATE', [groupId]);
      const next = change(rows[0]!.configs);
      if (next === null) throw new Rollback(undefined);
      if (Object.keys(next).length === 0) await client.query('DELETE FROM group_configs WHERE group_id = $1', [groupId]);
      else await client.query('UPDATE group_configs SET configs = $2 WHERE group_id = $1', [groupId, JSON.stringify(next)]);
      await client.query('SELECT pg_notify($1, $2)', [this.channel, groupId]);
    });
  }
}
