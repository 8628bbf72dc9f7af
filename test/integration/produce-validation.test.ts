// What Kafka's LogValidator does to a produced batch beyond its header:
// recomputes the batch's max timestamp from the records (Sarama before 1.45
// writes -1), checks every record's timestamp and key, and names the
// offending records in the Produce response (KIP-467); and which Fetch
// versions may read a zstd topic.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/protocol/errors.js';
import { CreateTopicsApi, FetchApi, ListOffsetsApi, ProduceApi } from '../../src/protocol/messages/index.js';
import { buildBatch, decodeRecords, parseBatches, recordTimestamp, type BuildBatchOptions, type Compression } from '../../src/protocol/records/index.js';
import { startTestBroker, type TestBroker } from '../support/broker.js';
import { RawClient } from '../support/raw-client.js';

let broker: TestBroker;
let client: RawClient;

beforeAll(async () => {
  // A long check interval: the tests run retention passes themselves.
  broker = await startTestBroker({ logRetentionCheckIntervalMs: 3_600_000 });
  client = await RawClient.connect(broker.bootstrap);
});
afterAll(async () => {
  client?.close();
  await broker?.destroy();
});

async function createTopic(name: string, configs: Record<string, string> = {}) {
  const res = await client.request(CreateTopicsApi, 7, { topics: [{ name, numPartitions: 1, replicationFactor: 1, configs: Object.entries(configs).map(([n, value]) => ({ name: n, value })) }] });
  expect(res.topics[0]!.errorCode).toBe(0);
}

async function produce(topic: string, batch: Buffer, version = 9) {
  const res = await client.request(ProduceApi, version, { acks: -1, timeoutMs: 1000, topicData: [{ name: topic, partitionData: [{ index: 0, records: batch }] }] });
  return res.responses[0]!.partitionResponses[0]!;
}

async function fetchPartition(topic: string, version = 12, fetchOffset = 0n) {
  const res = await client.request(FetchApi, version, {
    replicaId: -1,
    maxWaitMs: 0,
    minBytes: 1,
    maxBytes: 1 << 20,
    sessionEpoch: -1,
    topics: [{ topic, partitions: [{ partition: 0, fetchOffset, partitionMaxBytes: 1 << 20 }] }],
  });
  return res.responses[0]!.partitions[0]!;
}

async function fetched(topic: string) {
  const buf = (await fetchPartition(topic)).records as Buffer;
  const parsed = parseBatches(buf, { mode: 'log', verifyCrc: true });
  expect(parsed.error).toBeNull();
  return parsed.batches.map((h) => ({ h, records: decodeRecords(buf, h).records }));
}

async function listOffset(topic: string, timestamp: bigint) {
  const res = await client.request(ListOffsetsApi, 7, { replicaId: -1, isolationLevel: 0, topics: [{ name: topic, partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp }] }] });
  return res.topics[0]!.partitions[0]!;
}

async function storedMaxTimestamp(topic: string): Promise<string[]> {
  const rows = await broker.query<{ max_timestamp: string }>(`SELECT b.max_timestamp::text FROM batches b JOIN topics t USING (topic_id) WHERE t.name = $1 ORDER BY b.base_offset`, [topic]);
  return rows.map((r) => r.max_timestamp);
}

/** Records with the given timestamp deltas (from `base`) and keys ('k<i>' unless listed null). */
function batch(base: bigint, deltas: bigint[], opts: Partial<BuildBatchOptions> & { nullKeys?: number[] } = {}) {
  return buildBatch({
    baseTimestamp: base,
    ...opts,
    records: deltas.map((d, i) => ({ timestampDelta: d, key: opts.nullKeys?.includes(i) ? null : Buffer.from(`k${i}`), value: Buffer.from(`value-${i}`) })),
  });
}

describe('the batch max timestamp, as Kafka recomputes it', () => {
  it.each([
    ['uncompressed, max -1 (Sarama)', 0, -1n],
    ['gzip, max below the first record', 1, -5n],
    ['zstd, max -1', 4, -1n],
  ] as [string, Compression, bigint][])('%s: stored and fetched with the true maximum; retention and ListOffsets see it', async (_, compression, maxDelta) => {
    const topic = `max-ts-${compression}`;
    await createTopic(topic, { 'retention.ms': '60000' });
    const base = BigInt(Date.now() - 1000);
    const maxTimestamp = maxDelta === -1n ? -1n : base + maxDelta;
    const res = await produce(topic, batch(base, [0n, 900n, 400n], { compression, maxTimestamp }));
    expect(res.errorCode).toBe(0);

    const [stored] = await fetched(topic);
    expect(stored!.h.maxTimestamp).toBe(base + 900n);
    expect(stored!.h.compression).toBe(compression); // fixed in place, not recompressed
    expect(stored!.records.map((r) => recordTimestamp(stored!.h, r))).toEqual([base, base + 900n, base + 400n]);
    expect(await storedMaxTimestamp(topic)).toEqual([String(base + 900n)]);

    expect(await listOffset(topic, base + 500n)).toMatchObject({ errorCode: 0, offset: 1n, timestamp: base + 900n });
    await broker.cleaner.runOnce();
    expect((await listOffset(topic, -2n)).offset).toBe(0n);
    expect((await fetchPartition(topic)).errorCode).toBe(0);
  });

  it('leaves an honest header (and its CRC) untouched', async () => {
    await createTopic('max-ts-honest');
    const sent = batch(BigInt(Date.now()), [0n, 5n, 3n]);
    expect((await produce('max-ts-honest', sent)).errorCode).toBe(0);
    const buf = (await fetchPartition('max-ts-honest')).records as Buffer;
    expect(buf.subarray(16)).toEqual(sent.subarray(16)); // all but the assigned base offset and leader epoch
  });

  it('turns a producer-set LogAppendTime flag into CreateTime on a CreateTime topic, as Kafka does', async () => {
    await createTopic('max-ts-type');
    const max = BigInt(Date.now());
    expect((await produce('max-ts-type', batch(max - 100n, [0n, 50n], { timestampType: 1, maxTimestamp: max }))).errorCode).toBe(0);
    const [stored] = await fetched('max-ts-type');
    expect([stored!.h.timestampType, stored!.h.maxTimestamp]).toEqual([0, max]);
  });
});

describe('per-record produce errors (KIP-467)', () => {
  const tp = (topic: string) => `${topic}-0`;

  it('names every keyless record of a batch to a compacted topic, refusing the batch', async () => {
    await createTopic('keys-needed', { 'cleanup.policy': 'compact' });
    const res = await produce('keys-needed', batch(BigInt(Date.now()), [0n, 0n, 0n, 0n], { nullKeys: [1, 3] }));
    const message = `Compacted topic cannot accept message without key in topic partition ${tp('keys-needed')}`;
    expect(res).toMatchObject({
      index: 0,
      errorCode: ErrorCode.INVALID_RECORD,
      baseOffset: -1n,
      logAppendTimeMs: -1n,
      logStartOffset: 0n,
      recordErrors: [
        { batchIndex: 1, batchIndexErrorMessage: message },
        { batchIndex: 3, batchIndexErrorMessage: message },
      ],
      errorMessage: `One or more records have been rejected due to 2 record errors in total, and only showing the first three errors at most: [RecordError(batchIndex=1, message='${message}'), RecordError(batchIndex=3, message='${message}')]`,
    });
    // Below v8 the response has no room for them: the error code alone.
    expect(await produce('keys-needed', batch(BigInt(Date.now()), [0n, 0n], { nullKeys: [0] }), 7)).toMatchObject({ errorCode: ErrorCode.INVALID_RECORD, logStartOffset: 0n });
    expect(await fetched('keys-needed')).toEqual([]);
  });

  it('checks every record against message.timestamp.before/after.max.ms, not only the header', async () => {
    await createTopic('recent', { 'message.timestamp.before.max.ms': '60000', 'message.timestamp.after.max.ms': '60000' });
    const now = BigInt(Date.now());
    // Plausible header (max = base = now), but record 1 is an hour old and record 2 an hour ahead.
    const res = await produce('recent', batch(now, [0n, -3_600_000n, 3_600_000n, 0n], { maxTimestamp: now }));
    expect(res.errorCode).toBe(ErrorCode.INVALID_TIMESTAMP);
    expect(res.errorMessage).toBe('One or more records have been rejected due to invalid timestamp');
    expect(res.recordErrors.map((e) => e.batchIndex)).toEqual([1, 2]);
    expect(res.recordErrors[0]!.batchIndexErrorMessage).toMatch(
      new RegExp(`^Timestamp ${now - 3_600_000n} of message with offset 1 is out of range\\. The timestamp should be within \\[\\d+, \\d+\\]$`),
    );
    expect(await fetched('recent')).toEqual([]);
  });

  it('judges the records, not the header: a base timestamp out of bounds is no reason to refuse', async () => {
    await createTopic('recent-records', { 'message.timestamp.before.max.ms': '60000' });
    const now = BigInt(Date.now());
    expect((await produce('recent-records', batch(0n, [now, now + 1n]))).errorCode).toBe(0);
    const [stored] = await fetched('recent-records');
    expect(stored!.records.map((r) => recordTimestamp(stored!.h, r))).toEqual([now, now + 1n]);
  });

  it('refuses, record by record, a producer that sets LogAppendTime on a LogAppendTime topic', async () => {
    await createTopic('broker-time', { 'message.timestamp.type': 'LogAppendTime' });
    const max = BigInt(Date.now());
    const res = await produce('broker-time', batch(max, [0n, 0n], { timestampType: 1, maxTimestamp: max }));
    expect(res.errorCode).toBe(ErrorCode.INVALID_TIMESTAMP);
    expect(res.recordErrors).toEqual(
      [0, 1].map((i) => ({
        batchIndex: i,
        batchIndexErrorMessage: `Invalid timestamp type in message DefaultRecord(offset=${i}, timestamp=${max}, key=2 bytes, value=7 bytes). Producer should not set timestamp type to LogAppendTime.`,
      })),
    );
  });

  it("keeps Kafka's silence (no record errors, no message) for a valid batch", async () => {
    await createTopic('fine');
    expect(await produce('fine', batch(BigInt(Date.now()), [0n, 1n]))).toMatchObject({ errorCode: 0, recordErrors: [], errorMessage: null });
  });
});

describe('Fetch below v10 and zstd', () => {
  it('returns zstd batches of a topic whose compression.type is not zstd', async () => {
    await createTopic('zstd-by-producer');
    expect((await produce('zstd-by-producer', batch(BigInt(Date.now()), [0n], { compression: 4 }))).errorCode).toBe(0);
    const old = await fetchPartition('zstd-by-producer', 9);
    expect(old.errorCode).toBe(0);
    const records = old.records as Buffer;
    expect(parseBatches(records, { mode: 'log' }).batches.map((h) => h.compression)).toEqual([4]);
  });

  it('answers UNSUPPORTED_COMPRESSION_TYPE for a topic whose compression.type is zstd, whatever is stored', async () => {
    await createTopic('zstd-topic', { 'compression.type': 'zstd' });
    expect(await fetchPartition('zstd-topic', 9)).toMatchObject({ errorCode: ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, highWatermark: -1n, lastStableOffset: -1n, logStartOffset: -1n });
    expect((await produce('zstd-topic', batch(BigInt(Date.now()), [0n], { compression: 1 }))).errorCode).toBe(0);
    const old = await fetchPartition('zstd-topic', 9);
    expect(old).toMatchObject({ errorCode: ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, highWatermark: -1n, lastStableOffset: -1n, logStartOffset: -1n });
    expect((old.records as Buffer).length).toBe(0);
    const current = await fetchPartition('zstd-topic', 10);
    expect(current).toMatchObject({ errorCode: 0, highWatermark: 1n });
  });
});
