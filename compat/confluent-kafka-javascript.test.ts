// @confluentinc/kafka-javascript 1.10.1 (librdkafka 2.15.1): the KafkaJS-style
// API for admin and producer (every codec), and the node-rdkafka-style
// KafkaConsumer with assign() for group-less reads (the KafkaJS-style
// consumer only subscribes, which needs a group).
import ck from '@confluentinc/kafka-javascript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../test/support/broker.js';
import { runScenarios, type ScenarioFns } from './scenarios.js';
import { SASL_PASSWORD, SASL_USER, startSaslSslBroker, type SaslSslBroker } from './support/sasl-ssl.js';
import { dataset, expectRecords, expectStoredCodec, readStored, type Codec, type ReadRec, type Rec } from './support/records.js';

const { Kafka, CompressionTypes } = ck.KafkaJS;
type Admin = ReturnType<InstanceType<typeof Kafka>['admin']>;

let broker: TestBroker;
let kafka: InstanceType<typeof Kafka>;
let admin: Admin;
beforeAll(async () => {
  broker = await startTestBroker({ autoCreateTopicsEnable: false });
  kafka = new Kafka({ kafkaJS: { brokers: [broker.bootstrap], clientId: 'compat-ckjs', logLevel: ck.KafkaJS.logLevel.NOTHING } });
  admin = kafka.admin();
  await admin.connect();
});
afterAll(async () => {
  await admin?.disconnect().catch(() => {});
  await broker?.destroy();
});

async function create(topic: string, numPartitions = 3) {
  expect(await admin.createTopics({ topics: [{ topic, numPartitions }] })).toBe(true);
}

// The runtime enum is { None, GZIP, SNAPPY, LZ4, ZSTD } but the bundled types name snappy `Snappy`: use the values.
const COMPRESSION: Record<Codec, string> = { none: CompressionTypes.None, gzip: CompressionTypes.GZIP, snappy: 'snappy', lz4: CompressionTypes.LZ4, zstd: CompressionTypes.ZSTD };

// The KafkaJS-style producer sends a zero-length value as null (FINDINGS.md), so the dataset has no empty value.
const data = (tag: string) => dataset(tag, { emptyValue: false });

async function produce(topic: string, recs: Rec[], codec: Codec) {
  const producer = kafka.producer({ kafkaJS: { acks: -1, compression: COMPRESSION[codec] as never }, 'linger.ms': 20 });
  await producer.connect();
  try {
    const res = await producer.send({
      topic,
      messages: recs.map((r) => ({ partition: r.partition, key: r.key, value: r.value, headers: Object.fromEntries(r.headers) })),
    });
    // Per record, or per partition batch: either way each partition starts at base offset 0.
    for (const p of new Set(recs.map((r) => r.partition))) {
      expect(res.filter((x) => x.partition === p).map((x) => [x.topicName, x.errorCode, x.baseOffset])[0]).toEqual([topic, 0, '0']);
    }
  } finally {
    await producer.disconnect();
  }
}

/** node-rdkafka-style consumer: assign() at explicit offsets, read until every partition reports EOF. */
async function consume(topic: string, partitions: number[], from = 0, conf: Record<string, string> = { 'bootstrap.servers': broker.bootstrap }): Promise<ReadRec[]> {
  const c = new ck.KafkaConsumer({ 'group.id': 'compat-unused', 'enable.auto.commit': false, 'enable.partition.eof': true, 'client.id': 'compat-ckjs', ...conf }, {});
  await new Promise<void>((res, rej) => c.connect({ timeout: 10_000 }, (e) => (e ? rej(e) : res())));
  const out: ReadRec[] = [];
  try {
    const eof = new Set<number>();
    c.on('partition.eof', (e: { partition: number }) => eof.add(e.partition));
    c.assign(partitions.map((partition) => ({ topic, partition, offset: from })));
    for (let round = 0; round < 50 && eof.size < partitions.length; round++) {
      const msgs = await new Promise<ck.Message[]>((res, rej) => c.consume(100, (e, m) => (e ? rej(e) : res(m))));
      for (const m of msgs) {
        out.push({
          partition: m.partition,
          offset: m.offset,
          key: (m.key as Buffer | null | undefined) ?? null,
          value: m.value ?? null,
          headers: (m.headers ?? []).flatMap((h) => Object.entries(h).map(([k, v]) => [k, Buffer.from(v as Buffer)] as [string, Buffer])),
        });
      }
    }
    expect([...eof].sort()).toEqual([...partitions].sort());
  } finally {
    await new Promise<void>((res) => c.disconnect(() => res()));
  }
  return out;
}

async function roundtrip(codec: Codec) {
  const topic = `ckjs-${codec}`;
  await create(topic);
  const recs = data(topic);
  await produce(topic, recs, codec);
  expectRecords(await consume(topic, [0, 1, 2]), recs);
  const stored = await readStored(broker, topic);
  expectRecords(
    stored.flatMap((b) => b.records),
    recs,
  );
  if (codec !== 'none') expectStoredCodec(stored, codec);
}

const scenarios: ScenarioFns = {
  'admin: create topics': async () => {
    await create('ckjs-admin', 4);
    // fetchTopicMetadata here is librdkafka's DescribeTopics (Metadata with topic ids): an array of topics.
    const [md] = await admin.fetchTopicMetadata({ topics: ['ckjs-admin'] });
    expect(md!.partitions).toHaveLength(4);
  },
  'admin: list topics and metadata': async () => {
    await create('ckjs-list');
    expect(await admin.listTopics()).toContain('ckjs-list');
    const [md] = await admin.fetchTopicMetadata({ topics: ['ckjs-list'] });
    expect(md!.name).toBe('ckjs-list');
    expect(md!.partitions.map((p) => [p.partitionId, p.leader, p.replicas, p.isr])).toEqual([0, 1, 2].map((p) => [p, 1, [1], [1]]));
    const [row] = await broker.query<{ topic_id: string }>(`SELECT topic_id::text FROM topics WHERE name = 'ckjs-list'`);
    const id = md!.topicId as unknown as { mostSignificantBits: bigint; leastSignificantBits: bigint };
    const hex = (x: bigint) => BigInt.asUintN(64, x).toString(16).padStart(16, '0');
    expect(hex(id.mostSignificantBits) + hex(id.leastSignificantBits)).toBe(row!.topic_id.replaceAll('-', ''));
  },
  'admin: delete topics': async () => {
    await create('ckjs-del');
    await admin.deleteTopics({ topics: ['ckjs-del'], timeout: 5000 });
    expect(await admin.listTopics()).not.toContain('ckjs-del');
  },
  'offsets: earliest and latest': async () => {
    await create('ckjs-offsets');
    await produce(
      'ckjs-offsets',
      data('ckjs-offsets').filter((r) => r.partition === 0),
      'none',
    );
    const res = await admin.fetchTopicOffsets('ckjs-offsets');
    expect(res.map((x) => [x.partition, x.low, x.high])).toEqual([
      [0, '0', '5'],
      [1, '0', '0'],
      [2, '0', '0'],
    ]);
  },
  'roundtrip: none': () => roundtrip('none'),
  'roundtrip: gzip': () => roundtrip('gzip'),
  'roundtrip: snappy': () => roundtrip('snappy'),
  'roundtrip: lz4': () => roundtrip('lz4'),
  'roundtrip: zstd': () => roundtrip('zstd'),
  'read: from an absolute offset': async () => {
    await create('ckjs-seek');
    const recs = data('ckjs-seek');
    await produce('ckjs-seek', recs, 'zstd');
    expectRecords(
      await consume('ckjs-seek', [2], 1),
      recs.filter((r) => r.partition === 2),
      { from: { 2: 1 } },
    );
  },
};

describe('@confluentinc/kafka-javascript', () => {
  runScenarios('confluent-kafka-javascript', scenarios);
});

describe('@confluentinc/kafka-javascript: SASL over TLS', () => {
  let secure: SaslSslBroker;
  beforeAll(async () => {
    secure = await startSaslSslBroker();
  });
  afterAll(async () => {
    await secure?.destroy();
  });
  // librdkafka's properties: SASL_SSL, the test CA trusted.
  const conf = (mechanism: string, password: string) => ({
    'bootstrap.servers': secure.bootstrap,
    'security.protocol': 'sasl_ssl' as const,
    'ssl.ca.location': secure.pki.caCert,
    'sasl.mechanisms': mechanism,
    'sasl.username': SASL_USER,
    'sasl.password': password,
  });

  for (const mechanism of ['PLAIN', 'SCRAM-SHA-512']) {
    it(`${mechanism} over SASL_SSL: produces and reads back`, async () => {
      const topic = `ckjs-sasl-${mechanism.toLowerCase()}`;
      const producer = new Kafka({ ...conf(mechanism, SASL_PASSWORD), log_level: 0 }).producer({ acks: -1 });
      await producer.connect();
      try {
        const res = await producer.send({
          topic,
          messages: [
            { partition: 0, value: 's1' },
            { partition: 0, value: 's2' },
          ],
        });
        expect(res.map((r) => [r.errorCode, r.baseOffset])).toEqual([[0, '0']]);
      } finally {
        await producer.disconnect();
      }
      const read = await consume(topic, [0], 0, conf(mechanism, SASL_PASSWORD));
      expect(read.map((r) => [r.offset, r.value?.toString()])).toEqual([
        [0, 's1'],
        [1, 's2'],
      ]);
    });
  }

  it('a wrong password is refused: connect() fails with ERR__TRANSPORT, the log says SASL authentication error', async () => {
    // librdkafka raises no error event while connect() waits (its bootstrap connection keeps failing): connect()
    // ends with a local transport failure and the reason is in the client's log (event.log).
    const producer = new ck.Producer({ ...conf('SCRAM-SHA-512', 'wrong'), log_level: 3, event_cb: true });
    const logs: string[] = [];
    producer.on('event.log', (l: { message: string }) => logs.push(l.message));
    const err = await new Promise<unknown>((res) => producer.connect({ timeout: 5000 }, (e) => res(e)));
    // A producer whose connect() failed is already disconnected (disconnect() would throw 'Producer not connected').
    expect(producer.isConnected()).toBe(false);
    expect(err).toMatchObject({ code: ck.CODES.ERRORS.ERR__TRANSPORT });
    expect(logs.some((m) => m.includes('SASL authentication error: Authentication failed') && m.includes('invalid credentials'))).toBe(true);
  });
});
