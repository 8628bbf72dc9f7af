// Produce v0-2 with magic 0/1 message sets and Fetch v0-3 reading them, at protocol level: stored as
// magic 2 batches (Fetch v4+ reads them as any other), read back down-converted, as Kafka 3.9 does.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/protocol/errors.js';
import { CreateTopicsApi, FetchApi, ProduceApi } from '../../src/protocol/messages/index.js';
import { buildBatch, decodeRecords, parseBatches, readLegacyMessage, recordTimestamp, writeLegacyMessageSet, type LegacyMessage } from '../../src/protocol/records/index.js';
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

const TS = 1_700_000_000_000n;
const now = () => BigInt(Date.now());

async function createTopic(name: string, configs: { name: string; value: string }[] = []) {
  const res = await client.request(CreateTopicsApi, 7, { topics: [{ name, numPartitions: 1, replicationFactor: 1, configs }], timeoutMs: 1000 });
  expect(res.topics[0]!.errorCode).toBe(ErrorCode.NONE);
}

async function produce(version: number, topic: string, records: Buffer) {
  const res = await client.request(ProduceApi, version, { acks: -1, timeoutMs: 1000, topicData: [{ name: topic, partitionData: [{ index: 0, records }] }] });
  return res.responses[0]!.partitionResponses[0]!;
}

async function fetch(version: number, topic: string, fetchOffset: bigint, partitionMaxBytes = 1 << 20) {
  const res = await client.request(FetchApi, version, {
    replicaId: -1,
    maxWaitMs: 0,
    minBytes: 0,
    maxBytes: 1 << 20,
    topics: [{ topic, partitions: [{ partition: 0, fetchOffset, partitionMaxBytes }] }],
  });
  const p = res.responses[0]!.partitions[0]!;
  const records = p.records as Buffer | Buffer[] | null;
  return { ...p, records: Array.isArray(records) ? Buffer.concat(records) : (records ?? Buffer.alloc(0)) };
}

/** The complete messages of a message set, and what follows them. */
function messages(set: Buffer): { messages: LegacyMessage[]; rest: number } {
  const out: LegacyMessage[] = [];
  let pos = 0;
  while (pos + 12 <= set.length && set.readBigInt64BE(pos) >= 0n && pos + 12 + set.readInt32BE(pos + 8) <= set.length) {
    out.push(readLegacyMessage(set, pos, 12 + set.readInt32BE(pos + 8))!);
    pos += 12 + set.readInt32BE(pos + 8);
  }
  return { messages: out, rest: set.length - pos };
}

const v = (n: number) => Buffer.from(`v${n}`);
const plain = (m: LegacyMessage) => [m.offset, m.magic, m.timestamp, m.key?.toString() ?? null, m.value?.toString() ?? null];

describe('magic 0 and 1 message sets', () => {
  it('Produce v0/v1/v2 append them as magic 2 batches; Fetch v4 reads them like any batch', async () => {
    await createTopic('legacy-in');
    const m0 = writeLegacyMessageSet(
      [0, 1].map((i) => ({ offset: BigInt(i), timestamp: 0n, key: Buffer.from(`k${i}`), value: v(i) })),
      { magic: 0, compression: 0 },
    );
    const r0 = await produce(0, 'legacy-in', m0);
    expect([r0.errorCode, r0.baseOffset]).toEqual([ErrorCode.NONE, 0n]);
    const m1 = writeLegacyMessageSet(
      [2, 3, 4].map((i) => ({ offset: BigInt(i - 2), timestamp: TS + BigInt(i), key: null, value: v(i) })),
      { magic: 1, compression: 1 },
    );
    const r1 = await produce(1, 'legacy-in', m1);
    expect([r1.errorCode, r1.baseOffset]).toEqual([ErrorCode.NONE, 2n]);
    const r2 = await produce(2, 'legacy-in', writeLegacyMessageSet([{ offset: 0n, timestamp: TS + 5n, key: null, value: v(5) }], { magic: 1, compression: 3 }));
    expect([r2.errorCode, r2.baseOffset, r2.logAppendTimeMs]).toEqual([ErrorCode.NONE, 5n, -1n]);

    // Empty records: nothing appended, success at offset -1 (Kafka refuses them from v3 only).
    const empty = await produce(1, 'legacy-in', Buffer.alloc(0));
    expect([empty.errorCode, empty.baseOffset]).toEqual([ErrorCode.NONE, -1n]);

    const read = await fetch(4, 'legacy-in', 0n);
    const batches = parseBatches(read.records, { mode: 'log' }).batches;
    expect(batches.map((h) => [h.magic, h.baseOffset, h.recordCount, h.compression])).toEqual([
      [2, 0n, 2, 0],
      [2, 2n, 3, 1],
      [2, 5n, 1, 3],
    ]);
    const all = batches.flatMap((h) => decodeRecords(read.records, h).records.map((r) => [h.baseOffset + BigInt(r.offsetDelta), recordTimestamp(h, r), r.value!.toString()]));
    expect(all).toEqual([
      [0n, -1n, 'v0'],
      [1n, -1n, 'v1'],
      [2n, TS + 2n, 'v2'],
      [3n, TS + 3n, 'v3'],
      [4n, TS + 4n, 'v4'],
      [5n, TS + 5n, 'v5'],
    ]);
  });

  it('Fetch v0-1 answer magic 0 and v2-3 magic 1, from the fetch offset in uncompressed batches, whole compressed ones', async () => {
    await createTopic('legacy-out');
    const plainBatch = buildBatch({ compression: 0, baseTimestamp: TS, records: [0, 1, 2].map((i) => ({ offsetDelta: i, timestampDelta: BigInt(i), key: null, value: v(i) })) });
    expect((await produce(7, 'legacy-out', plainBatch)).errorCode).toBe(ErrorCode.NONE);
    const gzipBatch = buildBatch({ compression: 1, baseTimestamp: TS, records: [3, 4].map((i) => ({ offsetDelta: i - 3, timestampDelta: BigInt(i), key: null, value: v(i) })) });
    expect((await produce(7, 'legacy-out', gzipBatch)).errorCode).toBe(ErrorCode.NONE);

    const v0 = await fetch(0, 'legacy-out', 1n);
    expect([v0.errorCode, v0.highWatermark]).toEqual([ErrorCode.NONE, 5n]);
    const set0 = messages(v0.records);
    expect(set0.messages.map((m) => plain(m).slice(0, 3).concat(m.compression))).toEqual([
      [1n, 0, -1n, 0],
      [2n, 0, -1n, 0],
      [4n, 0, -1n, 1], // the gzip wrapper, at its last offset
    ]);
    expect(set0.messages.slice(0, 2).map((m) => m.value!.toString())).toEqual(['v1', 'v2']);
    // Offset 0 dropped, the answer keeps the stored size: padded with an entry of offset -1 that runs past the end.
    const pad = v0.records.subarray(v0.records.length - set0.rest);
    expect([pad.readBigInt64BE(0), pad.readInt32BE(8) > pad.length - 12]).toEqual([-1n, true]);
    const v3 = await fetch(3, 'legacy-out', 4n);
    const set3 = messages(v3.records);
    // The whole gzip batch, although the fetch starts at its second record.
    expect(set3.messages.map((m) => [m.offset, m.magic, m.compression, m.timestamp])).toEqual([[4n, 1, 1, TS + 4n]]);
  });

  it('Fetch v2 answers the stored size (or the first converted batch whole): a longer conversion ends with a partial message', async () => {
    await createTopic('legacy-partial');
    // A large record converts smaller (34 bytes of overhead against 61 for the batch); small ones larger (34 against about 9).
    const large = buildBatch({ compression: 0, baseTimestamp: TS, records: [{ key: null, value: Buffer.alloc(1000, 'x') }] });
    const small = buildBatch({ compression: 0, baseTimestamp: TS, records: Array.from({ length: 20 }, (_, i) => ({ offsetDelta: i, key: null, value: v(i) })) });
    await produce(7, 'legacy-partial', large);
    await produce(7, 'legacy-partial', small);
    const read = await fetch(2, 'legacy-partial', 0n);
    expect(read.records.length).toBe(large.length + small.length);
    const set = messages(read.records);
    expect(set.messages.map((m) => m.offset)).toEqual(Array.from({ length: set.messages.length }, (_, i) => BigInt(i)));
    expect(set.messages.length).toBeLessThan(21);
    expect(set.rest).toBeGreaterThan(0);
    // From offset 1, the small batch alone converts larger than it is stored: its conversion is answered whole.
    const whole = messages((await fetch(2, 'legacy-partial', 1n)).records);
    expect([whole.messages.length, whole.rest]).toEqual([20, 0]);
  });

  it('Produce v2 answers the log append time on a LogAppendTime topic, and stamps it', async () => {
    await createTopic('legacy-append-time', [{ name: 'message.timestamp.type', value: 'LogAppendTime' }]);
    const before = now();
    const res = await produce(2, 'legacy-append-time', writeLegacyMessageSet([{ offset: 0n, timestamp: TS, key: null, value: v(0) }], { magic: 1, compression: 0 }));
    expect(res.errorCode).toBe(ErrorCode.NONE);
    expect(res.logAppendTimeMs).toBeGreaterThanOrEqual(before);
    const [m] = messages((await fetch(2, 'legacy-append-time', 0n)).records).messages;
    expect([m!.timestampType, m!.timestamp]).toEqual([1, res.logAppendTimeMs]);
  });

  it("refuses what Kafka refuses: a bad CRC, a timestamp out of range, a keyless record on a compacted topic, a producer's LogAppendTime", async () => {
    await createTopic('legacy-refused', [{ name: 'message.timestamp.after.max.ms', value: '60000' }]);
    await createTopic('legacy-compacted', [{ name: 'cleanup.policy', value: 'compact' }]);
    const one = (timestamp: bigint, logAppendTime: bigint | null = null) => writeLegacyMessageSet([{ offset: 0n, timestamp, key: null, value: v(0) }], { magic: 1, compression: 0, logAppendTime });
    const bad = one(TS);
    bad[12] ^= 0xff;
    expect((await produce(2, 'legacy-refused', bad)).errorCode).toBe(ErrorCode.CORRUPT_MESSAGE);
    expect((await produce(2, 'legacy-refused', one(now() + 3_600_000n))).errorCode).toBe(ErrorCode.INVALID_TIMESTAMP);
    expect((await produce(2, 'legacy-refused', one(-1n, -1n))).errorCode).toBe(ErrorCode.INVALID_TIMESTAMP);
    expect((await produce(1, 'legacy-compacted', one(now()))).errorCode).toBe(ErrorCode.INVALID_RECORD);
    // Nothing was stored.
    expect((await fetch(4, 'legacy-refused', 0n)).highWatermark).toBe(0n);
  });

  it('message.downconversion.enable=false refuses Fetch v0-3 with UNSUPPORTED_VERSION', async () => {
    await createTopic('legacy-no-down', [{ name: 'message.downconversion.enable', value: 'false' }]);
    expect((await fetch(3, 'legacy-no-down', 0n)).errorCode).toBe(ErrorCode.UNSUPPORTED_VERSION);
    expect((await fetch(4, 'legacy-no-down', 0n)).errorCode).toBe(ErrorCode.NONE);
  });
});
