// kcat 1.7.1 (librdkafka 2.0.2, the Debian package): metadata, produce with
// every codec, group-less reads from the beginning, an offset and the end,
// and offsets by timestamp. kcat has no admin API: topics are auto-created.
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { startTestBroker, type TestBroker } from '../test/support/broker.js';
import { runScenarios, type ScenarioFns } from './scenarios.js';
import { kcat, kcatConsume, kcatProduce } from './support/kcat.js';
import { byPartition, dataset, expectRecords, expectStoredCodec, readStored, type Codec, type Header } from './support/records.js';

let broker: TestBroker;
beforeAll(async () => {
  broker = await startTestBroker({ numPartitions: 3, autoCreateTopicsEnable: true });
});
afterAll(async () => {
  await broker?.destroy();
});

// kcat sets headers per run (-H), in text: one header set per partition.
const kcatData = (tag: string) =>
  dataset(tag, {
    headers: (p) =>
      [
        ['client', Buffer.from('kcat')],
        ['part', Buffer.from(`p${p}`)],
      ] as Header[],
  });

async function roundtrip(codec: Codec) {
  const topic = `kcat-${codec}`;
  const recs = kcatData(topic);
  await kcatProduce(broker.bootstrap, topic, recs, { codec });
  const read = await kcatConsume(broker.bootstrap, topic);
  expectRecords(read, recs);
  const stored = await readStored(broker, topic);
  expectRecords(
    stored.flatMap((b) => b.records),
    recs,
  );
  expectStoredCodec(stored, codec);
}

let seekTopic: Promise<ReturnType<typeof kcatData>> | undefined;
/** One topic written once, read by the seek scenarios. */
function seekData() {
  seekTopic ??= (async () => {
    const recs = kcatData('kcat-seek');
    await kcatProduce(broker.bootstrap, 'kcat-seek', recs, { codec: 'lz4' });
    return recs;
  })();
  return seekTopic;
}

const scenarios: ScenarioFns = {
  'admin: list topics and metadata': async () => {
    await kcatProduce(broker.bootstrap, 'kcat-meta', kcatData('kcat-meta').slice(0, 1));
    const text = (await kcat(broker.bootstrap, ['-L', '-t', 'kcat-meta'])).stdout.toString();
    expect(text).toMatch(/1 brokers:\s+broker 1 at 127\.0\.0\.1:\d+/);
    expect(text).toContain('topic "kcat-meta" with 3 partitions:');
    for (const p of [0, 1, 2]) expect(text).toMatch(new RegExp(`partition ${p}, leader 1, replicas: 1, isrs: 1`));

    const json = JSON.parse((await kcat(broker.bootstrap, ['-L', '-J'])).stdout.toString()) as {
      brokers: { id: number; name: string }[];
      controllerid: number;
      topics: { topic: string; error?: string; partitions: { partition: number; leader: number; replicas: { id: number }[]; isrs: { id: number }[] }[] }[];
    };
    expect(json.brokers).toEqual([{ id: 1, name: broker.bootstrap }]);
    expect(json.controllerid).toBe(1);
    const t = json.topics.find((x) => x.topic === 'kcat-meta')!;
    expect(t.error).toBeUndefined();
    expect(t.partitions.map((p) => [p.partition, p.leader, p.replicas, p.isrs])).toEqual([0, 1, 2].map((p) => [p, 1, [{ id: 1 }], [{ id: 1 }]]));
  },

  'offsets: by timestamp': async () => {
    const before = Date.now() - 60_000;
    const recs = kcatData('kcat-ts');
    await kcatProduce(broker.bootstrap, 'kcat-ts', recs);
    const q = async (ts: number) => {
      const out = (await kcat(broker.bootstrap, ['-Q', ...[0, 1, 2].flatMap((p) => ['-t', `kcat-ts:${p}:${ts}`])])).stdout.toString();
      return [...out.matchAll(/kcat-ts \[(\d+)\] offset (-?\d+)/g)].map((m) => [Number(m[1]), Number(m[2])]).sort((a, b) => a[0]! - b[0]!);
    };
    expect(await q(before)).toEqual([
      [0, 0],
      [1, 0],
      [2, 0],
    ]);
    // No record at or after a future timestamp: Kafka answers offset -1.
    expect(await q(Date.now() + 3_600_000)).toEqual([
      [0, -1],
      [1, -1],
      [2, -1],
    ]);
    // -1 is "latest": the end offset of each partition.
    expect(await q(-1)).toEqual([0, 1, 2].map((p) => [p, byPartition(recs).get(p)!.length]));
  },

  'roundtrip: none': () => roundtrip('none'),
  'roundtrip: gzip': () => roundtrip('gzip'),
  'roundtrip: snappy': () => roundtrip('snappy'),
  'roundtrip: lz4': () => roundtrip('lz4'),
  'roundtrip: zstd': () => roundtrip('zstd'),

  'read: from an absolute offset': async () => {
    const recs = await seekData();
    const read = await kcatConsume(broker.bootstrap, 'kcat-seek', { partition: 1, offset: '2' });
    expectRecords(
      read,
      recs.filter((r) => r.partition === 1),
      { from: { 1: 2 } },
    );
    // The JSON envelope agrees (text payloads only: -J cannot carry binary).
    const lines = (await kcat(broker.bootstrap, ['-C', '-t', 'kcat-seek', '-p', '1', '-o', '0', '-c', '1', '-e', '-q', '-J'])).stdout.toString().trim().split('\n');
    const first = JSON.parse(lines[0]!) as { topic: string; partition: number; offset: number; key: string; payload: string; headers: string[] };
    const want = recs.find((r) => r.partition === 1)!;
    expect(first).toMatchObject({ topic: 'kcat-seek', partition: 1, offset: 0, key: want.key!.toString(), payload: want.value!.toString(), headers: ['client', 'kcat', 'part', 'p1'] });
  },

  'read: relative to the end': async () => {
    const recs = await seekData();
    const read = await kcatConsume(broker.bootstrap, 'kcat-seek', { offset: '-2' });
    const n = (p: number) => byPartition(recs).get(p)!.length;
    expectRecords(read, recs, { from: { 0: n(0) - 2, 1: n(1) - 2, 2: n(2) - 2 } });
  },
};

describe('kcat', () => {
  runScenarios('kcat', scenarios);
});
