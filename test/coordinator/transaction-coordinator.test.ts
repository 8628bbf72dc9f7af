// The transaction coordinator on in-memory storage and a fake clock: the
// outcomes test/integration/transactions.test.ts sees through a broker
// (fencing, timeouts, EndTxn's state errors, expiry, restart), each in
// milliseconds, and the retries a failing log forces.
import { afterEach, describe, expect, it } from 'vitest';
import { COORDINATOR_SLOTS, slotOf } from '../../src/coordinator/coordination.js';
import { TransactionCoordinator } from '../../src/coordinator/transaction-coordinator.js';
import { TopicManager } from '../../src/log/topic-manager.js';
import { createLogger } from '../../src/observability/logger.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { MemoryDatabase, MemoryProducerIds, MemoryTopicStore, MemoryTransactionStore } from '../../src/storage/memory/index.js';
import { FakeClock } from '../support/fake-clock.js';
import { RecordingMarkers } from '../support/txn-markers.js';

const CHECK_MS = 1000;
const running: TransactionCoordinator[] = [];
const EVERY_SLOT = Array.from({ length: COORDINATOR_SLOTS }, (_, slot) => slot);

/** Takes the slots' leases for the instance (leases that never lapse: the fake clock runs for days); slot → lease epoch, as Coordination hands them to acquire. */
const leaseSlots = (db: MemoryDatabase, instanceId: string, slots: readonly number[]) => new Map(slots.map((slot) => [slot, db.leaseSlot(slot, instanceId, Infinity).epoch]));

/** Stores a transactional id's state as its coordinator (instance `a`) would. */
const seed = (db: MemoryDatabase, t: Parameters<MemoryTransactionStore['save']>[0]) => new MemoryTransactionStore(db).save(t, db.leaseSlot(slotOf(t.transactionalId), 'a', Infinity));

/**
 * `slots`: the coordinator slots this coordinator takes (all by default), as a broker sharing the storage with others would;
 * `instanceId`: the broker instance whose leases they are (`a` by default).
 */
async function setup(options: { transactionalIdExpirationMs?: number; db?: MemoryDatabase; clock?: FakeClock; slots?: number[]; instanceId?: string } = {}) {
  const clock = options.clock ?? new FakeClock();
  const db = options.db ?? new MemoryDatabase(clock);
  const topics = new TopicManager(new MemoryTopicStore(db), { numPartitions: 1, autoCreateTopicsEnable: false }, { generation: 0, synonyms: () => [] });
  const orders = (await topics.get('orders')) ?? (await topics.create({ name: 'orders', numPartitions: 3, replicationFactor: 1, configs: {}, validateOnly: false })).topic!;
  const markers = new RecordingMarkers();
  const store = new MemoryTransactionStore(db);
  const coordinator = new TransactionCoordinator({
    store,
    producerIds: new MemoryProducerIds(db),
    markers,
    topics,
    log: createLogger('silent'),
    instanceId: options.instanceId ?? 'a',
    clock,
    timeoutCheckMs: CHECK_MS,
    transactionalIdExpirationMs: options.transactionalIdExpirationMs,
  });
  /** Takes the slots over, as Coordination does: their leases, then their state. */
  const take = (slots: readonly number[]) => coordinator.acquire(leaseSlots(db, options.instanceId ?? 'a', slots));
  await take(options.slots ?? EVERY_SLOT);
  coordinator.start();
  running.push(coordinator);
  /** Moves the fake clock on, letting each timeout check run to its end (they reschedule themselves when done). */
  const advance = async (ms: number) => {
    for (let left = ms; left > 0; left -= CHECK_MS) {
      clock.advance(Math.min(CHECK_MS, left));
      await settle();
    }
  };
  return { clock, db, store, topics, orders, markers, coordinator, advance, take };
}

/** Lets every pending promise of the in-memory stores resolve. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

afterEach(() => {
  for (const c of running.splice(0)) c.shutdown();
});

describe('TransactionCoordinator', () => {
  it('InitProducerId: a new id gets a producer id at epoch 0; each restart of the producer the next epoch, which fences the older one', async () => {
    const { coordinator } = await setup();
    const first = await coordinator.initProducerId('tx', 60_000, -1n, -1);
    expect(first).toEqual({ errorCode: ErrorCode.NONE, producerId: 1000n, producerEpoch: 0 });
    const second = await coordinator.initProducerId('tx', 60_000, -1n, -1);
    expect(second).toEqual({ errorCode: ErrorCode.NONE, producerId: 1000n, producerEpoch: 1 });

    expect(await coordinator.addPartitions('tx', 1000n, 0, [{ topic: 'orders', partition: 0 }], false)).toEqual([ErrorCode.PRODUCER_FENCED]);
    expect(await coordinator.endTxn('tx', 1000n, 0, true)).toMatchObject({ errorCode: ErrorCode.PRODUCER_FENCED });
    expect(await coordinator.addOffsets('tx', 1000n, 0, 'g')).toBe(ErrorCode.PRODUCER_FENCED);
  });

  it('fencing aborts the open transaction of the older instance, with a bumped epoch, and its batches are refused', async () => {
    const { coordinator, markers, orders } = await setup();
    const first = await coordinator.initProducerId('tx', 60_000, -1n, -1);
    expect(await coordinator.addPartitions('tx', first.producerId, 0, [{ topic: 'orders', partition: 1 }], false)).toEqual([ErrorCode.NONE]);
    expect(coordinator.verifyProduce(first.producerId, 0, orders.topicId, 1)).toBe(ErrorCode.NONE);

    const second = await coordinator.initProducerId('tx', 60_000, -1n, -1);
    expect(second.producerId).toBe(first.producerId);
    expect(second.producerEpoch).toBeGreaterThan(first.producerEpoch);
    expect(markers.written).toEqual([expect.objectContaining({ topicId: orders.topicId, partition: 1, commit: false, producerId: first.producerId, producerEpoch: 1 })]);
    expect(coordinator.verifyProduce(first.producerId, 0, orders.topicId, 1)).toBe(ErrorCode.PRODUCER_FENCED);
    expect(coordinator.describe('tx')!.state).toBe('Empty');
  });

  it('KIP-360: with the expected producer id and epoch, only the current instance may bump; a retry of the last bump is answered as it was', async () => {
    const { coordinator } = await setup();
    const first = await coordinator.initProducerId('tx', 60_000, -1n, -1);
    const bumped = await coordinator.initProducerId('tx', 60_000, first.producerId, first.producerEpoch);
    expect(bumped).toEqual({ errorCode: ErrorCode.NONE, producerId: first.producerId, producerEpoch: 1 });
    expect(await coordinator.initProducerId('tx', 60_000, first.producerId, first.producerEpoch)).toEqual(bumped);
    expect(await coordinator.initProducerId('tx', 60_000, first.producerId, 7)).toEqual({ errorCode: ErrorCode.PRODUCER_FENCED, producerId: -1n, producerEpoch: -1 });
  });

  it('an epoch about to run out gets a new producer id at epoch 0', async () => {
    const clock = new FakeClock();
    const db = new MemoryDatabase(clock);
    await seed(db, {
      transactionalId: 'tx',
      producerId: 5n,
      producerEpoch: 32766,
      lastProducerEpoch: 32765,
      timeoutMs: 60_000,
      state: 'Empty',
      startTime: null,
      partitions: [],
      groups: [],
    });
    const { coordinator } = await setup({ db, clock });
    expect(await coordinator.initProducerId('tx', 60_000, -1n, -1)).toEqual({ errorCode: ErrorCode.NONE, producerId: 1000n, producerEpoch: 0 });
    expect(coordinator.byProducer(5n)).toBeUndefined();
  });

  it('aborts a transaction open longer than its timeout, with an epoch bump; the old epoch is then fenced', async () => {
    const { coordinator, markers, advance } = await setup();
    const p = await coordinator.initProducerId('tx', 5000, -1n, -1);
    await coordinator.addPartitions(
      'tx',
      p.producerId,
      p.producerEpoch,
      [
        { topic: 'orders', partition: 0 },
        { topic: 'orders', partition: 2 },
      ],
      false,
    );
    await advance(5000);
    expect(coordinator.describe('tx')!.state).toBe('Ongoing');
    await advance(1000);
    expect(coordinator.describe('tx')).toMatchObject({ state: 'CompleteAbort', producerEpoch: p.producerEpoch + 1 });
    expect(markers.written.map((m) => [m.partition, m.commit, m.producerEpoch]).sort()).toEqual([
      [0, false, 1],
      [2, false, 1],
    ]);
    expect(await coordinator.endTxn('tx', p.producerId, p.producerEpoch, true)).toMatchObject({ errorCode: ErrorCode.PRODUCER_FENCED });
  });

  it('EndTxn: outside a transaction INVALID_TXN_STATE; a retry of the completed one as it was; the opposite outcome INVALID_TXN_STATE', async () => {
    const { coordinator, markers } = await setup();
    const p = await coordinator.initProducerId('tx', 60_000, -1n, -1);
    expect((await coordinator.endTxn('tx', p.producerId, 0, true)).errorCode).toBe(ErrorCode.INVALID_TXN_STATE);
    await coordinator.addPartitions('tx', p.producerId, 0, [{ topic: 'orders', partition: 0 }], false);
    expect(await coordinator.endTxn('tx', p.producerId, 0, true)).toEqual({ errorCode: ErrorCode.NONE, producerId: p.producerId, producerEpoch: 0 });
    expect((await coordinator.endTxn('tx', p.producerId, 0, true)).errorCode).toBe(ErrorCode.NONE);
    expect((await coordinator.endTxn('tx', p.producerId, 0, false)).errorCode).toBe(ErrorCode.INVALID_TXN_STATE);
    expect(markers.written).toHaveLength(1);
    expect(markers.written[0]).toMatchObject({ partition: 0, commit: true });

    await coordinator.addPartitions('tx', p.producerId, 0, [{ topic: 'orders', partition: 0 }], false);
    expect((await coordinator.endTxn('tx', p.producerId, 0, false)).errorCode).toBe(ErrorCode.NONE);
    expect((await coordinator.endTxn('tx', p.producerId, 0, false)).errorCode).toBe(ErrorCode.NONE);
    expect((await coordinator.endTxn('tx', p.producerId, 0, true)).errorCode).toBe(ErrorCode.INVALID_TXN_STATE);

    expect((await coordinator.endTxn('nobody', p.producerId, 0, true)).errorCode).toBe(ErrorCode.INVALID_PRODUCER_ID_MAPPING);
    expect((await coordinator.endTxn('tx', p.producerId + 1n, 0, true)).errorCode).toBe(ErrorCode.INVALID_PRODUCER_ID_MAPPING);
  });

  it('AddPartitionsToTxn: an unknown topic or partition adds none, the others OPERATION_NOT_ATTEMPTED; verifyOnly answers membership', async () => {
    const { coordinator, orders } = await setup();
    const p = await coordinator.initProducerId('tx', 60_000, -1n, -1);
    expect(
      await coordinator.addPartitions(
        'tx',
        p.producerId,
        0,
        [
          { topic: 'orders', partition: 0 },
          { topic: 'missing', partition: 0 },
          { topic: 'orders', partition: 3 },
        ],
        false,
      ),
    ).toEqual([ErrorCode.OPERATION_NOT_ATTEMPTED, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]);
    expect(coordinator.describe('tx')!.state).toBe('Empty');
    expect(coordinator.verifyProduce(p.producerId, 0, orders.topicId, 0)).toBe(ErrorCode.INVALID_TXN_STATE);

    await coordinator.addPartitions('tx', p.producerId, 0, [{ topic: 'orders', partition: 0 }], false);
    expect(
      await coordinator.addPartitions(
        'tx',
        p.producerId,
        0,
        [
          { topic: 'orders', partition: 0 },
          { topic: 'orders', partition: 1 },
        ],
        true,
      ),
    ).toEqual([ErrorCode.NONE, ErrorCode.INVALID_TXN_STATE]);
    expect(coordinator.verifyProduce(p.producerId, 0, orders.topicId, 0)).toBe(ErrorCode.NONE);
    expect(coordinator.verifyProduce(p.producerId, 0, orders.topicId, 1)).toBe(ErrorCode.INVALID_TXN_STATE);
    expect(coordinator.verifyProduce(p.producerId, 1, orders.topicId, 0)).toBe(ErrorCode.INVALID_TXN_STATE);
    expect(coordinator.verifyProduce(999n, 0, orders.topicId, 0)).toBe(ErrorCode.INVALID_PRODUCER_ID_MAPPING);
  });

  it("TxnOffsetCommit: offsets are staged (pending for OffsetFetch) and become the group's committed offsets at the commit", async () => {
    const { coordinator, db } = await setup();
    const p = await coordinator.initProducerId('tx', 60_000, -1n, -1);
    expect(await coordinator.verifyOffsetCommit('', p.producerId, 0, 'g')).toBe(ErrorCode.INVALID_REQUEST);
    expect(await coordinator.verifyOffsetCommit('tx', p.producerId, 0, 'g')).toBe(ErrorCode.TRANSACTION_ABORTABLE);
    const staged = { groupId: 'g', topic: 'orders', partition: 1, committedOffset: 10n, leaderEpoch: -1, metadata: null };
    expect(await coordinator.commitOffsets('tx', p.producerId, 0, 'g', [staged])).toBe(ErrorCode.TRANSACTION_ABORTABLE);

    expect(await coordinator.addOffsets('tx', p.producerId, 0, 'g')).toBe(ErrorCode.NONE);
    expect(await coordinator.verifyOffsetCommit('tx', p.producerId, 0, 'g')).toBe(ErrorCode.NONE);
    expect(await coordinator.verifyOffsetCommit('tx', p.producerId, 1, 'g')).toBe(ErrorCode.PRODUCER_FENCED);
    expect(await coordinator.commitOffsets('tx', p.producerId, 1, 'g', [staged])).toBe(ErrorCode.PRODUCER_FENCED);
    expect(await coordinator.commitOffsets('tx', p.producerId, 0, 'g', [staged])).toBe(ErrorCode.NONE);
    expect([...(await coordinator.pendingOffsets('g'))]).toEqual(['orders\u00001']);
    expect(db.committedOffsets.size).toBe(0);

    expect((await coordinator.endTxn('tx', p.producerId, 0, true)).errorCode).toBe(ErrorCode.NONE);
    expect((await coordinator.pendingOffsets('g')).size).toBe(0);
    expect([...db.committedOffsets.values()]).toEqual([expect.objectContaining({ groupId: 'g', topic: 'orders', partition: 1, committedOffset: 10n })]);
  });

  it('forgets a transactional id idle for longer than transactional.id.expiration.ms; it then starts over with a new producer id', async () => {
    const { coordinator, store, advance } = await setup({ transactionalIdExpirationMs: 10_000 });
    const first = await coordinator.initProducerId('tx', 60_000, -1n, -1);
    await advance(10_000);
    expect(coordinator.describe('tx')).toBeDefined();
    await advance(2000);
    expect(coordinator.describe('tx')).toBeUndefined();
    expect((await store.loadAll()).transactions).toEqual([]);
    const again = await coordinator.initProducerId('tx', 60_000, -1n, -1);
    expect(again).toMatchObject({ errorCode: ErrorCode.NONE, producerEpoch: 0 });
    expect(again.producerId).not.toBe(first.producerId);
  });

  it('an open transaction is not expired, however long it stays idle, until its timeout aborts it', async () => {
    const { coordinator, advance } = await setup({ transactionalIdExpirationMs: 1000 });
    const p = await coordinator.initProducerId('tx', 5000, -1n, -1);
    await coordinator.addPartitions('tx', p.producerId, 0, [{ topic: 'orders', partition: 0 }], false);
    await advance(4000);
    expect(coordinator.describe('tx')!.state).toBe('Ongoing');
    await advance(2000);
    expect(coordinator.describe('tx')!.state).toBe('CompleteAbort');
  });

  it('a restart finds open transactions as they were, and completes one left in PrepareCommit', async () => {
    const clock = new FakeClock();
    const db = new MemoryDatabase(clock);
    const before = await setup({ db, clock });
    const open = await before.coordinator.initProducerId('open', 60_000, -1n, -1);
    await before.coordinator.addPartitions('open', open.producerId, 0, [{ topic: 'orders', partition: 0 }], false);
    await seed(db, {
      transactionalId: 'prepared',
      producerId: 77n,
      producerEpoch: 3,
      lastProducerEpoch: 2,
      timeoutMs: 60_000,
      state: 'PrepareCommit',
      startTime: new Date(clock.now()),
      partitions: [{ topicId: before.orders.topicId, topic: 'orders', partition: 2 }],
      groups: [],
    });
    before.coordinator.shutdown();

    const after = await setup({ db, clock });
    await settle();
    expect(after.coordinator.describe('open')).toMatchObject({ state: 'Ongoing', producerId: open.producerId });
    expect(after.coordinator.verifyProduce(open.producerId, 0, before.orders.topicId, 0)).toBe(ErrorCode.NONE);
    expect(after.coordinator.describe('prepared')!.state).toBe('CompleteCommit');
    expect(after.markers.written).toEqual([expect.objectContaining({ partition: 2, commit: true, producerId: 77n, producerEpoch: 3 })]);
    expect((await after.coordinator.endTxn('open', open.producerId, 0, false)).errorCode).toBe(ErrorCode.NONE);
  });

  it('a marker the log cannot take fails EndTxn and leaves the transaction prepared, refusing new work; the timeout check completes it later', async () => {
    const { coordinator, markers, advance } = await setup();
    const p = await coordinator.initProducerId('tx', 60_000, -1n, -1);
    await coordinator.addPartitions('tx', p.producerId, 0, [{ topic: 'orders', partition: 0 }], false);
    markers.failWith = new Error('storage down');
    await expect(coordinator.endTxn('tx', p.producerId, 0, true)).rejects.toThrow('storage down');
    expect(coordinator.describe('tx')!.state).toBe('PrepareCommit');
    expect(await coordinator.addPartitions('tx', p.producerId, 0, [{ topic: 'orders', partition: 1 }], false)).toEqual([ErrorCode.CONCURRENT_TRANSACTIONS]);
    await advance(CHECK_MS);
    expect(coordinator.describe('tx')!.state).toBe('PrepareCommit');
    markers.failWith = null;
    await advance(CHECK_MS);
    expect(coordinator.describe('tx')!.state).toBe('CompleteCommit');
    expect(markers.written).toEqual([expect.objectContaining({ partition: 0, commit: true })]);
    expect((await coordinator.endTxn('tx', p.producerId, 0, true)).errorCode).toBe(ErrorCode.NONE);
  });

  describe('spread over brokers by coordinator slot', () => {
    const TX = 'tx';

    /** Two coordinators on one storage: `a` holds every slot, `b` none (until it takes TX's). */
    async function pair() {
      const clock = new FakeClock();
      const db = new MemoryDatabase(clock);
      const a = await setup({ db, clock });
      const b = await setup({ db, clock, slots: [], instanceId: 'b' });
      return { clock, db, a, b };
    }

    it("a broker not holding the id's slot answers NOT_COORDINATOR to every transaction request, and lists nothing", async () => {
      const { a, b } = await pair();
      const p = await a.coordinator.initProducerId(TX, 60_000, -1n, -1);
      expect(b.coordinator.serves(TX)).toBe(false);
      expect(await b.coordinator.initProducerId(TX, 60_000, -1n, -1)).toMatchObject({ errorCode: ErrorCode.NOT_COORDINATOR });
      expect(await b.coordinator.initProducerId('never-seen', 60_000, -1n, -1)).toMatchObject({ errorCode: ErrorCode.NOT_COORDINATOR });
      expect(await b.coordinator.addPartitions(TX, p.producerId, 0, [{ topic: 'orders', partition: 0 }], false)).toEqual([ErrorCode.NOT_COORDINATOR]);
      expect(await b.coordinator.addOffsets(TX, p.producerId, 0, 'g')).toBe(ErrorCode.NOT_COORDINATOR);
      expect(await b.coordinator.endTxn(TX, p.producerId, 0, true)).toMatchObject({ errorCode: ErrorCode.NOT_COORDINATOR });
      expect(b.coordinator.list()).toEqual([]);
      // Nothing was stored by b: a still has the id at epoch 0.
      expect(a.coordinator.describe(TX)).toMatchObject({ producerId: p.producerId, producerEpoch: 0, state: 'Empty' });
    });

    it('the next holder completes a commit its coordinator died in the middle of: markers written again, offsets applied', async () => {
      const { db, a, b } = await pair();
      const p = await a.coordinator.initProducerId(TX, 60_000, -1n, -1);
      await a.coordinator.addPartitions(TX, p.producerId, 0, [{ topic: 'orders', partition: 1 }], false);
      await a.coordinator.addOffsets(TX, p.producerId, 0, 'g');
      const staged = { groupId: 'g', topic: 'orders', partition: 0, committedOffset: 5n, leaderEpoch: -1, metadata: null };
      expect(await a.coordinator.commitOffsets(TX, p.producerId, 0, 'g', [staged])).toBe(ErrorCode.NONE);
      a.markers.failWith = new Error('broker killed'); // PrepareCommit is stored, no marker lands
      await expect(a.coordinator.endTxn(TX, p.producerId, 0, true)).rejects.toThrow('broker killed');
      a.coordinator.shutdown();

      await b.take([slotOf(TX)]);
      await settle();
      expect(b.coordinator.describe(TX)).toMatchObject({ state: 'CompleteCommit', producerEpoch: 0 });
      expect(b.markers.written).toEqual([expect.objectContaining({ topicId: b.orders.topicId, partition: 1, commit: true, producerId: p.producerId, producerEpoch: 0 })]);
      expect([...db.committedOffsets.values()]).toEqual([expect.objectContaining({ groupId: 'g', partition: 0, committedOffset: 5n })]);
      // The client's retry of EndTxn, now to the new coordinator, is answered as the commit it was.
      expect((await b.coordinator.endTxn(TX, p.producerId, 0, true)).errorCode).toBe(ErrorCode.NONE);
    });

    it("the next holder leaves an ongoing transaction to its timeout, which aborts it with a bumped epoch; the old holder's release drops the id", async () => {
      const { a, b } = await pair();
      const p = await a.coordinator.initProducerId(TX, 5_000, -1n, -1);
      await a.coordinator.addPartitions(TX, p.producerId, 0, [{ topic: 'orders', partition: 2 }], false);
      await a.coordinator.release(new Set([slotOf(TX)]));
      expect(a.coordinator.describe(TX)).toBeUndefined();
      expect(await a.coordinator.endTxn(TX, p.producerId, 0, true)).toMatchObject({ errorCode: ErrorCode.NOT_COORDINATOR });

      await b.take([slotOf(TX)]);
      await settle();
      expect(b.coordinator.describe(TX)).toMatchObject({ state: 'Ongoing' });
      expect(b.markers.written).toEqual([]);
      await b.advance(6_000);
      expect(b.coordinator.describe(TX)).toMatchObject({ state: 'CompleteAbort', producerEpoch: 1 });
      expect(b.markers.written).toEqual([expect.objectContaining({ partition: 2, commit: false, producerId: p.producerId, producerEpoch: 1 })]);
    });

    it("a coordinator whose slot another broker took has its write refused: it answers NOT_COORDINATOR, drops the slot's ids and tells its keeper; the stored state is the new holder's", async () => {
      const { db, a, b } = await pair();
      const lost: number[] = [];
      a.coordinator.onLeaseLost((slot) => lost.push(slot));
      const sibling = Array.from({ length: 500 }, (_, i) => `tx-${i}`).find((id) => slotOf(id) === slotOf(TX))!;
      const p = await a.coordinator.initProducerId(TX, 60_000, -1n, -1);
      await a.coordinator.initProducerId(sibling, 60_000, -1n, -1);
      await a.coordinator.addPartitions(TX, p.producerId, 0, [{ topic: 'orders', partition: 1 }], false);
      // a pauses past its lease and b takes the slot; a's lease still looks live to a.
      await b.take([slotOf(TX)]);

      expect(await a.coordinator.endTxn(TX, p.producerId, 0, true)).toMatchObject({ errorCode: ErrorCode.NOT_COORDINATOR });
      expect(lost).toEqual([slotOf(TX)]);
      expect(a.markers.written).toEqual([]);
      expect(db.transactions.get(TX)).toMatchObject({ state: 'Ongoing', producerEpoch: 0 });
      expect(a.coordinator.serves(TX)).toBe(false);
      expect([a.coordinator.describe(TX), a.coordinator.describe(sibling), a.coordinator.byProducer(p.producerId)]).toEqual([undefined, undefined, undefined]);
      expect(await a.coordinator.initProducerId(sibling, 60_000, -1n, -1)).toMatchObject({ errorCode: ErrorCode.NOT_COORDINATOR });

      // The client finds b, which serves the transaction from what was stored.
      expect(await b.coordinator.endTxn(TX, p.producerId, 0, true)).toMatchObject({ errorCode: ErrorCode.NONE });
      expect(b.markers.written).toEqual([expect.objectContaining({ partition: 1, commit: true, coordinatorEpoch: 1 })]); // the second holder (lease epoch 2), counted from 0 as Kafka does
    });

    it('a coordinator that lost its slot does not abort, nor bump the epoch of, a timed-out transaction its new holder serves', async () => {
      const { db, a, b } = await pair();
      const p = await a.coordinator.initProducerId(TX, 5_000, -1n, -1);
      await a.coordinator.addPartitions(TX, p.producerId, 0, [{ topic: 'orders', partition: 2 }], false);
      await b.take([slotOf(TX)]);
      await a.advance(6_000); // both time the transaction out; only b's abort is stored
      expect(a.markers.written).toEqual([]);
      expect(b.markers.written).toEqual([expect.objectContaining({ partition: 2, commit: false, producerEpoch: 1 })]);
      expect(db.transactions.get(TX)).toMatchObject({ state: 'CompleteAbort', producerEpoch: 1 });
      expect(a.coordinator.describe(TX)).toBeUndefined();
    });

    it('a broker not coordinating the transaction checks produce requests against the stored state, trusting a check while the transaction is open on the partition', async () => {
      const { a, b } = await pair();
      const p = await a.coordinator.initProducerId(TX, 60_000, -1n, -1);
      const topicId = a.orders.topicId;
      expect(await b.coordinator.verifyStoredProduce(TX, p.producerId, 0, topicId, 0, false)).toBe(ErrorCode.INVALID_TXN_STATE);
      await a.coordinator.addPartitions(TX, p.producerId, 0, [{ topic: 'orders', partition: 0 }], false);
      expect(await b.coordinator.verifyStoredProduce(TX, p.producerId, 0, topicId, 0, false)).toBe(ErrorCode.NONE);
      expect(await b.coordinator.verifyStoredProduce(TX, p.producerId, 0, topicId, 1, false)).toBe(ErrorCode.INVALID_TXN_STATE);
      expect(await b.coordinator.verifyStoredProduce(TX, 999n, 0, topicId, 0, false)).toBe(ErrorCode.INVALID_PRODUCER_ID_MAPPING);
      expect(await b.coordinator.verifyStoredProduce('other', p.producerId, 0, topicId, 0, false)).toBe(ErrorCode.INVALID_PRODUCER_ID_MAPPING);

      expect((await a.coordinator.endTxn(TX, p.producerId, 0, true)).errorCode).toBe(ErrorCode.NONE);
      // Until the marker shows in the partition's transaction index, the check made for the open transaction stands; after it, the stored state answers.
      expect(await b.coordinator.verifyStoredProduce(TX, p.producerId, 0, topicId, 0, true)).toBe(ErrorCode.NONE);
      expect(await b.coordinator.verifyStoredProduce(TX, p.producerId, 0, topicId, 0, false)).toBe(ErrorCode.INVALID_TXN_STATE);
      await a.coordinator.initProducerId(TX, 60_000, -1n, -1);
      expect(await b.coordinator.verifyStoredProduce(TX, p.producerId, 0, topicId, 0, true)).toBe(ErrorCode.PRODUCER_FENCED);
    });

    it("the group's coordinator stages a transaction's offsets on another broker; its coordinator applies them at the commit", async () => {
      const { db, a, b } = await pair();
      const p = await a.coordinator.initProducerId(TX, 60_000, -1n, -1);
      const staged = { groupId: 'g', topic: 'orders', partition: 0, committedOffset: 9n, leaderEpoch: -1, metadata: 'm' };
      expect(await b.coordinator.verifyOffsetCommit(TX, p.producerId, 0, 'g')).toBe(ErrorCode.TRANSACTION_ABORTABLE);
      expect(await b.coordinator.commitOffsets(TX, p.producerId, 0, 'g', [staged])).toBe(ErrorCode.TRANSACTION_ABORTABLE);
      await a.coordinator.addOffsets(TX, p.producerId, 0, 'g');
      expect(await b.coordinator.verifyOffsetCommit(TX, p.producerId, 0, 'g')).toBe(ErrorCode.NONE);
      expect(await b.coordinator.verifyOffsetCommit(TX, p.producerId, 1, 'g')).toBe(ErrorCode.PRODUCER_FENCED);
      expect(await b.coordinator.verifyOffsetCommit(TX, 999n, 0, 'g')).toBe(ErrorCode.INVALID_PRODUCER_ID_MAPPING);
      expect(await b.coordinator.commitOffsets(TX, p.producerId, 0, 'g', [staged])).toBe(ErrorCode.NONE);
      expect([...(await b.coordinator.pendingOffsets('g'))]).toEqual(['orders\u00000']);
      expect([...(await a.coordinator.pendingOffsets('g'))]).toEqual(['orders\u00000']);
      expect((await a.coordinator.endTxn(TX, p.producerId, 0, true)).errorCode).toBe(ErrorCode.NONE);
      expect((await b.coordinator.pendingOffsets('g')).size).toBe(0);
      expect([...db.committedOffsets.values()]).toEqual([expect.objectContaining({ groupId: 'g', partition: 0, committedOffset: 9n })]);
      // Once it completed, a late commit of the same transaction stages nothing.
      expect(await b.coordinator.commitOffsets(TX, p.producerId, 0, 'g', [staged])).toBe(ErrorCode.TRANSACTION_ABORTABLE);
      expect((await b.coordinator.pendingOffsets('g')).size).toBe(0);
    });
  });
});

describe('TransactionCoordinator, transactions version 2 (EndTxn v5, KIP-890 part 2)', () => {
  const TV2 = true;

  it('every commit and abort bumps the epoch: the markers carry the new one, the answer names it, and the old epoch is refused from then on', async () => {
    const { coordinator, markers, orders } = await setup();
    const p = await coordinator.initProducerId('tx', 60_000, -1n, -1);
    expect(await coordinator.addPartitions('tx', p.producerId, 0, [{ topic: 'orders', partition: 1 }], false)).toEqual([ErrorCode.NONE]);
    expect(await coordinator.endTxn('tx', p.producerId, 0, true, TV2)).toEqual({ errorCode: ErrorCode.NONE, producerId: p.producerId, producerEpoch: 1 });
    expect(markers.written).toEqual([expect.objectContaining({ partition: 1, commit: true, producerId: p.producerId, producerEpoch: 1 })]);
    // A late batch of the committed transaction (the hanging transaction KIP-890 prevents) is fenced, not added to the next one.
    expect(coordinator.verifyProduce(p.producerId, 0, orders.topicId, 1)).toBe(ErrorCode.PRODUCER_FENCED);
    expect(await coordinator.addPartitions('tx', p.producerId, 0, [{ topic: 'orders', partition: 1 }], false)).toEqual([ErrorCode.PRODUCER_FENCED]);

    expect(await coordinator.addPartitions('tx', p.producerId, 1, [{ topic: 'orders', partition: 2 }], false)).toEqual([ErrorCode.NONE]);
    expect(coordinator.verifyProduce(p.producerId, 1, orders.topicId, 2)).toBe(ErrorCode.NONE);
    expect(await coordinator.endTxn('tx', p.producerId, 1, false, TV2)).toEqual({ errorCode: ErrorCode.NONE, producerId: p.producerId, producerEpoch: 2 });
    expect(markers.written[1]).toMatchObject({ partition: 2, commit: false, producerEpoch: 2 });
    expect(coordinator.describe('tx')).toMatchObject({ state: 'CompleteAbort', producerEpoch: 2, lastProducerEpoch: 1 });
  });

  it('a retry of the EndTxn that bumped the epoch (the previous epoch) is answered as it was; the opposite outcome is INVALID_TXN_STATE; an EndTxn of the previous epoch during the next transaction is fenced', async () => {
    const { coordinator, markers } = await setup();
    const p = await coordinator.initProducerId('tx', 60_000, -1n, -1);
    await coordinator.addPartitions('tx', p.producerId, 0, [{ topic: 'orders', partition: 0 }], false);
    const committed = await coordinator.endTxn('tx', p.producerId, 0, true, TV2);
    expect(await coordinator.endTxn('tx', p.producerId, 0, true, TV2)).toEqual(committed);
    expect(await coordinator.endTxn('tx', p.producerId, 0, false, TV2)).toEqual({ errorCode: ErrorCode.INVALID_TXN_STATE, producerId: -1n, producerEpoch: -1 });
    // A commit at the new epoch with nothing begun: no transaction to commit.
    expect((await coordinator.endTxn('tx', p.producerId, 1, true, TV2)).errorCode).toBe(ErrorCode.INVALID_TXN_STATE);
    expect(markers.written).toHaveLength(1);

    await coordinator.addPartitions('tx', p.producerId, 1, [{ topic: 'orders', partition: 0 }], false);
    expect((await coordinator.endTxn('tx', p.producerId, 0, true, TV2)).errorCode).toBe(ErrorCode.PRODUCER_FENCED);
    expect(coordinator.describe('tx')!.state).toBe('Ongoing');
  });

  it('an abort with nothing to abort (Empty, or after a commit) still bumps the epoch and writes no marker', async () => {
    const { coordinator, markers } = await setup();
    const p = await coordinator.initProducerId('tx', 60_000, -1n, -1);
    expect(await coordinator.endTxn('tx', p.producerId, 0, false, TV2)).toEqual({ errorCode: ErrorCode.NONE, producerId: p.producerId, producerEpoch: 1 });
    expect((await coordinator.endTxn('tx', p.producerId, 1, true, TV2)).errorCode).toBe(ErrorCode.INVALID_TXN_STATE);
    expect(await coordinator.endTxn('tx', p.producerId, 1, false, TV2)).toEqual({ errorCode: ErrorCode.NONE, producerId: p.producerId, producerEpoch: 2 });
    expect(markers.written).toEqual([]);
  });

  it('a bump that takes the last epoch gives the producer a new id at epoch 0 once the markers (of the old id) are written; a retry with the old id is answered as it was', async () => {
    const clock = new FakeClock();
    const db = new MemoryDatabase(clock);
    await seed(db, {
      transactionalId: 'tx',
      producerId: 5n,
      producerEpoch: 32766,
      lastProducerEpoch: 32765,
      timeoutMs: 60_000,
      state: 'Empty',
      startTime: null,
      partitions: [],
      groups: [],
    });
    const { coordinator, markers, orders } = await setup({ db, clock });
    expect(await coordinator.addPartitions('tx', 5n, 32766, [{ topic: 'orders', partition: 0 }], false)).toEqual([ErrorCode.NONE]);
    const committed = await coordinator.endTxn('tx', 5n, 32766, true, TV2);
    expect(committed).toEqual({ errorCode: ErrorCode.NONE, producerId: 1000n, producerEpoch: 0 });
    expect(markers.written).toEqual([expect.objectContaining({ producerId: 5n, producerEpoch: 32767, commit: true })]);
    expect(await coordinator.endTxn('tx', 5n, 32766, true, TV2)).toEqual(committed);
    expect(coordinator.verifyProduce(5n, 32766, orders.topicId, 0)).toBe(ErrorCode.INVALID_PRODUCER_ID_MAPPING);
    expect(await coordinator.addPartitions('tx', 1000n, 0, [{ topic: 'orders', partition: 0 }], false)).toEqual([ErrorCode.NONE]);
    expect(coordinator.byProducer(1000n)!.transactionalId).toBe('tx');
  });

  it('adding partitions already in the ongoing transaction stores nothing (the implicit add of every transactional Produce)', async () => {
    const { coordinator, store } = await setup();
    const p = await coordinator.initProducerId('tx', 60_000, -1n, -1);
    await coordinator.addPartitions('tx', p.producerId, 0, [{ topic: 'orders', partition: 0 }], false);
    await coordinator.addOffsets('tx', p.producerId, 0, 'g');
    let saves = 0;
    const save = store.save.bind(store);
    store.save = (t, lease) => {
      saves++;
      return save(t, lease);
    };
    expect(await coordinator.addPartitions('tx', p.producerId, 0, [{ topic: 'orders', partition: 0 }], false)).toEqual([ErrorCode.NONE]);
    expect(await coordinator.addOffsets('tx', p.producerId, 0, 'g')).toBe(ErrorCode.NONE);
    expect(saves).toBe(0);
  });
});
