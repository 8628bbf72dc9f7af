// zstd: streaming decode with an output cap (zstd-napi's low-level binding).
import { createRequire } from 'node:module';
import { CompressionError, corrupt, errMsg, tooLarge } from './errors.js';

const require = createRequire(import.meta.url);
// zstd-napi's low-level binding is CommonJS with `module.exports = require(<.node>)`, so ESM named imports
// cannot see its members; load it through require and type it from its declaration file.
const zstdBinding = require('zstd-napi/binding') as typeof import('zstd-napi/binding.js');

let zstdDctx: InstanceType<typeof zstdBinding.DCtx> | null = null;
const ZSTD_OUT_CHUNK = zstdBinding.dStreamOutSize();

/**
 * Streaming zstd decode with an output cap. Works for frames with and without a content size in the header
 * (streaming compressors such as librdkafka and zstd-jni omit it) and for concatenated frames.
 */
export function zstdDecompress(data: Buffer, maxBytes: number): Buffer {
  if (data.length === 0) throw corrupt('zstd', 'empty input');
  const dctx = (zstdDctx ??= new zstdBinding.DCtx());
  dctx.reset(zstdBinding.ResetDirective.sessionAndParameters);
  // Refuse frames whose window is larger than both 8 MiB and the output limit (memory bound per call).
  const windowLogMax = Math.min(27, Math.max(23, Math.ceil(Math.log2(Math.max(1, maxBytes)))));
  dctx.setParameter(zstdBinding.DParameter.windowLogMax, windowLogMax);

  const chunks: Buffer[] = [];
  let total = 0;
  let src: Buffer = data;
  try {
    for (;;) {
      // one byte beyond the limit lets us detect "exceeds" without decoding further
      const room = maxBytes - total + 1;
      const size = Math.max(1, Math.min(room, Math.max(ZSTD_OUT_CHUNK, src.length * 4)));
      const chunk = Buffer.allocUnsafe(size);
      const [ret, produced, consumed] = dctx.decompressStream(chunk, src);
      if (produced > 0) {
        total += produced;
        if (total > maxBytes) throw tooLarge('zstd', maxBytes);
        chunks.push(chunk.subarray(0, produced));
      }
      src = src.subarray(consumed);
      if (src.length === 0) {
        if (ret === 0) break; // frame complete, input exhausted
        if (produced < size) throw corrupt('zstd', 'truncated frame');
        // output buffer was full: more may be pending, loop with empty input to flush
      } else if (produced === 0 && consumed === 0) {
        throw corrupt('zstd', 'decoder made no progress');
      }
    }
  } catch (e) {
    dctx.reset(zstdBinding.ResetDirective.sessionOnly);
    if (e instanceof CompressionError) throw e;
    throw corrupt('zstd', errMsg(e));
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
}
