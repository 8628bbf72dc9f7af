// Compaction (cleanup.policy=compact) against real PostgreSQL: the latest
// record per key survives at its original offset, the newest batch is never
// touched, CRCs stay valid, tombstones live delete.retention.ms after the
// cleaner first keeps them (KIP-534 delete horizon) and then vanish,
// min.cleanable.dirty.ratio / min.compaction.lag.ms / max.compaction.lag.ms
// decide when a partition is cleaned, and compact,delete applies both.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreateTopicsApi, FetchApi, ListOffsetsApi, ProduceApi } from '../../src/protocol/messages/index.js';
import { buildBatch, decodeRecords, parseBatches, recordTimestamp } from '../../src/protocol/records/index.js';
import { startTestBroker, type TestBroker } from '../support/broker.js';
import { RawClient } from '../support/raw-client.js';

let broker: TestBroker;
let client: RawClient;

beforeAll(async () => {
  // The tests run cleaner passes themselves; chunks of 2 batches exercise the chunking.
  broker = await startTestBroker({ logRetentionCheckIntervalMs: 3_600_000, logCleanerBackoffMs: 3_600_000, logCleanerChunkBatches: 2 });
  client = await RawClient.connect(broker.bootstrap);
});
afterAll(async () => {
  client?.close();
  await broker?.destroy();
});

async function createTopic(name: string, configs: Record<string, string>) {
  const res = await client.request(CreateTopicsApi, 7, {
    topics: [{ name, numPartitions: 1, replicationFactor: 1, configs: Object.entries(configs).map(([n, value]) => ({ name: n, value })) }],
  });
  expect(res.topics[0]!.errorCode).toBe(0);
}

type KV = [string, string | null];

/** Appends one batch; `ageMs` makes its records that old. */
async function produce(topic: string, records: KV[], ageMs = 0): Promise<bigint> {
  const batch = buildBatch({
    baseTimestamp: BigInt(Date.now() - ageMs),
    records: records.map(([k, v], i) => ({ offsetDelta: i, timestampDelta: BigInt(i), key: Buffer.from(k), value: v === null ? null : Buffer.from(v) })),
  });
  const res = await client.request(ProduceApi, 9, { acks: -1, timeoutMs: 1000, topicData: [{ name: topic, partitionData: [{ index: 0, records: batch }] }] });
  const part = res.responses[0]!.partitionResponses[0]!;
  expect(part.errorCode).toBe(0);
  return part.baseOffset;
}

/** Everything a consumer reading from `from` sees, following the batches to the high watermark; CRCs verified. */
async function readAll(topic: string, from = 0n) {
  const out: { offset: bigint; key: string; value: string | null; ts: bigint }[] = [];
  let at = from;
  for (;;) {
    const res = await client.request(FetchApi, 11, {
      replicaId: -1,
      maxWaitMs: 0,
      minBytes: 1,
      maxBytes: 1 << 20,
      sessionEpoch: -1,
      topics: [{ topic, partitions: [{ partition: 0, fetchOffset: at, partitionMaxBytes: 1 << 20 }] }],
    });
    const part = res.responses[0]!.partitions[0]!;
    expect(part.errorCode).toBe(0);
    const buf = (part.records as Buffer | null) ?? Buffer.alloc(0);
    const parsed = parseBatches(buf, { mode: 'log', verifyCrc: true });
    expect(parsed.error).toBeNull();
    if (parsed.batches.length === 0) return out;
    for (const h of parsed.batches) {
      const { records, error } = decodeRecords(buf, h);
      expect(error).toBeNull();
      for (const r of records) {
        const offset = h.baseOffset + BigInt(r.offsetDelta);
        if (offset >= at) out.push({ offset, key: r.key!.toString(), value: r.value?.toString() ?? null, ts: recordTimestamp(h, r) });
      }
      at = h.baseOffset + BigInt(h.lastOffsetDelta) + 1n;
    }
    if (at >= part.highWatermark) return out;
  }
}

const view = (recs: Awaited<ReturnType<typeof readAll>>) => recs.map((r) => `${r.offset}:${r.key}=${r.value ?? '∅'}`);

async function stored(topic: string) {
  return broker.query<{ base_offset: string; last_offset: string; record_count: number; size: number; data: Buffer }>(
    `SELECT b.base_offset::text, b.last_offset::text, b.record_count, b.size, b.data FROM batches b JOIN topics t USING (topic_id) WHERE t.name = $1 ORDER BY b.base_offset`,
    [topic],
  );
}

async function earliest(topic: string) {
  const res = await client.request(ListOffsetsApi, 7, { replicaId: -1, topics: [{ name: topic, partitions: [{ partitionIndex: 0, timestamp: -2n }] }] });
  return res.topics[0]!.partitions[0]!.offset;
}

describe('cleanup.policy=compact', () => {
  it('keeps the latest value per key at its original offset, never touches the newest batch, and lets tombstones go after delete.retention.ms', async () => {
    const topic = 'compacted';
    await createTopic(topic, { 'cleanup.policy': 'compact', 'min.cleanable.dirty.ratio': '0.01', 'delete.retention.ms': '60000' });
    await produce(topic, [
      ['k1', 'a1'],
      ['k2', 'a2'],
      ['k3', 'a3'],
      ['k4', 'a4'],
      ['k5', 'a5'],
    ]); // 0..4
    await produce(topic, [
      ['k1', 'b1'],
      ['k2', 'b2'],
      ['k3', 'b3'],
      ['k4', 'b4'],
      ['k5', 'b5'],
    ]); // 5..9
    await produce(topic, [
      ['k1', 'c1'],
      ['k2', 'c2'],
      ['k3', null],
    ]); // 10..12, k3 deleted
    await produce(topic, [
      ['k6', 'x6'],
      ['k6', 'y6'],
    ]); // 13..14
    await produce(topic, [['k4', 'd4']]); // 15: the newest batch
    const before = await stored(topic);
    const newest = before.at(-1)!;

    const now = Date.now();
    await broker.cleaner.runOnce(now);
    const after = await stored(topic);
    // Batch 0 lost every record (deleted); 5 keeps k5 only; 13 keeps 14 (last offset kept); 15 is byte-for-byte the same.
    expect(after.map((b) => [b.base_offset, b.last_offset, b.record_count])).toEqual([
      ['5', '9', 1],
      ['10', '12', 3],
      ['13', '14', 1],
      ['15', '15', 1],
    ]);
    expect(after.at(-1)!.data.equals(newest.data)).toBe(true);
    for (const b of after) expect(b.size).toBe(b.data.length);

    const compacted = await readAll(topic);
    expect(view(compacted)).toEqual(['9:k5=b5', '10:k1=c1', '11:k2=c2', '12:k3=∅', '14:k6=y6', '15:k4=d4']);
    expect(await earliest(topic)).toBe(0n); // compaction leaves the log start where it was; offset 0 is just a gap now

    // Before the delete horizon the tombstone stays (a consumer that is behind still sees the delete).
    await broker.cleaner.runOnce(now + 30_000);
    expect(view(await readAll(topic))).toContain('12:k3=∅');

    // After it, the tombstone is gone; the pass runs without new writes (the horizon is due), and a
    // consumer reading from 0 now never hears of k3 at all: the documented hazard for consumers that
    // stay away longer than delete.retention.ms.
    await broker.cleaner.runOnce(now + 60_001);
    const late = await readAll(topic);
    expect(view(late)).toEqual(['9:k5=b5', '10:k1=c1', '11:k2=c2', '14:k6=y6', '15:k4=d4']);
    expect(late.some((r) => r.key === 'k3')).toBe(false);
    // Record timestamps survive the rewrites.
    const original = new Map((await readAllFrom(before)).map((r) => [r.offset, r.ts]));
    for (const r of late) expect(r.ts).toBe(original.get(r.offset));
    expect((await stored(topic)).at(-1)!.data.equals(newest.data)).toBe(true);
  });

  it('leaves a partition below min.cleanable.dirty.ratio alone; max.compaction.lag.ms forces it', async () => {
    const topic = 'lazy';
    await createTopic(topic, { 'cleanup.policy': 'compact', 'min.cleanable.dirty.ratio': '0.9', 'max.compaction.lag.ms': '600000' });
    const value = 'v'.repeat(200);
    for (let i = 0; i < 4; i++)
      await produce(topic, [
        ['k1', `${value}${i}`],
        ['k2', `${value}${i}`],
      ]); // 0..7
    await produce(topic, [['k9', 'newest']]); // 8
    const now = Date.now();
    await broker.cleaner.runOnce(now); // everything is dirty on the first pass: ratio 1
    expect(view(await readAll(topic)).map((s) => s.slice(0, 6))).toEqual(['6:k1=v', '7:k2=v', '8:k9=n']);

    // A small dirty tail over a clean head: ratio well below 0.9, nothing is rewritten.
    await produce(topic, [['k1', 'small']]); // 9
    await produce(topic, [['k9', 'newest2']]); // 10
    const before = await stored(topic);
    await broker.cleaner.runOnce(now);
    const after = await stored(topic);
    expect(after.map((b) => b.data.toString('hex'))).toEqual(before.map((b) => b.data.toString('hex')));
    expect(view(await readAll(topic)).map((s) => s.slice(0, 6))).toEqual(['6:k1=v', '7:k2=v', '8:k9=n', '9:k1=s', '10:k9=']);

    // Once the oldest dirty batch is older than max.compaction.lag.ms, the ratio no longer matters.
    await broker.cleaner.runOnce(now + 600_001);
    expect(view(await readAll(topic)).map((s) => s.slice(0, 6))).toEqual(['7:k2=v', '9:k1=s', '10:k9=']);
  });

  it('min.compaction.lag.ms keeps recent batches out of the cleanable range', async () => {
    const topic = 'lagged';
    await createTopic(topic, { 'cleanup.policy': 'compact', 'min.cleanable.dirty.ratio': '0.01', 'min.compaction.lag.ms': '3600000' });
    await produce(
      topic,
      [
        ['k1', 'old1'],
        ['k2', 'old2'],
      ],
      2 * 3_600_000,
    ); // 0..1, two hours old
    await produce(topic, [['k1', 'new1']]); // 2: recent
    await produce(topic, [
      ['k2', 'new2'],
      ['k1', 'new1b'],
    ]); // 3..4: recent, newest
    await broker.cleaner.runOnce();
    // The old batch is compacted against every later key; the recent ones keep their superseded records.
    expect(view(await readAll(topic))).toEqual(['2:k1=new1', '3:k2=new2', '4:k1=new1b']);
    const rows = await stored(topic);
    expect(rows.map((b) => b.base_offset)).toEqual(['2', '3']);
  });

  it('compact,delete: retention drops old batches and compaction dedupes the rest', async () => {
    const topic = 'both';
    await createTopic(topic, { 'cleanup.policy': 'compact,delete', 'retention.ms': '3600000', 'min.cleanable.dirty.ratio': '0.01' });
    await produce(
      topic,
      [
        ['k1', 'ancient'],
        ['k7', 'ancient'],
      ],
      2 * 3_600_000,
    ); // 0..1: past retention
    await produce(topic, [
      ['k1', 'a'],
      ['k2', 'a'],
    ]); // 2..3
    await produce(topic, [['k1', 'b']]); // 4
    await produce(topic, [['k3', 'newest']]); // 5
    await broker.cleaner.runOnce();
    expect(await earliest(topic)).toBe(2n);
    expect(view(await readAll(topic, 2n))).toEqual(['3:k2=a', '4:k1=b', '5:k3=newest']);
  });

  it('a pass with nothing new to clean rewrites nothing and keeps the checkpoint', async () => {
    const topic = 'idle';
    await createTopic(topic, { 'cleanup.policy': 'compact', 'min.cleanable.dirty.ratio': '0.01' });
    await produce(topic, [
      ['a', '1'],
      ['a', '2'],
    ]);
    await produce(topic, [['a', '3']]);
    await broker.cleaner.runOnce();
    const first = await stored(topic);
    const cp = await broker.query<{ cleaned_offset: string }>(`SELECT c.cleaned_offset::text FROM cleaner_checkpoints c JOIN topics t USING (topic_id) WHERE t.name = $1`, [topic]);
    expect(cp).toEqual([{ cleaned_offset: '2' }]);
    await broker.cleaner.runOnce();
    expect((await stored(topic)).map((b) => b.data.toString('hex'))).toEqual(first.map((b) => b.data.toString('hex')));
  });
});

/** Record timestamps of stored rows as they were before compaction. */
async function readAllFrom(rows: { data: Buffer }[]) {
  return rows.flatMap(({ data }) => {
    const h = parseBatches(data, { mode: 'log' }).batches[0]!;
    return decodeRecords(data, h).records.map((r) => ({ offset: h.baseOffset + BigInt(r.offsetDelta), ts: recordTimestamp(h, r) }));
  });
}
