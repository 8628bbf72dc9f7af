// Transactions version 2's implicit adds between brokers, on in-memory
// storage: a partition leader (node 1) reaches the transaction's coordinator
// (node 2) through NOTIFY-like messages every broker hears, and the
// coordinator's own checks decide; large adds are split to fit PostgreSQL's
// NOTIFY payload; an answer that never comes is NETWORK_EXCEPTION.
import { describe, expect, it } from 'vitest';
import { COORDINATOR_SLOTS } from '../../src/coordinator/coordination.js';
import { TransactionCoordinator } from '../../src/coordinator/transaction-coordinator.js';
import { TxnAddRequests } from '../../src/coordinator/txn-add-requests.js';
import { TopicManager } from '../../src/log/topic-manager.js';
import { createLogger } from '../../src/observability/logger.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { MemoryDatabase, MemoryProducerIds, MemoryTopicStore, MemoryTransactionStore } from '../../src/storage/memory/index.js';
import { FakeClock } from '../support/fake-clock.js';
import { RecordingMarkers } from '../support/txn-markers.js';

const TIMEOUT_MS = 5000;
const log = createLogger('silent');
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Three brokers on one "channel": node 2 coordinates every transactional id; `deliver` false drops every message (a lost LISTEN connection). */
async function setup() {
  const clock = new FakeClock();
  const db = new MemoryDatabase(clock);
  const topics = new TopicManager(new MemoryTopicStore(db), { numPartitions: 1, autoCreateTopicsEnable: false }, { generation: 0, synonyms: () => [] });
  const coordinator = new TransactionCoordinator({
    store: new MemoryTransactionStore(db),
    producerIds: new MemoryProducerIds(db),
    markers: new RecordingMarkers(),
    topics,
    log,
    clock,
    instanceId: 'a',
  });
  // Every slot's lease, as Coordination hands them over: slot → lease epoch.
  await coordinator.acquire(new Map(Array.from({ length: COORDINATOR_SLOTS }, (_, slot) => [slot, db.leaseSlot(slot, 'a', Infinity).epoch])));
  const sent: string[] = [];
  const bus = { deliver: true };
  const brokers: TxnAddRequests[] = [];
  const notifier = {
    send: (payload: string) => {
      if (Buffer.byteLength(payload) >= 8000) return Promise.reject(new Error('payload string too long'));
      sent.push(payload);
      if (bus.deliver) setImmediate(() => brokers.forEach((b) => b.onNotification(payload)));
      return Promise.resolve();
    },
  };
  // Nodes 1 and 3 coordinate nothing: a request that reached them would be answered NOT_COORDINATOR.
  const idle = {
    addPartitions: (_id: string, _pid: bigint, _epoch: number, partitions: unknown[]) => Promise.resolve(partitions.map(() => ErrorCode.NOT_COORDINATOR)),
    addOffsets: () => Promise.resolve(ErrorCode.NOT_COORDINATOR as number),
  };
  const broker = (nodeId: number) =>
    new TxnAddRequests({ notifier, transactions: nodeId === 2 ? coordinator : idle, coordinatorOf: () => 2, nodeId, instanceId: `instance-${nodeId}`, log, clock, timeoutMs: TIMEOUT_MS });
  brokers.push(broker(1), broker(2), broker(3));
  const init = async (transactionalId: string) => {
    const r = await coordinator.initProducerId(transactionalId, 60_000, -1n, -1);
    return { producerId: r.producerId, producerEpoch: r.producerEpoch };
  };
  return { clock, topics, coordinator, leader: brokers[0]!, sent, bus, init };
}

describe('TxnAddRequests', () => {
  it("adds a leader's partitions and a group at the coordinator on another broker, which alone answers; its checks fence an older epoch", async () => {
    const { topics, coordinator, leader, sent, init } = await setup();
    await topics.create({ name: 'orders', numPartitions: 3, replicationFactor: 1, configs: {}, validateOnly: false });
    const p = await init('tx');
    const added = leader.addPartitions('tx', p.producerId, p.producerEpoch, [
      { topic: 'orders', partition: 2 },
      { topic: 'orders', partition: 0 },
    ]);
    expect(await added).toEqual([ErrorCode.NONE, ErrorCode.NONE]);
    expect(await leader.addOffsets('tx', p.producerId, p.producerEpoch, 'group-a')).toBe(ErrorCode.NONE);
    const txn = coordinator.describe('tx')!;
    expect(txn.state).toBe('Ongoing');
    expect([...txn.partitions.values()].map((t) => t.partition).sort()).toEqual([0, 2]);
    expect([...txn.groups]).toEqual(['group-a']);
    // One request and one answer each: nodes 1 and 3 did not answer a request not addressed to them.
    expect(sent.map((s) => (JSON.parse(s) as { kind: string }).kind)).toEqual(['add', 'answer', 'add', 'answer']);

    expect(await leader.addPartitions('tx', p.producerId, p.producerEpoch - 1, [{ topic: 'orders', partition: 1 }])).toEqual([ErrorCode.PRODUCER_FENCED]);
    expect(await leader.addPartitions('tx', p.producerId + 1n, p.producerEpoch, [{ topic: 'orders', partition: 1 }])).toEqual([ErrorCode.INVALID_PRODUCER_ID_MAPPING]);
    expect(await leader.addPartitions('tx', p.producerId, p.producerEpoch, [{ topic: 'missing', partition: 0 }])).toEqual([ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]);
    expect(coordinator.describe('tx')!.partitions.size).toBe(2);
  });

  it("splits an add too large for one NOTIFY, and gives the errors back in the request's order", async () => {
    const { topics, coordinator, leader, sent, init } = await setup();
    const names = ['a', 'b'].map((c) => c.repeat(240));
    for (const name of names) await topics.create({ name, numPartitions: 1000, replicationFactor: 1, configs: {}, validateOnly: false });
    const p = await init('big');
    const partitions = Array.from({ length: 2000 }, (_, i) => ({ topic: names[i % 2]!, partition: Math.floor(i / 2) }));
    const errors = await leader.addPartitions('big', p.producerId, p.producerEpoch, partitions);
    expect(errors).toEqual(partitions.map(() => ErrorCode.NONE));
    expect(sent.filter((s) => s.includes('"kind":"add"')).length).toBeGreaterThan(1);
    expect(coordinator.describe('big')!.partitions.size).toBe(2000);
    // A request's errors follow its partitions: a fenced epoch's answer lands at each one's position.
    const fenced = await leader.addPartitions('big', p.producerId, p.producerEpoch - 1, partitions.slice(0, 1700));
    expect(fenced).toEqual(partitions.slice(0, 1700).map(() => ErrorCode.PRODUCER_FENCED));
  });

  it('answers NETWORK_EXCEPTION when the coordinator does not answer in time, or at once when LISTEN was lost', async () => {
    const { clock, topics, coordinator, leader, bus, init } = await setup();
    await topics.create({ name: 'orders', numPartitions: 1, replicationFactor: 1, configs: {}, validateOnly: false });
    const p = await init('lost');
    bus.deliver = false;
    const timedOut = leader.addPartitions('lost', p.producerId, p.producerEpoch, [{ topic: 'orders', partition: 0 }]);
    await settle();
    clock.advance(TIMEOUT_MS);
    expect(await timedOut).toEqual([ErrorCode.NETWORK_EXCEPTION]);
    const cut = leader.addOffsets('lost', p.producerId, p.producerEpoch, 'g');
    await settle();
    leader.failPending();
    expect(await cut).toBe(ErrorCode.NETWORK_EXCEPTION);
    expect(coordinator.describe('lost')!.state).toBe('Empty');
  });
});
