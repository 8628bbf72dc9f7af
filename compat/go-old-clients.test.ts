// Clients of the versions Kafka 4.0 removed (compat/go-old/, its own Go
// module): Sarama 1.22 (github.com/Shopify/sarama, what Debian ships and
// Burrow 1.2 is built on) with its default config.Version (0.8.2), 0.10.0 and
// 2.1.0, and segmentio/kafka-go 0.2.1. Each runner does every step its client
// has and reports each one; every step must succeed, the produce and fetch
// steps that carry magic 0/1 message sets (Produce v0-2, Fetch v0-3)
// included: FINDINGS.md "Old clients". A TCP recorder also captures
// Sarama 1.22's requests as it sends them (old versions included): each must
// decode with the generated codecs and re-encode to the same bytes.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Reader } from '../src/protocol/codec/reader.js';
import { Writer } from '../src/protocol/codec/writer.js';
import { ErrorCode } from '../src/protocol/errors.js';
import { apiByKey, CreateTopicsApi, ProduceApi, readRequestHeader, requestHeaderVersion, writeRequestHeader } from '../src/protocol/messages/index.js';
import { buildBatch } from '../src/protocol/records/index.js';
import { startTestBroker, type TestBroker } from '../test/support/broker.js';
import { RawClient } from '../test/support/raw-client.js';
import { buildOldGo } from './support/go.js';
import { runOk } from './support/spawn.js';

const RECORDS = 5;
let broker: TestBroker;
let sarama: string;
let kafkaGo: string;

beforeAll(async () => {
  [sarama, kafkaGo] = await Promise.all([buildOldGo('sarama122'), buildOldGo('kafkago02')]);
  broker = await startTestBroker();
}, 300_000); // a cold Go build cache
afterAll(async () => {
  await broker?.destroy();
});

interface StepResult {
  step: string;
  ok: boolean;
  error?: string;
  value?: unknown;
}

/** A topic holding RECORDS records "v0".."v4" at partition 0, produced with Produce v7 (magic 2). */
async function prefill(topic: string): Promise<void> {
  const client = await RawClient.connect(broker.bootstrap);
  try {
    await client.request(CreateTopicsApi, 7, { topics: [{ name: topic, numPartitions: 1, replicationFactor: 1 }], timeoutMs: 1000 });
    const records = buildBatch({
      compression: 0,
      baseTimestamp: BigInt(Date.now()),
      records: Array.from({ length: RECORDS }, (_, i) => ({ offsetDelta: i, timestampDelta: 0n, key: null, value: Buffer.from(`v${i}`), headers: [] })),
    });
    const res = await client.request(ProduceApi, 7, { acks: -1, timeoutMs: 1000, topicData: [{ name: topic, partitionData: [{ index: 0, records }] }] });
    expect(res.responses[0]!.partitionResponses[0]!.errorCode).toBe(ErrorCode.NONE);
  } finally {
    client.close();
  }
}

async function run(bin: string, tag: string, env: NodeJS.ProcessEnv = {}, bootstrap = broker.bootstrap): Promise<Map<string, StepResult>> {
  const prefilled = `${tag}-pre`;
  await prefill(prefilled);
  const r = await runOk(bin, [], { input: JSON.stringify({ bootstrap, tag, prefilled, records: RECORDS }), timeoutMs: 150_000, env });
  const results = (JSON.parse(r.stdout.toString('utf8')) as { results: StepResult[] }).results;
  if (process.env.COMPAT_DEBUG) console.log(JSON.stringify(results, null, 1));
  return new Map(results.map((s) => [s.step, s]));
}

/** Every step but the pending ones succeeded; the pending ones still fail (move them out of PENDING once they pass). */
function expectSteps(results: Map<string, StepResult>, pending: string[]): void {
  if (process.env.COMPAT_DEBUG) console.log([...results.values()]);
  for (const [name, s] of results) {
    if (pending.includes(name)) expect(s.ok, `${name} now passes: take it out of the pending list`).toBe(false);
    else expect([name, s.ok, s.error ?? '']).toEqual([name, true, '']);
  }
}

const values = Array.from({ length: RECORDS }, (_, i) => `v${i}`);

describe('Sarama 1.22', () => {
  it('default version (0.8.2): Metadata v0, ListOffsets v0, FindCoordinator v0, OffsetCommit/OffsetFetch v1', async () => {
    const results = await run(sarama, 'old-sr-default', { SARAMA_VERSION: '' });
    expect([...results.keys()]).toEqual(['metadata', 'list offsets', 'produce', 'fetch', 'commit and fetch offsets']);
    // Produce v0 and Fetch v0 carry magic 0 message sets.
    expectSteps(results, []);
    expect(results.get('produce')!.value).toEqual([0, 1, 2]);
    expect(results.get('fetch')!.value).toEqual(values);
    expect(results.get('list offsets')!.value).toEqual([0, RECORDS]);
    expect(results.get('commit and fetch offsets')!.value).toEqual([2, 'meta']);
  }, 200_000);

  it('V0_10_0_0: Metadata v1, ListOffsets v0, the admin calls Sarama sends at 0.10.0', async () => {
    const results = await run(sarama, 'old-sr-010', { SARAMA_VERSION: '0.10.0.0' });
    expect([...results.keys()]).toEqual(['metadata', 'list offsets', 'produce', 'fetch', 'commit and fetch offsets', 'admin: describe cluster', 'admin: list consumer group offsets']);
    // Produce v2 and Fetch v2 carry magic 1 message sets.
    expectSteps(results, []);
    expect(results.get('produce')!.value).toEqual([0, 1, 2]);
    expect(results.get('fetch')!.value).toEqual(values);
    expect(results.get('list offsets')!.value).toEqual([0, RECORDS]);
    // Sarama sends this Metadata request at v0, which carries no controller id.
    expect(results.get('admin: describe cluster')!.value).toEqual([1, -1]);
    expect(results.get('admin: list consumer group offsets')!.value).toBe(2);
  }, 200_000);

  it('compressed message sets: gzip and snappy wrappers of magic 0 (0.8.2), lz4 of magic 1 (0.10.0), read back', async () => {
    for (const [version, compression] of [
      ['', 'gzip'],
      ['', 'snappy'],
      ['0.10.0.0', 'lz4'],
    ]) {
      const results = await run(sarama, `old-sr-${compression}`, { SARAMA_VERSION: version, SARAMA_COMPRESSION: compression });
      expectSteps(results, []);
      expect(results.get('produce')!.value).toEqual([0, 1, 2]);
      expect(results.get('fetch produced')!.value).toEqual(['p0', 'p1', 'p2']);
    }
  }, 200_000);

  it('V2_1_0_0: produce, fetch, consumer group with commits, admin', async () => {
    const results = await run(sarama, 'old-sr-210', { SARAMA_VERSION: '2.1.0' });
    expectSteps(results, []);
    expect(results.get('produce')!.value).toEqual([0, 1, 2]);
    expect(results.get('fetch')!.value).toEqual(values);
    expect(results.get('admin: list topics')!.value).toEqual([2, '3600000']);
    expect(results.get('admin: describe config')!.value).toEqual({ 'retention.ms': '3600000' });
    // After DeleteRecords up to offset 1, the group reads the other four and commits the end.
    expect(results.get('consumer group: consume and commit')!.value).toEqual([RECORDS - 1, RECORDS]);
    expect(results.get('admin: describe consumer groups')!.value).toEqual(['Empty', 'consumer']);
    expect(results.get('admin: list consumer groups')!.value).toBe('consumer');
  }, 200_000);
});

describe('segmentio/kafka-go 0.2.1', () => {
  it('CreateTopics v0, DeleteTopics v0, ListOffsets v1; produce and fetch are magic 1', async () => {
    const results = await run(kafkaGo, 'old-kg');
    expect([...results.keys()]).toEqual(['create topics', 'delete topics', 'list offsets', 'produce', 'fetch', 'group consume and commit']);
    // Produce v2 and Fetch v2 (the partition and the group reader) carry magic 1 message sets;
    // the group reader commits with OffsetCommit v2.
    expectSteps(results, []);
    expect(results.get('fetch')!.value).toEqual(values);
    expect(results.get('group consume and commit')!.value).toEqual(values);
    expect(results.get('create topics')!.value).toBe(2);
    expect(results.get('list offsets')!.value).toEqual([0, RECORDS]);
  }, 200_000);
});

/**
 * A TCP recorder in front of a broker that advertises the recorder's port, so
 * every connection of the client passes through it: the request frames the
 * client sends, as sent.
 */
async function recorder(): Promise<{ port: number; frames: Buffer[]; forwardTo: (port: number) => void; close: () => void }> {
  const frames: Buffer[] = [];
  let target = 0;
  const sockets: net.Socket[] = [];
  const server = net.createServer((client) => {
    const upstream = net.connect(target, '127.0.0.1');
    sockets.push(client, upstream);
    let pending = Buffer.alloc(0);
    client.on('data', (chunk) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 4 && pending.length >= 4 + pending.readInt32BE(0)) {
        frames.push(Buffer.from(pending.subarray(4, 4 + pending.readInt32BE(0))));
        pending = pending.subarray(4 + pending.readInt32BE(0));
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => client.write(chunk));
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.on('error', () => {});
    upstream.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    frames,
    forwardTo: (port) => (target = port),
    close: () => {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}

describe("Sarama 1.22's requests, as it sends them", () => {
  it('decode with the generated codecs and re-encode to the same bytes, old versions included', async () => {
    const rec = await recorder();
    const recorded = await startTestBroker({ advertisedPort: rec.port });
    rec.forwardTo(recorded.port);
    const saved = broker;
    try {
      broker = recorded;
      await run(sarama, 'old-rec-default', { SARAMA_VERSION: '' }, `127.0.0.1:${rec.port}`);
      await run(sarama, 'old-rec-010', { SARAMA_VERSION: '0.10.0.0' }, `127.0.0.1:${rec.port}`);
    } finally {
      broker = saved;
      rec.close();
      await recorded.destroy();
    }
    const seen = new Set<string>();
    for (const frame of rec.frames) {
      const apiKey = frame.readInt16BE(0);
      const version = frame.readInt16BE(2);
      const codec = apiByKey.get(apiKey)!;
      const where = `${codec.name} v${version}`;
      const hv = requestHeaderVersion(apiKey, version);
      const r = new Reader(frame);
      const header = readRequestHeader(r, hv);
      const body = codec.readRequest(r, version);
      expect(r.error, where).toBeNull();
      expect(r.remaining(), where).toBe(0);
      expect(header.clientId, where).toBe('sarama-1.22');
      const w = new Writer();
      writeRequestHeader(w, hv, header);
      codec.writeRequest(w, version, body);
      expect(w.toBuffer().equals(frame), where).toBe(true);
      seen.add(where);
    }
    // The versions Kafka 4 removed that Sarama 1.22 sends, the magic 0/1 ones included.
    for (const v of ['Metadata v0', 'Metadata v1', 'ListOffsets v0', 'FindCoordinator v0', 'OffsetCommit v1', 'OffsetFetch v1', 'Produce v0', 'Produce v2', 'Fetch v0', 'Fetch v2']) {
      expect(seen, v).toContain(v);
    }
  }, 200_000);
});
