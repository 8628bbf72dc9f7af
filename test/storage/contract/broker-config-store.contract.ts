import { describe, expect, it } from 'vitest';
import type { HarnessRef } from './harness.js';

export function brokerConfigStorageContract(h: HarnessRef): void {
  describe('BrokerConfigStorage', () => {
    it('loads nothing as empty layers', async () => {
      expect(await h().brokerConfigs.load(1)).toEqual({ clusterDefault: {}, broker: {} });
    });

    it("keeps the cluster default and each broker's configs apart", async () => {
      const store = h().brokerConfigs;
      await store.update('', () => ({ 'log.retention.ms': '1000' }));
      await store.update('1', () => ({ 'log.cleaner.threads': '2' }));
      expect(await store.load(1)).toEqual({ clusterDefault: { 'log.retention.ms': '1000' }, broker: { 'log.cleaner.threads': '2' } });
      expect(await store.load(2)).toEqual({ clusterDefault: { 'log.retention.ms': '1000' }, broker: {} });
    });

    it('a change sees the stored configs; null leaves them', async () => {
      const store = h().brokerConfigs;
      const seen: Record<string, string>[] = [];
      await store.update('1', (current) => (seen.push(current), { a: '1' }));
      await store.update('1', (current) => (seen.push(current), { ...current, b: '2' }));
      await store.update('1', (current) => (seen.push(current), null));
      await store.update('2', (current) => (seen.push(current), null));
      expect(seen).toEqual([{}, { a: '1' }, { a: '1', b: '2' }, {}]);
      expect((await store.load(1)).broker).toEqual({ a: '1', b: '2' });
      expect((await store.load(2)).broker).toEqual({});
    });

    it("concurrent updates keep each other's changes", async () => {
      const store = h().brokerConfigs;
      await Promise.all(Array.from({ length: 8 }, (_, i) => store.update('', (current) => ({ ...current, [`k${i}`]: String(i) }))));
      expect(Object.keys((await store.load(1)).clusterDefault).sort()).toEqual(['k0', 'k1', 'k2', 'k3', 'k4', 'k5', 'k6', 'k7']);
    });
  });
}
