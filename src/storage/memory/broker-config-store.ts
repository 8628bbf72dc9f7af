import { text, type MemoryDatabase } from './database.js';

/** Dynamic broker configs in memory (table broker_configs). */
export class MemoryBrokerConfigStore {
  constructor(private readonly db: MemoryDatabase) {}

  async load(nodeId: number): Promise<{ clusterDefault: Record<string, string>; broker: Record<string, string> }> {
    const of = (name: string) => ({ ...(this.db.brokerConfigs.get(name) ?? {}) });
    return { clusterDefault: of(''), broker: of(String(nodeId)) };
  }

  async update(resourceName: string, change: (current: Record<string, string>) => Record<string, string> | null): Promise<void> {
    text(resourceName);
    const next = change({ ...(this.db.brokerConfigs.get(resourceName) ?? {}) });
    if (next === null) return;
    for (const [k, v] of Object.entries(next)) text(k + v);
    this.db.brokerConfigs.set(resourceName, { ...next });
    this.db.notify('brokerConfigs', resourceName);
  }
}
