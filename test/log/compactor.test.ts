// The compactor's pure parts: which records survive, how a batch is rebuilt
// (offsets, last offset delta, producer fields, codec, timestamps, CRC, the
// KIP-534 delete horizon), and when a partition is due.
import { describe, expect, it } from 'vitest';
import { cleanBatch, cleaningDue, LatestOffsets, selectRecords } from '../../src/log/compactor.js';
import { ATTR_DELETE_HORIZON, buildBatch, decodeRecords, parseBatches, readBatchHeaderAt, recordTimestamp, type Compression, type KafkaRecord } from '../../src/protocol/records/index.js';
import type { CleanerState } from '../../src/storage/pg/compaction-store.js';

const b = (s: string) => Buffer.from(s);
const rec = (offsetDelta: number, key: string | null, value: string | null): KafkaRecord => ({
  attributes: 0,
  timestampDelta: BigInt(offsetDelta),
  offsetDelta,
  key: key === null ? null : b(key),
  value: value === null ? null : b(value),
  headers: [],
});

function mapOf(entries: [string, number][]): LatestOffsets {
  const m = new LatestOffsets();
  for (const [k, o] of entries) m.note(b(k), o);
  return m;
}

function batch(baseOffset: bigint, recs: [string | null, string | null][], opts: { compression?: Compression; timestampType?: 0 | 1; baseTimestamp?: bigint } = {}) {
  return buildBatch({
    baseOffset,
    compression: opts.compression ?? 0,
    timestampType: opts.timestampType ?? 0,
    producerId: 42n,
    producerEpoch: 3,
    baseSequence: 7,
    baseTimestamp: opts.baseTimestamp ?? 1_000_000n,
    records: recs.map(([k, v], i) => ({ offsetDelta: i, timestampDelta: BigInt(i * 10), key: k === null ? null : b(k), value: v === null ? null : b(v), headers: [{ key: 'h', value: b(`h${i}`) }] })),
  });
}

function readBack(data: Buffer) {
  const parsed = parseBatches(data, { mode: 'log', verifyCrc: true });
  expect(parsed.error).toBeNull();
  const h = parsed.batches[0]!;
  const { records, error } = decodeRecords(data, h);
  expect(error).toBeNull();
  return {
    h,
    records: records.map((r) => ({
      offset: h.baseOffset + BigInt(r.offsetDelta),
      ts: recordTimestamp(h, r),
      key: r.key?.toString() ?? null,
      value: r.value?.toString() ?? null,
      headers: r.headers.map((x) => x.value?.toString()),
    })),
  };
}

describe('LatestOffsets', () => {
  it('keeps the largest offset per key, keys compared as bytes', () => {
    const m = mapOf([
      ['a', 5],
      ['a', 3],
      ['b', 1],
    ]);
    m.note(Buffer.from([0xff, 0x00]), 9);
    expect(m.get(b('a'))).toBe(5);
    expect(m.get(b('b'))).toBe(1);
    expect(m.get(Buffer.from([0xff, 0x00]))).toBe(9);
    expect(m.get(Buffer.from([0xff]))).toBeUndefined();
    expect(m.size).toBe(3);
  });
});

describe('selectRecords', () => {
  it('keeps the latest record per key; a key the map lacks is the latest already', () => {
    const recs = [rec(0, 'a', '1'), rec(1, 'b', '1'), rec(2, 'a', '2'), rec(3, 'c', '1')];
    const { kept, removed } = selectRecords(
      10,
      recs,
      mapOf([
        ['a', 12],
        ['b', 20],
      ]),
      { horizonPassed: false },
    );
    expect(kept.map((r) => r.offsetDelta)).toEqual([2, 3]);
    expect(removed).toBe(2);
  });

  it('keeps tombstones until their horizon passes, unless an earlier transactional record pins the key', () => {
    const recs = [rec(0, 'a', null), rec(1, 'b', null)];
    expect(selectRecords(0, recs, mapOf([]), { horizonPassed: false })).toMatchObject({ removed: 0, tombstones: 2 });
    expect(selectRecords(0, recs, mapOf([]), { horizonPassed: true })).toMatchObject({ removed: 2, tombstones: 0 });
    const pinned = selectRecords(0, recs, mapOf([]), { horizonPassed: true, pinned: new Set(['b']) });
    expect(pinned.kept.map((r) => r.key!.toString())).toEqual(['b']);
  });

  it("drops keyless records, as Kafka's cleaner does", () => {
    expect(selectRecords(0, [rec(0, null, 'x'), rec(1, 'a', 'y')], mapOf([]), { horizonPassed: false }).kept.map((r) => r.offsetDelta)).toEqual([1]);
  });
});

describe('cleanBatch', () => {
  it('leaves a batch with nothing to remove as it is', () => {
    const data = batch(100n, [
      ['a', '1'],
      ['b', '1'],
    ]);
    expect(
      cleanBatch(
        data,
        mapOf([
          ['a', 100],
          ['b', 101],
        ]),
        { now: 0, deleteRetentionMs: 1000 },
      ),
    ).toMatchObject({ action: 'keep', removed: 0 });
  });

  it('deletes a batch left without records', () => {
    const data = batch(100n, [
      ['a', '1'],
      ['b', '1'],
    ]);
    expect(
      cleanBatch(
        data,
        mapOf([
          ['a', 200],
          ['b', 201],
        ]),
        { now: 0, deleteRetentionMs: 1000 },
      ),
    ).toMatchObject({ action: 'delete', removed: 2 });
  });

  it("keeps a producer's newest batch as an empty batch, offsets and producer fields intact", () => {
    const data = batch(
      100n,
      [
        ['a', '1'],
        ['b', '1'],
      ],
      { compression: 4 },
    );
    const out = cleanBatch(
      data,
      mapOf([
        ['a', 200],
        ['b', 201],
      ]),
      { now: 0, deleteRetentionMs: 1000, keepEmpty: true },
    );
    expect(out).toMatchObject({ action: 'rewrite', removed: 2, recordCount: 0, firstTimestamp: -1n, maxTimestamp: -1n });
    if (out.action !== 'rewrite') return;
    const { h, records } = readBack(out.data);
    expect(records).toEqual([]);
    expect(h).toMatchObject({ baseOffset: 100n, lastOffsetDelta: 1, recordCount: 0, producerId: 42n, producerEpoch: 3, baseSequence: 7 });
    // Already empty: nothing to do; once a newer batch of the producer exists, it goes.
    expect(cleanBatch(out.data, mapOf([]), { now: 0, deleteRetentionMs: 1000, keepEmpty: true })).toMatchObject({ action: 'keep' });
    expect(cleanBatch(out.data, mapOf([]), { now: 0, deleteRetentionMs: 1000 })).toMatchObject({ action: 'delete', removed: 0 });
  });

  for (const compression of [0, 1, 2, 3, 4] as Compression[]) {
    it(`rewrites with original offsets, last offset delta, producer fields, timestamps and codec ${compression}; CRC valid`, () => {
      const data = batch(
        100n,
        [
          ['a', '1'],
          ['b', '1'],
          ['a', '2'],
          ['c', '1'],
          ['b', '2'],
        ],
        { compression },
      );
      const out = cleanBatch(
        data,
        mapOf([
          ['a', 102],
          ['b', 150],
        ]),
        { now: 0, deleteRetentionMs: 1000 },
      );
      expect(out.action).toBe('rewrite');
      if (out.action !== 'rewrite') return;
      const { h, records } = readBack(out.data);
      expect(h).toMatchObject({ baseOffset: 100n, lastOffsetDelta: 4, recordCount: 2, compression, producerId: 42n, producerEpoch: 3, baseSequence: 7, timestampType: 0 });
      expect(records).toEqual([
        { offset: 102n, ts: 1_000_020n, key: 'a', value: '2', headers: ['h2'] },
        { offset: 103n, ts: 1_000_030n, key: 'c', value: '1', headers: ['h3'] },
      ]);
      expect(h.baseTimestamp).toBe(1_000_020n);
      expect(h.maxTimestamp).toBe(1_000_030n);
      expect(out).toMatchObject({ removed: 3, recordCount: 2, firstTimestamp: 1_000_020n, maxTimestamp: 1_000_030n });
    });
  }

  it('stamps a delete horizon on the first pass that keeps a tombstone, without changing record timestamps', () => {
    const now = 5_000_000;
    const data = batch(0n, [
      ['a', null],
      ['b', '1'],
    ]);
    const first = cleanBatch(data, mapOf([]), { now, deleteRetentionMs: 60_000 });
    expect(first).toMatchObject({ action: 'rewrite', removed: 0, tombstoneHorizon: now + 60_000 });
    if (first.action !== 'rewrite') return;
    const { h, records } = readBack(first.data);
    expect(h.attributes & ATTR_DELETE_HORIZON).toBe(ATTR_DELETE_HORIZON);
    expect(h.baseTimestamp).toBe(BigInt(now + 60_000));
    expect(records.map((r) => r.ts)).toEqual([1_000_000n, 1_000_010n]);
    expect(h.maxTimestamp).toBe(1_000_010n);

    // Before the horizon: kept, untouched. At the horizon: the tombstone goes, the horizon flag with it.
    expect(cleanBatch(first.data, mapOf([]), { now: now + 59_999, deleteRetentionMs: 60_000 })).toMatchObject({ action: 'keep', tombstoneHorizon: now + 60_000 });
    const second = cleanBatch(first.data, mapOf([]), { now: now + 60_000, deleteRetentionMs: 60_000 });
    expect(second).toMatchObject({ action: 'rewrite', removed: 1, tombstoneHorizon: null });
    if (second.action !== 'rewrite') return;
    const after = readBack(second.data);
    expect(after.h.attributes & ATTR_DELETE_HORIZON).toBe(0);
    expect(after.records).toEqual([{ offset: 1n, ts: 1_000_010n, key: 'b', value: '1', headers: ['h1'] }]);
  });

  it('keeps LogAppendTime batches LogAppendTime with their max timestamp', () => {
    const data = batch(
      0n,
      [
        ['a', '1'],
        ['a', '2'],
      ],
      { timestampType: 1 },
    );
    const lat = readBatchHeaderAt(data, 0)!.maxTimestamp;
    const out = cleanBatch(data, mapOf([['a', 1]]), { now: 0, deleteRetentionMs: 1000 });
    if (out.action !== 'rewrite') throw new Error('expected a rewrite');
    const { h } = readBack(out.data);
    expect(h.timestampType).toBe(1);
    expect(h.maxTimestamp).toBe(lat);
  });

  it('leaves control and transactional batches alone', () => {
    const txn = buildBatch({ isTransactional: true, producerId: 1n, producerEpoch: 0, baseSequence: 0, records: [{ key: b('a'), value: b('1') }] });
    expect(cleanBatch(txn, mapOf([['a', 99]]), { now: 0, deleteRetentionMs: 0 })).toMatchObject({ action: 'keep', skipped: 'transactional batch' });
    const ctl = buildBatch({ isControl: true, isTransactional: true, producerId: 1n, records: [{ key: Buffer.from([0, 0, 0, 1]), value: Buffer.alloc(6) }] });
    expect(cleanBatch(ctl, mapOf([]), { now: 0, deleteRetentionMs: 0 })).toMatchObject({ action: 'keep', skipped: 'control batch' });
  });
});

describe('cleaningDue', () => {
  const state = (s: Partial<CleanerState>): CleanerState => ({
    logStartOffset: 0n,
    highWatermark: 100n,
    dirtyStart: 0n,
    rangeEnd: 90n,
    dirtyBytes: 0,
    totalBytes: 1000,
    firstDirtyTimestamp: null,
    tombstonesDueAt: null,
    ...s,
  });
  const config = { minCleanableDirtyRatio: 0.5, maxCompactionLagMs: Number.MAX_SAFE_INTEGER };

  it('runs at or above min.cleanable.dirty.ratio only', () => {
    expect(cleaningDue(state({ dirtyBytes: 499 }), config, 0)).toBeNull();
    expect(cleaningDue(state({ dirtyBytes: 500 }), config, 0)).toBe('dirty-ratio');
  });
  it('max.compaction.lag.ms forces a pass below the ratio', () => {
    expect(cleaningDue(state({ dirtyBytes: 10, firstDirtyTimestamp: 1000 }), { ...config, maxCompactionLagMs: 500 }, 1600)).toBe('max-compaction-lag');
    expect(cleaningDue(state({ dirtyBytes: 10, firstDirtyTimestamp: 1000 }), { ...config, maxCompactionLagMs: 500 }, 1400)).toBeNull();
  });
  it('a passed tombstone horizon forces a pass', () => {
    expect(cleaningDue(state({ tombstonesDueAt: 50 }), config, 49)).toBeNull();
    expect(cleaningDue(state({ tombstonesDueAt: 50 }), config, 50)).toBe('tombstones-due');
  });
  it('never with an empty cleanable range', () => {
    expect(cleaningDue(state({ rangeEnd: 0n, dirtyBytes: 1000 }), config, 0)).toBeNull();
  });
});
