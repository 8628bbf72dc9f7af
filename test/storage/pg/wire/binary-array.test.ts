// PostgreSQL's binary array format (array_recv), byte for byte: dimensions,
// has-nulls, element type oid, length and lower bound, then each element
// with its length.
import { describe, expect, it } from 'vitest';
import { boolArray, byteaArray, byteaArrayChunks, int2Array, int4Array, int8Array } from '../../../../src/storage/pg/wire/binary-array.js';

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex');
const head = (oid: string, n: string) => `00000001 00000000 ${oid} ${n} 00000001`;

describe('binary arrays', () => {
  it('int8[], int4[], int2[] and bool[]', () => {
    expect(int8Array([1n, -1n])).toEqual(hex(`${head('00000014', '00000002')} 00000008 0000000000000001 00000008 ffffffffffffffff`));
    expect(int4Array([258])).toEqual(hex(`${head('00000017', '00000001')} 00000004 00000102`));
    expect(int2Array([-2])).toEqual(hex(`${head('00000015', '00000001')} 00000002 fffe`));
    expect(boolArray([true, false])).toEqual(hex(`${head('00000010', '00000002')} 00000001 01 00000001 00`));
  });

  it('an empty array still names its element type', () => {
    expect(int8Array([])).toEqual(hex(head('00000014', '00000000')));
  });

  it('bytea[], copied whole or as pieces that leave large values in place', () => {
    const small = Buffer.from([1, 2]);
    const large = Buffer.alloc(4096, 9);
    const whole = byteaArray([small, large]);
    expect(whole.subarray(0, 32)).toEqual(hex(`${head('00000011', '00000002')} 00000002 0102 00001000 0909`).subarray(0, 32));
    const { chunks, length } = byteaArrayChunks([small, large]);
    expect(length).toBe(whole.length);
    expect(chunks).toContain(large);
    expect(Buffer.concat(chunks)).toEqual(whole);
  });
});
