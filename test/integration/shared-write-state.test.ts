// Two brokers on one schema append to the same partition: each broker's
// cached write-side state of the partition (idempotent producers' sequences,
// open transactions and so the last stable offset) must follow the other's
// appends, as announced or as its own append finds the log moved on.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/protocol/errors.js';
import { CreateTopicsApi, InitProducerIdApi, ListOffsetsApi, ProduceApi } from '../../src/protocol/messages/index.js';
import { buildBatch, readBatchHeaderAt } from '../../src/protocol/records/index.js';
import { READ_COMMITTED, READ_UNCOMMITTED } from '../../src/log/log-manager.js';
import { startTestBroker, type TestBroker } from '../support/broker.js';
import { RawClient } from '../support/raw-client.js';

let a: TestBroker;
let b: TestBroker;
let toA: RawClient;
let toB: RawClient;

beforeAll(async () => {
  a = await startTestBroker({ nodeId: 1 });
  b = await startTestBroker({ schema: a.schema, nodeId: 2 });
  toA = await RawClient.connect(a.bootstrap);
  toB = await RawClient.connect(b.bootstrap);
});
afterAll(async () => {
  toA?.close();
  toB?.close();
  await b?.stop();
  await a?.destroy();
});

async function createTopic(name: string) {
  const res = await toA.request(CreateTopicsApi, 7, { topics: [{ name, numPartitions: 1, replicationFactor: 1 }], timeoutMs: 1000 });
  expect(res.topics[0]!.errorCode).toBe(0);
}

async function produce(c: RawClient, topic: string, producerId: bigint, baseSequence: number, value: string) {
  const records = buildBatch({ producerId, producerEpoch: 0, baseSequence, records: [{ key: null, value: Buffer.from(value) }] });
  const res = await c.request(ProduceApi, 9, { acks: -1, timeoutMs: 1000, topicData: [{ name: topic, partitionData: [{ index: 0, records }] }] });
  return res.responses[0]!.partitionResponses[0]!;
}

async function latest(c: RawClient, topic: string, isolationLevel: number): Promise<bigint> {
  const res = await c.request(ListOffsetsApi, 7, { replicaId: -1, isolationLevel, topics: [{ name: topic, partitions: [{ partitionIndex: 0, timestamp: -1n }] }] });
  const p = res.topics[0]!.partitions[0]!;
  expect(p.errorCode).toBe(0);
  return p.offset;
}

/** Waits until broker `c` reports the partition's high watermark at `hw` (it heard the other broker's append). */
async function untilHighWatermark(c: RawClient, topic: string, hw: bigint) {
  for (let i = 0; (await latest(c, topic, READ_UNCOMMITTED)) !== hw; i++) {
    if (i > 100) throw new Error(`high watermark never reached ${hw}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("a partition's write-side state across brokers", () => {
  it("judges an idempotent producer's next batch on the sequences another broker appended", async () => {
    await createTopic('seq-across');
    const { producerId } = await toA.request(InitProducerIdApi, 4, { transactionalId: null, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
    expect((await produce(toA, 'seq-across', producerId, 0, 'zero')).baseOffset).toBe(0n);
    // The producer moves to the other broker (a leader change, say) for one batch, then comes back.
    expect((await produce(toB, 'seq-across', producerId, 1, 'one')).baseOffset).toBe(1n);
    await untilHighWatermark(toA, 'seq-across', 2n);
    const retried = await produce(toA, 'seq-across', producerId, 1, 'one');
    expect(retried).toMatchObject({ errorCode: ErrorCode.NONE, baseOffset: 1n });
    const next = await produce(toA, 'seq-across', producerId, 2, 'two');
    expect(next).toMatchObject({ errorCode: ErrorCode.NONE, baseOffset: 2n });
    expect(await a.query('SELECT 1 FROM batches b JOIN topics t USING (topic_id) WHERE t.name = $1', ['seq-across'])).toHaveLength(3);
  });

  it('holds the last stable offset at a transaction another broker opened', async () => {
    await createTopic('txn-across');
    await produce(toA, 'txn-across', -1n, -1, 'plain');
    const [{ topic_id: topicId }] = await a.query<{ topic_id: string }>("SELECT topic_id FROM topics WHERE name = 'txn-across'");
    // Broker B appends a transactional batch (as a transactional producer's Produce through B would).
    const { producerId } = await toB.request(InitProducerIdApi, 4, { transactionalId: null, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
    const data = buildBatch({ producerId, producerEpoch: 0, baseSequence: 0, isTransactional: true, records: [{ key: null, value: Buffer.from('in txn') }] });
    const onB = (await b.context.logs.partition(topicId, 0))!;
    const appended = await b.context.logs.append(onB, [{ data, header: readBatchHeaderAt(data, 0)! }]);
    expect(appended.baseOffset).toBe(1n);
    expect(await latest(toB, 'txn-across', READ_COMMITTED)).toBe(1n);
    await untilHighWatermark(toA, 'txn-across', 2n);
    expect(await latest(toA, 'txn-across', READ_COMMITTED)).toBe(1n);
    // A plain append through A after it: A's last stable offset still stops at the open transaction.
    await produce(toA, 'txn-across', -1n, -1, 'after');
    expect(await latest(toA, 'txn-across', READ_UNCOMMITTED)).toBe(3n);
    expect(await latest(toA, 'txn-across', READ_COMMITTED)).toBe(1n);
  });

  it('sees a transaction another broker opened when its own append finds the log moved on, before any announcement', async () => {
    await createTopic('txn-unannounced');
    const [{ topic_id: topicId }] = await a.query<{ topic_id: string }>("SELECT topic_id FROM topics WHERE name = 'txn-unannounced'");
    await produce(toA, 'txn-unannounced', -1n, -1, 'plain');
    // B's announcements are not heard by A (as if they were still on the way).
    const onA = (await a.context.logs.partition(topicId, 0))!;
    const heard = a.context.logs.onAppendNotification.bind(a.context.logs);
    a.context.logs.onAppendNotification = (payload: string) => {
      if (!payload.includes(topicId)) heard(payload);
    };
    try {
      const { producerId } = await toB.request(InitProducerIdApi, 4, { transactionalId: null, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
      const data = buildBatch({ producerId, producerEpoch: 0, baseSequence: 0, isTransactional: true, records: [{ key: null, value: Buffer.from('in txn') }] });
      const onB = (await b.context.logs.partition(topicId, 0))!;
      expect((await b.context.logs.append(onB, [{ data, header: readBatchHeaderAt(data, 0)! }])).baseOffset).toBe(1n);
      expect(onA.highWatermark).toBe(1n);
      expect((await produce(toA, 'txn-unannounced', -1n, -1, 'after')).baseOffset).toBe(2n);
      expect(await latest(toA, 'txn-unannounced', READ_UNCOMMITTED)).toBe(3n);
      expect(await latest(toA, 'txn-unannounced', READ_COMMITTED)).toBe(1n);
    } finally {
      a.context.logs.onAppendNotification = heard;
    }
  });
});
