// Sticky-error reader for the Kafka wire format (in the style of franz-go's
// kbin.Reader). A short or invalid read records the first error in `error`;
// every later read returns a zero value. Callers check `error` once at the end.
// Nothing here throws, and no allocation is sized from an untrusted length
// without first bounding it by the bytes that remain.
import { ZERO_UUID } from './types.js';

const EMPTY = Buffer.alloc(0);
const HEX: string[] = [];
for (let i = 0; i < 256; i++) HEX.push(i.toString(16).padStart(2, '0'));

export class Reader {
  readonly buf: Buffer;
  offset: number;
  readonly end: number;
  error: string | null = null;

  constructor(buf: Buffer, offset = 0, end = buf.length) {
    this.buf = buf;
    this.offset = offset;
    this.end = Math.min(Math.max(end, offset), buf.length);
    if (offset > buf.length) {
      this.offset = buf.length;
      this.end = buf.length;
      this.fail('offset beyond end of buffer');
    }
  }

  remaining(): number {
    return this.end - this.offset;
  }

  fail(msg: string): void {
    if (this.error === null) this.error = msg;
    this.offset = this.end;
  }

  /** True if n more bytes can be read; otherwise records an error. */
  private need(n: number, what: string): boolean {
    if (this.error !== null) return false;
    if (n > this.end - this.offset) {
      this.fail(`short read: ${what} needs ${n} bytes, ${this.end - this.offset} left at offset ${this.offset}`);
      return false;
    }
    return true;
  }

  int8(): number {
    if (!this.need(1, 'int8')) return 0;
    return this.buf.readInt8(this.offset++);
  }

  int16(): number {
    if (!this.need(2, 'int16')) return 0;
    const v = this.buf.readInt16BE(this.offset);
    this.offset += 2;
    return v;
  }

  uint16(): number {
    if (!this.need(2, 'uint16')) return 0;
    const v = this.buf.readUInt16BE(this.offset);
    this.offset += 2;
    return v;
  }

  int32(): number {
    if (!this.need(4, 'int32')) return 0;
    const v = this.buf.readInt32BE(this.offset);
    this.offset += 4;
    return v;
  }

  uint32(): number {
    if (!this.need(4, 'uint32')) return 0;
    const v = this.buf.readUInt32BE(this.offset);
    this.offset += 4;
    return v;
  }

  int64(): bigint {
    if (!this.need(8, 'int64')) return 0n;
    const v = this.buf.readBigInt64BE(this.offset);
    this.offset += 8;
    return v;
  }

  float64(): number {
    if (!this.need(8, 'float64')) return 0;
    const v = this.buf.readDoubleBE(this.offset);
    this.offset += 8;
    return v;
  }

  bool(): boolean {
    if (!this.need(1, 'bool')) return false;
    return this.buf[this.offset++] !== 0;
  }

  uuid(): string {
    if (!this.need(16, 'uuid')) return ZERO_UUID;
    const b = this.buf;
    const o = this.offset;
    this.offset += 16;
    let s = '';
    for (let i = 0; i < 16; i++) {
      if (i === 4 || i === 6 || i === 8 || i === 10) s += '-';
      s += HEX[b[o + i]!]!;
    }
    return s;
  }

  /** Unsigned (non-ZigZag) varint, at most 32 bits. */
  uvarint(): number {
    if (this.error !== null) return 0;
    const b = this.buf;
    let result = 0;
    let mul = 1;
    for (let i = 0; i < 5; i++) {
      if (this.offset >= this.end) {
        this.fail('short read: uvarint');
        return 0;
      }
      const byte = b[this.offset++]!;
      if (i === 4 && byte > 0x0f) {
        this.fail('uvarint overflows 32 bits');
        return 0;
      }
      result += (byte & 0x7f) * mul;
      if ((byte & 0x80) === 0) return result;
      mul *= 128;
    }
    this.fail('uvarint longer than 5 bytes');
    return 0;
  }

  /** ZigZag-encoded 32-bit varint. */
  varint(): number {
    const u = this.uvarint();
    return ((u >>> 1) ^ -(u & 1)) | 0;
  }

  /** ZigZag-encoded 64-bit varint. */
  varlong(): bigint {
    if (this.error !== null) return 0n;
    const b = this.buf;
    let result = 0n;
    let shift = 0n;
    for (let i = 0; i < 10; i++) {
      if (this.offset >= this.end) {
        this.fail('short read: varlong');
        return 0n;
      }
      const byte = b[this.offset++]!;
      if (i === 9 && byte > 0x01) {
        this.fail('varlong overflows 64 bits');
        return 0n;
      }
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) {
        return (result >> 1n) ^ -(result & 1n);
      }
      shift += 7n;
    }
    this.fail('varlong longer than 10 bytes');
    return 0n;
  }

  private utf8(len: number): string {
    if (!this.need(len, 'string')) return '';
    const s = this.buf.toString('utf8', this.offset, this.offset + len);
    this.offset += len;
    return s;
  }

  private slice(len: number): Buffer {
    if (!this.need(len, 'bytes')) return EMPTY;
    const s = this.buf.subarray(this.offset, this.offset + len);
    this.offset += len;
    return s;
  }

  string(): string {
    const n = this.int16();
    if (n < 0) {
      this.fail(n === -1 ? 'null for non-nullable string' : `invalid string length ${n}`);
      return '';
    }
    return this.utf8(n);
  }

  nullableString(): string | null {
    const n = this.int16();
    if (n < 0) {
      if (n === -1 && this.error === null) return null;
      this.fail(`invalid string length ${n}`);
      return '';
    }
    return this.utf8(n);
  }

  compactString(): string {
    const n = this.uvarint();
    if (n === 0) {
      this.fail('null for non-nullable compact string');
      return '';
    }
    return this.utf8(n - 1);
  }

  compactNullableString(): string | null {
    const n = this.uvarint();
    if (n === 0) return this.error === null ? null : '';
    return this.utf8(n - 1);
  }

  bytes(): Buffer {
    const n = this.int32();
    if (n < 0) {
      this.fail(n === -1 ? 'null for non-nullable bytes' : `invalid bytes length ${n}`);
      return EMPTY;
    }
    return this.slice(n);
  }

  nullableBytes(): Buffer | null {
    const n = this.int32();
    if (n < 0) {
      if (n === -1 && this.error === null) return null;
      this.fail(`invalid bytes length ${n}`);
      return EMPTY;
    }
    return this.slice(n);
  }

  compactBytes(): Buffer {
    const n = this.uvarint();
    if (n === 0) {
      this.fail('null for non-nullable compact bytes');
      return EMPTY;
    }
    return this.slice(n - 1);
  }

  compactNullableBytes(): Buffer | null {
    const n = this.uvarint();
    if (n === 0) return this.error === null ? null : EMPTY;
    return this.slice(n - 1);
  }

  /** n raw bytes as a view (no length prefix). */
  raw(n: number): Buffer {
    if (n < 0) {
      this.fail(`invalid length ${n}`);
      return EMPTY;
    }
    return this.slice(n);
  }

  /** int32 element count; -1 means null. A count above remaining() is an error. */
  arrayLength(): number {
    const n = this.int32();
    if (n < 0) {
      if (n === -1 && this.error === null) return -1;
      this.fail(`invalid array length ${n}`);
      return 0;
    }
    if (n > this.end - this.offset) {
      this.fail(`array length ${n} exceeds the ${this.end - this.offset} bytes left`);
      return 0;
    }
    return n;
  }

  /** Compact (uvarint count+1) element count; -1 means null. */
  compactArrayLength(): number {
    const n = this.uvarint();
    if (this.error !== null) return 0;
    if (n === 0) return -1;
    if (n - 1 > this.end - this.offset) {
      this.fail(`array length ${n - 1} exceeds the ${this.end - this.offset} bytes left`);
      return 0;
    }
    return n - 1;
  }

  skip(n: number): void {
    if (n < 0) {
      this.fail(`invalid skip ${n}`);
      return;
    }
    if (this.need(n, 'skip')) this.offset += n;
  }

  /**
   * A reader over the next n bytes (used for tagged fields); this reader
   * moves past them. On a short read, the sub-reader is empty and failed.
   */
  sub(n: number): Reader {
    if (n < 0 || !this.need(n, 'tagged field')) {
      if (n < 0) this.fail(`invalid length ${n}`);
      const r = new Reader(EMPTY);
      r.fail(this.error ?? 'short read');
      return r;
    }
    const r = new Reader(this.buf, this.offset, this.offset + n);
    this.offset += n;
    return r;
  }

  /** Propagates a sub-reader's error and checks it consumed everything. */
  endSub(sub: Reader, tag: number): void {
    if (sub.error !== null) this.fail(`tagged field ${tag}: ${sub.error}`);
    else if (sub.offset !== sub.end) this.fail(`tagged field ${tag}: ${sub.end - sub.offset} unread bytes`);
  }
}
