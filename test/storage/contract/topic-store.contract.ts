import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { TopicRow } from '../../../src/log/topic-storage.js';
import type { HarnessRef } from './harness.js';

const topic = (name: string, over: Partial<TopicRow> = {}): TopicRow => ({ topicId: randomUUID(), name, partitionCount: 3, configs: { 'cleanup.policy': 'compact' }, ...over });

export function topicStorageContract(h: HarnessRef): void {
  describe('TopicStorage', () => {
    it('creates a topic once: a second topic of the same name is refused and the first stays', async () => {
      const store = h().topics;
      const first = topic('orders');
      expect(await store.create(first)).toBe(true);
      expect(await store.create(topic('orders', { partitionCount: 9, configs: {} }))).toBe(false);
      expect(await store.getByName('orders')).toEqual(first);
      expect(await store.getByName('missing')).toBeNull();
    });

    it('lists every topic by name in byte order', async () => {
      const store = h().topics;
      for (const name of ['b', 'B', 'a', 'a.b', 'a_b']) await store.create(topic(name));
      expect((await store.list()).map((t) => t.name)).toEqual(['B', 'a', 'a.b', 'a_b', 'b']);
    });

    it('updates configs from the stored ones; a change answering null leaves them; an unknown topic is false', async () => {
      const store = h().topics;
      const t = topic('orders');
      await store.create(t);
      const seen: Record<string, string>[] = [];
      expect(await store.updateConfigs(t.topicId, (current) => (seen.push(current), { ...current, 'retention.ms': '1000' }))).toBe(true);
      expect(await store.updateConfigs(t.topicId, (current) => (seen.push(current), null))).toBe(true);
      expect(seen).toEqual([{ 'cleanup.policy': 'compact' }, { 'cleanup.policy': 'compact', 'retention.ms': '1000' }]);
      expect((await store.getByName('orders'))!.configs).toEqual({ 'cleanup.policy': 'compact', 'retention.ms': '1000' });

      let called = false;
      expect(await store.updateConfigs(randomUUID(), () => ((called = true), {}))).toBe(false);
      expect(called).toBe(false);
    });

    it("concurrent config updates keep each other's changes", async () => {
      const store = h().topics;
      const t = topic('orders', { configs: {} });
      await store.create(t);
      await Promise.all(Array.from({ length: 8 }, (_, i) => store.updateConfigs(t.topicId, (current) => ({ ...current, [`k${i}`]: String(i) }))));
      expect(Object.keys((await store.getByName('orders'))!.configs).sort()).toEqual(['k0', 'k1', 'k2', 'k3', 'k4', 'k5', 'k6', 'k7']);
    });

    it('deletes a topic with its committed offsets, once', async () => {
      const { topics: store, commitOffset, committedOffsets } = h();
      const orders = topic('orders');
      await store.create(orders);
      await store.create(topic('payments'));
      await commitOffset({ groupId: 'g', topic: 'orders', partition: 0, committedOffset: 5n, leaderEpoch: -1, metadata: null });
      await commitOffset({ groupId: 'g', topic: 'payments', partition: 1, committedOffset: 6n, leaderEpoch: -1, metadata: null });
      expect(await store.delete(orders.topicId)).toBe(true);
      expect(await store.delete(orders.topicId)).toBe(false);
      expect(await store.getByName('orders')).toBeNull();
      expect((await store.list()).map((t) => t.name)).toEqual(['payments']);
      expect((await committedOffsets('g')).map((o) => o.topic)).toEqual(['payments']);
      // The name is free again.
      expect(await store.create(topic('orders'))).toBe(true);
    });

    it('refuses a name holding NUL', async () => {
      const store = h().topics;
      await expect(store.create(topic('a\u0000b'))).rejects.toThrow();
      expect(await store.list()).toEqual([]);
    });
  });
}
