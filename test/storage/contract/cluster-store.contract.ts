import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { BrokerRow } from '../../../src/coordinator/cluster-storage.js';
import type { HarnessRef } from './harness.js';

const broker = (nodeId: number, over: Partial<BrokerRow> = {}): BrokerRow => ({ nodeId, host: 'h', port: 9092, rack: null, listeners: { PLAINTEXT: { host: 'h', port: 9092 } }, ...over });
const LIVE_MS = 60_000;

export function clusterStorageContract(h: HarnessRef): void {
  describe('ClusterStorage', () => {
    it('stores the first cluster id it is offered', async () => {
      const { store, close } = await h().cluster(randomUUID());
      expect(await store.ensureClusterId('first')).toBe('first');
      expect(await store.ensureClusterId('second')).toBe('first');
      await close();
    });

    it('registers a broker, lists it live, and refreshes it only for its own instance', async () => {
      const a = randomUUID();
      const { store, close } = await h().cluster(a);
      expect(await store.registerBroker(broker(1, { rack: 'r1' }), a, LIVE_MS)).toBe(true);
      const reg = await store.registration(1, LIVE_MS);
      expect(reg).toMatchObject({ nodeId: 1, instanceId: a, host: 'h', port: 9092, live: true, connected: true });
      expect(reg!.expiresInMs).toBeGreaterThan(0);
      expect(reg!.expiresInMs).toBeLessThanOrEqual(LIVE_MS);
      const { live, registered } = await store.liveBrokers(LIVE_MS);
      expect(live.map(({ expiresInMs: _e, ...b }) => b)).toEqual([broker(1, { rack: 'r1' })]);
      expect(registered).toEqual([1]);
      expect(await store.heartbeat(1, a)).toBe(true);
      expect(await store.heartbeat(1, randomUUID())).toBe(false);
      expect(await store.heartbeat(2, a)).toBe(false);
      expect(await store.registration(2, LIVE_MS)).toBeNull();
      await close();
    });

    it('refuses a node id held by another live, connected instance; takes it once the registration lapsed', async () => {
      const [a, b] = [randomUUID(), randomUUID()];
      const first = await h().cluster(a);
      const second = await h().cluster(b);
      await first.store.registerBroker(broker(1), a, LIVE_MS);
      expect(await second.store.registerBroker(broker(1, { port: 9093 }), b, LIVE_MS)).toBe(false);
      expect((await second.store.registration(1, LIVE_MS))!.instanceId).toBe(a);
      // A liveness of 0: whatever was seen before now has lapsed.
      expect(await second.store.registerBroker(broker(1, { port: 9093 }), b, 0)).toBe(true);
      expect(await second.store.registration(1, LIVE_MS)).toMatchObject({ instanceId: b, port: 9093 });
      expect(await first.store.heartbeat(1, a)).toBe(false);
      await first.close();
      await second.close();
    });

    it('takes at once a live registration whose instance is no longer connected', async () => {
      const [a, b] = [randomUUID(), randomUUID()];
      const first = await h().cluster(a);
      const second = await h().cluster(b);
      await first.store.registerBroker(broker(1), a, LIVE_MS);
      await first.close();
      // PostgreSQL: the closed sessions leave pg_stat_activity a moment after the client goes.
      await expect.poll(async () => (await second.store.registration(1, LIVE_MS))?.connected, { timeout: 5000 }).toBe(false);
      expect((await second.store.registration(1, LIVE_MS))!.live).toBe(true);
      expect(await second.store.registerBroker(broker(1), b, LIVE_MS)).toBe(true);
      expect((await second.store.registration(1, LIVE_MS))!.instanceId).toBe(b);
      await second.close();
    });

    it('lists registered brokers that lapsed as registered but not live; only the holder unregisters', async () => {
      const [a, b] = [randomUUID(), randomUUID()];
      const { store, close } = await h().cluster(a);
      await store.registerBroker(broker(2, { listeners: null }), a, LIVE_MS);
      await store.registerBroker(broker(1), b, LIVE_MS);
      expect((await store.liveBrokers(LIVE_MS)).live.map((r) => [r.nodeId, r.listeners])).toEqual([
        [1, { PLAINTEXT: { host: 'h', port: 9092 } }],
        [2, null],
      ]);
      expect(await store.liveBrokers(0)).toEqual({ live: [], registered: [1, 2] });
      await store.unregisterBroker(2, b);
      expect((await store.liveBrokers(LIVE_MS)).registered).toEqual([1, 2]);
      await store.unregisterBroker(2, a);
      expect((await store.liveBrokers(LIVE_MS)).registered).toEqual([1]);
      await close();
    });
  });
}
