// gzip (node zlib), bounded by zlib's maxOutputLength.
import zlib from 'node:zlib';
import { CompressionError, corrupt, errMsg, tooLarge } from './errors.js';

export function mapZlibError(e: unknown, maxBytes: number): CompressionError {
  if (e instanceof CompressionError) return e;
  const code = (e as { code?: string }).code;
  if (code === 'ERR_BUFFER_TOO_LARGE') return tooLarge('gzip', maxBytes);
  return corrupt('gzip', errMsg(e));
}

export function gunzipBounded(data: Buffer, maxBytes: number): Buffer {
  try {
    // maxOutputLength makes zlib stop (RangeError ERR_BUFFER_TOO_LARGE) instead of inflating further.
    return zlib.gunzipSync(data, { maxOutputLength: Math.max(1, maxBytes) });
  } catch (e) {
    throw mapZlibError(e, maxBytes);
  }
}
