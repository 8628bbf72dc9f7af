/**
 * The message formats before record batches, as Kafka's LegacyRecord and AbstractLegacyRecordBatch read and
 * write them: magic 0 (Kafka 0.8, 0.9) and magic 1 (0.10, which added timestamps).
 *
 * A message set is entries back to back, each `offset int64, size int32` and a message of `size` bytes:
 *
 *   crc uint32        CRC-32 (IEEE, as zlib) of everything after it
 *   magic int8        0 or 1
 *   attributes int8   bits 0-2 compression (0 none, 1 gzip, 2 snappy, 3 lz4); bit 3 LogAppendTime (magic 1)
 *   timestamp int64   magic 1 only
 *   key bytes         int32 length (-1 null) and the bytes
 *   value bytes       likewise
 *
 * A compressed message (a "wrapper") has a null key and, as its value, a whole message set compressed:
 * its inner messages are uncompressed and of the wrapper's magic. Magic 1 inner offsets are relative
 * (0, 1, ...) and the wrapper's offset is the last inner message's absolute offset; magic 0 inner offsets
 * are absolute. An lz4 wrapper of magic 0 carries the frame-descriptor checksum Kafka 0.8 computed wrongly
 * (over the frame magic too): it is written that way and not checked when read.
 */
import zlib from 'node:zlib';
import { LOG_OVERHEAD, NO_TIMESTAMP } from './batch.js';
import { type Compression, compress, decompress, DEFAULT_MAX_DECOMPRESSED_BYTES } from './compression.js';
import { CompressionError } from './compression/errors.js';
import { lz4DecodeFrames, planLz4 } from './compression/lz4.js';

export const LEGACY_CRC_OFFSET = LOG_OVERHEAD;
export const LEGACY_MAGIC_OFFSET = LOG_OVERHEAD + 4;
export const LEGACY_ATTRIBUTES_OFFSET = LOG_OVERHEAD + 5;
/** Smallest message of each magic (crc, magic, attributes, [timestamp], key and value lengths): Kafka's RECORD_OVERHEAD_V0/V1. */
export const LEGACY_RECORD_OVERHEAD = [14, 22] as const;
export const LEGACY_COMPRESSION_MASK = 0x07;
export const LEGACY_TIMESTAMP_TYPE = 0x08;

export type LegacyMagic = 0 | 1;

/** One message as read: a shallow entry of a message set, or an inner message of a wrapper. */
export interface LegacyMessage {
  offset: bigint;
  magic: number;
  attributes: number;
  /** attributes & 7 (5-7 are no codec) */
  compression: number;
  /** 1 when magic 1 and attribute bit 3 (LogAppendTime) */
  timestampType: 0 | 1;
  /** magic 1's timestamp field; NO_TIMESTAMP for magic 0 */
  timestamp: bigint;
  key: Buffer | null;
  value: Buffer | null;
  /** whether the stored CRC is the CRC-32 of the message */
  crcValid: boolean;
  /** bytes of the entry, offset and size included */
  size: number;
}

/** CRC-32 of a message: its bytes from magic to its end. */
export function legacyCrc(buf: Buffer, start: number, end: number): number {
  return zlib.crc32(buf.subarray(start, end));
}

/**
 * Read the message of the entry at `pos` (offset and size included) that is `size` bytes long in all.
 * Returns null when its fields do not fit its size (Kafka reads such a message as corrupt).
 */
export function readLegacyMessage(buf: Buffer, pos: number, size: number): LegacyMessage | null {
  const end = pos + size;
  if (size < LOG_OVERHEAD + LEGACY_RECORD_OVERHEAD[0] || end > buf.length) return null;
  const magic = buf.readInt8(pos + LEGACY_MAGIC_OFFSET);
  const attributes = buf.readInt8(pos + LEGACY_ATTRIBUTES_OFFSET);
  let p = pos + LEGACY_ATTRIBUTES_OFFSET + 1;
  let timestamp = NO_TIMESTAMP;
  if (magic === 1) {
    if (end - p < 16) return null;
    timestamp = buf.readBigInt64BE(p);
    p += 8;
  }
  const field = (): Buffer | null | undefined => {
    if (end - p < 4) return undefined;
    const len = buf.readInt32BE(p);
    p += 4;
    if (len < 0) return null;
    if (len > end - p) return undefined;
    p += len;
    return buf.subarray(p - len, p);
  };
  const key = field();
  const value = key === undefined ? undefined : field();
  if (key === undefined || value === undefined || p !== end) return null;
  return {
    offset: buf.readBigInt64BE(pos),
    magic,
    attributes,
    compression: attributes & LEGACY_COMPRESSION_MASK,
    timestampType: magic === 1 && (attributes & LEGACY_TIMESTAMP_TYPE) !== 0 ? 1 : 0,
    timestamp,
    key,
    value,
    crcValid: buf.readUInt32BE(pos + LEGACY_CRC_OFFSET) === legacyCrc(buf, pos + LEGACY_MAGIC_OFFSET, end),
    size,
  };
}

/**
 * The inner message set of a wrapper, decompressed (bounded by maxBytes). Throws {@link CompressionError}.
 * Magic 0 lz4 is read without checking the frame descriptor's checksum, which old clients wrote wrongly.
 */
export function decompressWrapper(wrapper: LegacyMessage, maxBytes = DEFAULT_MAX_DECOMPRESSED_BYTES): Buffer {
  const value = wrapper.value ?? Buffer.alloc(0);
  if (wrapper.magic === 0 && wrapper.compression === 3) {
    planLz4(value, maxBytes); // the framing checked (CompressionError), as the decoder below assumes
    return lz4DecodeFrames(value, maxBytes);
  }
  if (wrapper.compression < 1 || wrapper.compression > 3) throw new CompressionError('UNSUPPORTED_COMPRESSION_TYPE', `compression ${wrapper.compression} in a magic ${wrapper.magic} message`);
  return decompress(wrapper.compression as Compression, value, maxBytes);
}

// ───────────────────────────── write ─────────────────────────────

export interface LegacyRecordToWrite {
  offset: bigint;
  /** ignored for magic 0 */
  timestamp: bigint;
  key: Buffer | null;
  value: Buffer | null;
}

export interface WriteLegacyOptions {
  magic: LegacyMagic;
  /** 0 writes one entry per record; 1-3 one wrapper holding them all */
  compression: 0 | 1 | 2 | 3;
  /** magic 1: LogAppendTime (bit 3 on every message, every timestamp logAppendTime) */
  logAppendTime?: bigint | null;
}

const fieldSize = (b: Buffer | null) => 4 + (b === null ? 0 : b.length);

/** One entry: offset, size and the message, its CRC computed. */
function writeMessage(offset: bigint, magic: LegacyMagic, attributes: number, timestamp: bigint, key: Buffer | null, value: Buffer | null): Buffer {
  const size = LEGACY_RECORD_OVERHEAD[magic] - 8 + fieldSize(key) + fieldSize(value);
  const out = Buffer.allocUnsafe(LOG_OVERHEAD + size);
  out.writeBigInt64BE(offset, 0);
  out.writeInt32BE(size, 8);
  out.writeInt8(magic, LEGACY_MAGIC_OFFSET);
  out.writeInt8(attributes, LEGACY_ATTRIBUTES_OFFSET);
  let p = LEGACY_ATTRIBUTES_OFFSET + 1;
  if (magic === 1) p = out.writeBigInt64BE(timestamp, p);
  for (const b of [key, value]) {
    p = out.writeInt32BE(b === null ? -1 : b.length, p);
    if (b !== null) p += b.copy(out, p);
  }
  out.writeUInt32BE(legacyCrc(out, LEGACY_MAGIC_OFFSET, out.length), LEGACY_CRC_OFFSET);
  return out;
}

/**
 * Write records as a message set of `magic`, as Kafka's MemoryRecordsBuilder does for that magic: one
 * message per record when uncompressed; otherwise one wrapper whose offset is the last record's, whose
 * timestamp is the largest (or the log append time), and whose inner offsets are relative for magic 1.
 */
export function writeLegacyMessageSet(records: LegacyRecordToWrite[], opts: WriteLegacyOptions): Buffer {
  const { magic, compression } = opts;
  const appendTime = magic === 1 && opts.logAppendTime !== undefined && opts.logAppendTime !== null ? opts.logAppendTime : null;
  const typeBit = appendTime === null ? 0 : LEGACY_TIMESTAMP_TYPE;
  const timestampOf = (r: LegacyRecordToWrite) => (magic === 0 ? NO_TIMESTAMP : (appendTime ?? r.timestamp));
  if (records.length === 0) return Buffer.alloc(0);
  if (compression === 0) return Buffer.concat(records.map((r) => writeMessage(r.offset, magic, typeBit, timestampOf(r), r.key, r.value)));
  const base = records[0]!.offset;
  const inner = Buffer.concat(records.map((r) => writeMessage(magic === 1 ? r.offset - base : r.offset, magic, typeBit, timestampOf(r), r.key, r.value)));
  const packed = compress(compression, inner);
  if (magic === 0 && compression === 3) breakLz4HeaderChecksum(packed);
  let maxTimestamp = NO_TIMESTAMP;
  for (const r of records) if (timestampOf(r) > maxTimestamp) maxTimestamp = timestampOf(r);
  return writeMessage(records[records.length - 1]!.offset, magic, compression | typeBit, maxTimestamp, null, packed);
}

// ───────────────────────────── lz4 of magic 0 ─────────────────────────────

const PRIME1 = 0x9e3779b1;
const PRIME2 = 0x85ebca77;
const PRIME3 = 0xc2b2ae3d;
const PRIME4 = 0x27d4eb2f;
const PRIME5 = 0x165667b1;
const rotl = (x: number, r: number) => (x << r) | (x >>> (32 - r));

/** xxHash32 (seed 0) of fewer than 16 bytes: all a frame descriptor checksum needs. */
export function xxh32Short(data: Buffer): number {
  if (data.length >= 16) throw new RangeError('xxh32Short takes fewer than 16 bytes');
  let h = (PRIME5 + data.length) | 0;
  let p = 0;
  for (; p + 4 <= data.length; p += 4) h = Math.imul(rotl((h + Math.imul(data.readUInt32LE(p), PRIME3)) | 0, 17), PRIME4);
  for (; p < data.length; p++) h = Math.imul(rotl((h + Math.imul(data[p]!, PRIME5)) | 0, 11), PRIME1);
  h = Math.imul(h ^ (h >>> 15), PRIME2);
  h = Math.imul(h ^ (h >>> 13), PRIME3);
  return (h ^ (h >>> 16)) >>> 0;
}

/**
 * Kafka 0.8's lz4 frame-descriptor checksum, which magic 0 keeps (KAFKA-3160): the xxHash32 of the frame
 * magic and the descriptor, where the standard hashes the descriptor alone. `frame` starts with the magic.
 */
export function breakLz4HeaderChecksum(frame: Buffer): void {
  const flg = frame[4]!;
  const descriptorEnd = 6 + (flg & 0x08 ? 8 : 0) + (flg & 0x01 ? 4 : 0);
  frame[descriptorEnd] = (xxh32Short(frame.subarray(0, descriptorEnd)) >>> 8) & 0xff;
}
