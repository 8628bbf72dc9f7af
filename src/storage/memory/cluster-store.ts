import type { BrokerRow, Registration } from '../cluster-types.js';
import type { MemoryDatabase } from './database.js';

/**
 * The cluster id and broker registry in memory (tables cluster and brokers).
 * One store per broker instance, as each broker has its own named pool in
 * PostgreSQL: while it is open, its instance counts as connected (a
 * registration whose instance is not connected can be taken over at once);
 * close() is the instance's sessions ending.
 */
export class MemoryClusterStore {
  constructor(
    private readonly db: MemoryDatabase,
    private readonly instanceId: string,
  ) {
    db.sessions.set(instanceId, (db.sessions.get(instanceId) ?? 0) + 1);
  }

  close(): void {
    const n = (this.db.sessions.get(this.instanceId) ?? 0) - 1;
    if (n > 0) this.db.sessions.set(this.instanceId, n);
    else this.db.sessions.delete(this.instanceId);
  }

  async ensureClusterId(candidate: string): Promise<string> {
    this.db.clusterId ??= candidate;
    return this.db.clusterId;
  }

  async registration(nodeId: number, livenessMs: number): Promise<Registration | null> {
    const b = this.db.brokers.get(nodeId);
    if (!b) return null;
    const now = this.db.clock.now();
    return {
      nodeId,
      instanceId: b.instanceId,
      host: b.host,
      port: b.port,
      startedAt: new Date(b.startedAt),
      lastSeen: new Date(b.lastSeen),
      live: b.lastSeen > now - livenessMs,
      expiresInMs: Math.max(0, b.lastSeen + livenessMs - now),
      connected: this.db.sessions.has(b.instanceId),
    };
  }

  async registerBroker(broker: BrokerRow, instanceId: string, livenessMs: number): Promise<boolean> {
    const now = this.db.clock.now();
    const held = this.db.brokers.get(broker.nodeId);
    if (held && held.instanceId !== instanceId && held.lastSeen > now - livenessMs && this.db.sessions.has(held.instanceId)) return false;
    this.db.brokers.set(broker.nodeId, {
      nodeId: broker.nodeId,
      host: broker.host,
      port: broker.port,
      rack: broker.rack,
      instanceId,
      listeners: broker.listeners ? structuredClone(broker.listeners) : null,
      startedAt: now,
      lastSeen: now,
    });
    return true;
  }

  async heartbeat(nodeId: number, instanceId: string): Promise<boolean> {
    const b = this.db.brokers.get(nodeId);
    if (!b || b.instanceId !== instanceId) return false;
    b.lastSeen = this.db.clock.now();
    return true;
  }

  async unregisterBroker(nodeId: number, instanceId: string): Promise<void> {
    if (this.db.brokers.get(nodeId)?.instanceId === instanceId) this.db.brokers.delete(nodeId);
  }

  async liveBrokers(maxAgeMs: number): Promise<{ live: BrokerRow[]; registered: number[] }> {
    const now = this.db.clock.now();
    const rows = [...this.db.brokers.values()].sort((a, b) => a.nodeId - b.nodeId);
    return {
      live: rows
        .map((b) => ({ b, expiresInMs: Math.max(0, b.lastSeen + maxAgeMs - now) }))
        .filter((r) => r.expiresInMs > 0)
        .map(({ b, expiresInMs }) => ({ nodeId: b.nodeId, host: b.host, port: b.port, rack: b.rack, listeners: b.listeners ? structuredClone(b.listeners) : null, expiresInMs })),
      registered: rows.map((b) => b.nodeId),
    };
  }
}
