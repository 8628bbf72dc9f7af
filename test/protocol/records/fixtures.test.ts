/**
 * Bytes written by real clients' encoders (kafka-python, kafkajs), checked-in as .hex fixtures and
 * re-encoded live, must parse, checksum and decode to the expected records. And the other way: batches we
 * build must be readable by kafka-python's own decoder.
 */
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { type BatchHeader, type KafkaRecord, buildBatch, decodeRecords, parseBatches, verifyCrc, type Compression } from '../../../src/protocol/records/index.js';
import { loadHex, pythonHas, runPython } from './helpers.js';

const BASE_TS = 1700000000000n;

interface Expected {
  key: string | null;
  value: string | null;
  headers: Array<[string, string | null]>;
  ts: bigint;
}

const EXPECTED_PY: Expected[] = [
  { key: 'key-0', value: 'value-0', headers: [['h1', 'v1']], ts: BASE_TS },
  { key: null, value: 'value-1', headers: [], ts: BASE_TS + 5n },
  {
    key: 'k2',
    value: null,
    headers: [
      ['a', null],
      ['b', ''],
    ],
    ts: BASE_TS + 10n,
  },
  { key: 'k3', value: 'x'.repeat(2000), headers: [['utf8-é', '\u0000\u0001']], ts: BASE_TS + 7n },
];
const EXPECTED_JS: Expected[] = EXPECTED_PY.map((e, i) =>
  i === 2
    ? {
        ...e,
        headers: [
          ['a', 'A'],
          ['b', ''],
        ],
      }
    : e,
);

function check(buf: Buffer, expected: Expected[], codec: Compression): BatchHeader {
  const parsed = parseBatches(buf, { mode: 'produce', verifyCrc: true, produceVersion: 9 });
  expect(parsed.error, parsed.message).toBeNull();
  expect(parsed.batches).toHaveLength(1);
  const h = parsed.batches[0]!;
  expect(h.start).toBe(0);
  expect(h.end).toBe(buf.length);
  expect(h.magic).toBe(2);
  expect(h.compression).toBe(codec);
  expect(h.recordCount).toBe(4);
  expect(h.lastOffsetDelta).toBe(3);
  expect(h.baseOffset).toBe(0n);
  expect(h.baseTimestamp).toBe(BASE_TS);
  expect(h.maxTimestamp).toBe(BASE_TS + 10n);
  expect(h.timestampType).toBe(0);
  expect(h.isControl).toBe(false);
  expect(h.isTransactional).toBe(false);
  expect(verifyCrc(buf, h)).toBe(true);

  const dec = decodeRecords(buf, h, 1 << 20);
  expect(dec.error, dec.message).toBeNull();
  expect(dec.records).toHaveLength(4);
  dec.records.forEach((r: KafkaRecord, i: number) => {
    const e = expected[i]!;
    expect(r.offsetDelta).toBe(i);
    expect(h.baseTimestamp + r.timestampDelta).toBe(e.ts);
    expect(r.key === null ? null : r.key.toString('latin1')).toBe(e.key);
    expect(r.value === null ? null : r.value.toString('latin1')).toBe(e.value);
    expect(r.headers.map((x) => [x.key, x.value === null ? null : x.value.toString('latin1')])).toEqual(e.headers);
  });
  return h;
}

describe('kafka-python fixtures', () => {
  const cases: Array<[string, Compression]> = [
    ['none', 0],
    ['gzip', 1],
    ['snappy', 2],
    ['lz4', 3],
  ];
  for (const [name, codec] of cases) {
    it(`kafka-python-${name}.hex`, () => {
      const buf = loadHex(`kafka-python-${name}.hex`);
      const h = check(buf, EXPECTED_PY, codec);
      if (codec === 0) {
        expect(h.producerId).toBe(1234n);
        expect(h.producerEpoch).toBe(5);
        expect(h.baseSequence).toBe(42);
      } else {
        expect(h.producerId).toBe(-1n);
        expect(h.baseSequence).toBe(-1);
      }
    });
  }

  it('snappy fixture is xerial-framed, lz4 fixture is an LZ4 frame', () => {
    const s = loadHex('kafka-python-snappy.hex');
    expect(s.subarray(61, 69).toString('latin1')).toBe('\x82SNAPPY\x00');
    const l = loadHex('kafka-python-lz4.hex');
    expect(l.readUInt32LE(61)).toBe(0x184d2204);
  });
});

describe('kafkajs fixtures', () => {
  for (const [name, codec] of [
    ['none', 0],
    ['gzip', 1],
  ] as Array<[string, Compression]>) {
    it(`kafkajs-${name}.hex`, () => {
      const buf = loadHex(`kafkajs-${name}.hex`);
      const h = check(buf, EXPECTED_JS, codec);
      if (codec === 0) {
        expect(h.producerId).toBe(777n);
        expect(h.producerEpoch).toBe(3);
        expect(h.baseSequence).toBe(9);
      }
    });
  }
});

describe('kafkajs live encoder', () => {
  const require = createRequire(import.meta.url);
  const { RecordBatch } = require('kafkajs/src/protocol/recordBatch/v0') as {
    RecordBatch: (o: Record<string, unknown>) => Promise<{ buffer: Buffer }>;
  };
  const Record = require('kafkajs/src/protocol/recordBatch/record/v0') as (o: Record<string, unknown>) => unknown;
  const { Types } = require('kafkajs/src/protocol/message/compression') as { Types: Record<string, number> };
  const Long = require('kafkajs/src/utils/long') as { fromInt(n: number): unknown; fromValue(n: number): unknown };

  for (const codec of [Types.None!, Types.GZIP!]) {
    it(`encodes 300 records (codec ${codec}) that we decode`, async () => {
      const recs = Array.from({ length: 300 }, (_, i) => ({
        offsetDelta: i,
        timestampDelta: i * 3,
        key: i % 7 === 0 ? null : Buffer.from(`k${i}`),
        value: Buffer.from(`v${i}`.repeat(i % 13)),
        headers: i % 2 ? { hk: Buffer.from(`hv${i}`) } : {},
      }));
      const batch = await RecordBatch({
        compression: codec,
        firstOffset: Long.fromInt(0),
        firstTimestamp: 1000,
        maxTimestamp: 1000 + 299 * 3,
        lastOffsetDelta: 299,
        records: recs.map(Record),
      });
      const buf = batch.buffer;
      const p = parseBatches(buf, { verifyCrc: true });
      expect(p.error, p.message).toBeNull();
      const d = decodeRecords(buf, p.batches[0]!);
      expect(d.error, d.message).toBeNull();
      expect(d.records).toHaveLength(300);
      d.records.forEach((r, i) => {
        expect(r.offsetDelta).toBe(i);
        expect(r.timestampDelta).toBe(BigInt(i * 3));
        expect(r.key?.toString() ?? null).toBe(recs[i]!.key?.toString() ?? null);
        expect(r.value!.toString()).toBe(recs[i]!.value.toString());
        expect(r.headers.map((x) => `${x.key}=${x.value}`)).toEqual(i % 2 ? [`hk=hv${i}`] : []);
      });
    });
  }
});

describe('kafka-python decodes batches we build', () => {
  const PY_READ = `
import sys, json, binascii
from kafka.record.default_records import DefaultRecordBatch
data = sys.stdin.buffer.read()
b = DefaultRecordBatch(data)
out = {"crc": b.validate_crc(), "codec": b.compression_type, "recs": []}
for r in b:
    out["recs"].append([r.offset, r.timestamp,
        None if r.key is None else binascii.hexlify(r.key).decode(),
        None if r.value is None else binascii.hexlify(r.value).decode(),
        [[k, None if v is None else binascii.hexlify(v).decode()] for k, v in r.headers]])
print(json.dumps(out))
`;
  const codecs: Compression[] = [0, 1, 2, 3];
  if (pythonHas('zstandard')) codecs.push(4);
  for (const codec of codecs) {
    it(`codec ${codec}`, () => {
      const records = Array.from({ length: 50 }, (_, i) => ({
        offsetDelta: i,
        timestampDelta: BigInt(i),
        key: i === 3 ? null : Buffer.from(`key-${i}`),
        value: i === 4 ? null : Buffer.from(`value-${i}-`.repeat(200)),
        headers:
          i % 5 === 0
            ? [
                { key: 'h', value: Buffer.from([i]) },
                { key: 'n', value: null },
              ]
            : [],
      }));
      const buf = buildBatch({ baseOffset: 100n, baseTimestamp: 5000n, compression: codec, records });
      const out = JSON.parse(runPython(PY_READ, buf)) as {
        crc: boolean;
        codec: number;
        recs: Array<[number, number, string | null, string | null, Array<[string, string | null]>]>;
      };
      expect(out.crc).toBe(true);
      expect(out.codec).toBe(codec);
      expect(out.recs).toHaveLength(50);
      out.recs.forEach(([off, ts, k, v, hs], i) => {
        const r = records[i]!;
        expect(off).toBe(100 + i);
        expect(ts).toBe(5000 + i);
        expect(k).toBe(r.key === null ? null : r.key.toString('hex'));
        expect(v).toBe(r.value === null ? null : r.value.toString('hex'));
        expect(hs).toEqual(r.headers.map((h) => [h.key, h.value === null ? null : h.value.toString('hex')]));
      });
    });
  }
});
