// The records every client writes and reads back, and the checks applied to
// what comes back: bytes of keys, values and headers, offsets 0..n-1 per
// partition, per-partition order, and the codec of the batches as stored.
import { expect } from 'vitest';
import { decodeRecords, parseBatches, type Compression } from '../../src/protocol/records/index.js';
import type { TestBroker } from '../../test/support/broker.js';

export type Codec = 'none' | 'gzip' | 'snappy' | 'lz4' | 'zstd';
export const CODEC_ID: Record<Codec, Compression> = { none: 0, gzip: 1, snappy: 2, lz4: 3, zstd: 4 };

export type Header = [string, Buffer];

/** A record as a client is asked to produce it. */
export interface Rec {
  partition: number;
  key: Buffer | null;
  value: Buffer | null;
  headers: Header[];
}

/** A record as read back, whoever read it. */
export interface ReadRec {
  partition: number;
  offset: number;
  key: Buffer | null;
  value: Buffer | null;
  headers: [string, Buffer | null][];
}

/** Not valid UTF-8 (0xff, 0xfe, lone continuation 0x80, bad pair c3 28), plus NUL, newline and DEL. Avoids 0x1e/0x1f (kcat delimiters). */
export const BINARY = Buffer.from([0xff, 0xfe, 0x00, 0x80, 0xc3, 0x28, 0x0a, 0x7f, 0x01]);

/** Long and repetitive, so that every codec shrinks the batch: librdkafka and kafka-python send a batch uncompressed when compression does not make it smaller. */
const compressible = (tag: string) => Buffer.from(`${tag}:` + 'the quick brown fox jumps over the lazy dog; '.repeat(30));
export const COMPRESSIBLE_MIN = 600;

export interface DatasetOptions {
  partitions?: number;
  perPartition?: number;
  /** Client can send a zero-length value (distinct from null). */
  emptyValue?: boolean;
  /** Client can send a null value. */
  nullValue?: boolean;
  /** Headers per record; default: a text and a binary header that name the record. */
  headers?: (partition: number, i: number) => Header[];
}

/**
 * Per partition, cycling: a compressible text value, a binary non-UTF-8 value
 * (with a binary key), an empty value, a null value. Where the client cannot
 * send empty/null, a text value stands in.
 */
export function dataset(tag: string, opts: DatasetOptions = {}): Rec[] {
  const { partitions = 3, perPartition = 5, emptyValue = true, nullValue = true } = opts;
  const headers =
    opts.headers ??
    ((p: number, i: number) =>
      [
        ['trace', Buffer.from(`${tag}/${p}/${i}`)],
        ['bin', Buffer.from([0x00, 0xff, p, i])],
      ] as Header[]);
  const recs: Rec[] = [];
  for (let p = 0; p < partitions; p++) {
    for (let i = 0; i < perPartition; i++) {
      let key: Buffer | null = Buffer.from(`${tag}-key-${p}-${i}`);
      let value: Buffer | null;
      switch (i % 4) {
        case 0:
          value = compressible(`${tag}-${p}-${i}`);
          break;
        case 1:
          key = Buffer.concat([Buffer.from([0xfe, 0x00]), key]);
          value = Buffer.concat([BINARY, Buffer.from([p, i])]);
          break;
        case 2:
          value = emptyValue ? Buffer.alloc(0) : Buffer.from(`no-empty-${p}-${i}`);
          break;
        default:
          value = nullValue ? null : Buffer.from(`no-null-${p}-${i}`);
      }
      recs.push({ partition: p, key, value, headers: headers(p, i) });
    }
  }
  return recs;
}

export const byPartition = <T extends { partition: number }>(recs: T[]): Map<number, T[]> => {
  const m = new Map<number, T[]>();
  for (const r of recs) m.set(r.partition, [...(m.get(r.partition) ?? []), r]);
  return m;
};

const hex = (b: Buffer | null | undefined) => (b === null || b === undefined ? null : b.toString('hex'));

/**
 * Checks that `actual` holds exactly `expected` (per partition, in order) at
 * offsets from..from+n-1, byte for byte. `from` maps partition → first offset
 * expected (default 0). Compares hex strings so a diff is readable.
 */
export function expectRecords(actual: ReadRec[], expected: Rec[], opts: { from?: Record<number, number>; partitions?: number[] } = {}): void {
  const want = byPartition(expected);
  const got = byPartition(actual);
  const partitions = opts.partitions ?? [...want.keys()];
  expect([...got.keys()].sort()).toEqual([...partitions].sort());
  for (const p of partitions) {
    const from = opts.from?.[p] ?? 0;
    const w = (want.get(p) ?? []).slice(from).map((r, i) => ({ partition: p, offset: from + i, key: hex(r.key), value: hex(r.value), headers: r.headers.map(([k, v]) => [k, hex(v)]) }));
    const g = (got.get(p) ?? []).map((r) => ({ partition: r.partition, offset: r.offset, key: hex(r.key), value: hex(r.value), headers: r.headers.map(([k, v]) => [k, hex(v)]) }));
    expect(g, `partition ${p}`).toEqual(w);
  }
}

export interface StoredBatch {
  partition: number;
  baseOffset: number;
  codec: Compression;
  records: ReadRec[];
}

/** What PostgreSQL holds for a topic, decoded with the broker's own record codec (the way to read back without a consumer group). */
export async function readStored(broker: TestBroker, topic: string): Promise<StoredBatch[]> {
  const rows = await broker.query<{ partition: number; data: Buffer }>(
    `SELECT b.partition, b.data FROM batches b JOIN topics t USING (topic_id) WHERE t.name = $1 ORDER BY b.partition, b.base_offset`,
    [topic],
  );
  const out: StoredBatch[] = [];
  for (const row of rows) {
    const { batches, error } = parseBatches(row.data, { mode: 'log' });
    expect(error).toBeNull();
    for (const h of batches) {
      const decoded = decodeRecords(row.data, h);
      expect(decoded.error).toBeNull();
      out.push({
        partition: row.partition,
        baseOffset: Number(h.baseOffset),
        codec: h.compression,
        records: decoded.records.map((r) => ({
          partition: row.partition,
          offset: Number(h.baseOffset) + r.offsetDelta,
          key: r.key,
          value: r.value,
          headers: r.headers.map((x) => [x.key, x.value] as [string, Buffer | null]),
        })),
      });
    }
  }
  return out;
}

/**
 * The batches that carry a compressible record are stored with `codec` (so
 * the client really compressed, and the broker kept its bytes); the others
 * may be uncompressed (clients skip compression when it does not help).
 */
export function expectStoredCodec(stored: StoredBatch[], codec: Codec): void {
  const id = CODEC_ID[codec];
  const withBig = stored.filter((b) => b.records.some((r) => (r.value?.length ?? 0) >= COMPRESSIBLE_MIN));
  expect(withBig.length).toBeGreaterThan(0);
  expect(withBig.map((b) => b.codec)).toEqual(withBig.map(() => id));
  for (const b of stored) expect([0, id]).toContain(b.codec);
}

/** Base64 in JSON for the Python runners. */
export const toJson = (recs: Rec[]) =>
  recs.map((r) => ({ partition: r.partition, key: r.key && r.key.toString('base64'), value: r.value && r.value.toString('base64'), headers: r.headers.map(([k, v]) => [k, v.toString('base64')]) }));

export interface JsonRead {
  partition: number;
  offset: number;
  key: string | null;
  value: string | null;
  headers: [string, string | null][] | null;
}
export const fromJson = (recs: JsonRead[]): ReadRec[] =>
  recs.map((r) => ({
    partition: r.partition,
    offset: r.offset,
    key: r.key === null ? null : Buffer.from(r.key, 'base64'),
    value: r.value === null ? null : Buffer.from(r.value, 'base64'),
    headers: (r.headers ?? []).map(([k, v]) => [k, v === null ? null : Buffer.from(v, 'base64')]),
  }));
