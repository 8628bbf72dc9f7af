import { describe, expect, it } from 'vitest';
import { buildBatch, decodeRecords, parseBatches, verifyCrc, readBatchHeaderAt, scanRecords, type Compression } from '../../../src/protocol/records/index.js';

const recs = (n: number) => Array.from({ length: n }, (_, i) => ({ key: Buffer.from(`k${i}`), value: Buffer.from(`v${i}`), headers: [{ key: 'h', value: null }] }));

describe('CRC', () => {
  for (const codec of [0, 2] as Compression[]) {
    it(`codec ${codec}: flipping any byte in the CRC-covered region fails verifyCrc`, () => {
      const buf = buildBatch({ compression: codec, baseTimestamp: 1n, records: recs(5) });
      const h = parseBatches(buf).batches[0]!;
      expect(verifyCrc(buf, h)).toBe(true);
      for (let i = 21; i < buf.length; i++) {
        const copy = Buffer.from(buf);
        copy[i]! ^= 0x01 << (i % 8);
        expect(verifyCrc(copy, h), `byte ${i}`).toBe(false);
        const p = parseBatches(copy, { mode: 'log', verifyCrc: true });
        expect(p.error, `byte ${i}`).not.toBeNull();
      }
      // bytes outside the CRC (baseOffset, batchLength, epoch, magic, crc itself) are not covered by it
      for (const i of [0, 7, 12, 15]) {
        const copy = Buffer.from(buf);
        copy[i]! ^= 0xff;
        expect(verifyCrc(copy, h)).toBe(true);
      }
    });
  }

  it('bad CRC on produce → CORRUPT_MESSAGE', () => {
    const buf = buildBatch({ records: recs(3) });
    buf[buf.length - 1]! ^= 0xff;
    expect(parseBatches(buf, { verifyCrc: true }).error).toBe('CORRUPT_MESSAGE');
    expect(parseBatches(buf).error).toBeNull(); // CRC is verifyCrc's job unless asked
  });
});

describe('truncation', () => {
  it('every prefix of a 2-batch buffer: an error for stored data; for a produce, the complete batches (Kafka stops at a partial one), no throw', () => {
    const a = buildBatch({ baseOffset: 0n, records: recs(3) });
    const b = buildBatch({ baseOffset: 3n, compression: 1, records: recs(4) });
    const buf = Buffer.concat([a, b]);
    expect(parseBatches(buf, { mode: 'log', verifyCrc: true }).error).toBeNull();
    for (let n = 0; n < buf.length; n++) {
      const cut = buf.subarray(0, n);
      const log = parseBatches(cut, { mode: 'log', verifyCrc: true });
      const produce = parseBatches(cut, { verifyCrc: true });
      if (n === 0) {
        expect(log.error).toBeNull(); // nothing is fine for stored data
        expect(produce.error).toBe('INVALID_RECORD'); // "must have at least one record batch"
      } else if (n === a.length) {
        expect(log.error).toBeNull();
        expect(log.batches).toHaveLength(1);
      } else {
        expect(log.error, `n=${n}`).toBe('CORRUPT_MESSAGE');
        expect(log.batches.length).toBe(n > a.length ? 1 : 0);
        // Kafka's iterator ends at a partial batch: none complete is "at least one batch" (INVALID_RECORD);
        // after a complete one the partial bytes are dropped (UnifiedLog.trimInvalidBytes).
        expect(produce.error, `n=${n}`).toBe(n < a.length ? 'INVALID_RECORD' : null);
        expect(produce.batches.length, `n=${n}`).toBe(n < a.length ? 0 : 1);
      }
      const partial = parseBatches(cut, { mode: 'log', allowTrailingPartial: true });
      expect(partial.error).toBeNull();
      expect(partial.batches.length).toBe(n >= a.length ? 1 : 0);
      expect(readBatchHeaderAt(cut, n >= a.length ? a.length : 0)).toBeNull();
    }
  });

  it('decodeRecords on a record region cut short (header patched consistently) never throws', () => {
    for (const codec of [0, 1, 2, 3, 4] as Compression[]) {
      const full = buildBatch({ compression: codec, records: recs(20) });
      for (let n = 61; n < full.length; n++) {
        const cut = Buffer.from(full.subarray(0, n));
        cut.writeInt32BE(n - 12, 8);
        const h = readBatchHeaderAt(cut, 0)!;
        const d = decodeRecords(cut, h);
        expect(d.error, `codec ${codec} n=${n}`).not.toBeNull();
        expect(scanRecords(cut, h, () => {}).error, `codec ${codec} n=${n}`).not.toBeNull();
      }
    }
  });

  it('random garbage never throws', () => {
    let seed = 12345;
    const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    const base = buildBatch({ compression: 0, records: recs(10) });
    for (let iter = 0; iter < 3000; iter++) {
      const buf = Buffer.from(base);
      const flips = 1 + Math.floor(rnd() * 4);
      for (let k = 0; k < flips; k++) buf[Math.floor(rnd() * buf.length)] = Math.floor(rnd() * 256);
      const p = parseBatches(buf, { mode: 'log' });
      for (const h of p.batches) {
        decodeRecords(buf, h, 1 << 20);
        scanRecords(buf, h, () => {}, 1 << 20);
      }
      const codec = Math.floor(rnd() * 5) as Compression;
      buf.writeInt16BE(codec, 21);
      const h = readBatchHeaderAt(buf, 0);
      if (h) decodeRecords(buf, h, 1 << 20);
    }
  });
});

describe('produce validation (Kafka error mapping)', () => {
  const good = () => buildBatch({ records: recs(3) });

  it('accepts a well-formed client batch', () => {
    expect(parseBatches(good(), { verifyCrc: true, produceVersion: 11 })).toMatchObject({ error: null });
  });

  it('batchLength < 14 → CORRUPT_MESSAGE; 14..48 (below v2 header) → CORRUPT_MESSAGE', () => {
    const b = good();
    b.writeInt32BE(13, 8);
    expect(parseBatches(b).error).toBe('CORRUPT_MESSAGE');
    const small = Buffer.alloc(40);
    small.writeInt32BE(28, 8);
    small[16] = 2;
    expect(parseBatches(small).error).toBe('CORRUPT_MESSAGE');
  });

  it('absurd batchLength: stored data CORRUPT_MESSAGE, a produce INVALID_RECORD (no complete batch); a negative one CORRUPT_MESSAGE; no allocation', () => {
    const b = good();
    b.writeInt32BE(0x7fffffff, 8);
    expect(parseBatches(b, { mode: 'log' }).error).toBe('CORRUPT_MESSAGE');
    expect(parseBatches(b).error).toBe('INVALID_RECORD');
    b.writeInt32BE(-5, 8);
    expect(parseBatches(b).error).toBe('CORRUPT_MESSAGE');
    expect(parseBatches(b, { mode: 'log' }).error).toBe('CORRUPT_MESSAGE');
  });

  it('magic 0/1 → INVALID_RECORD on produce; magic > 2 or < 0 → CORRUPT_MESSAGE', () => {
    for (const [m, e] of [
      [0, 'INVALID_RECORD'],
      [1, 'INVALID_RECORD'],
      [3, 'CORRUPT_MESSAGE'],
      [-1, 'CORRUPT_MESSAGE'],
    ] as const) {
      const b = good();
      b.writeInt8(m, 16);
      expect(parseBatches(b).error, `magic ${m}`).toBe(e);
    }
  });

  it('two batches on produce → INVALID_RECORD', () => {
    expect(parseBatches(Buffer.concat([good(), good()])).error).toBe('INVALID_RECORD');
  });

  it('baseOffset != 0 on produce → INVALID_RECORD', () => {
    expect(parseBatches(buildBatch({ baseOffset: 5n, records: recs(1) })).error).toBe('INVALID_RECORD');
  });

  it('too large → RECORD_TOO_LARGE', () => {
    const b = good();
    expect(parseBatches(b, { maxBatchBytes: b.length }).error).toBeNull();
    expect(parseBatches(b, { maxBatchBytes: b.length - 1 }).error).toBe('RECORD_TOO_LARGE');
  });

  it('unknown codec 5-7 → UNSUPPORTED_COMPRESSION_TYPE; zstd on produce < v7 too', () => {
    for (const c of [5, 6, 7]) {
      const b = good();
      b.writeInt16BE(c, 21);
      expect(parseBatches(b).error).toBe('UNSUPPORTED_COMPRESSION_TYPE');
      const h = readBatchHeaderAt(b, 0)!;
      expect(decodeRecords(b, h).error).toBe('UNSUPPORTED_COMPRESSION_TYPE');
    }
    const z = buildBatch({ compression: 4, records: recs(2) });
    expect(parseBatches(z, { produceVersion: 6 }).error).toBe('UNSUPPORTED_COMPRESSION_TYPE');
    expect(parseBatches(z, { produceVersion: 7 }).error).toBeNull();
  });

  it('count / lastOffsetDelta inconsistencies → INVALID_RECORD', () => {
    const cases: Array<[number, number]> = [
      [-1, 2], // recordCount < 0
      [0, 2], // recordCount 0
      [3, 3], // lastOffsetDelta != count - 1
      [3, -1], // lastOffsetDelta < 0
      [0x7fffffff, 0x7ffffffe], // absurd count (consistent offsets) cannot fit the bytes
    ];
    for (const [count, lod] of cases) {
      const b = good();
      b.writeInt32BE(count, 57);
      b.writeInt32BE(lod, 23);
      expect(parseBatches(b).error, `count ${count} lod ${lod}`).toBe('INVALID_RECORD');
      // decodeRecords checks the count against the records; lastOffsetDelta is a header-level matter
      if (count !== 3) expect(decodeRecords(b, readBatchHeaderAt(b, 0)!).error, `count ${count}`).not.toBeNull();
    }
  });

  it('control batch or missing sequence for a producer id → INVALID_RECORD', () => {
    expect(parseBatches(buildBatch({ isControl: true, records: recs(1) })).error).toBe('INVALID_RECORD');
    expect(parseBatches(buildBatch({ producerId: 1n, baseSequence: -1, records: recs(1) })).error).toBe('INVALID_RECORD');
    expect(parseBatches(buildBatch({ producerId: 1n, baseSequence: 0, records: recs(1) })).error).toBeNull();
  });

  it('absurd compressed record count is refused by decodeRecords without a huge allocation', () => {
    const b = buildBatch({ compression: 1, records: recs(3) });
    b.writeInt32BE(0x7fffffff, 57);
    const h = readBatchHeaderAt(b, 0)!;
    expect(decodeRecords(b, h).error).toBe('INVALID_RECORD');
  });

  it('record-level damage → INVALID_RECORD', () => {
    // header count 1000000 in the first record
    const b = buildBatch({ records: [{ key: null, value: null, headers: [] }] });
    // record: len, attr, tsDelta, offsetDelta, keyLen(-1), valueLen(-1), headerCount(0)
    const last = b.length - 1;
    expect(b[last]).toBe(0);
    b[last] = 0x02; // headers count = 1 but no bytes follow
    const h = readBatchHeaderAt(b, 0)!;
    expect(decodeRecords(b, h).error).toBe('INVALID_RECORD');
    // trailing bytes after the declared records
    const t = buildBatch({ records: recs(2) });
    const extra = Buffer.concat([t, Buffer.from([0, 0, 0, 0, 0, 0, 0, 0])]);
    extra.writeInt32BE(extra.length - 12, 8);
    expect(decodeRecords(extra, readBatchHeaderAt(extra, 0)!).error).toBe('INVALID_RECORD');
  });
});
