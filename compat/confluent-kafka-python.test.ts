// confluent-kafka-python 1.7.0 (librdkafka 2.0.2, Debian python3-confluent-kafka)
// through compat/python/confluent_client.py: AdminClient, Producer with every
// codec and delivery reports, Consumer with assign() at explicit offsets.
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { startTestBroker, type TestBroker } from '../test/support/broker.js';
import { runScenarios, type ScenarioFns } from './scenarios.js';
import { dataset, expectRecords, expectStoredCodec, fromJson, readStored, toJson, type Codec, type JsonRead, type Rec } from './support/records.js';
import { runPythonJson } from './support/spawn.js';

let broker: TestBroker;
beforeAll(async () => {
  broker = await startTestBroker({ autoCreateTopicsEnable: false });
});
afterAll(async () => {
  await broker?.destroy();
});

const py = <T>(command: string, request: Record<string, unknown>) => runPythonJson<T>('confluent_client.py', command, { bootstrap: broker.bootstrap, ...request });

async function create(name: string, partitions = 3) {
  const res = await py<{ errors: [string, string | null][] }>('create', { topics: [{ name, partitions }] });
  expect(res.errors).toEqual([[name, null]]);
}

async function produce(topic: string, recs: Rec[], codec: Codec) {
  const res = await py<{ delivered: { error: string | null; partition: number; offset: number; key: string }[]; undelivered: number }>('produce', { topic, codec, records: toJson(recs) });
  expect(res.undelivered).toBe(0);
  // Delivery reports: one per record, no error, offsets 0..n-1 per partition in produce order.
  const got = [0, 1, 2].map((p) => res.delivered.filter((d) => d.partition === p).map((d) => [d.error, d.offset, d.key]));
  const want = [0, 1, 2].map((p) => recs.filter((r) => r.partition === p).map((r, i) => [null, i, r.key!.toString('base64')]));
  expect(got).toEqual(want);
}

const consume = (topic: string, partitions: number[], offset?: number) => py<{ records: JsonRead[]; errors: string[]; eof: number[] }>('consume', { topic, partitions, offset: offset ?? null });

async function roundtrip(codec: Codec) {
  const topic = `ckp-${codec}`;
  await create(topic);
  const recs = dataset(topic);
  await produce(topic, recs, codec);
  const res = await consume(topic, [0, 1, 2]);
  expect(res.errors).toEqual([]);
  expect(res.eof).toEqual([0, 1, 2]);
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
    await create('ckp-admin', 4);
    const res = await py<{ partitions: Record<string, unknown[]> }>('list', { describe: ['ckp-admin'] });
    expect(res.partitions['ckp-admin']).toHaveLength(4);
    // A second create of the same name is refused with TOPIC_ALREADY_EXISTS.
    const again = await py<{ errors: [string, string | null][] }>('create', { topics: [{ name: 'ckp-admin', partitions: 4 }] });
    expect(again.errors[0]![1]).toMatch(/TOPIC_ALREADY_EXISTS|already exists/i);
  },
  'admin: list topics and metadata': async () => {
    await create('ckp-list');
    const res = await py<{ topics: string[]; brokers: [number, string, number][]; controller: number; partitions: Record<string, unknown[]> }>('list', { describe: ['ckp-list'] });
    expect(res.topics).toContain('ckp-list');
    expect(res.brokers).toEqual([[1, '127.0.0.1', broker.port]]);
    expect(res.partitions['ckp-list']).toEqual([0, 1, 2].map((p) => [p, 1, [1], [1]]));
  },
  'admin: delete topics': async () => {
    await create('ckp-del');
    const res = await py<{ errors: [string, string | null][] }>('delete', { topics: ['ckp-del'] });
    expect(res.errors).toEqual([['ckp-del', null]]);
    expect((await py<{ topics: string[] }>('list', {})).topics).not.toContain('ckp-del');
  },
  'offsets: earliest and latest': async () => {
    await create('ckp-wm');
    await produce(
      'ckp-wm',
      dataset('ckp-wm').filter((r) => r.partition === 1),
      'none',
    );
    const res = await py<{ watermarks: number[][] }>('offsets', { topic: 'ckp-wm', partitions: [0, 1, 2] });
    expect(res.watermarks).toEqual([
      [0, 0],
      [0, 5],
      [0, 0],
    ]);
  },
  'offsets: by timestamp': async () => {
    await create('ckp-ts');
    const past = Date.now() - 60_000;
    await produce(
      'ckp-ts',
      dataset('ckp-ts').filter((r) => r.partition !== 2),
      'none',
    );
    const future = Date.now() + 3_600_000;
    const res = await py<{ by_timestamp: Record<string, number[]> }>('offsets', { topic: 'ckp-ts', partitions: [0, 1, 2], timestamps: [past, future] });
    // Past: the first record of each partition; an empty partition or a future timestamp: -1 (librdkafka's OFFSET_END).
    expect(res.by_timestamp).toEqual({ [past]: [0, 0, -1], [future]: [-1, -1, -1] });
  },
  'roundtrip: none': () => roundtrip('none'),
  'roundtrip: gzip': () => roundtrip('gzip'),
  'roundtrip: snappy': () => roundtrip('snappy'),
  'roundtrip: lz4': () => roundtrip('lz4'),
  'roundtrip: zstd': () => roundtrip('zstd'),
  'read: from an absolute offset': async () => {
    await create('ckp-seek');
    const recs = dataset('ckp-seek');
    await produce('ckp-seek', recs, 'zstd');
    const res = await consume('ckp-seek', [0, 2], 2);
    expect(res.errors).toEqual([]);
    expectRecords(
      fromJson(res.records),
      recs.filter((r) => r.partition !== 1),
      { from: { 0: 2, 2: 2 } },
    );
  },
};

describe('confluent-kafka-python', () => {
  runScenarios('confluent-kafka-python', scenarios);
});
