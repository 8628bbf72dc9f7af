import { describe, expect, it } from 'vitest';
import {
  type Compression,
  buildBatch,
  buildEndTxnMarker,
  decodeRecords,
  parseBatches,
  parseControlKey,
  readBatchHeaderAt,
  recordTimestamp,
  scanRecords,
  setBaseOffset,
  setLogAppendTime,
  setPartitionLeaderEpoch,
  verifyCrc,
  batchLastOffset,
} from '../../../src/protocol/records/index.js';

const CODECS: Compression[] = [0, 1, 2, 3, 4];

function sample(n: number, withGaps = false) {
  return Array.from({ length: n }, (_, i) => ({
    offsetDelta: withGaps ? i * 3 : i,
    timestampDelta: BigInt((i * 7919) % 1000) - 100n,
    key: i % 5 === 0 ? null : Buffer.from(`key-${i}`),
    value: i % 11 === 0 ? null : i % 3 === 0 ? Buffer.alloc(0) : Buffer.from(`value-${i}-`.repeat(1 + (i % 17))),
    headers:
      i % 4 === 0
        ? []
        : [
            { key: 'trace', value: Buffer.from(`t${i}`) },
            { key: 'null-header', value: null },
            { key: 'ünïcødé', value: Buffer.alloc(0) },
          ],
  }));
}

describe('buildBatch → parseBatches → decodeRecords', () => {
  for (const codec of CODECS) {
    it(`codec ${codec}: 1000 records with nulls, headers, negative timestamp deltas`, () => {
      const recs = sample(1000);
      const buf = buildBatch({
        compression: codec,
        baseTimestamp: 1_700_000_000_000n,
        producerId: 42n,
        producerEpoch: 7,
        baseSequence: 1000,
        isTransactional: true,
        records: recs,
      });
      const p = parseBatches(buf, { verifyCrc: true });
      expect(p.error, p.message).toBeNull();
      const h = p.batches[0]!;
      expect(h.compression).toBe(codec);
      expect(h.recordCount).toBe(1000);
      expect(h.lastOffsetDelta).toBe(999);
      expect(h.producerId).toBe(42n);
      expect(h.producerEpoch).toBe(7);
      expect(h.baseSequence).toBe(1000);
      expect(h.isTransactional).toBe(true);
      expect(h.partitionLeaderEpoch).toBe(-1);
      const maxDelta = recs.reduce((m, r) => (r.timestampDelta > m ? r.timestampDelta : m), -1000n);
      expect(h.maxTimestamp).toBe(1_700_000_000_000n + maxDelta);
      if (codec !== 0) expect(buf.length).toBeLessThan(recs.reduce((s, r) => s + (r.value?.length ?? 0), 0));

      const d = decodeRecords(buf, h);
      expect(d.error, d.message).toBeNull();
      expect(d.records).toHaveLength(1000);
      d.records.forEach((r, i) => {
        const e = recs[i]!;
        expect(r.attributes).toBe(0);
        expect(r.offsetDelta).toBe(i);
        expect(r.timestampDelta).toBe(e.timestampDelta);
        expect(r.key).toEqual(e.key);
        expect(r.value).toEqual(e.value);
        expect(r.headers).toEqual(e.headers);
      });
    });

    it(`codec ${codec}: scanRecords reads what decodeRecords reads, without the bytes`, () => {
      const recs = sample(300);
      for (const timestampType of [0, 1] as const) {
        const buf = buildBatch({ compression: codec, timestampType, baseTimestamp: 1_700_000_000_000n, records: recs });
        const h = parseBatches(buf).batches[0]!;
        const scanned: [number, number, bigint, number, number][] = [];
        expect(scanRecords(buf, h, (...r) => scanned.push(r))).toEqual({ error: null });
        expect(scanned).toEqual(decodeRecords(buf, h).records.map((r, i) => [i, r.offsetDelta, recordTimestamp(h, r), r.key?.length ?? -1, r.value?.length ?? -1]));
      }
    });

    it(`codec ${codec}: offset gaps (compaction output), log mode`, () => {
      const recs = sample(20, true);
      const buf = buildBatch({ compression: codec, baseOffset: 5000n, baseTimestamp: 1n, records: recs });
      const strict = parseBatches(buf);
      expect(strict.error).toBe('INVALID_RECORD'); // clients may not send gaps / non-zero baseOffset
      const p = parseBatches(buf, { mode: 'log', verifyCrc: true });
      expect(p.error, p.message).toBeNull();
      const h = p.batches[0]!;
      expect(h.lastOffsetDelta).toBe(57);
      expect(batchLastOffset(h)).toBe(5057n);
      const d = decodeRecords(buf, h);
      expect(d.error).toBeNull();
      expect(d.records.map((r) => r.offsetDelta)).toEqual(recs.map((r) => r.offsetDelta));
    });
  }

  it('varint/varlong extremes survive', () => {
    const recs = [
      { timestampDelta: -(2n ** 63n), key: Buffer.from('a'), value: null, offsetDelta: 0 },
      { timestampDelta: 2n ** 63n - 1n, key: null, value: Buffer.from('b'), offsetDelta: 1 },
      { timestampDelta: 0n, key: Buffer.alloc(300, 1), value: Buffer.alloc(70000, 2), offsetDelta: 2147483646 },
    ];
    const buf = buildBatch({ baseTimestamp: 0n, maxTimestamp: 0n, records: recs });
    const h = parseBatches(buf, { mode: 'log' }).batches[0]!;
    const d = decodeRecords(buf, h);
    expect(d.error).toBeNull();
    expect(d.records.map((r) => r.timestampDelta)).toEqual(recs.map((r) => r.timestampDelta));
    expect(d.records[2]!.offsetDelta).toBe(2147483646);
    expect(d.records[2]!.value!.length).toBe(70000);
  });

  it('empty batch (compaction keeps it for producer state) is written uncompressed', () => {
    const buf = buildBatch({ compression: 3, records: [], lastOffsetDelta: 9, baseOffset: 10n, producerId: 5n, baseSequence: 0 });
    const p = parseBatches(buf, { mode: 'log', verifyCrc: true });
    expect(p.error).toBeNull();
    expect(p.batches[0]!.compression).toBe(0);
    expect(p.batches[0]!.recordCount).toBe(0);
    expect(batchLastOffset(p.batches[0]!)).toBe(19n);
    expect(decodeRecords(buf, p.batches[0]!)).toEqual({ records: [], error: null });
    expect(parseBatches(buf).error).toBe('INVALID_RECORD'); // count 0 from a client
  });

  it('many batches back to back; readBatchHeaderAt walks them', () => {
    const parts = CODECS.map((c, i) => buildBatch({ compression: c, baseOffset: BigInt(i * 100), records: sample(10 + i) }));
    const buf = Buffer.concat(parts);
    const p = parseBatches(buf, { mode: 'log', verifyCrc: true });
    expect(p.error).toBeNull();
    expect(p.batches.map((b) => b.baseOffset)).toEqual([0n, 100n, 200n, 300n, 400n]);
    let pos = 0;
    for (let i = 0; i < parts.length; i++) {
      const h = readBatchHeaderAt(buf, pos)!;
      expect(h).toEqual(p.batches[i]);
      expect(decodeRecords(buf, h).records).toHaveLength(10 + i);
      pos = h.end;
    }
    expect(readBatchHeaderAt(buf, pos)).toBeNull();
    expect(readBatchHeaderAt(buf, 3)).toBeNull();
    expect(parseBatches(buf).error).toBe('INVALID_RECORD'); // produce: exactly one batch
  });

  it('control batch: end transaction marker', () => {
    const buf = buildEndTxnMarker({ commit: true, producerId: 9n, producerEpoch: 2, coordinatorEpoch: 4, baseOffset: 77n, timestamp: 123n });
    const p = parseBatches(buf, { mode: 'log', verifyCrc: true });
    expect(p.error).toBeNull();
    const h = p.batches[0]!;
    expect(h.isControl).toBe(true);
    expect(h.isTransactional).toBe(true);
    expect(h.producerId).toBe(9n);
    const d = decodeRecords(buf, h);
    expect(parseControlKey(d.records[0]!.key)).toEqual({ version: 0, type: 1 });
    expect(d.records[0]!.value!.readInt32BE(2)).toBe(4);
    expect(parseBatches(buf).error).toBe('INVALID_RECORD'); // clients may not write control batches
  });
});

describe('in-place header edits', () => {
  for (const codec of CODECS) {
    it(`codec ${codec}: setBaseOffset / setPartitionLeaderEpoch keep the CRC; setLogAppendTime recomputes it`, () => {
      const buf = buildBatch({ compression: codec, baseTimestamp: 1000n, records: sample(30) });
      const h = parseBatches(buf, { verifyCrc: true }).batches[0]!;
      const crcBefore = h.crc;
      setBaseOffset(buf, h, 123456789012n);
      setPartitionLeaderEpoch(buf, h, 17);
      expect(verifyCrc(buf, h)).toBe(true);
      expect(buf.readUInt32BE(17)).toBe(crcBefore);
      const re = readBatchHeaderAt(buf, 0)!;
      expect(re.baseOffset).toBe(123456789012n);
      expect(re.partitionLeaderEpoch).toBe(17);

      setLogAppendTime(buf, h, 1_800_000_000_000n);
      expect(verifyCrc(buf, h)).toBe(true);
      const la = readBatchHeaderAt(buf, 0)!;
      expect(la.timestampType).toBe(1);
      expect(la.maxTimestamp).toBe(1_800_000_000_000n);
      expect(la.compression).toBe(codec);
      expect(la.crc).toBe(h.crc);
      expect(h.timestampType).toBe(1);
      expect(decodeRecords(buf, la).records).toHaveLength(30);
    });
  }
});
