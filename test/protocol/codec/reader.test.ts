import { describe, expect, it } from 'vitest';
import { Reader } from '../../../src/protocol/codec/reader.js';
import { Writer } from '../../../src/protocol/codec/writer.js';

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex');

describe('Reader', () => {
  it('reads fixed-width big-endian integers', () => {
    const r = new Reader(hex('ff 8000 ffff 80000000 ffffffff 8000000000000000 3ff8000000000000 01 00'));
    expect(r.int8()).toBe(-1);
    expect(r.int16()).toBe(-32768);
    expect(r.uint16()).toBe(65535);
    expect(r.int32()).toBe(-2147483648);
    expect(r.uint32()).toBe(4294967295);
    expect(r.int64()).toBe(-(2n ** 63n));
    expect(r.float64()).toBe(1.5);
    expect(r.bool()).toBe(true);
    expect(r.bool()).toBe(false);
    expect(r.error).toBeNull();
    expect(r.remaining()).toBe(0);
  });

  it('uuid in lowercase 8-4-4-4-12 form', () => {
    expect(new Reader(hex('0123456789ABCDEF0123456789abcdef')).uuid()).toBe('01234567-89ab-cdef-0123-456789abcdef');
    expect(new Reader(Buffer.alloc(16)).uuid()).toBe('00000000-0000-0000-0000-000000000000');
  });

  it('uvarint / varint / varlong edge values', () => {
    expect(new Reader(hex('00')).uvarint()).toBe(0);
    expect(new Reader(hex('7f')).uvarint()).toBe(127);
    expect(new Reader(hex('8001')).uvarint()).toBe(128);
    expect(new Reader(hex('ffffffff0f')).uvarint()).toBe(4294967295);
    expect(new Reader(hex('00')).varint()).toBe(0);
    expect(new Reader(hex('01')).varint()).toBe(-1);
    expect(new Reader(hex('02')).varint()).toBe(1);
    expect(new Reader(hex('feffffff0f')).varint()).toBe(2147483647);
    expect(new Reader(hex('ffffffff0f')).varint()).toBe(-2147483648);
    expect(new Reader(hex('01')).varlong()).toBe(-1n);
    expect(new Reader(hex('feffffffffffffffff01')).varlong()).toBe(2n ** 63n - 1n);
    expect(new Reader(hex('ffffffffffffffffff01')).varlong()).toBe(-(2n ** 63n));
    expect(new Reader(hex('ffffffff0f')).varlong()).toBe(-2147483648n);
    // Overlong / overflowing encodings are errors.
    const r1 = new Reader(hex('ffffffff1f'));
    expect(r1.uvarint()).toBe(0);
    expect(r1.error).toMatch(/overflow/);
    const r2 = new Reader(hex('ffffffffffffffffff7f'));
    r2.varlong();
    expect(r2.error).toMatch(/overflow/);
    const r3 = new Reader(hex('8080'));
    r3.uvarint();
    expect(r3.error).toMatch(/short/);
  });

  it('round-trips varints through the writer', () => {
    const ints = [0, 1, -1, 63, -64, 64, 300, -300, 2147483647, -2147483648];
    const longs = [0n, -1n, 1n, 2n ** 31n, -(2n ** 31n) - 1n, 2n ** 62n, 2n ** 63n - 1n, -(2n ** 63n)];
    const w = new Writer();
    for (const v of ints) w.varint(v);
    for (const v of longs) w.varlong(v);
    const r = new Reader(w.toBuffer());
    for (const v of ints) expect(r.varint()).toBe(v);
    for (const v of longs) expect(r.varlong()).toBe(v);
    expect(r.error).toBeNull();
    expect(r.remaining()).toBe(0);
  });

  it('sticky error on truncation: first error wins, later reads return zero values', () => {
    const r = new Reader(hex('0001 02'));
    expect(r.int16()).toBe(1);
    expect(r.int32()).toBe(0);
    const first = r.error;
    expect(first).toMatch(/int32/);
    expect(r.int8()).toBe(0); // the 02 byte is no longer readable
    expect(r.int64()).toBe(0n);
    expect(r.string()).toBe('');
    expect(r.bytes().length).toBe(0);
    expect(r.bool()).toBe(false);
    expect(r.uuid()).toBe('00000000-0000-0000-0000-000000000000');
    expect(r.arrayLength()).toBe(0);
    expect(r.compactArrayLength()).toBe(0);
    expect(r.varlong()).toBe(0n);
    r.fail('later');
    expect(r.error).toBe(first);
  });

  it('strings and bytes, nullable and compact', () => {
    const r = new Reader(hex('0002 6869 ffff 03 6869 00 00000002 0102 ffffffff 03 0102 00 01'));
    expect(r.string()).toBe('hi');
    expect(r.nullableString()).toBeNull();
    expect(r.compactString()).toBe('hi');
    expect(r.compactNullableString()).toBeNull();
    expect(r.bytes()).toEqual(hex('0102'));
    expect(r.nullableBytes()).toBeNull();
    expect(r.compactBytes()).toEqual(hex('0102'));
    expect(r.compactNullableBytes()).toBeNull();
    expect(r.compactString()).toBe(''); // 01 = length 0
    expect(r.error).toBeNull();
  });

  it('unicode strings', () => {
    const w = new Writer();
    w.string('日本語 🎉');
    w.compactString('héllo');
    const r = new Reader(w.toBuffer());
    expect(r.string()).toBe('日本語 🎉');
    expect(r.compactString()).toBe('héllo');
  });

  it('bytes are views into the input, not copies', () => {
    const buf = hex('00000003 aabbcc');
    const b = new Reader(buf).bytes();
    buf[4] = 0x11;
    expect(b[0]).toBe(0x11);
  });

  it('null for non-nullable fields is an error', () => {
    const r = new Reader(hex('ffff'));
    r.string();
    expect(r.error).toMatch(/null/);
    const r2 = new Reader(hex('00'));
    r2.compactString();
    expect(r2.error).toMatch(/null/);
    const r3 = new Reader(hex('ffffffff'));
    r3.bytes();
    expect(r3.error).toMatch(/null/);
  });

  it('negative and oversized lengths are rejected without allocating', () => {
    const cases: [string, (r: Reader) => unknown][] = [
      ['fffe', (r) => r.nullableString()],
      ['7fff 00', (r) => r.string()],
      ['fffffffe', (r) => r.nullableBytes()],
      ['7fffffff 00', (r) => r.bytes()],
      ['ffffffff0f', (r) => r.compactBytes()],
      ['fffffffe', (r) => r.arrayLength()],
      ['7fffffff', (r) => r.arrayLength()],
      ['00000005 01020304', (r) => r.arrayLength()],
      ['ffffffff0f', (r) => r.compactArrayLength()],
      ['06 0102', (r) => r.compactArrayLength()],
    ];
    for (const [h, f] of cases) {
      const r = new Reader(hex(h));
      f(r);
      expect(r.error, h).not.toBeNull();
    }
    // A count that fits the remaining bytes is fine.
    expect(new Reader(hex('00000002 0000')).arrayLength()).toBe(2);
    expect(new Reader(hex('ffffffff')).arrayLength()).toBe(-1);
    expect(new Reader(hex('00')).compactArrayLength()).toBe(-1);
    expect(new Reader(hex('01')).compactArrayLength()).toBe(0);
  });

  it('respects offset and end bounds', () => {
    const buf = hex('aa 00000001 bb');
    const r = new Reader(buf, 1, 5);
    expect(r.remaining()).toBe(4);
    expect(r.int32()).toBe(1);
    expect(r.int8()).toBe(0);
    expect(r.error).not.toBeNull();
  });

  it('skip and sub readers', () => {
    const r = new Reader(hex('0102 03 04'));
    r.skip(2);
    const s = r.sub(1);
    expect(s.int8()).toBe(3);
    expect(s.int8()).toBe(0);
    expect(s.error).not.toBeNull();
    expect(r.int8()).toBe(4);
    r.skip(5);
    expect(r.error).not.toBeNull();
    const r2 = new Reader(hex('01'));
    r2.skip(-1);
    expect(r2.error).not.toBeNull();
  });

  it('a generated decoder fed garbage never throws', () => {
    // Random bytes as a Metadata v12 request: the error must be reported, not thrown.
    let seed = 1;
    const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    return import('../../../src/protocol/messages/index.js').then(({ apiByKey }) => {
      for (let i = 0; i < 300; i++) {
        const b = Buffer.alloc(Math.floor(rnd() * 64));
        for (let j = 0; j < b.length; j++) b[j] = Math.floor(rnd() * 256);
        for (const api of apiByKey.values()) {
          for (const v of [api.minVersion, api.maxVersion]) {
            api.readRequest(new Reader(b), v); // throws -> test fails
            api.readResponse(new Reader(b), v);
          }
        }
      }
    });
  });
});
