// Topic configs that act on produced batches: max.message.bytes,
// message.timestamp.type=LogAppendTime, message.timestamp.before/after.max.ms,
// compression.type, and keys on compacted topics.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/protocol/errors.js';
import { CreateTopicsApi, FetchApi, ProduceApi } from '../../src/protocol/messages/index.js';
import { buildBatch, decodeRecords, parseBatches, type Compression } from '../../src/protocol/records/index.js';
import { startTestBroker, type TestBroker } from '../support/broker.js';
import { RawClient } from '../support/raw-client.js';

let broker: TestBroker;
let client: RawClient;

beforeAll(async () => {
  broker = await startTestBroker();
  client = await RawClient.connect(broker.bootstrap);
});
afterAll(async () => {
  client?.close();
  await broker?.destroy();
});

async function createTopic(name: string, configs: Record<string, string>) {
  const res = await client.request(CreateTopicsApi, 7, { topics: [{ name, numPartitions: 1, replicationFactor: 1, configs: Object.entries(configs).map(([n, value]) => ({ name: n, value })) }] });
  expect(res.topics[0]!.errorCode).toBe(0);
}

async function produce(topic: string, opts: { compression?: Compression; baseTimestamp?: bigint; key?: Buffer | null; value?: Buffer } = {}) {
  const records = buildBatch({
    compression: opts.compression ?? 0,
    baseTimestamp: opts.baseTimestamp ?? BigInt(Date.now()),
    records: [{ key: opts.key === undefined ? Buffer.from('k') : opts.key, value: opts.value ?? Buffer.from('value-'.repeat(20)), headers: [{ key: 'h', value: Buffer.from('1') }] }],
  });
  const res = await client.request(ProduceApi, 9, { acks: -1, timeoutMs: 1000, topicData: [{ name: topic, partitionData: [{ index: 0, records }] }] });
  return res.responses[0]!.partitionResponses[0]!;
}

async function stored(topic: string) {
  const res = await client.request(FetchApi, 12, {
    replicaId: -1,
    maxWaitMs: 0,
    minBytes: 1,
    maxBytes: 1 << 20,
    sessionEpoch: -1,
    topics: [{ topic, partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1 << 20 }] }],
  });
  const buf = res.responses[0]!.partitions[0]!.records as Buffer;
  return parseBatches(buf, { mode: 'log', verifyCrc: true }).batches.map((h) => ({ h, records: decodeRecords(buf, h).records }));
}

describe('topic configs on produce', () => {
  it('stamps LogAppendTime batches with the broker time and answers it', async () => {
    await createTopic('append-time', { 'message.timestamp.type': 'LogAppendTime' });
    const before = Date.now();
    const res = await produce('append-time', { baseTimestamp: 1_000n });
    expect(res.errorCode).toBe(0);
    expect(Number(res.logAppendTimeMs)).toBeGreaterThanOrEqual(before);
    const [batch] = await stored('append-time');
    expect(batch!.h.timestampType).toBe(1);
    expect(batch!.h.maxTimestamp).toBe(res.logAppendTimeMs);
  });

  it('refuses timestamps outside message.timestamp.before/after.max.ms with INVALID_TIMESTAMP', async () => {
    await createTopic('recent-only', { 'message.timestamp.before.max.ms': '60000', 'message.timestamp.after.max.ms': '60000' });
    expect((await produce('recent-only', { baseTimestamp: BigInt(Date.now() - 3_600_000) })).errorCode).toBe(ErrorCode.INVALID_TIMESTAMP);
    expect((await produce('recent-only', { baseTimestamp: BigInt(Date.now() + 3_600_000) })).errorCode).toBe(ErrorCode.INVALID_TIMESTAMP);
    expect((await produce('recent-only')).errorCode).toBe(0);
    expect(await stored('recent-only')).toHaveLength(1);
  });

  it('recompresses to compression.type, keeping every record', async () => {
    await createTopic('to-zstd', { 'compression.type': 'zstd' });
    expect((await produce('to-zstd', { compression: 1 })).errorCode).toBe(0);
    expect((await produce('to-zstd', { compression: 0 })).errorCode).toBe(0);
    const batches = await stored('to-zstd');
    expect(batches.map((b) => b.h.compression)).toEqual([4, 4]);
    expect(batches.flatMap((b) => b.records.map((r) => [r.key!.toString(), r.value!.toString(), r.headers[0]!.value!.toString()]))).toEqual([
      ['k', 'value-'.repeat(20), '1'],
      ['k', 'value-'.repeat(20), '1'],
    ]);
  });

  it('refuses records without a key on a compacted topic', async () => {
    await createTopic('compacted', { 'cleanup.policy': 'compact' });
    const res = await produce('compacted', { key: null });
    expect(res.errorCode).toBe(ErrorCode.INVALID_RECORD);
    expect((await produce('compacted', { key: Buffer.from('k1') })).errorCode).toBe(0);
  });

  it("applies the topic's max.message.bytes", async () => {
    await createTopic('small-messages', { 'max.message.bytes': '200' });
    expect((await produce('small-messages', { value: Buffer.alloc(300) })).errorCode).toBe(ErrorCode.MESSAGE_TOO_LARGE);
    expect((await produce('small-messages', { value: Buffer.alloc(10) })).errorCode).toBe(0);
  });
});
