/**
 * Record-level codec for v2 batches: used where the broker needs the records themselves
 * (compaction, control batches, tests). Not used on the produce hot path.
 */
import {
  type BatchHeader,
  type BatchError,
  ATTR_COMPRESSION_MASK,
  ATTR_CONTROL,
  ATTR_TIMESTAMP_TYPE,
  ATTR_TRANSACTIONAL,
  ATTRIBUTES_OFFSET,
  MAGIC_V2,
  MIN_RECORD_SIZE,
  NO_PARTITION_LEADER_EPOCH,
  NO_PRODUCER_ID,
  NO_SEQUENCE,
  RECORDS_OFFSET,
} from './batch.js';
import { type Compression, CompressionError, compress, decompress, DEFAULT_MAX_DECOMPRESSED_BYTES, isCompression } from './compression.js';
import { crc32c } from './crc32c.js';
import { readVarint, readVarlong, sizeOfVarint, sizeOfVarlong, writeVarint, writeVarlong } from './varint.js';

export interface RecordHeader {
  key: string;
  value: Buffer | null;
}

export interface KafkaRecord {
  attributes: number;
  timestampDelta: bigint;
  offsetDelta: number;
  /** For uncompressed batches key/value/header values are views into the source buffer (no copy). */
  key: Buffer | null;
  value: Buffer | null;
  headers: RecordHeader[];
}

export interface DecodeRecordsResult {
  records: KafkaRecord[];
  error: BatchError | null;
  message?: string;
}

/**
 * Decode every record of batch `h` inside `buf`, decompressing per h.compression with output bounded by
 * `maxBytes` (RECORD_TOO_LARGE beyond it). Never throws. Record structure errors → INVALID_RECORD
 * (as Kafka's DefaultRecord.readFrom / DefaultRecordBatch.RecordIterator), undecodable compressed payload →
 * CORRUPT_MESSAGE, unknown codec → UNSUPPORTED_COMPRESSION_TYPE.
 */
export function decodeRecords(buf: Buffer, h: BatchHeader, maxBytes: number = DEFAULT_MAX_DECOMPRESSED_BYTES): DecodeRecordsResult {
  const records: KafkaRecord[] = [];
  const bad = (error: BatchError, message: string): DecodeRecordsResult => ({ records, error, message });

  const payload = recordsPayload(buf, h, maxBytes);
  if ('error' in payload) return bad(payload.error, payload.message);
  const { data, count } = payload;
  let { p } = payload;
  const end = payload.end;

  for (let i = 0; i < count; i++) {
    const len = readVarint(data, p, end);
    if (!len) return bad('INVALID_RECORD', `record ${i}: truncated record length`);
    if (len.value < 0 || len.value > end - len.next) {
      return bad('INVALID_RECORD', `record ${i}: invalid record size ${len.value} (${end - len.next} bytes remaining)`);
    }
    p = len.next;
    const recEnd = p + len.value;
    if (p >= recEnd) return bad('INVALID_RECORD', `record ${i}: empty record`);
    const attributes = data.readInt8(p++);
    const ts = readVarlong(data, p, recEnd);
    if (!ts) return bad('INVALID_RECORD', `record ${i}: invalid timestampDelta`);
    p = ts.next;
    const od = readVarint(data, p, recEnd);
    if (!od) return bad('INVALID_RECORD', `record ${i}: invalid offsetDelta`);
    p = od.next;

    const kl = readVarint(data, p, recEnd);
    if (!kl) return bad('INVALID_RECORD', `record ${i}: invalid key length`);
    p = kl.next;
    let key: Buffer | null = null;
    if (kl.value >= 0) {
      if (kl.value > recEnd - p) return bad('INVALID_RECORD', `record ${i}: key past record end`);
      key = data.subarray(p, p + kl.value);
      p += kl.value;
    }

    const vl = readVarint(data, p, recEnd);
    if (!vl) return bad('INVALID_RECORD', `record ${i}: invalid value length`);
    p = vl.next;
    let value: Buffer | null = null;
    if (vl.value >= 0) {
      if (vl.value > recEnd - p) return bad('INVALID_RECORD', `record ${i}: value past record end`);
      value = data.subarray(p, p + vl.value);
      p += vl.value;
    }

    const hc = readVarint(data, p, recEnd);
    if (!hc) return bad('INVALID_RECORD', `record ${i}: invalid header count`);
    p = hc.next;
    // each header takes at least 2 bytes (key length + value length)
    if (hc.value < 0 || hc.value > (recEnd - p) / 2) {
      return bad('INVALID_RECORD', `record ${i}: found invalid number of record headers ${hc.value}`);
    }
    const headers: RecordHeader[] = [];
    for (let j = 0; j < hc.value; j++) {
      const hkl = readVarint(data, p, recEnd);
      if (!hkl) return bad('INVALID_RECORD', `record ${i}: invalid header key length`);
      p = hkl.next;
      if (hkl.value < 0) return bad('INVALID_RECORD', `record ${i}: invalid negative header key size ${hkl.value}`);
      if (hkl.value > recEnd - p) return bad('INVALID_RECORD', `record ${i}: header key past record end`);
      const hkey = data.toString('utf8', p, p + hkl.value);
      p += hkl.value;
      const hvl = readVarint(data, p, recEnd);
      if (!hvl) return bad('INVALID_RECORD', `record ${i}: invalid header value length`);
      p = hvl.next;
      let hval: Buffer | null = null;
      if (hvl.value >= 0) {
        if (hvl.value > recEnd - p) return bad('INVALID_RECORD', `record ${i}: header value past record end`);
        hval = data.subarray(p, p + hvl.value);
        p += hvl.value;
      }
      headers.push({ key: hkey, value: hval });
    }
    if (p !== recEnd) {
      return bad('INVALID_RECORD', `record ${i}: expected to read ${len.value} bytes in record payload, but read ${len.value - (recEnd - p)}`);
    }
    records.push({ attributes, timestampDelta: ts.value, offsetDelta: od.value, key, value, headers });
  }
  if (p !== end) {
    return bad('INVALID_RECORD', `incorrect declared batch size, ${end - p} bytes of records still remaining`);
  }
  return { records, error: null };
}

type Payload = { data: Buffer; p: number; end: number; count: number } | { error: BatchError; message: string };

/** The bytes holding batch h's records (decompressed if need be, bounded by maxBytes), after the checks every record reader makes. */
function recordsPayload(buf: Buffer, h: BatchHeader, maxBytes: number): Payload {
  const bad = (error: BatchError, message: string): Payload => ({ error, message });
  if (h.start < 0 || h.end > buf.length || h.end - h.start < RECORDS_OFFSET) {
    return bad('CORRUPT_MESSAGE', 'batch bounds outside the buffer');
  }
  if (h.magic !== MAGIC_V2) return bad('CORRUPT_MESSAGE', `unsupported magic ${h.magic}`);
  const count = h.recordCount;
  if (count < 0) return bad('INVALID_RECORD', `found invalid record count ${count}`);
  const codec = h.attributes & ATTR_COMPRESSION_MASK;
  if (!isCompression(codec)) return bad('UNSUPPORTED_COMPRESSION_TYPE', `unknown compression type id ${codec}`);

  let data = buf;
  let p = h.start + RECORDS_OFFSET;
  let end = h.end;
  if (codec !== 0) {
    if (count === 0 && end === p) return { data, p, end, count };
    try {
      data = decompress(codec, buf.subarray(p, end), maxBytes);
    } catch (e) {
      if (e instanceof CompressionError) return bad(e.kafkaError, e.message);
      return bad('CORRUPT_MESSAGE', e instanceof Error ? e.message : String(e));
    }
    p = 0;
    end = data.length;
  } else if (end - p > maxBytes) {
    return bad('RECORD_TOO_LARGE', `records exceed the limit of ${maxBytes} bytes`);
  }
  if (count > (end - p) / MIN_RECORD_SIZE) {
    return bad('INVALID_RECORD', `record count ${count} cannot fit in ${end - p} bytes`);
  }
  return { data, p, end, count };
}

/** What scanRecords reads of a record: its place, its timestamp as consumers see it, and the sizes of its key and value (-1: null). */
export type RecordVisitor = (index: number, offsetDelta: number, timestamp: bigint, keySize: number, valueSize: number) => void;

/**
 * Walk batch h's records reading only their timestamps and key/value sizes, skipping the bytes themselves
 * (Kafka's skipKeyValueIterator): what the broker needs to validate a produced batch. A compressed batch is
 * still decompressed. Never throws; structure errors as decodeRecords.
 */
export function scanRecords(buf: Buffer, h: BatchHeader, visit: RecordVisitor, maxBytes: number = DEFAULT_MAX_DECOMPRESSED_BYTES): { error: BatchError | null; message?: string } {
  const payload = recordsPayload(buf, h, maxBytes);
  if ('error' in payload) return payload;
  const { data, count, end } = payload;
  let p = payload.p;
  const bad = (i: number, what: string) => ({ error: 'INVALID_RECORD' as const, message: `record ${i}: ${what}` });
  for (let i = 0; i < count; i++) {
    const len = readVarint(data, p, end);
    if (!len) return bad(i, 'truncated record length');
    if (len.value <= 0 || len.value > end - len.next) return bad(i, `invalid record size ${len.value} (${end - len.next} bytes remaining)`);
    const recEnd = len.next + len.value;
    p = len.next + 1; // attributes
    const ts = readVarlong(data, p, recEnd);
    if (!ts) return bad(i, 'invalid timestampDelta');
    const od = readVarint(data, ts.next, recEnd);
    if (!od) return bad(i, 'invalid offsetDelta');
    const kl = readVarint(data, od.next, recEnd);
    if (!kl || kl.value > recEnd - kl.next) return bad(i, 'invalid key length');
    const vl = readVarint(data, kl.next + Math.max(0, kl.value), recEnd);
    if (!vl || vl.value > recEnd - vl.next) return bad(i, 'invalid value length');
    // Kafka's record.timestamp(): LogAppendTime batches give every record the batch's max timestamp; long arithmetic wraps.
    const timestamp = h.timestampType === 1 ? h.maxTimestamp : BigInt.asIntN(64, h.baseTimestamp + ts.value);
    visit(i, od.value, timestamp, kl.value, vl.value);
    p = recEnd;
  }
  if (p !== end) return { error: 'INVALID_RECORD', message: `incorrect declared batch size, ${end - p} bytes of records still remaining` };
  return { error: null };
}

/**
 * A record's timestamp as consumers see it: with LogAppendTime (timestampType 1) every record carries the
 * batch's maxTimestamp; otherwise baseTimestamp + timestampDelta.
 */
export function recordTimestamp(h: BatchHeader, r: KafkaRecord): bigint {
  return h.timestampType === 1 ? h.maxTimestamp : h.baseTimestamp + r.timestampDelta;
}

// ───────────────────────────── build ─────────────────────────────

export interface BuildRecord {
  /** default: the record's index in `records` */
  offsetDelta?: number;
  /** default 0 */
  timestampDelta?: bigint;
  key: Buffer | null;
  value: Buffer | null;
  headers?: RecordHeader[];
  /** record attributes byte (unused by Kafka; default 0) */
  attributes?: number;
}

export interface BuildBatchOptions {
  baseOffset?: bigint; // default 0
  partitionLeaderEpoch?: number; // default -1
  compression?: Compression; // default 0 (forced to 0 for an empty batch, as Kafka writes empty batches)
  timestampType?: 0 | 1; // default 0 (CreateTime)
  isTransactional?: boolean;
  isControl?: boolean;
  producerId?: bigint; // default -1
  producerEpoch?: number; // default -1
  baseSequence?: number; // default -1
  baseTimestamp?: bigint; // default Date.now()
  /** default baseTimestamp + the largest timestampDelta (baseTimestamp for an empty batch) */
  maxTimestamp?: bigint;
  /** default: the last record's offsetDelta (0 for an empty batch). Compaction passes the original to keep lastOffset. */
  lastOffsetDelta?: number;
  records: BuildRecord[];
}

function headerSize(h: RecordHeader, keyLen: number): number {
  const vlen = h.value === null ? -1 : h.value.length;
  return sizeOfVarint(keyLen) + keyLen + sizeOfVarint(vlen) + Math.max(0, vlen);
}

/** Serialize a complete v2 batch with a valid CRC. */
export function buildBatch(opts: BuildBatchOptions): Buffer {
  const recs = opts.records;
  const n = recs.length;
  const codec: Compression = n === 0 ? 0 : (opts.compression ?? 0);
  if (!isCompression(codec)) throw new RangeError(`unknown compression ${String(opts.compression)}`);

  // sizes first, so the records are written exactly once
  const bodySizes = new Array<number>(n);
  const headerKeyLens: number[][] = new Array(n);
  let recordsBytes = 0;
  let maxDelta: bigint | null = null;
  for (let i = 0; i < n; i++) {
    const r = recs[i]!;
    const tsd = r.timestampDelta ?? 0n;
    if (maxDelta === null || tsd > maxDelta) maxDelta = tsd;
    const od = r.offsetDelta ?? i;
    const klen = r.key === null ? -1 : r.key.length;
    const vlen = r.value === null ? -1 : r.value.length;
    const hdrs = r.headers ?? [];
    const hkl: number[] = new Array(hdrs.length);
    let body = 1 + sizeOfVarlong(tsd) + sizeOfVarint(od) + sizeOfVarint(klen) + Math.max(0, klen) + sizeOfVarint(vlen) + Math.max(0, vlen) + sizeOfVarint(hdrs.length);
    for (let j = 0; j < hdrs.length; j++) {
      const kl = Buffer.byteLength(hdrs[j]!.key, 'utf8');
      hkl[j] = kl;
      body += headerSize(hdrs[j]!, kl);
    }
    bodySizes[i] = body;
    headerKeyLens[i] = hkl;
    recordsBytes += sizeOfVarint(body) + body;
  }

  const writeRecords = (out: Buffer, start: number): void => {
    let p = start;
    for (let i = 0; i < n; i++) {
      const r = recs[i]!;
      p = writeVarint(out, p, bodySizes[i]!);
      out[p++] = (r.attributes ?? 0) & 0xff;
      p = writeVarlong(out, p, r.timestampDelta ?? 0n);
      p = writeVarint(out, p, r.offsetDelta ?? i);
      if (r.key === null) p = writeVarint(out, p, -1);
      else {
        p = writeVarint(out, p, r.key.length);
        p += r.key.copy(out, p);
      }
      if (r.value === null) p = writeVarint(out, p, -1);
      else {
        p = writeVarint(out, p, r.value.length);
        p += r.value.copy(out, p);
      }
      const hdrs = r.headers ?? [];
      p = writeVarint(out, p, hdrs.length);
      const hkl = headerKeyLens[i]!;
      for (let j = 0; j < hdrs.length; j++) {
        const hd = hdrs[j]!;
        p = writeVarint(out, p, hkl[j]!);
        p += out.write(hd.key, p, hkl[j]!, 'utf8');
        if (hd.value === null) p = writeVarint(out, p, -1);
        else {
          p = writeVarint(out, p, hd.value.length);
          p += hd.value.copy(out, p);
        }
      }
    }
  };

  let out: Buffer;
  if (codec === 0) {
    out = Buffer.allocUnsafe(RECORDS_OFFSET + recordsBytes);
    writeRecords(out, RECORDS_OFFSET);
  } else {
    const raw = Buffer.allocUnsafe(recordsBytes);
    writeRecords(raw, 0);
    const packed = compress(codec, raw);
    out = Buffer.allocUnsafe(RECORDS_OFFSET + packed.length);
    packed.copy(out, RECORDS_OFFSET);
  }

  const baseTimestamp = opts.baseTimestamp ?? BigInt(Date.now());
  const maxTimestamp = opts.maxTimestamp ?? baseTimestamp + (maxDelta ?? 0n);
  const lastOffsetDelta = opts.lastOffsetDelta ?? (n === 0 ? 0 : (recs[n - 1]!.offsetDelta ?? n - 1));
  let attributes = codec;
  if (opts.timestampType === 1) attributes |= ATTR_TIMESTAMP_TYPE;
  if (opts.isTransactional) attributes |= ATTR_TRANSACTIONAL;
  if (opts.isControl) attributes |= ATTR_CONTROL;

  out.writeBigInt64BE(opts.baseOffset ?? 0n, 0);
  out.writeInt32BE(out.length - 12, 8);
  out.writeInt32BE(opts.partitionLeaderEpoch ?? NO_PARTITION_LEADER_EPOCH, 12);
  out.writeInt8(MAGIC_V2, 16);
  out.writeInt16BE(attributes, ATTRIBUTES_OFFSET);
  out.writeInt32BE(lastOffsetDelta, 23);
  out.writeBigInt64BE(baseTimestamp, 27);
  out.writeBigInt64BE(maxTimestamp, 35);
  out.writeBigInt64BE(opts.producerId ?? NO_PRODUCER_ID, 43);
  out.writeInt16BE(opts.producerEpoch ?? -1, 51);
  out.writeInt32BE(opts.baseSequence ?? NO_SEQUENCE, 53);
  out.writeInt32BE(n, 57);
  out.writeUInt32BE(crc32c(out, ATTRIBUTES_OFFSET, out.length), 17);
  return out;
}

// ── control records ──

export const CONTROL_TYPE_ABORT = 0;
export const CONTROL_TYPE_COMMIT = 1;

/**
 * Build an end-transaction marker (control batch with one control record), as Kafka's
 * MemoryRecords.withEndTransactionMarker: key = int16 version 0 + int16 type, value = int16 version 0 +
 * int32 coordinatorEpoch.
 */
export function buildEndTxnMarker(opts: {
  commit: boolean;
  producerId: bigint;
  producerEpoch: number;
  coordinatorEpoch: number;
  baseOffset?: bigint;
  partitionLeaderEpoch?: number;
  timestamp?: bigint;
}): Buffer {
  const key = Buffer.alloc(4);
  key.writeInt16BE(0, 0);
  key.writeInt16BE(opts.commit ? CONTROL_TYPE_COMMIT : CONTROL_TYPE_ABORT, 2);
  const value = Buffer.alloc(6);
  value.writeInt16BE(0, 0);
  value.writeInt32BE(opts.coordinatorEpoch, 2);
  return buildBatch({
    baseOffset: opts.baseOffset ?? 0n,
    partitionLeaderEpoch: opts.partitionLeaderEpoch ?? NO_PARTITION_LEADER_EPOCH,
    isTransactional: true,
    isControl: true,
    producerId: opts.producerId,
    producerEpoch: opts.producerEpoch,
    baseSequence: NO_SEQUENCE,
    baseTimestamp: opts.timestamp ?? BigInt(Date.now()),
    records: [{ key, value }],
  });
}

/** Parse a control record key (version int16, type int16); null if malformed. */
export function parseControlKey(key: Buffer | null): { version: number; type: number } | null {
  if (key === null || key.length < 4) return null;
  return { version: key.readInt16BE(0), type: key.readInt16BE(2) };
}
