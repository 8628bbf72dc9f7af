import { describe, expect, it } from 'vitest';
import { Reader } from '../../../src/protocol/codec/reader.js';
import { Writer } from '../../../src/protocol/codec/writer.js';

describe('Writer', () => {
  it('writes fixed-width integers big-endian', () => {
    const w = new Writer();
    w.int8(-1);
    w.int16(-32768);
    w.uint16(65535);
    w.int32(-2);
    w.uint32(4294967295);
    w.int64(-(2n ** 63n));
    w.float64(1.5);
    w.bool(true);
    w.uuid('01234567-89ab-cdef-0123-456789abcdef');
    w.uuid('00000000-0000-0000-0000-000000000000');
    expect(w.toBuffer().toString('hex')).toBe('ff' + '8000' + 'ffff' + 'fffffffe' + 'ffffffff' + '8000000000000000' + '3ff8000000000000' + '01' + '0123456789abcdef0123456789abcdef' + '00'.repeat(16));
    expect(w.length).toBe(1 + 2 + 2 + 4 + 4 + 8 + 8 + 1 + 32);
  });

  it('writes int64 values exactly on both sides of 2^53 and across the 32-bit halves', () => {
    const edges = [0n, 1n, -1n, 2n ** 32n - 1n, 2n ** 32n, -(2n ** 32n), -(2n ** 32n) - 1n, 2n ** 53n - 1n, 2n ** 53n, -(2n ** 53n) + 1n, -(2n ** 53n), 2n ** 63n - 1n, -(2n ** 63n)];
    let seed = 12345;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    for (let i = 0; i < 500; i++) edges.push(BigInt.asIntN(64, (BigInt(random()) << 33n) ^ (BigInt(random()) << 2n) ^ BigInt(random())) >> BigInt(random() % 64));
    for (const v of edges) {
      const w = new Writer();
      w.int64(v);
      const expected = Buffer.alloc(8);
      expected.writeBigInt64BE(v);
      expect(w.toBuffer().toString('hex'), String(v)).toBe(expected.toString('hex'));
    }
  });

  it('varint encodings', () => {
    const enc = (f: (w: Writer) => void) => {
      const w = new Writer();
      f(w);
      return w.toBuffer().toString('hex');
    };
    expect(enc((w) => w.uvarint(0))).toBe('00');
    expect(enc((w) => w.uvarint(300))).toBe('ac02');
    expect(enc((w) => w.uvarint(4294967295))).toBe('ffffffff0f');
    expect(enc((w) => w.varint(0))).toBe('00');
    expect(enc((w) => w.varint(-1))).toBe('01');
    expect(enc((w) => w.varint(1))).toBe('02');
    expect(enc((w) => w.varint(2147483647))).toBe('feffffff0f');
    expect(enc((w) => w.varint(-2147483648))).toBe('ffffffff0f');
    expect(enc((w) => w.varlong(-1n))).toBe('01');
    expect(enc((w) => w.varlong(2n ** 63n - 1n))).toBe('feffffffffffffffff01');
    expect(enc((w) => w.varlong(-(2n ** 63n)))).toBe('ffffffffffffffffff01');
  });

  it('compact and nullable encodings of null', () => {
    const w = new Writer();
    w.nullableString(null);
    w.compactNullableString(null);
    w.nullableBytes(null);
    w.compactNullableBytes(null);
    w.arrayLength(-1);
    w.compactArrayLength(-1);
    w.compactArrayLength(0);
    w.records(null, false);
    w.records(null, true);
    expect(w.toBuffer().toString('hex')).toBe('ffff' + '00' + 'ffffffff' + '00' + 'ffffffff' + '00' + '01' + 'ffffffff' + '00');
  });

  it('strings: byte length of UTF-8, compact length+1', () => {
    const w = new Writer();
    w.string('é');
    w.compactString('é');
    w.compactString('');
    expect(w.toBuffer().toString('hex')).toBe('0002c3a9' + '03c3a9' + '01');
    expect(() => new Writer().string('x'.repeat(40000))).toThrow(RangeError);
  });

  it('grows past the initial buffer', () => {
    const w = new Writer(16);
    for (let i = 0; i < 5000; i++) w.int32(i);
    const r = new Reader(w.toBuffer());
    for (let i = 0; i < 5000; i++) expect(r.int32()).toBe(i);
    expect(w.length).toBe(20000);
  });

  it('records(): large chunks are appended by reference, small ones copied', () => {
    const big = Buffer.alloc(4096, 7);
    const small = Buffer.from([1, 2, 3]);
    const w = new Writer();
    w.int16(5);
    w.records([small, big, small], false);
    w.int8(9);
    const parts = w.toBuffers();
    expect(parts.some((p) => p === big)).toBe(true);
    expect(parts.some((p) => p === small)).toBe(false);
    expect(parts.reduce((n, p) => n + p.length, 0)).toBe(w.length);
    const all = w.toBuffer();
    expect(all.length).toBe(2 + 4 + 4102 + 1);
    const r = new Reader(all);
    expect(r.int16()).toBe(5);
    const rec = r.bytes();
    expect(rec).toEqual(Buffer.concat([small, big, small]));
    expect(r.int8()).toBe(9);
    // Mutating the original large buffer shows through (no copy was made).
    big[0] = 42;
    expect(Buffer.concat(w.toBuffers())[2 + 4 + 3]).toBe(42);
  });

  it('records(): compact form and a single Buffer', () => {
    const w = new Writer();
    w.records(Buffer.from([0xaa]), true);
    w.records([Buffer.from([1]), Buffer.from([2])], true);
    w.records(Buffer.alloc(0), false);
    expect(w.toBuffer().toString('hex')).toBe('02aa' + '030102' + '00000000');
  });

  it('reserveInt32 / patchInt32, also across appended chunks and growth', () => {
    const w = new Writer(16);
    const size = w.reserveInt32();
    w.int32(1);
    const inner = w.reserveInt32();
    w.bytes(Buffer.alloc(2000, 1)); // by reference
    for (let i = 0; i < 100; i++) w.int32(i); // forces growth of the scratch buffer
    w.patchInt32(inner, 1234);
    w.patchInt32(size, w.length - 4);
    const b = w.toBuffer();
    const r = new Reader(b);
    expect(r.int32()).toBe(b.length - 4);
    expect(r.int32()).toBe(1);
    expect(r.int32()).toBe(1234);
    const late = w.reserveInt32();
    w.patchInt32(late, -7);
    expect(w.toBuffer().readInt32BE(w.length - 4)).toBe(-7);
  });

  it('unknown tagged fields are written in order with a count', () => {
    const w = new Writer();
    w.unknownTaggedFields(undefined);
    w.unknownTaggedFields([
      { tag: 1, data: Buffer.from([9]) },
      { tag: 200, data: Buffer.alloc(0) },
    ]);
    expect(w.toBuffer().toString('hex')).toBe('00' + '02' + '010109' + 'c80100');
  });

  it('tagged() measures the value', () => {
    const w = new Writer();
    w.tagged(3, (t) => t.compactString('abc'));
    expect(w.toBuffer().toString('hex')).toBe('030404616263');
  });
});
