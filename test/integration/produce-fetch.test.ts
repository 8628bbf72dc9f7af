// The foundation's behaviour at the wire, through the project's own codecs:
// exact versions, exact error codes, and what PostgreSQL holds afterwards.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/protocol/errors.js';
import { CreateTopicsApi, DeleteRecordsApi, FetchApi, ListOffsetsApi, MetadataApi, ProduceApi } from '../../src/protocol/messages/index.js';
import { buildBatch, decodeRecords, parseBatches, type Compression } from '../../src/protocol/records/index.js';
import { startTestBroker, type TestBroker } from '../support/broker.js';
import { RawClient } from '../support/raw-client.js';

let broker: TestBroker;
let client: RawClient;

beforeAll(async () => {
  broker = await startTestBroker({ autoCreateTopicsEnable: false, messageMaxBytes: 64 * 1024 });
  client = await RawClient.connect(broker.bootstrap);
});
afterAll(async () => {
  client?.close();
  await broker?.destroy();
});

const batchOf = (values: string[], opts: { compression?: Compression; baseTimestamp?: bigint; key?: string } = {}) =>
  buildBatch({
    compression: opts.compression ?? 0,
    baseTimestamp: opts.baseTimestamp ?? 1_700_000_000_000n,
    records: values.map((v, i) => ({
      offsetDelta: i,
      timestampDelta: BigInt(i),
      key: Buffer.from(opts.key ?? `key-${i}`),
      value: Buffer.from(v),
      headers: [{ key: 'h', value: Buffer.from(`hv-${i}`) }],
    })),
  });

async function createTopic(name: string, numPartitions = 1) {
  const res = await client.request(CreateTopicsApi, 7, { topics: [{ name, numPartitions, replicationFactor: 1 }], timeoutMs: 1000 });
  expect(res.topics[0]!.errorCode).toBe(ErrorCode.NONE);
  return res.topics[0]!;
}

async function produce(topic: string, partition: number, records: Buffer, version = 9) {
  const res = await client.request(ProduceApi, version, { acks: -1, timeoutMs: 1000, topicData: [{ name: topic, partitionData: [{ index: partition, records }] }] });
  return res.responses[0]!.partitionResponses[0]!;
}

async function fetchFrom(topic: string, partition: number, fetchOffset: bigint, opts: { version?: number; maxWaitMs?: number; maxBytes?: number; partitionMaxBytes?: number; minBytes?: number } = {}) {
  const res = await client.request(FetchApi, opts.version ?? 11, {
    replicaId: -1,
    maxWaitMs: opts.maxWaitMs ?? 0,
    minBytes: opts.minBytes ?? 1,
    maxBytes: opts.maxBytes ?? 10 * 1024 * 1024,
    isolationLevel: 0,
    sessionId: 0,
    sessionEpoch: -1,
    topics: [{ topic, partitions: [{ partition, fetchOffset, partitionMaxBytes: opts.partitionMaxBytes ?? 1024 * 1024, currentLeaderEpoch: -1 }] }],
  });
  return res.responses[0]!.partitions[0]!;
}

function values(records: Buffer | Buffer[] | null): string[] {
  const buf = Array.isArray(records) ? Buffer.concat(records) : (records ?? Buffer.alloc(0));
  const { batches } = parseBatches(buf, { mode: 'log' });
  return batches.flatMap((h) => decodeRecords(buf, h).records.map((r) => r.value!.toString()));
}

describe('produce and fetch', () => {
  it('assigns consecutive offsets per partition and returns the stored bytes', async () => {
    await createTopic('orders', 2);
    const first = await produce('orders', 0, batchOf(['a', 'b', 'c']));
    expect(first).toMatchObject({ errorCode: 0, baseOffset: 0n, logStartOffset: 0n });
    const second = await produce('orders', 0, batchOf(['d']));
    expect(second.baseOffset).toBe(3n);
    const other = await produce('orders', 1, batchOf(['x']));
    expect(other.baseOffset).toBe(0n);

    const fetched = await fetchFrom('orders', 0, 0n);
    expect(fetched.errorCode).toBe(0);
    expect(fetched.highWatermark).toBe(4n);
    expect(values(fetched.records)).toEqual(['a', 'b', 'c', 'd']);

    const rows = await broker.query<{ base_offset: string; last_offset: string; record_count: number }>(
      `SELECT b.base_offset::text, b.last_offset::text, b.record_count FROM batches b JOIN topics t USING (topic_id) WHERE t.name = 'orders' AND partition = 0 ORDER BY base_offset`,
    );
    expect(rows).toEqual([
      { base_offset: '0', last_offset: '2', record_count: 3 },
      { base_offset: '3', last_offset: '3', record_count: 1 },
    ]);
  });

  it('keeps keys, headers and timestamps byte for byte through every codec', async () => {
    await createTopic('codecs');
    for (const compression of [0, 1, 2, 3, 4] as Compression[]) {
      await produce('codecs', 0, batchOf([`v${compression}`, `w${compression}`], { compression }));
    }
    const fetched = await fetchFrom('codecs', 0, 0n);
    const buf = Buffer.concat(Array.isArray(fetched.records) ? fetched.records : [fetched.records!]);
    const { batches } = parseBatches(buf, { mode: 'log' });
    expect(batches.map((b) => [b.baseOffset, b.compression])).toEqual([
      [0n, 0],
      [2n, 1],
      [4n, 2],
      [6n, 3],
      [8n, 4],
    ]);
    const records = batches.flatMap((h) => decodeRecords(buf, h).records);
    expect(records.map((r) => r.key!.toString())).toEqual(Array(5).fill(['key-0', 'key-1']).flat());
    expect(records.map((r) => r.headers[0]!.value!.toString())).toEqual(Array(5).fill(['hv-0', 'hv-1']).flat());
  });

  it('answers a fetch starting mid-batch with that whole batch', async () => {
    await createTopic('midbatch');
    await produce('midbatch', 0, batchOf(['a', 'b', 'c']));
    await produce('midbatch', 0, batchOf(['d']));
    const fetched = await fetchFrom('midbatch', 0, 1n);
    expect(values(fetched.records)).toEqual(['a', 'b', 'c', 'd']);
    const tail = await fetchFrom('midbatch', 0, 3n);
    expect(values(tail.records)).toEqual(['d']);
  });

  it('returns one whole batch even when it exceeds max_bytes (KIP-74), and no more', async () => {
    await createTopic('bigbatch');
    await produce('bigbatch', 0, batchOf(['x'.repeat(5000)]));
    await produce('bigbatch', 0, batchOf(['y']));
    const fetched = await fetchFrom('bigbatch', 0, 0n, { maxBytes: 100, partitionMaxBytes: 100 });
    expect(values(fetched.records)).toEqual(['x'.repeat(5000)]);
  });

  it('answers OFFSET_OUT_OF_RANGE above the high watermark and empty records at it', async () => {
    await createTopic('range');
    await produce('range', 0, batchOf(['a']));
    const above = await fetchFrom('range', 0, 5n);
    expect(above.errorCode).toBe(ErrorCode.OFFSET_OUT_OF_RANGE);
    expect(above.records).toEqual(Buffer.alloc(0));
    const at = await fetchFrom('range', 0, 1n);
    expect(at.errorCode).toBe(0);
    expect(at.records).toEqual(Buffer.alloc(0));
  });

  it('parks a long-poll fetch until an append wakes it', async () => {
    await createTopic('longpoll');
    const other = await RawClient.connect(broker.bootstrap);
    try {
      const started = Date.now();
      const pending = client.request(FetchApi, 11, {
        replicaId: -1,
        maxWaitMs: 10_000,
        minBytes: 1,
        maxBytes: 1 << 20,
        sessionEpoch: -1,
        topics: [{ topic: 'longpoll', partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1 << 20 }] }],
      });
      await new Promise((r) => setTimeout(r, 300));
      const produced = await other.request(ProduceApi, 9, { acks: 1, timeoutMs: 1000, topicData: [{ name: 'longpoll', partitionData: [{ index: 0, records: batchOf(['wake']) }] }] });
      expect(produced.responses[0]!.partitionResponses[0]!.errorCode).toBe(0);
      const res = await pending;
      expect(values(res.responses[0]!.partitions[0]!.records)).toEqual(['wake']);
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      other.close();
    }
  });

  it('waits max_wait_ms and answers empty when nothing arrives', async () => {
    await createTopic('quiet');
    const started = Date.now();
    const res = await fetchFrom('quiet', 0, 0n, { maxWaitMs: 400 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(380);
    expect(res.errorCode).toBe(0);
    expect(res.records).toEqual(Buffer.alloc(0));
  });

  it('fetches by topic id from v13 on', async () => {
    const created = await createTopic('byid');
    await produce('byid', 0, batchOf(['id']));
    const res = await client.request(FetchApi, 16, {
      replicaId: -1,
      maxWaitMs: 0,
      minBytes: 1,
      maxBytes: 1 << 20,
      sessionEpoch: -1,
      topics: [{ topicId: created.topicId, partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1 << 20 }] }],
    });
    expect(res.responses[0]!.topicId).toBe(created.topicId);
    expect(values(res.responses[0]!.partitions[0]!.records)).toEqual(['id']);
    const unknown = await client.request(FetchApi, 16, {
      replicaId: -1,
      maxWaitMs: 0,
      minBytes: 1,
      maxBytes: 1 << 20,
      sessionEpoch: -1,
      topics: [{ topicId: '11111111-2222-3333-4444-555555555555', partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1 << 20 }] }],
    });
    expect(unknown.responses[0]!.partitions[0]!.errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_ID);
  });
});

describe('pipelining on one connection', () => {
  it('appends back-to-back produce requests in the order sent and answers them in order', async () => {
    await createTopic('pipelined');
    const frames = Array.from({ length: 20 }, (_, i) =>
      client.encode(ProduceApi, 9, { acks: -1, timeoutMs: 1000, topicData: [{ name: 'pipelined', partitionData: [{ index: 0, records: batchOf([`p${i}`]) }] }] }, 10_000 + i),
    );
    const answers = Array.from({ length: 21 }, () => client.nextFrame());
    // All twenty produces and a Metadata request leave in one write, split at an odd byte.
    const all = Buffer.concat([...frames, client.encode(MetadataApi, 12, { topics: [{ name: 'pipelined' }] }, 20_000)]);
    client.write(all.subarray(0, 333));
    client.write(all.subarray(333));
    const responses = await Promise.all(answers);
    expect(responses.map((f) => f!.readInt32BE(0))).toEqual([...Array.from({ length: 20 }, (_, i) => 10_000 + i), 20_000]);
    expect(values((await fetchFrom('pipelined', 0, 0n)).records)).toEqual(Array.from({ length: 20 }, (_, i) => `p${i}`));
  });

  it('keeps reading pipelined produce requests past the in-flight limit, in order', async () => {
    await createTopic('pipelined-many');
    const n = 600;
    const frames = Array.from({ length: n }, (_, i) =>
      client.encode(ProduceApi, 9, { acks: -1, timeoutMs: 1000, topicData: [{ name: 'pipelined-many', partitionData: [{ index: 0, records: batchOf([`m${i}`]) }] }] }, 30_000 + i),
    );
    const answers = Array.from({ length: n }, () => client.nextFrame());
    client.write(Buffer.concat(frames));
    const responses = await Promise.all(answers);
    expect(responses.map((f) => f!.readInt32BE(0))).toEqual(Array.from({ length: n }, (_, i) => 30_000 + i));
    const fetched = await fetchFrom('pipelined-many', 0, 0n, { partitionMaxBytes: 10 * 1024 * 1024 });
    expect(values(fetched.records)).toEqual(Array.from({ length: n }, (_, i) => `m${i}`));
  });
});

describe('produce errors', () => {
  it('answers CORRUPT_MESSAGE to a bad CRC and stores nothing', async () => {
    await createTopic('corrupt');
    const batch = batchOf(['payload']);
    batch[batch.length - 1] ^= 0xff;
    const res = await produce('corrupt', 0, batch);
    expect(res.errorCode).toBe(ErrorCode.CORRUPT_MESSAGE);
    const rows = await broker.query(`SELECT 1 FROM batches JOIN topics USING (topic_id) WHERE name = 'corrupt'`);
    expect(rows).toHaveLength(0);
    expect((await fetchFrom('corrupt', 0, 0n)).highWatermark).toBe(0n);
  });

  it('answers MESSAGE_TOO_LARGE above message.max.bytes', async () => {
    await createTopic('large');
    const res = await produce('large', 0, batchOf(['x'.repeat(70 * 1024)]));
    expect(res.errorCode).toBe(ErrorCode.MESSAGE_TOO_LARGE);
  });

  it('answers UNKNOWN_TOPIC_OR_PARTITION for a missing topic or partition when auto-creation is off', async () => {
    expect((await produce('missing', 0, batchOf(['a']))).errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    await createTopic('onepart');
    expect((await produce('onepart', 3, batchOf(['a']))).errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  });

  it('answers INVALID_REQUIRED_ACKS for acks other than -1, 0, 1', async () => {
    await createTopic('acks');
    const res = await client.request(ProduceApi, 9, { acks: 2, timeoutMs: 1000, topicData: [{ name: 'acks', partitionData: [{ index: 0, records: batchOf(['a']) }] }] });
    expect(res.responses[0]!.partitionResponses[0]!.errorCode).toBe(ErrorCode.INVALID_REQUIRED_ACKS);
  });

  it('sends no response to acks=0 but stores the records', async () => {
    await createTopic('fireforget');
    client.write(client.encode(ProduceApi, 9, { acks: 0, timeoutMs: 1000, topicData: [{ name: 'fireforget', partitionData: [{ index: 0, records: batchOf(['f']) }] }] }));
    // The next request's answer is the next frame: nothing was sent for acks=0.
    const md = await client.request(MetadataApi, 12, { topics: [{ name: 'fireforget' }] });
    expect(md.topics[0]!.errorCode).toBe(0);
    expect(values((await fetchFrom('fireforget', 0, 0n)).records)).toEqual(['f']);
  });
});

describe('Fetch from PostgreSQL, reading ahead', () => {
  // No tail cache: every read goes to the database, and a read that stops at
  // its byte limit starts the next one in the background.
  let cold: TestBroker;
  let c: RawClient;
  beforeAll(async () => {
    cold = await startTestBroker({ fetchCacheMaxBytes: 0 });
    c = await RawClient.connect(cold.bootstrap);
  });
  afterAll(async () => {
    c?.close();
    await cold?.destroy();
  });

  const fetchCold = async (topic: string, fetchOffset: bigint, partitionMaxBytes: number) => {
    const res = await c.request(FetchApi, 11, {
      replicaId: -1,
      maxWaitMs: 0,
      minBytes: 1,
      maxBytes: 10 * 1024 * 1024,
      isolationLevel: 0,
      sessionId: 0,
      sessionEpoch: -1,
      topics: [{ topic, partitions: [{ partition: 0, fetchOffset, partitionMaxBytes, currentLeaderEpoch: -1 }] }],
    });
    return res.responses[0]!.partitions[0]!;
  };

  async function fill(topic: string, n: number) {
    const res = await c.request(CreateTopicsApi, 7, { topics: [{ name: topic, numPartitions: 1, replicationFactor: 1 }], timeoutMs: 1000 });
    expect(res.topics[0]!.errorCode).toBe(0);
    for (let i = 0; i < n; i++) {
      const r = await c.request(ProduceApi, 9, { acks: -1, timeoutMs: 1000, topicData: [{ name: topic, partitionData: [{ index: 0, records: batchOf([`${i}:`.padEnd(1000, 'v')]) }] }] });
      expect(r.responses[0]!.partitionResponses[0]!.baseOffset).toBe(BigInt(i));
    }
  }

  it('returns every batch once, in order, whatever the byte limit of each fetch', async () => {
    await fill('ahead', 30);
    const limits = [3000, 1500, 5000, 100, 3000, 3000, 2500];
    const seen: number[] = [];
    let offset = 0n;
    for (let i = 0; offset < 30n && i < 100; i++) {
      const limit = limits[i % limits.length]!;
      const f = await fetchCold('ahead', offset, limit);
      expect(f.errorCode).toBe(0);
      const got = values(f.records).map((v) => Number(v.split(':')[0]));
      expect(got.length).toBeGreaterThan(0);
      // At least one batch (KIP-74), never more bytes than the limit beyond the first.
      expect(got.length === 1 || Buffer.concat([f.records as Buffer].flat()).length <= limit).toBe(true);
      seen.push(...got);
      offset = BigInt(got.at(-1)! + 1);
    }
    expect(seen).toEqual(Array.from({ length: 30 }, (_, i) => i));
    // A fetch elsewhere (a reset consumer) is answered from the database, not from what was read ahead.
    expect(values((await fetchCold('ahead', 2n, 2500)).records).map((v) => Number(v.split(':')[0]))).toEqual([2, 3]);
    expect(values((await fetchCold('ahead', 20n, 2500)).records).map((v) => Number(v.split(':')[0]))).toEqual([20, 21]);
  });

  it('answers OFFSET_OUT_OF_RANGE when DeleteRecords removed what was read ahead', async () => {
    await fill('ahead-trim', 10);
    const first = await fetchCold('ahead-trim', 0n, 2500);
    expect(values(first.records).map((v) => Number(v.split(':')[0]))).toEqual([0, 1]);
    const del = await c.request(DeleteRecordsApi, 2, { topics: [{ name: 'ahead-trim', partitions: [{ partitionIndex: 0, offset: 6n }] }], timeoutMs: 1000 });
    expect(del.topics[0]!.partitions[0]!.errorCode).toBe(0);
    expect((await fetchCold('ahead-trim', 2n, 2500)).errorCode).toBe(ErrorCode.OFFSET_OUT_OF_RANGE);
    expect(values((await fetchCold('ahead-trim', 6n, 2500)).records).map((v) => Number(v.split(':')[0]))).toEqual([6, 7]);
  });
});

describe('ListOffsets', () => {
  it('finds earliest, latest, by timestamp and max timestamp', async () => {
    await createTopic('times');
    await produce('times', 0, batchOf(['a', 'b', 'c'], { baseTimestamp: 1000n })); // offsets 0-2 at 1000-1002
    await produce('times', 0, batchOf(['d', 'e'], { baseTimestamp: 5000n })); // offsets 3-4 at 5000-5001
    await produce('times', 0, batchOf(['f'], { baseTimestamp: 2000n })); // offset 5 at 2000
    const lookup = async (timestamp: bigint) => {
      const res = await client.request(ListOffsetsApi, 8, { replicaId: -1, topics: [{ name: 'times', partitions: [{ partitionIndex: 0, timestamp }] }] });
      const p = res.topics[0]!.partitions[0]!;
      return [p.errorCode, p.offset, p.timestamp];
    };
    expect(await lookup(-2n)).toEqual([0, 0n, -1n]);
    expect(await lookup(-1n)).toEqual([0, 6n, -1n]);
    expect(await lookup(1001n)).toEqual([0, 1n, 1001n]);
    expect(await lookup(1003n)).toEqual([0, 3n, 5000n]);
    expect(await lookup(9999n)).toEqual([0, -1n, -1n]);
    expect(await lookup(-3n)).toEqual([0, 4n, 5001n]);
  });
});
