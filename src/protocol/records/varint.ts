/**
 * Zig-zag varint / varlong helpers (protobuf style, as used by Kafka record format v2).
 * Readers are bounds-checked and never throw: they return `null` on truncation or overlong encodings.
 */

export interface VarintResult {
  value: number;
  next: number;
}

export interface VarlongResult {
  value: bigint;
  next: number;
}

/** Read a zig-zag varint (int32) at `pos`, not reading at or beyond `end`. Max 5 bytes (as Kafka's ByteUtils). */
export function readVarint(buf: Uint8Array, pos: number, end: number): VarintResult | null {
  let raw = 0;
  let shift = 0;
  for (let i = 0; i < 5; i++) {
    if (pos >= end) return null;
    const b = buf[pos++]!;
    raw |= (b & 0x7f) << shift;
    if ((b & 0x80) === 0) {
      // zig-zag decode on the 32-bit unsigned value
      const u = raw >>> 0;
      return { value: (u >>> 1) ^ -(u & 1), next: pos };
    }
    shift += 7;
  }
  return null; // more than 5 bytes: invalid varint
}

/** Read a zig-zag varlong (int64) at `pos`. Max 10 bytes. */
export function readVarlong(buf: Uint8Array, pos: number, end: number): VarlongResult | null {
  // Fast path: values fitting in 4 bytes (28 bits) — by far the common case for timestamp deltas.
  let raw = 0;
  let i = 0;
  for (; i < 4; i++) {
    if (pos >= end) return null;
    const b = buf[pos++]!;
    raw |= (b & 0x7f) << (7 * i);
    if ((b & 0x80) === 0) {
      return { value: BigInt((raw >>> 1) ^ -(raw & 1)), next: pos };
    }
  }
  let big = BigInt(raw >>> 0);
  let shift = 28n;
  for (; i < 10; i++) {
    if (pos >= end) return null;
    const b = buf[pos++]!;
    big |= BigInt(b & 0x7f) << shift;
    if ((b & 0x80) === 0) {
      big = BigInt.asUintN(64, big);
      return { value: BigInt.asIntN(64, (big >> 1n) ^ -(big & 1n)), next: pos };
    }
    shift += 7n;
  }
  return null;
}

/** Number of bytes the zig-zag varint encoding of int32 `value` takes. */
export function sizeOfVarint(value: number): number {
  let v = ((value << 1) ^ (value >> 31)) >>> 0;
  let n = 1;
  while (v >= 0x80) {
    v >>>= 7;
    n++;
  }
  return n;
}

export function sizeOfVarlong(value: bigint): number {
  let v = BigInt.asUintN(64, (value << 1n) ^ (value >> 63n));
  let n = 1;
  while (v >= 0x80n) {
    v >>= 7n;
    n++;
  }
  return n;
}

/** Write zig-zag varint `value` at `pos`; returns the new position. Caller ensures capacity. */
export function writeVarint(buf: Uint8Array, pos: number, value: number): number {
  let v = ((value << 1) ^ (value >> 31)) >>> 0;
  while (v >= 0x80) {
    buf[pos++] = (v & 0x7f) | 0x80;
    v >>>= 7;
  }
  buf[pos++] = v;
  return pos;
}

export function writeVarlong(buf: Uint8Array, pos: number, value: bigint): number {
  let v = BigInt.asUintN(64, (value << 1n) ^ (value >> 63n));
  while (v >= 0x80n) {
    buf[pos++] = Number(v & 0x7fn) | 0x80;
    v >>= 7n;
  }
  buf[pos++] = Number(v);
  return pos;
}
