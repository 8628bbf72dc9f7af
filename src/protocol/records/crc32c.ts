import { crc32c as nativeCrc32c } from '@node-rs/crc32';

/**
 * CRC-32C (Castagnoli) of buf[start, end), unsigned.
 * Uses @node-rs/crc32's native implementation; `subarray` shares memory, so no copy is made.
 */
export function crc32c(buf: Uint8Array, start = 0, end = buf.length): number {
  const view = start === 0 && end === buf.length ? buf : buf.subarray(start, end);
  return nativeCrc32c(view) >>> 0;
}
