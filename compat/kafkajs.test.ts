// kafkajs 2.2.4 (pure JS; ships only gzip): admin API and the producer. Its
// consumer always joins a group, so records are read back without one: byte
// for byte from PostgreSQL with the broker's own record decoder, and through
// the wire with kcat.
import { CompressionTypes, Kafka, logLevel, Partitioners, type Admin, type Producer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { startTestBroker, type TestBroker } from '../test/support/broker.js';
import { runScenarios, type ScenarioFns } from './scenarios.js';
import { kcatConsume } from './support/kcat.js';
import { dataset, expectRecords, expectStoredCodec, readStored, type Codec, type ReadRec, type Rec } from './support/records.js';

let broker: TestBroker;
let kafka: Kafka;
let admin: Admin;
let producer: Producer;
beforeAll(async () => {
  broker = await startTestBroker({ autoCreateTopicsEnable: false });
  kafka = new Kafka({ clientId: 'compat-kafkajs', brokers: [broker.bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 2 } });
  admin = kafka.admin();
  producer = kafka.producer({ allowAutoTopicCreation: false, createPartitioner: Partitioners.DefaultPartitioner });
  await Promise.all([admin.connect(), producer.connect()]);
});
afterAll(async () => {
  await Promise.allSettled([admin?.disconnect(), producer?.disconnect()]);
  await broker?.destroy();
});

async function create(topic: string, numPartitions = 3) {
  expect(await admin.createTopics({ topics: [{ topic, numPartitions }], waitForLeaders: true })).toBe(true);
}

async function produce(topic: string, recs: Rec[], codec: Codec) {
  const compression = codec === 'gzip' ? CompressionTypes.GZIP : CompressionTypes.None;
  const res = await producer.send({
    topic,
    acks: -1,
    compression,
    messages: recs.map((r) => ({ partition: r.partition, key: r.key, value: r.value, headers: Object.fromEntries(r.headers) })),
  });
  // One answer per partition, base offset 0 on a fresh topic.
  const parts = [...new Set(recs.map((r) => r.partition))].sort();
  expect(res.map((x) => [x.topicName, x.partition, x.errorCode, x.baseOffset]).sort()).toEqual(parts.map((p) => [topic, p, 0, '0']));
}

const noHeaders = (recs: ReadRec[]) => recs.map((r) => ({ ...r, headers: [] }));

async function roundtrip(codec: Codec) {
  const topic = `kjs-${codec}`;
  await create(topic);
  const recs = dataset(topic);
  await produce(topic, recs, codec);
  const stored = await readStored(broker, topic);
  expectRecords(
    stored.flatMap((b) => b.records),
    recs,
  );
  if (codec !== 'none') expectStoredCodec(stored, codec);
  // Through Fetch as well (kcat prints headers as text, so compare keys, values and offsets there).
  expectRecords(
    noHeaders(await kcatConsume(broker.bootstrap, topic)),
    recs.map((r) => ({ ...r, headers: [] })),
  );
}

const scenarios: ScenarioFns = {
  'admin: create topics': async () => {
    await create('kjs-admin', 4);
    // An existing topic: createTopics answers false (kafkajs swallows TOPIC_ALREADY_EXISTS).
    expect(await admin.createTopics({ topics: [{ topic: 'kjs-admin', numPartitions: 4 }] })).toBe(false);
  },
  'admin: list topics and metadata': async () => {
    await create('kjs-list');
    expect(await admin.listTopics()).toContain('kjs-list');
    const md = await admin.fetchTopicMetadata({ topics: ['kjs-list'] });
    expect(md.topics).toEqual([{ name: 'kjs-list', partitions: [0, 1, 2].map((p) => ({ partitionErrorCode: 0, partitionId: p, leader: 1, replicas: [1], isr: [1], offlineReplicas: [] })) }]);
    const cluster = await admin.describeCluster();
    expect(cluster.brokers).toEqual([{ nodeId: 1, host: '127.0.0.1', port: broker.port }]);
    expect(cluster.controller).toBe(1);
  },
  'admin: delete topics': async () => {
    await create('kjs-del');
    await admin.deleteTopics({ topics: ['kjs-del'], timeout: 5000 });
    expect(await admin.listTopics()).not.toContain('kjs-del');
  },
  'offsets: earliest and latest': async () => {
    await create('kjs-offsets');
    await produce(
      'kjs-offsets',
      dataset('kjs-offsets').filter((r) => r.partition !== 1),
      'none',
    );
    expect(await admin.fetchTopicOffsets('kjs-offsets')).toEqual([
      { partition: 0, offset: '5', high: '5', low: '0' },
      { partition: 1, offset: '0', high: '0', low: '0' },
      { partition: 2, offset: '5', high: '5', low: '0' },
    ]);
  },
  'offsets: by timestamp': async () => {
    await create('kjs-ts');
    const past = Date.now() - 60_000;
    await produce(
      'kjs-ts',
      dataset('kjs-ts').filter((r) => r.partition !== 1),
      'none',
    );
    // A past timestamp: the first offset. kafkajs replaces "no such offset" (-1: empty partition, future timestamp) with the high watermark.
    expect(await admin.fetchTopicOffsetsByTimestamp('kjs-ts', past)).toEqual([
      { partition: 0, offset: '0' },
      { partition: 1, offset: '0' },
      { partition: 2, offset: '0' },
    ]);
    expect(await admin.fetchTopicOffsetsByTimestamp('kjs-ts', Date.now() + 3_600_000)).toEqual([
      { partition: 0, offset: '5' },
      { partition: 1, offset: '0' },
      { partition: 2, offset: '5' },
    ]);
  },
  'roundtrip: none': () => roundtrip('none'),
  'roundtrip: gzip': () => roundtrip('gzip'),
};

describe('kafkajs', () => {
  runScenarios('kafkajs', scenarios);
});
