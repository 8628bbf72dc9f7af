/**
 * Record-batch compression codecs (Kafka attributes bits 0-2).
 *
 *   0 none, 1 gzip (node zlib), 2 snappy (xerial/snappy-java framing on write; raw or xerial on read),
 *   3 lz4 (standard LZ4 frame format), 4 zstd (zstd-napi, frames with or without content size).
 *
 * Every decompressor is bounded by a caller-given `maxBytes` so that a small compressed payload cannot
 * make the broker allocate unbounded memory ("decompression bomb"). Errors are thrown as
 * {@link CompressionError}; its `kafkaError` says what a broker should answer.
 *
 * This file is the dispatch by codec; each codec family's framing and bounded decoding is in compression/.
 */
import zlib from 'node:zlib';
import { promisify } from 'node:util';
import * as snappy from 'snappy';
import * as lz4 from 'lz4-napi';
import * as zstd from 'zstd-napi';
import { asBuffer, CompressionError, corrupt, errMsg, tooLarge } from './compression/errors.js';
import { gunzipBounded, mapZlibError } from './compression/gzip.js';
import { lz4DecodeFrames, lz4Decompress, planLz4 } from './compression/lz4.js';
import { frameXerial, joinChecked, planSnappy, snappyDecompress, XERIAL_BLOCK_SIZE, xerialSnappyCompress } from './compression/snappy.js';
import { zstdDecompress } from './compression/zstd.js';

export { CompressionError, type CompressionErrorCode } from './compression/errors.js';
export { XERIAL_MAGIC } from './compression/snappy.js';

export type Compression = 0 | 1 | 2 | 3 | 4;
export const Compression = {
  None: 0,
  Gzip: 1,
  Snappy: 2,
  Lz4: 3,
  Zstd: 4,
} as const;

export const COMPRESSION_NAMES: Record<Compression, string> = {
  0: 'none',
  1: 'gzip',
  2: 'snappy',
  3: 'lz4',
  4: 'zstd',
};

export function isCompression(n: number): n is Compression {
  return n === 0 || n === 1 || n === 2 || n === 3 || n === 4;
}

/** Default upper bound for decompressed output when the caller gives none (256 MiB). */
export const DEFAULT_MAX_DECOMPRESSED_BYTES = 256 * 1024 * 1024;

// ───────────────────────────── compress ─────────────────────────────

export interface CompressOptions {
  /** gzip: 1-9 (default zlib's 6 = Kafka's default); zstd: level (default 3, as Kafka). Ignored by snappy/lz4. */
  level?: number;
}

export function compress(codec: Compression, data: Buffer, opts: CompressOptions = {}): Buffer {
  switch (codec) {
    case 0:
      return data;
    case 1:
      return zlib.gzipSync(data, opts.level === undefined ? {} : { level: opts.level });
    case 2:
      return xerialSnappyCompress(data);
    case 3:
      // lz4_flex frame: version 01, independent blocks, 64 KiB max block size, no checksums —
      // the flags Kafka's Java Lz4BlockOutputStream writes and the only block mode its reader supports.
      return lz4.compressFrameSync(data);
    case 4:
      return zstd.compress(data, opts.level === undefined ? {} : { compressionLevel: opts.level });
    default:
      throw new CompressionError('UNSUPPORTED_COMPRESSION_TYPE', `unknown compression codec ${String(codec)}`);
  }
}

const gzipAsync = promisify(zlib.gzip);
const gunzipAsync = promisify(zlib.gunzip);

/** Like {@link compress}; gzip, snappy and lz4 run off the main thread. */
export async function compressAsync(codec: Compression, data: Buffer, opts: CompressOptions = {}): Promise<Buffer> {
  switch (codec) {
    case 1:
      return gzipAsync(data, opts.level === undefined ? {} : { level: opts.level });
    case 2: {
      const blocks: Buffer[] = [];
      for (let off = 0; off < data.length || off === 0; off += XERIAL_BLOCK_SIZE) {
        blocks.push(await snappy.compress(data.subarray(off, off + XERIAL_BLOCK_SIZE)));
        if (data.length === 0) break;
      }
      return frameXerial(blocks);
    }
    case 3:
      return lz4.compressFrame(data);
    default:
      return compress(codec, data, opts);
  }
}

// ───────────────────────────── decompress ─────────────────────────────

/**
 * Decompress `data` (the bytes after a batch's recordCount field) with `codec`.
 * Throws {@link CompressionError}: RECORD_TOO_LARGE when the output would exceed `maxBytes`,
 * CORRUPT_MESSAGE when the payload is not valid for the codec.
 */
export function decompress(codec: Compression, data: Buffer, maxBytes = DEFAULT_MAX_DECOMPRESSED_BYTES): Buffer {
  switch (codec) {
    case 0:
      if (data.length > maxBytes) throw tooLarge('none', maxBytes);
      return data;
    case 1:
      return gunzipBounded(data, maxBytes);
    case 2:
      return snappyDecompress(data, maxBytes);
    case 3:
      return lz4Decompress(data, maxBytes);
    case 4:
      return zstdDecompress(data, maxBytes);
    default:
      throw new CompressionError('UNSUPPORTED_COMPRESSION_TYPE', `unknown compression codec ${String(codec)}`);
  }
}

/** Like {@link decompress}, with the same bounds; gzip, snappy and (when safe) lz4 run off the main thread. */
export async function decompressAsync(codec: Compression, data: Buffer, maxBytes = DEFAULT_MAX_DECOMPRESSED_BYTES): Promise<Buffer> {
  switch (codec) {
    case 1:
      try {
        return await gunzipAsync(data, { maxOutputLength: Math.max(1, maxBytes) });
      } catch (e) {
        throw mapZlibError(e, maxBytes);
      }
    case 2: {
      const plan = planSnappy(data, maxBytes);
      if (plan.raw) {
        try {
          return asBuffer((await snappy.uncompress(data, { asBuffer: true })) as Buffer);
        } catch (e) {
          throw corrupt('snappy', errMsg(e));
        }
      }
      const parts = await Promise.all(
        plan.blocks.map(async ([s, e]) => {
          try {
            return (await snappy.uncompress(data.subarray(s, e), { asBuffer: true })) as Buffer;
          } catch (err) {
            throw corrupt('snappy', errMsg(err));
          }
        }),
      );
      return joinChecked(parts, plan.total, 'snappy');
    }
    case 3: {
      const plan = planLz4(data, maxBytes);
      if (plan.nativeSafe) {
        try {
          return await lz4.decompressFrame(data);
        } catch (e) {
          throw corrupt('lz4', errMsg(e));
        }
      }
      return lz4DecodeFrames(data, maxBytes);
    }
    default:
      return decompress(codec, data, maxBytes);
  }
}
