// Magic 0/1 message sets: byte-exact against kafka-python's LegacyRecordBatchBuilder (fixtures/
// kafka-python-v*.hex, from gen-legacy-kafka-python.py) and Sarama 1.22's message test vectors; what we
// write is read back by kafka-python's own reader; conversions to and from magic 2 as Kafka 3.9 makes them.
import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  breakLz4HeaderChecksum,
  buildBatch,
  buildEndTxnMarker,
  decodeRecords,
  decompressWrapper,
  downConvert,
  legacyToBatch,
  parseBatches,
  readLegacyMessage,
  recordTimestamp,
  writeLegacyMessageSet,
  xxh32Short,
  type LegacyMessage,
} from '../../../src/protocol/records/index.js';
import { loadHex, runPython } from './helpers.js';

const BASE_TS = 1_700_000_000_000n;
// The records of gen-legacy-kafka-python.py.
const RECORDS = [
  { offset: 0n, timestamp: BASE_TS, key: Buffer.from('key-0'), value: Buffer.from('value-0') },
  { offset: 1n, timestamp: BASE_TS + 5n, key: null, value: Buffer.from('value-1') },
  { offset: 2n, timestamp: BASE_TS + 10n, key: Buffer.from('k2'), value: null },
  { offset: 3n, timestamp: BASE_TS + 7n, key: Buffer.from('k3'), value: Buffer.alloc(2000, 'x') },
];

/** Every entry of a message set. */
function entries(buf: Buffer): LegacyMessage[] {
  const out: LegacyMessage[] = [];
  for (let pos = 0; pos + 12 <= buf.length;) {
    const size = buf.readInt32BE(pos + 8) + 12;
    if (pos + size > buf.length) break;
    out.push(readLegacyMessage(buf, pos, size)!);
    pos += size;
  }
  return out;
}

const view = (m: LegacyMessage) => ({ offset: m.offset, timestamp: m.timestamp, key: m.key?.toString() ?? null, value: m.value?.toString() ?? null });
const expected = (magic: number) => RECORDS.map((r) => ({ offset: r.offset, timestamp: magic === 0 ? -1n : r.timestamp, key: r.key?.toString() ?? null, value: r.value?.toString() ?? null }));

/** kafka-python's reader over a message set: offset, timestamp, key, value of every record. */
function readWithKafkaPython(set: Buffer): unknown[] {
  const code = `import sys,json
from kafka.record import MemoryRecords
recs = MemoryRecords(sys.stdin.buffer.read())
out = []
while True:
    b = recs.next_batch()
    if b is None: break
    for r in b:
        out.append([r.offset, r.timestamp, r.key.decode() if r.key is not None else None, r.value.decode() if r.value is not None else None])
print(json.dumps(out))`;
  return JSON.parse(runPython(code, set)) as unknown[];
}

describe('reading magic 0 and 1', () => {
  it("reads kafka-python's message sets, uncompressed and compressed, with valid CRCs", () => {
    for (const magic of [0, 1]) {
      for (const codec of ['none', 'gzip', 'snappy', ...(magic === 1 ? ['lz4'] : [])]) {
        const set = loadHex(`kafka-python-v${magic}-${codec}.hex`);
        const shallow = entries(set);
        expect(shallow.every((m) => m.crcValid && m.magic === magic)).toBe(true);
        if (codec === 'none') {
          expect(shallow.map(view)).toEqual(expected(magic));
          continue;
        }
        expect(shallow).toHaveLength(1);
        const inner = entries(decompressWrapper(shallow[0]!));
        expect(inner.every((m) => m.crcValid && m.compression === 0)).toBe(true);
        // kafka-python writes inner offsets 0..3 for both magics (relative for magic 1) and the wrapper at offset 0.
        expect(inner.map(view)).toEqual(expected(magic));
      }
    }
  });

  it("reads Sarama 1.22's message vectors (message_test.go)", () => {
    const entry = (bytes: number[]) => {
      const head = Buffer.alloc(12);
      head.writeInt32BE(bytes.length, 8);
      return Buffer.concat([head, Buffer.from(bytes)]);
    };
    // emptyMessage: CRC, magic 0, attributes 0, null key and value.
    const empty = readLegacyMessage(entry([167, 236, 104, 3, 0, 0, 255, 255, 255, 255, 255, 255, 255, 255]), 0, 26)!;
    expect([empty.crcValid, empty.magic, empty.key, empty.value]).toEqual([true, 0, null, null]);
    // emptyV1Message: magic 1, timestamp 0.
    const v1 = readLegacyMessage(entry([204, 47, 121, 217, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 255, 255, 255, 255, 255, 255]), 0, 34)!;
    expect([v1.crcValid, v1.magic, v1.timestamp]).toEqual([true, 1, 0n]);
    // emptyBulkGzipMessage: a gzip wrapper of two empty messages.
    const gzip = entry([
      139, 160, 63, 141, 0, 1, 255, 255, 255, 255, 0, 0, 0, 0x27, 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0, 99, 96, 128, 3, 190, 202, 112, 143, 7, 12, 12, 255, 129, 0, 33, 200, 192, 136, 41, 3, 0, 199, 226,
      155, 70, 52, 0, 0, 0,
    ]);
    const wrapper = readLegacyMessage(gzip, 0, gzip.length)!;
    expect([wrapper.crcValid, wrapper.compression]).toEqual([true, 1]);
    // Two messages, each a null key and an empty value.
    expect(entries(decompressWrapper(wrapper)).map((m) => [m.offset, m.key, m.value?.length, m.crcValid])).toEqual([
      [0n, null, 0, true],
      [1n, null, 0, true],
    ]);
  });

  it('refuses a message whose fields run past its size', () => {
    const set = loadHex('kafka-python-v1-none.hex');
    expect(readLegacyMessage(set, 0, 40)).toBeNull();
  });
});

describe('writing magic 0 and 1', () => {
  it("writes uncompressed message sets byte for byte as kafka-python's builder", () => {
    for (const magic of [0, 1] as const) {
      expect(writeLegacyMessageSet(RECORDS, { magic, compression: 0 }).toString('hex')).toBe(loadHex(`kafka-python-v${magic}-none.hex`).toString('hex'));
    }
  });

  it("writes Sarama's emptyMessage and emptyV1Message", () => {
    const m0 = writeLegacyMessageSet([{ offset: 0n, timestamp: 0n, key: null, value: null }], { magic: 0, compression: 0 });
    expect([...m0.subarray(12)]).toEqual([167, 236, 104, 3, 0, 0, 255, 255, 255, 255, 255, 255, 255, 255]);
    const m1 = writeLegacyMessageSet([{ offset: 0n, timestamp: 0n, key: null, value: null }], { magic: 1, compression: 0 });
    expect([...m1.subarray(12)]).toEqual([204, 47, 121, 217, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 255, 255, 255, 255, 255, 255]);
  });

  it('writes wrappers kafka-python reads: last offset outside, relative offsets inside for magic 1, the largest timestamp', () => {
    const records = RECORDS.map((r) => ({ ...r, offset: r.offset + 100n }));
    for (const magic of [0, 1] as const) {
      for (const compression of [1, 2, 3] as const) {
        const set = writeLegacyMessageSet(records, { magic, compression });
        const wrapper = entries(set);
        expect(wrapper.map((m) => [m.offset, m.compression, m.key, m.crcValid])).toEqual([[103n, compression, null, true]]);
        expect(wrapper[0]!.timestamp).toBe(magic === 0 ? -1n : BASE_TS + 10n);
        expect(entries(decompressWrapper(wrapper[0]!)).map((m) => m.offset)).toEqual(magic === 1 ? [0n, 1n, 2n, 3n] : [100n, 101n, 102n, 103n]);
        if (magic === 0 && compression === 3) continue; // kafka-python needs the xxhash module for magic 0 lz4
        expect(readWithKafkaPython(set)).toEqual(records.map((r) => [Number(r.offset), magic === 0 ? null : Number(r.timestamp), r.key?.toString() ?? null, r.value?.toString() ?? null]));
      }
    }
  });

  it('LogAppendTime: bit 3 and the append time on every message, magic 1 only', () => {
    const set = writeLegacyMessageSet(RECORDS.slice(0, 2), { magic: 1, compression: 0, logAppendTime: 42n });
    expect(entries(set).map((m) => [m.timestampType, m.timestamp, m.attributes])).toEqual([
      [1, 42n, 8],
      [1, 42n, 8],
    ]);
  });

  it("computes lz4's header checksum with xxHash32, and magic 0's broken one over the frame magic too", () => {
    // xxHash32 reference values (seed 0).
    expect(xxh32Short(Buffer.alloc(0)).toString(16)).toBe('2cc5d05');
    expect(xxh32Short(Buffer.from('a')).toString(16)).toBe('550d7456');
    expect(xxh32Short(Buffer.from('abc')).toString(16)).toBe('32d153ff');
    // The standard checksum of FLG 0x60, BD 0x40 is the 0x82 every LZ4 frame encoder writes.
    expect((xxh32Short(Buffer.from([0x60, 0x40])) >>> 8) & 0xff).toBe(0x82);
    const frame = Buffer.from('04224d18604082', 'hex');
    breakLz4HeaderChecksum(frame);
    expect(frame[6]).toBe((xxh32Short(Buffer.from('04224d186040', 'hex')) >>> 8) & 0xff);
    expect(frame[6]).not.toBe(0x82);
  });
});

describe('Produce v0-2: a message set as one v2 batch', () => {
  const records = (batch: Buffer) => {
    const h = parseBatches(batch, { mode: 'log' }).batches[0]!;
    return {
      h,
      records: decodeRecords(batch, h).records.map((r) => ({ offsetDelta: r.offsetDelta, timestamp: recordTimestamp(h, r), key: r.key?.toString() ?? null, value: r.value?.toString() ?? null })),
    };
  };

  it("converts kafka-python's sets, offsets from 0, timestamps kept (none for magic 0), compression kept", () => {
    for (const magic of [0, 1]) {
      for (const [codec, id] of [['none', 0], ['gzip', 1], ['snappy', 2], ...(magic === 1 ? [['lz4', 3]] : [])] as const) {
        const out = legacyToBatch(loadHex(`kafka-python-v${magic}-${codec}.hex`), { maxMessageBytes: 1 << 20 });
        expect(out.error).toBeNull();
        const { h, records: rs } = records((out as { batch: Buffer }).batch);
        expect([h.compression, h.recordCount, h.baseOffset, h.maxTimestamp]).toEqual([id, 4, 0n, magic === 0 ? -1n : BASE_TS + 10n]);
        expect(rs).toEqual(RECORDS.map((r, i) => ({ offsetDelta: i, timestamp: magic === 0 ? -1n : r.timestamp, key: r.key?.toString() ?? null, value: r.value?.toString() ?? null })));
      }
    }
  });

  it('converts magic 0 lz4 with the broken header checksum', () => {
    const out = legacyToBatch(writeLegacyMessageSet(RECORDS, { magic: 0, compression: 3 }), { maxMessageBytes: 1 << 20 });
    expect(records((out as { batch: Buffer }).batch).records.map((r) => r.value)).toEqual(RECORDS.map((r) => r.value?.toString() ?? null));
  });

  it('refuses as Kafka does: a bad CRC, mixed magics, a wrapper beside other messages, a bad inner CRC, a message above max.message.bytes; stops at a partial message', () => {
    const set = loadHex('kafka-python-v1-none.hex');
    const badCrc = Buffer.from(set);
    badCrc[12] ^= 1;
    expect(legacyToBatch(badCrc, { maxMessageBytes: 1 << 20 })).toMatchObject({ error: 'CORRUPT_MESSAGE', stage: 'batch' });
    const mixed = Buffer.concat([loadHex('kafka-python-v0-none.hex'), set]);
    expect(legacyToBatch(mixed, { maxMessageBytes: 1 << 20 })).toMatchObject({ error: 'INVALID_RECORD' });
    const wrapperAndMore = Buffer.concat([loadHex('kafka-python-v1-gzip.hex'), set]);
    expect(legacyToBatch(wrapperAndMore, { maxMessageBytes: 1 << 20 })).toMatchObject({ error: 'INVALID_RECORD', message: 'Compressed outer record has more than one batch' });
    // An inner message whose CRC is wrong, wrapped with a valid outer CRC.
    const inner = writeLegacyMessageSet(RECORDS.slice(0, 1), { magic: 1, compression: 0 });
    inner[12] ^= 1;
    const gz = zlib.gzipSync(inner);
    const wrapper = writeLegacyMessageSet([{ offset: 0n, timestamp: 0n, key: null, value: gz }], { magic: 1, compression: 0 });
    wrapper[17] = 1; // gzip attribute, then the outer CRC again
    wrapper.writeUInt32BE(zlib.crc32(wrapper.subarray(16)), 12);
    expect(legacyToBatch(wrapper, { maxMessageBytes: 1 << 20 })).toMatchObject({ error: 'CORRUPT_MESSAGE' });
    expect(legacyToBatch(set, { maxMessageBytes: 40 })).toMatchObject({ error: 'RECORD_TOO_LARGE' });
    const tooSmall = Buffer.from(set);
    tooSmall.writeInt32BE(13, 8);
    expect(legacyToBatch(tooSmall, { maxMessageBytes: 1 << 20 })).toMatchObject({ error: 'CORRUPT_MESSAGE', stage: 'framing' });
    // Only the complete messages count; none at all appends nothing.
    const partial = legacyToBatch(set.subarray(0, 60), { maxMessageBytes: 1 << 20 }) as { batch: Buffer };
    expect(records(partial.batch).records).toHaveLength(1);
    expect(legacyToBatch(set.subarray(0, 20), { maxMessageBytes: 1 << 20 })).toEqual({ error: null, batch: null });
  });
});

describe('malformed input', () => {
  it('never throws on mutated message sets, compressed ones included (magic 0 lz4 too)', () => {
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
    const sources = ['kafka-python-v0-none.hex', 'kafka-python-v1-gzip.hex', 'kafka-python-v1-lz4.hex', 'kafka-python-v0-snappy.hex'].map(loadHex);
    sources.push(writeLegacyMessageSet(RECORDS, { magic: 0, compression: 3 }));
    for (let i = 0; i < 3000; i++) {
      const input = Buffer.from(sources[i % sources.length]!);
      for (let k = 0; k < 1 + Math.floor(random() * 4); k++) input[Math.floor(random() * input.length)] = Math.floor(random() * 256);
      // Valid outer CRCs, so the mutation reaches the wrapped set.
      const fixed = Buffer.from(input);
      if (fixed.length > 16) fixed.writeUInt32BE(zlib.crc32(fixed.subarray(16, Math.min(fixed.length, 12 + Math.max(14, fixed.readInt32BE(8))))), 12);
      for (const buf of [input, fixed, input.subarray(0, Math.floor(random() * input.length))]) {
        expect(() => legacyToBatch(buf, { maxMessageBytes: 1 << 20 })).not.toThrow();
      }
    }
  });
});

describe('Fetch v0-3: stored batches down-converted', () => {
  const stored = (compression: 0 | 1 | 2 | 3, baseOffset: bigint, timestampType: 0 | 1 = 0) =>
    buildBatch({
      baseOffset,
      compression,
      timestampType,
      baseTimestamp: BASE_TS,
      maxTimestamp: timestampType === 1 ? 99n : undefined,
      records: RECORDS.map((r, i) => ({ offsetDelta: i, timestampDelta: r.timestamp - BASE_TS, key: r.key, value: r.value, headers: [{ key: 'h', value: Buffer.from('dropped') }] })),
    });

  it('uncompressed: one message per record, from the fetch offset, headers dropped; kafka-python reads them', () => {
    for (const magic of [0, 1] as const) {
      const out = downConvert([stored(0, 10n)], magic, 11n);
      expect(out.error).toBeNull();
      const set = (out as { records: Buffer }).records;
      const want = RECORDS.slice(1).map((r) => [Number(r.offset) + 10, magic === 0 ? null : Number(r.timestamp), r.key?.toString() ?? null, r.value?.toString() ?? null]);
      // The converted set is cut at the larger of the stored size and the first converted batch.
      expect(readWithKafkaPython(set)).toEqual(want.slice(0, entries(set).length));
    }
  });

  it('compressed: the whole batch in one wrapper whatever the fetch offset, LogAppendTime kept', () => {
    const out = downConvert([stored(1, 10n, 1)], 1, 12n) as { records: Buffer };
    const [wrapper] = entries(out.records);
    expect([wrapper!.offset, wrapper!.timestamp, wrapper!.timestampType]).toEqual([13n, 99n, 1]);
    expect(entries(decompressWrapper(wrapper!)).map((m) => [m.offset, m.timestamp, m.timestampType])).toEqual([
      [0n, 99n, 1],
      [1n, 99n, 1],
      [2n, 99n, 1],
      [3n, 99n, 1],
    ]);
  });

  it('drops control batches; pads a shorter conversion to the stored size with an entry of offset -1', () => {
    const marker = buildEndTxnMarker({ commit: true, producerId: 1n, producerEpoch: 0, coordinatorEpoch: 0, baseOffset: 14n });
    const one = buildBatch({ baseOffset: 15n, compression: 0, baseTimestamp: BASE_TS, records: [{ key: null, value: Buffer.from('v') }] });
    const stream = Buffer.concat([marker, one]);
    const set = (downConvert([stream], 0, 14n) as { records: Buffer }).records;
    expect(set.length).toBe(stream.length);
    const [message] = entries(set);
    expect([message!.offset, message!.value?.toString()]).toEqual([15n, 'v']);
    const rest = set.subarray(12 + message!.size - 12);
    expect(rest.readBigInt64BE(0)).toBe(-1n);
    expect(rest.readInt32BE(8)).toBeGreaterThan(rest.length - 12);
    // Only a marker: a 12-byte overflow entry, so the client skips it.
    expect((downConvert([marker], 1, 14n) as { records: Buffer }).records.readBigInt64BE(0)).toBe(-1n);
    expect(downConvert([], 1, 0n)).toEqual({ error: null, records: Buffer.alloc(0) });
  });

  it('refuses a zstd batch that comes first', () => {
    const zstd = buildBatch({ compression: 4, baseTimestamp: BASE_TS, records: [{ key: null, value: Buffer.from('v') }] });
    expect(downConvert([zstd], 1, 0n)).toEqual({ error: 'UNSUPPORTED_COMPRESSION_TYPE' });
  });
});
