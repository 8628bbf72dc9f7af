// kafka-python 2.0.2 (pure Python, Debian python3-kafka) through
// compat/python/kafka_python_client.py: KafkaAdminClient, KafkaProducer
// (acks=all, gzip/snappy/lz4), and KafkaConsumer WITHOUT group_id (assign +
// seek), which needs no consumer-group API.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../test/support/broker.js';
import { runScenarios, type ScenarioFns } from './scenarios.js';
import { kcatProduce } from './support/kcat.js';
import { dataset, expectRecords, expectStoredCodec, fromJson, readStored, toJson, type Codec, type JsonRead, type Rec } from './support/records.js';
import { runPythonJson } from './support/spawn.js';

let broker: TestBroker;
beforeAll(async () => {
  broker = await startTestBroker({ autoCreateTopicsEnable: false });
});
afterAll(async () => {
  await broker?.destroy();
});

const py = <T>(command: string, request: Record<string, unknown>) => runPythonJson<T>('kafka_python_client.py', command, { bootstrap: broker.bootstrap, ...request });

async function create(name: string, partitions = 3, configs: Record<string, string> = {}) {
  const res = await py<{ errors: [string, number][] }>('create', { topics: [{ name, partitions, configs }] });
  expect(res.errors).toEqual([[name, 0]]);
}

// kafka-python refuses to send a record whose key and value are both null; every record here has a key.
const data = (tag: string) => dataset(tag);

async function produce(topic: string, recs: Rec[], codec: Codec) {
  const res = await py<{ delivered: { partition: number; offset: number }[] }>('produce', { topic, codec, records: toJson(recs) });
  // Each record's future reports its own offset: 0..n-1 per partition.
  const seen = new Map<number, number>();
  const want = recs.map((r) => {
    const o = seen.get(r.partition) ?? 0;
    seen.set(r.partition, o + 1);
    return { partition: r.partition, offset: o };
  });
  expect(res.delivered).toEqual(want);
}

const consume = (topic: string, partitions: number[], offset?: number) =>
  py<{ records: JsonRead[]; error: string | null; warnings: string[] }>('consume', { topic, partitions, offset: offset ?? null });

async function roundtrip(codec: Codec) {
  const topic = `kp-${codec}`;
  await create(topic);
  const recs = data(topic);
  await produce(topic, recs, codec);
  const res = await consume(topic, [0, 1, 2]);
  expect(res.error).toBeNull();
  expectRecords(fromJson(res.records), recs);
  const stored = await readStored(broker, topic);
  expectRecords(
    stored.flatMap((b) => b.records),
    recs,
  );
  if (codec !== 'none') expectStoredCodec(stored, codec);
}

const scenarios: ScenarioFns = {
  'admin: create topics': async () => {
    await create('kp-admin-a', 2);
    await create('kp-admin-b', 5);
    const res = await py<{ topics: string[]; partitions: Record<string, number[]> }>('list', { describe: ['kp-admin-a', 'kp-admin-b'] });
    expect(res.partitions).toEqual({ 'kp-admin-a': [0, 1], 'kp-admin-b': [0, 1, 2, 3, 4] });
  },
  'admin: list topics and metadata': async () => {
    await create('kp-list');
    const res = await py<{ topics: string[]; partitions: Record<string, number[]> }>('list', { describe: ['kp-list'] });
    expect(res.topics).toContain('kp-list');
    expect(res.partitions).toEqual({ 'kp-list': [0, 1, 2] });
  },
  'admin: delete topics': async () => {
    await create('kp-del');
    const res = await py<{ errors: [string, number][] }>('delete', { topics: ['kp-del'] });
    expect(res.errors).toEqual([['kp-del', 0]]);
    const list = await py<{ topics: string[] }>('list', {});
    expect(list.topics).not.toContain('kp-del');
  },
  'offsets: earliest and latest': async () => {
    await create('kp-offsets');
    const recs = data('kp-offsets').filter((r) => r.partition !== 2);
    await produce('kp-offsets', recs, 'none');
    const res = await py<{ earliest: number[]; latest: number[] }>('offsets', { topic: 'kp-offsets', partitions: [0, 1, 2] });
    expect(res).toEqual({ earliest: [0, 0, 0], latest: [5, 5, 0] });
  },
  'roundtrip: none': () => roundtrip('none'),
  'roundtrip: gzip': () => roundtrip('gzip'),
  'roundtrip: snappy': () => roundtrip('snappy'),
  'roundtrip: lz4': () => roundtrip('lz4'),
  'read: from an absolute offset': async () => {
    await create('kp-seek');
    const recs = data('kp-seek');
    await produce('kp-seek', recs, 'gzip');
    const res = await consume('kp-seek', [1], 3);
    expect(res.error).toBeNull();
    expectRecords(
      fromJson(res.records),
      recs.filter((r) => r.partition === 1),
      { from: { 1: 3 } },
    );
  },
  'read: zstd below Fetch v10 is refused': async () => {
    // kafka-python 2.0.2 fetches with v4. Below Fetch v10 Kafka answers UNSUPPORTED_COMPRESSION_TYPE (76) for a
    // topic whose compression.type is zstd (KIP-110); kafka-python does not know code 76, maps it to UnknownError,
    // logs and returns nothing.
    await create('kp-zstd', 1, { 'compression.type': 'zstd' });
    const recs = dataset('kp-zstd', { partitions: 1, perPartition: 1, headers: () => [] });
    await kcatProduce(broker.bootstrap, 'kp-zstd', recs, { codec: 'zstd' });
    expectStoredCodec(await readStored(broker, 'kp-zstd'), 'zstd');
    const res = await consume('kp-zstd', [0]);
    expect(res.records).toEqual([]);
    expect(res.warnings.join('\n')).toContain("Unknown error fetching data for topic-partition TopicPartition(topic='kp-zstd', partition=0)");
  },
};

describe('kafka-python', () => {
  runScenarios('kafka-python', scenarios);
});

// api_version (0, 9) and (0, 10): Produce v1 / v2 and Fetch v1 / v2 with magic 0 / 1 message sets.
// lz4 at 0.9 needs the xxhash module (magic 0's lz4 frame checksum), which Debian's python3-kafka lacks.
describe('kafka-python as a Kafka 0.9 and 0.10 client', () => {
  for (const [api, codecs] of [
    [
      [0, 9],
      ['none', 'gzip', 'snappy'],
    ],
    [
      [0, 10],
      ['none', 'gzip', 'snappy', 'lz4'],
    ],
  ] as const) {
    it(`api_version ${api.join('.')}: produces and reads back ${codecs.join(', ')}`, async () => {
      for (const codec of codecs) {
        const topic = `kp-old-${api.join('')}-${codec}`;
        await create(topic);
        const recs = dataset(topic, { headers: () => [] });
        const res = await py<{ delivered: { partition: number; offset: number }[] }>('produce', { topic, codec, records: toJson(recs), api_version: api });
        expect(res.delivered).toHaveLength(recs.length);
        const read = await py<{ records: JsonRead[]; error: string | null; api_version: number[] }>('consume', { topic, partitions: [0, 1, 2], offset: null, api_version: api });
        expect([read.error, read.api_version]).toEqual([null, api]);
        expectRecords(fromJson(read.records), recs);
        if (codec !== 'none') expectStoredCodec(await readStored(broker, topic), codec);
      }
    }, 120_000);
  }
});
