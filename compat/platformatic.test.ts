// @platformatic/kafka 1.35 (pure TypeScript; requires ApiVersions v3): Admin,
// Producer (gzip/snappy/lz4; its zstd needs node:zlib zstd, absent from
// Node.js 20), and Consumer.fetch(), a raw Fetch by topic id that needs no
// group (Consumer.consume() joins a group).
import { Admin, Consumer, Producer, ProduceAcks } from '@platformatic/kafka';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { startTestBroker, type TestBroker } from '../test/support/broker.js';
import { runScenarios, type ScenarioFns } from './scenarios.js';
import { dataset, expectRecords, expectStoredCodec, readStored, type Codec, type ReadRec, type Rec } from './support/records.js';

let broker: TestBroker;
let admin: Admin;
let consumer: Consumer;
beforeAll(async () => {
  broker = await startTestBroker({ autoCreateTopicsEnable: false });
  const bootstrapBrokers = [broker.bootstrap];
  admin = new Admin({ clientId: 'compat-platformatic', bootstrapBrokers, retries: 2 });
  // groupId is mandatory in the constructor; fetch() never uses it.
  consumer = new Consumer({ clientId: 'compat-platformatic', bootstrapBrokers, groupId: 'compat-unused', retries: 2 });
});
afterAll(async () => {
  await Promise.allSettled([admin?.close(), consumer?.close()]);
  await broker?.destroy();
});

async function create(topic: string, partitions = 3) {
  const res = await admin.createTopics({ topics: [topic], partitions, replicas: 1 });
  expect(res).toEqual([expect.objectContaining({ name: topic, partitions, replicas: 1 })]);
  return res[0]!.id;
}

async function produce(topic: string, recs: Rec[], codec: Codec) {
  const producer = new Producer({ clientId: 'compat-platformatic', bootstrapBrokers: [broker.bootstrap], acks: ProduceAcks.ALL, compression: codec, retries: 2 });
  try {
    const res = await producer.send({
      messages: recs.map((r) => ({ topic, partition: r.partition, key: r.key!, value: r.value!, headers: new Map(r.headers.map(([k, v]) => [Buffer.from(k), v])) })),
    });
    // One base offset per partition written: 0 on a fresh topic.
    const parts = [...new Set(recs.map((r) => r.partition))].sort();
    expect(res.offsets!.map((o) => [o.topic, o.partition, o.offset]).sort()).toEqual(parts.map((p) => [topic, p, 0n]));
  } finally {
    await producer.close();
  }
}

/** Fetch (by topic id, no group) until each partition's high watermark is reached. */
async function fetchAll(topic: string, topicId: string, partitions: number[], from = 0): Promise<ReadRec[]> {
  const out: ReadRec[] = [];
  const next = new Map(partitions.map((p) => [p, BigInt(from)]));
  for (let round = 0; round < 20 && next.size > 0; round++) {
    const res = await consumer.fetch({
      node: 1,
      topics: [{ topicId, partitions: [...next].map(([partition, fetchOffset]) => ({ partition, fetchOffset, currentLeaderEpoch: -1, lastFetchedEpoch: -1, partitionMaxBytes: 1 << 20 })) }],
      maxWaitTime: 100,
    });
    for (const pr of res.responses[0]!.partitions) {
      expect(pr.errorCode).toBe(0);
      let pos = next.get(pr.partitionIndex)!;
      for (const batch of pr.records ?? []) {
        for (const r of batch.records) {
          const offset = batch.firstOffset + BigInt(r.offsetDelta);
          if (offset < pos) continue; // a fetch from mid-batch returns the whole batch
          out.push({ partition: pr.partitionIndex, offset: Number(offset), key: r.key, value: r.value, headers: r.headers.map(([k, v]) => [k!.toString(), v]) });
          pos = offset + 1n;
        }
      }
      if (pos >= pr.highWatermark) next.delete(pr.partitionIndex);
      else next.set(pr.partitionIndex, pos);
    }
  }
  expect(next.size).toBe(0);
  return out;
}

async function roundtrip(codec: Codec) {
  const topic = `pl-${codec}`;
  const id = await create(topic);
  const recs = dataset(topic);
  await produce(topic, recs, codec);
  expectRecords(await fetchAll(topic, id, [0, 1, 2]), recs);
  const stored = await readStored(broker, topic);
  expectRecords(
    stored.flatMap((b) => b.records),
    recs,
  );
  if (codec !== 'none') expectStoredCodec(stored, codec);
}

const scenarios: ScenarioFns = {
  'admin: create topics': async () => {
    const id = await create('pl-admin', 4);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  },
  'admin: list topics and metadata': async () => {
    const id = await create('pl-list');
    expect(await admin.listTopics()).toContain('pl-list');
    const md = await admin.metadata({ topics: ['pl-list'] });
    expect([...md.brokers.entries()].map(([n, b]) => [n, b.host, b.port])).toEqual([[1, '127.0.0.1', broker.port]]);
    const t = md.topics.get('pl-list')!;
    expect(t.id).toBe(id);
    expect(t.partitionsCount).toBe(3);
    expect(t.partitions.map((p) => [p.leader, p.replicas, p.isr])).toEqual([0, 1, 2].map(() => [1, [1], [1]]));
  },
  'admin: delete topics': async () => {
    await create('pl-del');
    await admin.deleteTopics({ topics: ['pl-del'] });
    expect(await admin.listTopics()).not.toContain('pl-del');
  },
  'offsets: earliest and latest': async () => {
    await create('pl-offsets');
    await produce(
      'pl-offsets',
      dataset('pl-offsets').filter((r) => r.partition === 2),
      'none',
    );
    const latest = await consumer.listOffsets({ topics: ['pl-offsets'] });
    expect(latest.get('pl-offsets')).toEqual([0n, 0n, 5n]);
    const earliest = await consumer.listOffsets({ topics: ['pl-offsets'], timestamp: -2n });
    expect(earliest.get('pl-offsets')).toEqual([0n, 0n, 0n]);
  },
  'roundtrip: none': () => roundtrip('none'),
  'roundtrip: gzip': () => roundtrip('gzip'),
  'roundtrip: snappy': () => roundtrip('snappy'),
  'roundtrip: lz4': () => roundtrip('lz4'),
  'roundtrip: zstd': () => roundtrip('zstd'),
  'read: from an absolute offset': async () => {
    const id = await create('pl-seek');
    const recs = dataset('pl-seek');
    await produce('pl-seek', recs, 'gzip');
    expectRecords(
      await fetchAll('pl-seek', id, [1], 3),
      recs.filter((r) => r.partition === 1),
      { from: { 1: 3 } },
    );
  },
};

describe('@platformatic/kafka', () => {
  runScenarios('platformatic', scenarios);
});
