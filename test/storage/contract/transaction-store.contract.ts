import { describe, expect, it } from 'vitest';
import { slotOf } from '../../../src/coordinator/coordination.js';
import type { PendingTxnOffset, StoredTransaction } from '../../../src/coordinator/transaction-storage.js';
import { LeaseLostError } from '../../../src/storage/coordinator-lease.js';
import type { HarnessRef } from './harness.js';

const txn = (over: Partial<StoredTransaction> = {}): StoredTransaction => ({
  transactionalId: 'tx-a',
  producerId: 4_000_000_000n,
  producerEpoch: 3,
  lastProducerEpoch: 2,
  timeoutMs: 60_000,
  state: 'Ongoing',
  startTime: new Date(1_700_000_000_123),
  partitions: [{ topicId: '6a0b4a7c-8d3c-4f61-9e55-2f8f3e0c9a11', topic: 'orders', partition: 2 }],
  groups: ['billing'],
  ...over,
});

const offset = (over: Partial<PendingTxnOffset> = {}): PendingTxnOffset => ({
  groupId: 'billing',
  topic: 'orders',
  partition: 0,
  committedOffset: 42n,
  leaderEpoch: 5,
  metadata: 'm',
  ...over,
});

/** The guard of tx-a as txn() stores it. */
const guard = { transactionalId: 'tx-a', producerId: 4_000_000_000n, producerEpoch: 3, groupId: 'billing' };

const withoutUpdatedAt = ({ updatedAt: _u, ...t }: StoredTransaction) => t;

export function transactionStorageContract(h: HarnessRef): void {
  /** Broker A's lease of the transactional id's slot (renewed, so the same epoch, on every call). */
  const leaseOf = (transactionalId: string) => h().takeSlot(slotOf(transactionalId), 'broker-a');
  /** The transaction store, each write made under broker A's lease of the id's slot. */
  const leased = () => {
    const store = h().transactions;
    return {
      loadAll: () => store.loadAll(),
      get: (id: string) => store.get(id),
      stageOffsets: (g: typeof guard, o: readonly PendingTxnOffset[]) => store.stageOffsets(g, o),
      pendingOffsets: (groupId: string) => store.pendingOffsets(groupId),
      save: async (t: StoredTransaction) => store.save(t, await leaseOf(t.transactionalId)),
      complete: async (t: StoredTransaction, commit: boolean) => store.complete(t, commit, await leaseOf(t.transactionalId)),
      expire: async (id: string) => store.expire(id, await leaseOf(id)),
    };
  };

  describe('TransactionStorage', () => {
    it('keeps every field of a saved transaction, and a second save replaces the first', async () => {
      const store = leased();
      await store.save(txn());
      const [loaded] = (await store.loadAll()).transactions;
      expect(withoutUpdatedAt(loaded!)).toEqual(txn());
      expect(loaded!.updatedAt).toBeInstanceOf(Date);

      await store.save(txn({ state: 'Empty', startTime: null, partitions: [], groups: [], producerEpoch: 4, lastProducerEpoch: 3 }));
      const { transactions } = await store.loadAll();
      expect(transactions.map(withoutUpdatedAt)).toEqual([txn({ state: 'Empty', startTime: null, partitions: [], groups: [], producerEpoch: 4, lastProducerEpoch: 3 })]);
    });

    it('loads transactional ids in byte order', async () => {
      const store = leased();
      for (const id of ['b', 'a', 'B', 'é', 'z']) await store.save(txn({ transactionalId: id }));
      expect((await store.loadAll()).transactions.map((t) => t.transactionalId)).toEqual(['B', 'a', 'b', 'z', 'é']);
    });

    it('does not keep a later change of the object it was given', async () => {
      const store = leased();
      const t = txn();
      await store.save(t);
      t.partitions.push({ topicId: t.partitions[0]!.topicId, topic: 'orders', partition: 3 });
      t.groups.push('other');
      const [loaded] = (await store.loadAll()).transactions;
      expect(loaded!.partitions).toHaveLength(1);
      expect(loaded!.groups).toEqual(['billing']);
    });

    it('stages offsets per transactional id; a later stage of the same partition replaces it', async () => {
      const store = leased();
      await store.save(txn());
      expect(await store.stageOffsets(guard, [offset(), offset({ partition: 1, metadata: null })])).toBe(true);
      expect(await store.stageOffsets(guard, [offset({ committedOffset: 43n, metadata: 'nul\u0000inside' })])).toBe(true);
      expect(await store.stageOffsets(guard, [])).toBe(false);
      const staged = (await store.loadAll()).offsets.get('tx-a')!;
      const byPartition = [...staged].sort((a, b) => a.partition - b.partition);
      expect(byPartition).toEqual([offset({ committedOffset: 43n, metadata: 'nul\u0000inside' }), offset({ partition: 1, metadata: null })]);
      expect((await store.loadAll()).offsets.has('tx-b')).toBe(false);
    });

    it("stages only under the producer's ongoing transaction with the group added; pending offsets are listed by group", async () => {
      const store = leased();
      expect(await store.stageOffsets(guard, [offset()])).toBe(false); // no such transaction
      await store.save(txn());
      expect(await store.stageOffsets({ ...guard, producerEpoch: 2 }, [offset()])).toBe(false);
      expect(await store.stageOffsets({ ...guard, producerId: 7n }, [offset()])).toBe(false);
      expect(await store.stageOffsets({ ...guard, groupId: 'audit' }, [offset({ groupId: 'audit' })])).toBe(false);
      await store.save(txn({ state: 'PrepareCommit' }));
      expect(await store.stageOffsets(guard, [offset()])).toBe(false);
      expect(await store.pendingOffsets('billing')).toEqual([]);
      await store.save(txn());
      expect(await store.stageOffsets(guard, [offset(), offset({ partition: 3 })])).toBe(true);
      expect((await store.pendingOffsets('billing')).sort((a, b) => a.partition - b.partition)).toEqual([
        { topic: 'orders', partition: 0 },
        { topic: 'orders', partition: 3 },
      ]);
      expect(await store.pendingOffsets('audit')).toEqual([]);
      expect(withoutUpdatedAt((await store.get('tx-a'))!)).toEqual(txn());
      expect(await store.get('tx-b')).toBeNull();
    });

    it("a commit makes the staged offsets the group's committed offsets, replacing older ones, and records the final state", async () => {
      const { committedOffsets, commitOffset } = h();
      const store = leased();
      await commitOffset({ groupId: 'billing', topic: 'orders', partition: 0, committedOffset: 7n, leaderEpoch: 1, metadata: 'old' });
      await store.save(txn());
      await store.save(txn({ groups: ['billing', 'audit'] }));
      await store.stageOffsets(guard, [offset()]);
      await store.stageOffsets({ ...guard, groupId: 'audit' }, [offset({ groupId: 'audit', partition: 4 })]);
      await store.complete(txn({ state: 'CompleteCommit', partitions: [], groups: [] }), true);

      expect(await committedOffsets('billing')).toEqual([{ groupId: 'billing', topic: 'orders', partition: 0, committedOffset: 42n, leaderEpoch: 5, metadata: 'm' }]);
      expect(await committedOffsets('audit')).toEqual([{ groupId: 'audit', topic: 'orders', partition: 4, committedOffset: 42n, leaderEpoch: 5, metadata: 'm' }]);
      const loaded = await store.loadAll();
      expect(loaded.offsets.has('tx-a')).toBe(false);
      expect(loaded.transactions.map((t) => t.state)).toEqual(['CompleteCommit']);
    });

    it('an abort drops the staged offsets and leaves the committed ones', async () => {
      const { committedOffsets, commitOffset } = h();
      const store = leased();
      await commitOffset({ groupId: 'billing', topic: 'orders', partition: 0, committedOffset: 7n, leaderEpoch: 1, metadata: null });
      await store.save(txn());
      await store.stageOffsets(guard, [offset()]);
      await store.complete(txn({ state: 'CompleteAbort', partitions: [], groups: [] }), false);
      expect(await committedOffsets('billing')).toEqual([{ groupId: 'billing', topic: 'orders', partition: 0, committedOffset: 7n, leaderEpoch: 1, metadata: null }]);
      const loaded = await store.loadAll();
      expect(loaded.offsets.has('tx-a')).toBe(false);
      expect(loaded.transactions.map((t) => t.state)).toEqual(['CompleteAbort']);
    });

    it('expires only an idle transactional id', async () => {
      const store = leased();
      const states = ['Empty', 'Ongoing', 'PrepareCommit', 'PrepareAbort', 'CompleteCommit', 'CompleteAbort'];
      for (const state of states) await store.save(txn({ transactionalId: state, state }));
      const expired = [];
      for (const state of states) if (await store.expire(state)) expired.push(state);
      expect(expired).toEqual(['Empty', 'CompleteCommit', 'CompleteAbort']);
      expect(await store.expire('unknown')).toBe(false);
      expect((await store.loadAll()).transactions.map((t) => t.state)).toEqual(['Ongoing', 'PrepareAbort', 'PrepareCommit']);
    });

    it("refuses every write of a coordinator whose slot's lease another broker took, changing nothing; the new holder's writes land", async () => {
      const { transactions: store, takeSlot, committedOffsets } = h();
      const slot = slotOf('tx-a');
      const a = await takeSlot(slot, 'broker-a');
      await store.save(txn(), a);
      expect(await store.stageOffsets(guard, [offset()])).toBe(true);
      // A's lease lapses (A paused, or cut off from the database) and B takes the slot: a new epoch.
      const b = await takeSlot(slot, 'broker-b');
      expect(b.epoch).toBeGreaterThan(a.epoch);

      await expect(store.save(txn({ producerEpoch: 4, lastProducerEpoch: 3, state: 'Empty', startTime: null, partitions: [], groups: [] }), a)).rejects.toEqual(new LeaseLostError(slot));
      await expect(store.save(txn({ transactionalId: 'tx-new', state: 'Empty' }), { ...a, slot: slotOf('tx-new') })).rejects.toBeInstanceOf(LeaseLostError);
      await expect(store.complete(txn({ state: 'CompleteCommit', partitions: [], groups: [] }), true, a)).rejects.toBeInstanceOf(LeaseLostError);
      expect(withoutUpdatedAt((await store.get('tx-a'))!)).toEqual(txn());
      expect(await store.get('tx-new')).toBeNull();
      expect(await committedOffsets('billing')).toEqual([]);
      expect((await store.loadAll()).offsets.get('tx-a')).toEqual([offset()]);

      // The holder completes the transaction; A, given the slot back later (a newer epoch still), cannot write under the epoch it had.
      await store.complete(txn({ state: 'CompleteCommit', partitions: [], groups: [] }), true, b);
      expect(await committedOffsets('billing')).toEqual([expect.objectContaining({ committedOffset: 42n })]);
      const aAgain = await takeSlot(slot, 'broker-a');
      expect(aAgain.epoch).toBeGreaterThan(b.epoch);
      await expect(store.expire('tx-a', a)).rejects.toBeInstanceOf(LeaseLostError);
      await expect(store.save(txn(), b)).rejects.toBeInstanceOf(LeaseLostError);
      expect((await store.get('tx-a'))!.state).toBe('CompleteCommit');
      expect(await store.expire('tx-a', aAgain)).toBe(true);
    });

    it('refuses a transactional id holding NUL, storing nothing', async () => {
      const store = leased();
      await expect(store.save(txn({ transactionalId: 'a\u0000b' }))).rejects.toThrow();
      expect((await store.loadAll()).transactions).toEqual([]);
    });
  });

  describe('ProducerIdStorage', () => {
    it('never hands out a producer id twice, even to concurrent callers', async () => {
      const ids = h().producerIds;
      const first = await ids.allocateProducerId();
      const many = await Promise.all(Array.from({ length: 20 }, () => ids.allocateProducerId()));
      const all = [first, ...many];
      expect(new Set(all).size).toBe(all.length);
      for (const id of many) expect(id).toBeGreaterThan(first);
      expect(first).toBeGreaterThanOrEqual(0n);
    });
  });
}
