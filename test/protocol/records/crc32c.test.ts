import { describe, expect, it } from 'vitest';
import { crc32c } from '../../../src/protocol/records/index.js';

describe('crc32c', () => {
  it('matches the standard check value', () => {
    expect(crc32c(Buffer.from('123456789'))).toBe(0xe3069283);
  });

  it('matches RFC 3720 (iSCSI) test vectors', () => {
    expect(crc32c(Buffer.alloc(32, 0))).toBe(0x8a9136aa);
    expect(crc32c(Buffer.alloc(32, 0xff))).toBe(0x62a8ab43);
    const inc = Buffer.from(Array.from({ length: 32 }, (_, i) => i));
    expect(crc32c(inc)).toBe(0x46dd794e);
    const dec = Buffer.from(Array.from({ length: 32 }, (_, i) => 31 - i));
    expect(crc32c(dec)).toBe(0x113fdb5c);
  });

  it('empty input is 0 and results are unsigned', () => {
    expect(crc32c(Buffer.alloc(0))).toBe(0);
    for (let i = 0; i < 50; i++) {
      const v = crc32c(Buffer.from(`x${i}`));
      expect(v).toBeGreaterThanOrEqual(0);
      expect(v).toBeLessThanOrEqual(0xffffffff);
    }
  });

  it('honours start/end without copying semantics changing the result', () => {
    const buf = Buffer.concat([Buffer.from('zz'), Buffer.from('123456789'), Buffer.from('yy')]);
    expect(crc32c(buf, 2, 11)).toBe(0xe3069283);
    expect(crc32c(buf, 2)).toBe(crc32c(Buffer.from('123456789yy')));
    expect(crc32c(buf, 5, 5)).toBe(0);
  });
});
