import { text, type MemoryDatabase } from './database.js';

/** Group configs in memory (table group_configs): the configs set on each group. */
export class MemoryGroupConfigStore {
  constructor(private readonly db: MemoryDatabase) {}

  async load(): Promise<Map<string, Record<string, string>>> {
    return new Map([...this.db.groupConfigs].map(([groupId, configs]) => [groupId, { ...configs }]));
  }

  async update(groupId: string, change: (current: Record<string, string>) => Record<string, string> | null): Promise<void> {
    text(groupId);
    const next = change({ ...(this.db.groupConfigs.get(groupId) ?? {}) });
    if (next === null) return;
    for (const [k, v] of Object.entries(next)) text(k + v);
    // As the PostgreSQL store: a group left with no configs loses its row.
    if (Object.keys(next).length === 0) this.db.groupConfigs.delete(groupId);
    else this.db.groupConfigs.set(groupId, { ...next });
    this.db.notify('groupConfigs', groupId);
  }
}
