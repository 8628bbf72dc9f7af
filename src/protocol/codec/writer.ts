// Growable writer for the Kafka wire format. Small values go into a doubling
// scratch buffer; Buffers of at least LARGE bytes (record batches read from
// storage, for instance) are appended by reference as their own chunk, so a
// response can be handed to socket.cork()/write() without copying them.
import { ZERO_UUID } from './types.js';

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** Buffers at least this large are appended by reference, not copied. */
export const LARGE = 1024;

const UUID_RE = /^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$/;

export class Writer {
  /** Finished chunks (views of old scratch buffers, or appended buffers). */
  private chunks: Buffer[] = [];
  /** Absolute start position of each chunk. */
  private chunkPos: number[] = [];
  private doneLength = 0;
  private buf: Buffer;
  /** Start of the current (not yet committed) segment within buf. */
  private segStart = 0;
  private pos = 0;

  constructor(initialSize = 1024) {
    this.buf = Buffer.allocUnsafe(Math.max(16, initialSize));
  }

  /** Bytes written so far. */
  get length(): number {
    return this.doneLength + (this.pos - this.segStart);
  }

  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const used = this.pos - this.segStart;
    let size = this.buf.length * 2;
    while (size < used + n) size *= 2;
    const nb = Buffer.allocUnsafe(size);
    this.buf.copy(nb, 0, this.segStart, this.pos);
    this.buf = nb;
    this.segStart = 0;
    this.pos = used;
  }

  /** Moves the current segment into the chunk list. */
  private commit(): void {
    if (this.pos > this.segStart) {
      this.chunkPos.push(this.doneLength);
      this.chunks.push(this.buf.subarray(this.segStart, this.pos));
      this.doneLength += this.pos - this.segStart;
      this.segStart = this.pos;
    }
  }

  int8(v: number): void {
    this.ensure(1);
    this.buf.writeInt8(v, this.pos);
    this.pos += 1;
  }

  int16(v: number): void {
    this.ensure(2);
    this.buf.writeInt16BE(v, this.pos);
    this.pos += 2;
  }

  uint16(v: number): void {
    this.ensure(2);
    this.buf.writeUInt16BE(v, this.pos);
    this.pos += 2;
  }

  int32(v: number): void {
    this.ensure(4);
    this.buf.writeInt32BE(v, this.pos);
    this.pos += 4;
  }

  uint32(v: number): void {
    this.ensure(4);
    this.buf.writeUInt32BE(v, this.pos);
    this.pos += 4;
  }

  int64(v: bigint): void {
    this.ensure(8);
    // Offsets and timestamps fit in a double: two int32 writes, without the
    // BigInt arithmetic (and garbage) of writeBigInt64BE.
    if (v >= -MAX_SAFE && v <= MAX_SAFE) {
      const n = Number(v);
      const high = Math.floor(n / 0x1_0000_0000);
      this.buf.writeInt32BE(high, this.pos);
      this.buf.writeUInt32BE(n - high * 0x1_0000_0000, this.pos + 4);
    } else {
      this.buf.writeBigInt64BE(v, this.pos);
    }
    this.pos += 8;
  }

  float64(v: number): void {
    this.ensure(8);
    this.buf.writeDoubleBE(v, this.pos);
    this.pos += 8;
  }

  bool(v: boolean): void {
    this.ensure(1);
    this.buf[this.pos++] = v ? 1 : 0;
  }

  /** Accepts the "8-4-4-4-12" form (or 32 hex digits). */
  uuid(v: string): void {
    this.ensure(16);
    if (v === ZERO_UUID) {
      this.buf.fill(0, this.pos, this.pos + 16);
    } else {
      if (!UUID_RE.test(v)) throw new TypeError(`invalid uuid ${JSON.stringify(v)}`);
      this.buf.write(v.replace(/-/g, ''), this.pos, 16, 'hex');
    }
    this.pos += 16;
  }

  /** Unsigned (non-ZigZag) varint of a value in [0, 2^32). */
  uvarint(v: number): void {
    this.ensure(5);
    const b = this.buf;
    v = v >>> 0;
    while (v >= 0x80) {
      b[this.pos++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    b[this.pos++] = v;
  }

  /** ZigZag-encoded 32-bit varint. */
  varint(v: number): void {
    this.uvarint(((v << 1) ^ (v >> 31)) >>> 0);
  }

  /** ZigZag-encoded 64-bit varint. */
  varlong(v: bigint): void {
    let u = BigInt.asUintN(64, (v << 1n) ^ (v >> 63n));
    this.ensure(10);
    const b = this.buf;
    while (u >= 0x80n) {
      b[this.pos++] = Number(u & 0x7fn) | 0x80;
      u >>= 7n;
    }
    b[this.pos++] = Number(u);
  }

  private utf8(v: string, len: number): void {
    this.ensure(len);
    this.buf.write(v, this.pos, len, 'utf8');
    this.pos += len;
  }

  string(v: string): void {
    const len = Buffer.byteLength(v, 'utf8');
    if (len > 0x7fff) throw new RangeError(`string of ${len} bytes is too long for an int16 length`);
    this.int16(len);
    this.utf8(v, len);
  }

  nullableString(v: string | null): void {
    if (v === null) this.int16(-1);
    else this.string(v);
  }

  compactString(v: string): void {
    const len = Buffer.byteLength(v, 'utf8');
    this.uvarint(len + 1);
    this.utf8(v, len);
  }

  compactNullableString(v: string | null): void {
    if (v === null) this.uvarint(0);
    else this.compactString(v);
  }

  /** Raw bytes, no length prefix. Large buffers are appended by reference. */
  raw(v: Buffer): void {
    const n = v.length;
    if (n >= LARGE) {
      this.commit();
      this.chunkPos.push(this.doneLength);
      this.chunks.push(v);
      this.doneLength += n;
      return;
    }
    this.ensure(n);
    v.copy(this.buf, this.pos);
    this.pos += n;
  }

  bytes(v: Buffer): void {
    this.int32(v.length);
    this.raw(v);
  }

  nullableBytes(v: Buffer | null): void {
    if (v === null) this.int32(-1);
    else this.bytes(v);
  }

  compactBytes(v: Buffer): void {
    this.uvarint(v.length + 1);
    this.raw(v);
  }

  compactNullableBytes(v: Buffer | null): void {
    if (v === null) this.uvarint(0);
    else this.compactBytes(v);
  }

  /**
   * A records (or bytes) field. A Buffer[] is written as one field whose
   * length is the sum of the chunks; chunks are appended by reference when large.
   */
  records(value: Buffer | readonly Buffer[] | null, compact: boolean): void {
    if (value === null) {
      if (compact) this.uvarint(0);
      else this.int32(-1);
      return;
    }
    if (Buffer.isBuffer(value)) {
      if (compact) this.compactBytes(value);
      else this.bytes(value);
      return;
    }
    let total = 0;
    for (const c of value) total += c.length;
    if (compact) this.uvarint(total + 1);
    else this.int32(total);
    for (const c of value) this.raw(c);
  }

  /** int32 element count; -1 for null. */
  arrayLength(n: number): void {
    this.int32(n);
  }

  /** Compact element count (count+1, 0 for null); -1 for null. */
  compactArrayLength(n: number): void {
    this.uvarint(n < 0 ? 0 : n + 1);
  }

  /** Appends everything another writer holds (chunks by reference). */
  append(other: Writer): void {
    for (const c of other.toBuffers()) this.raw(c);
  }

  /**
   * One tagged field: tag, byte size, then whatever fn writes (measured
   * through a temporary writer).
   */
  tagged(tag: number, fn: (w: Writer) => void): void {
    const t = new Writer(64);
    fn(t);
    this.uvarint(tag);
    this.uvarint(t.length);
    this.append(t);
  }

  /**
   * Writes the unknown tagged fields in list[from..] whose tag is below
   * `below`; returns the index of the first one not written.
   */
  unknownTagsBelow(list: readonly { tag: number; data: Buffer }[] | undefined, from: number, below: number): number {
    if (list === undefined) return 0;
    let i = from;
    while (i < list.length && list[i]!.tag < below) {
      const f = list[i]!;
      this.uvarint(f.tag);
      this.uvarint(f.data.length);
      this.raw(f.data);
      i++;
    }
    return i;
  }

  /** A tagged-field section holding only unknown tagged fields. */
  unknownTaggedFields(list: readonly { tag: number; data: Buffer }[] | undefined): void {
    if (list === undefined || list.length === 0) {
      this.uvarint(0);
      return;
    }
    this.uvarint(list.length);
    this.unknownTagsBelow(list, 0, Infinity);
  }

  /** Reserves 4 bytes for an int32 written later with patchInt32; returns its position. */
  reserveInt32(): number {
    const p = this.length;
    this.int32(0);
    return p;
  }

  patchInt32(pos: number, value: number): void {
    const curStart = this.doneLength;
    if (pos >= curStart) {
      this.buf.writeInt32BE(value, this.segStart + (pos - curStart));
      return;
    }
    // Find the chunk holding pos (an int32 never spans chunks: ensure() keeps it contiguous).
    let lo = 0;
    let hi = this.chunkPos.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.chunkPos[mid]! <= pos) lo = mid;
      else hi = mid - 1;
    }
    this.chunks[lo]!.writeInt32BE(value, pos - this.chunkPos[lo]!);
  }

  /** The written bytes as a list of chunks; their total length is `length`. */
  toBuffers(): Buffer[] {
    const out = this.chunks.slice();
    if (this.pos > this.segStart) out.push(this.buf.subarray(this.segStart, this.pos));
    return out;
  }

  /** The written bytes as one Buffer. */
  toBuffer(): Buffer {
    const parts = this.toBuffers();
    if (parts.length === 1) return parts[0]!;
    return Buffer.concat(parts, this.length);
  }
}
