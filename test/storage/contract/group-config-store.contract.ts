import { describe, expect, it } from 'vitest';
import type { HarnessRef } from './harness.js';

export function groupConfigStorageContract(h: HarnessRef): void {
  describe('GroupConfigStorage', () => {
    it('loads nothing when no group has configs', async () => {
      expect(await h().groupConfigs.load()).toEqual(new Map());
    });

    it("keeps each group's configs apart, whether or not the group exists", async () => {
      const store = h().groupConfigs;
      await store.update('orders', () => ({ 'consumer.session.timeout.ms': '50000' }));
      await store.update('payments', () => ({ 'consumer.heartbeat.interval.ms': '6000', 'share.isolation.level': 'read_committed' }));
      expect(await store.load()).toEqual(
        new Map([
          ['orders', { 'consumer.session.timeout.ms': '50000' }],
          ['payments', { 'consumer.heartbeat.interval.ms': '6000', 'share.isolation.level': 'read_committed' }],
        ]),
      );
    });

    it('a change sees the stored configs ({} for a group with none); null leaves them, and leaves no group behind', async () => {
      const store = h().groupConfigs;
      const seen: Record<string, string>[] = [];
      await store.update('g', (current) => (seen.push(current), { a: '1' }));
      await store.update('g', (current) => (seen.push(current), { ...current, b: '2' }));
      await store.update('g', (current) => (seen.push(current), null));
      await store.update('other', (current) => (seen.push(current), null));
      expect(seen).toEqual([{}, { a: '1' }, { a: '1', b: '2' }, {}]);
      expect(await store.load()).toEqual(new Map([['g', { a: '1', b: '2' }]]));
    });

    it('a group left with no configs is no longer listed', async () => {
      const store = h().groupConfigs;
      await store.update('g', () => ({ a: '1' }));
      await store.update('h', () => ({ b: '2' }));
      await store.update('g', () => ({}));
      await store.update('never-set', () => ({}));
      expect([...(await store.load()).keys()]).toEqual(['h']);
    });

    it('what a caller does to loaded or given configs afterwards does not reach the store', async () => {
      const store = h().groupConfigs;
      const given = { a: '1' };
      await store.update('g', () => given);
      given.a = 'changed';
      (await store.load()).get('g')!.a = 'changed too';
      expect((await store.load()).get('g')).toEqual({ a: '1' });
    });

    it("concurrent updates keep each other's changes", async () => {
      const store = h().groupConfigs;
      await Promise.all(Array.from({ length: 8 }, (_, i) => store.update('g', (current) => ({ ...current, [`k${i}`]: String(i) }))));
      expect(Object.keys((await store.load()).get('g')!).sort()).toEqual(['k0', 'k1', 'k2', 'k3', 'k4', 'k5', 'k6', 'k7']);
    });

    it('refuses a NUL in a group id or a value, as PostgreSQL refuses it, and keeps what was stored', async () => {
      const store = h().groupConfigs;
      await store.update('g', () => ({ a: '1' }));
      await expect(store.update('a\u0000b', () => ({ a: '1' }))).rejects.toThrow();
      await expect(store.update('g', () => ({ a: 'x\u0000y' }))).rejects.toThrow();
      expect(await store.load()).toEqual(new Map([['g', { a: '1' }]]));
    });
  });
}
