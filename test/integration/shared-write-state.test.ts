// Two brokers on one schema append to the same partition: its leader, for
// clients, and the other one where it appends for itself (transaction
// markers written by the coordinator, the SQL outbox relay). The leader's
// cached write-side state of the partition (idempotent producers'
// sequences, open transactions and so the last stable offset) must follow
// the other's appends, as announced or as its own append finds the log
// moved on.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/protocol/errors.js';
import { CreateTopicsApi, InitProducerIdApi, ListOffsetsApi, ProduceApi } from '../../src/protocol/messages/index.js';
import { buildBatch, readBatchHeaderAt } from '../../src/protocol/records/index.js';
import { READ_COMMITTED, READ_UNCOMMITTED } from '../../src/log/log-manager.js';
import { startTestBroker, type TestBroker } from '../support/broker.js';
import { leadersOf, until } from '../support/cluster.js';
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

/** The broker leading the topic's one partition, a client of it, and the other broker. */
async function roles(topic: string): Promise<{ leader: TestBroker; toLeader: RawClient; other: TestBroker; topicId: string }> {
  let leaderId = -1;
  await until(`${topic} has a leader`, async () => (leaderId = (await leadersOf(a.bootstrap, topic))[0]!.leader) >= 0);
  const [{ topic_id: topicId }] = await a.query<{ topic_id: string }>('SELECT topic_id FROM topics WHERE name = $1', [topic]);
  return leaderId === 1 ? { leader: a, toLeader: toA, other: b, topicId } : { leader: b, toLeader: toB, other: a, topicId };
}

/** Appends a batch through the broker's own log (as its transaction coordinator or outbox relay does, leader or not). */
async function appendThrough(broker: TestBroker, topicId: string, data: Buffer) {
  const p = (await broker.context.logs.partition(topicId, 0))!;
  return broker.context.logs.append(p, [{ data, header: readBatchHeaderAt(data, 0)! }]);
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
    const { leader, toLeader, other, topicId } = await roles('seq-across');
    const { producerId } = await toA.request(InitProducerIdApi, 4, { transactionalId: null, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
    expect((await produce(toLeader, 'seq-across', producerId, 0, 'zero')).baseOffset).toBe(0n);
    // The producer's next batch is appended by the other broker (as one that led the partition a moment ago would have).
    const one = buildBatch({ producerId, producerEpoch: 0, baseSequence: 1, records: [{ key: null, value: Buffer.from('one') }] });
    expect((await appendThrough(other, topicId, one)).baseOffset).toBe(1n);
    await untilHighWatermark(toLeader, 'seq-across', 2n);
    const retried = await produce(toLeader, 'seq-across', producerId, 1, 'one');
    expect(retried).toMatchObject({ errorCode: ErrorCode.NONE, baseOffset: 1n });
    const next = await produce(toLeader, 'seq-across', producerId, 2, 'two');
    expect(next).toMatchObject({ errorCode: ErrorCode.NONE, baseOffset: 2n });
    expect(await leader.query('SELECT 1 FROM batches b JOIN topics t USING (topic_id) WHERE t.name = $1', ['seq-across'])).toHaveLength(3);
  });

  it('holds the last stable offset at a transaction another broker opened', async () => {
    await createTopic('txn-across');
    const { toLeader, other, topicId } = await roles('txn-across');
    await produce(toLeader, 'txn-across', -1n, -1, 'plain');
    // The other broker appends a transactional batch.
    const { producerId } = await toA.request(InitProducerIdApi, 4, { transactionalId: null, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
    const data = buildBatch({ producerId, producerEpoch: 0, baseSequence: 0, isTransactional: true, records: [{ key: null, value: Buffer.from('in txn') }] });
    const appended = await appendThrough(other, topicId, data);
    expect(appended.baseOffset).toBe(1n);
    expect((await other.context.logs.partition(topicId, 0))!.lastStableOffset).toBe(1n);
    await untilHighWatermark(toLeader, 'txn-across', 2n);
    expect(await latest(toLeader, 'txn-across', READ_COMMITTED)).toBe(1n);
    // A plain append through the leader after it: its last stable offset still stops at the open transaction.
    await produce(toLeader, 'txn-across', -1n, -1, 'after');
    expect(await latest(toLeader, 'txn-across', READ_UNCOMMITTED)).toBe(3n);
    expect(await latest(toLeader, 'txn-across', READ_COMMITTED)).toBe(1n);
  });

  it('sees a transaction another broker opened when its own append finds the log moved on, before any announcement', async () => {
    await createTopic('txn-unannounced');
    const { leader, toLeader, other, topicId } = await roles('txn-unannounced');
    await produce(toLeader, 'txn-unannounced', -1n, -1, 'plain');
    // The other broker's announcements are not heard by the leader (as if they were still on the way).
    const onLeader = (await leader.context.logs.partition(topicId, 0))!;
    const heard = leader.context.logs.onAppendNotification.bind(leader.context.logs);
    leader.context.logs.onAppendNotification = (payload: string) => {
      if (!payload.includes(topicId)) heard(payload);
    };
    try {
      const { producerId } = await toA.request(InitProducerIdApi, 4, { transactionalId: null, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
      const data = buildBatch({ producerId, producerEpoch: 0, baseSequence: 0, isTransactional: true, records: [{ key: null, value: Buffer.from('in txn') }] });
      expect((await appendThrough(other, topicId, data)).baseOffset).toBe(1n);
      expect(onLeader.highWatermark).toBe(1n);
      expect((await produce(toLeader, 'txn-unannounced', -1n, -1, 'after')).baseOffset).toBe(2n);
      expect(await latest(toLeader, 'txn-unannounced', READ_UNCOMMITTED)).toBe(3n);
      expect(await latest(toLeader, 'txn-unannounced', READ_COMMITTED)).toBe(1n);
    } finally {
      leader.context.logs.onAppendNotification = heard;
    }
  });
});
