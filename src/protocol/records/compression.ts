/**
 * Record-batch compression codecs (Kafka attributes bits 0-2).
 *
 *   0 none, 1 gzip (node zlib), 2 snappy (xerial/snappy-java framing on write; raw or xerial on read),
 *   3 lz4 (standard LZ4 frame format), 4 zstd (zstd-napi, frames with or without content size).
 *
 * Every decompressor is bounded by a caller-given `maxBytes` so that a small compressed payload cannot
 * make the broker allocate unbounded memory ("decompression bomb"). Errors are thrown as
 * {@link CompressionError}; its `kafkaError` says what a broker should answer.
 */
import { createRequire } from 'node:module';
import zlib from 'node:zlib';
import { promisify } from 'node:util';
import * as snappy from 'snappy';
import * as lz4 from 'lz4-napi';
import * as zstd from 'zstd-napi';

const require = createRequire(import.meta.url);
// zstd-napi's low-level binding is CommonJS with `module.exports = require(<.node>)`, so ESM named imports
// cannot see its members; load it through require and type it from its declaration file.
const zstdBinding = require('zstd-napi/binding') as typeof import('zstd-napi/binding.js');

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

export type CompressionErrorCode = 'CORRUPT_MESSAGE' | 'RECORD_TOO_LARGE' | 'UNSUPPORTED_COMPRESSION_TYPE';

export class CompressionError extends Error {
  constructor(
    readonly kafkaError: CompressionErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'CompressionError';
  }
}

function tooLarge(codec: string, maxBytes: number): CompressionError {
  return new CompressionError('RECORD_TOO_LARGE', `${codec}: decompressed size exceeds the limit of ${maxBytes} bytes`);
}

function corrupt(codec: string, why: string): CompressionError {
  return new CompressionError('CORRUPT_MESSAGE', `${codec}: ${why}`);
}

function asBuffer(u: Uint8Array): Buffer {
  return Buffer.isBuffer(u) ? u : Buffer.from(u.buffer, u.byteOffset, u.byteLength);
}

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
export async function decompressAsync(
  codec: Compression,
  data: Buffer,
  maxBytes = DEFAULT_MAX_DECOMPRESSED_BYTES,
): Promise<Buffer> {
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

function errMsg(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

// ── gzip ──

function mapZlibError(e: unknown, maxBytes: number): CompressionError {
  if (e instanceof CompressionError) return e;
  const code = (e as { code?: string }).code;
  if (code === 'ERR_BUFFER_TOO_LARGE') return tooLarge('gzip', maxBytes);
  return corrupt('gzip', errMsg(e));
}

function gunzipBounded(data: Buffer, maxBytes: number): Buffer {
  try {
    // maxOutputLength makes zlib stop (RangeError ERR_BUFFER_TOO_LARGE) instead of inflating further.
    return zlib.gunzipSync(data, { maxOutputLength: Math.max(1, maxBytes) });
  } catch (e) {
    throw mapZlibError(e, maxBytes);
  }
}

// ── snappy ──

/** snappy-java (xerial) stream header: magic, then int32 version = 1, int32 min compatible version = 1. */
export const XERIAL_MAGIC = Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00]);
const XERIAL_HEADER_LEN = 16;
/** snappy-java's SnappyOutputStream default block size (what Kafka's Java producer writes). */
const XERIAL_BLOCK_SIZE = 32 * 1024;

function isXerial(data: Buffer, pos = 0): boolean {
  return data.length - pos >= XERIAL_HEADER_LEN && data.compare(XERIAL_MAGIC, 0, 8, pos, pos + 8) === 0;
}

function frameXerial(blocks: Buffer[]): Buffer {
  let total = XERIAL_HEADER_LEN;
  for (const b of blocks) total += 4 + b.length;
  const out = Buffer.allocUnsafe(total);
  XERIAL_MAGIC.copy(out, 0);
  out.writeInt32BE(1, 8);
  out.writeInt32BE(1, 12);
  let pos = XERIAL_HEADER_LEN;
  for (const b of blocks) {
    out.writeInt32BE(b.length, pos);
    b.copy(out, pos + 4);
    pos += 4 + b.length;
  }
  return out;
}

/**
 * snappy-java framing, as Kafka's Java producer writes it: header, then [int32 BE length][raw snappy block]
 * per 32 KiB of input. Always at least one block, so that even empty input yields > 20 bytes
 * (librdkafka only recognises the framing when the payload is longer than header + 4).
 */
function xerialSnappyCompress(data: Buffer): Buffer {
  const blocks: Buffer[] = [];
  let off = 0;
  do {
    blocks.push(snappy.compressSync(data.subarray(off, off + XERIAL_BLOCK_SIZE)));
    off += XERIAL_BLOCK_SIZE;
  } while (off < data.length);
  return frameXerial(blocks);
}

/** Snappy raw-format preamble: uncompressed length as a little-endian base-128 varint (max 5 bytes, uint32). */
function snappyUncompressedLength(data: Buffer, start: number, end: number): number {
  let result = 0;
  let shift = 0;
  for (let i = 0; i < 5; i++) {
    if (start + i >= end) return -1;
    const b = data[start + i]!;
    result += (b & 0x7f) * 2 ** shift;
    if ((b & 0x80) === 0) return result > 0xffffffff ? -1 : result;
    shift += 7;
  }
  return -1;
}

interface SnappyPlan {
  raw: boolean;
  blocks: Array<[number, number]>;
  total: number;
}

/** Walk the framing (or raw preamble) and check the declared output size against maxBytes before decoding. */
function planSnappy(data: Buffer, maxBytes: number): SnappyPlan {
  if (!isXerial(data)) {
    const n = snappyUncompressedLength(data, 0, data.length);
    if (n < 0) throw corrupt('snappy', 'invalid raw snappy length preamble');
    if (n > maxBytes) throw tooLarge('snappy', maxBytes);
    return { raw: true, blocks: [[0, data.length]], total: n };
  }
  const blocks: Array<[number, number]> = [];
  let total = 0;
  let pos = XERIAL_HEADER_LEN;
  while (pos < data.length) {
    // snappy-java tolerates concatenated streams: a header where a block length is expected
    if (isXerial(data, pos)) {
      pos += XERIAL_HEADER_LEN;
      continue;
    }
    if (data.length - pos < 4) throw corrupt('snappy', 'truncated snappy-java block length');
    const len = data.readInt32BE(pos);
    pos += 4;
    if (len <= 0 || len > data.length - pos) throw corrupt('snappy', `invalid snappy-java block length ${len}`);
    const n = snappyUncompressedLength(data, pos, pos + len);
    if (n < 0) throw corrupt('snappy', 'invalid snappy block length preamble');
    total += n;
    if (total > maxBytes) throw tooLarge('snappy', maxBytes);
    blocks.push([pos, pos + len]);
    pos += len;
  }
  return { raw: false, blocks, total };
}

function joinChecked(parts: Buffer[], total: number, codec: string): Buffer {
  let sum = 0;
  for (const p of parts) sum += p.length;
  if (sum !== total) throw corrupt(codec, `decoded ${sum} bytes, expected ${total}`);
  return parts.length === 1 ? parts[0]! : Buffer.concat(parts, total);
}

function snappyDecompress(data: Buffer, maxBytes: number): Buffer {
  const plan = planSnappy(data, maxBytes);
  try {
    if (plan.raw) return asBuffer(snappy.uncompressSync(data, { asBuffer: true }) as Buffer);
    const parts = plan.blocks.map(([s, e]) => snappy.uncompressSync(data.subarray(s, e), { asBuffer: true }) as Buffer);
    return joinChecked(parts, plan.total, 'snappy');
  } catch (e) {
    if (e instanceof CompressionError) throw e;
    throw corrupt('snappy', errMsg(e));
  }
}

// ── lz4 (frame format) ──

const LZ4_MAGIC = 0x184d2204;
const LZ4_SKIPPABLE_MASK = 0xfffffff0;
const LZ4_SKIPPABLE_MAGIC = 0x184d2a50;
const LZ4_BLOCK_MAX: Record<number, number> = { 4: 64 * 1024, 5: 256 * 1024, 6: 1024 * 1024, 7: 4 * 1024 * 1024 };

interface Lz4FrameInfo {
  blockIndependent: boolean;
  blockChecksum: boolean;
  contentChecksum: boolean;
  blockMax: number;
  contentSize: number | null;
  dataStart: number; // first block header
}

function readLz4FrameHeader(data: Buffer, pos: number): Lz4FrameInfo {
  if (data.length - pos < 7) throw corrupt('lz4', 'truncated frame header');
  const flg = data[pos + 4]!;
  const bd = data[pos + 5]!;
  if (flg >> 6 !== 1) throw corrupt('lz4', `unsupported frame version ${flg >> 6}`);
  if ((flg & 0x02) !== 0 || (bd & 0x8f) !== 0) throw corrupt('lz4', 'reserved frame descriptor bits set');
  const blockMax = LZ4_BLOCK_MAX[(bd >> 4) & 7];
  if (blockMax === undefined) throw corrupt('lz4', 'invalid block maximum size');
  let p = pos + 6;
  let contentSize: number | null = null;
  if (flg & 0x08) {
    if (data.length - p < 8) throw corrupt('lz4', 'truncated frame header');
    const cs = data.readBigUInt64LE(p);
    contentSize = cs > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(cs);
    p += 8;
  }
  if (flg & 0x01) {
    // dictionary id: neither Kafka nor its clients use preset dictionaries
    throw corrupt('lz4', 'preset dictionaries are not supported');
  }
  if (data.length - p < 1) throw corrupt('lz4', 'truncated frame header');
  p += 1; // header checksum (verified by the native decoder; the bounded fallback decoder skips it)
  return {
    blockIndependent: (flg & 0x20) !== 0,
    blockChecksum: (flg & 0x10) !== 0,
    contentChecksum: (flg & 0x04) !== 0,
    blockMax,
    contentSize,
    dataStart: p,
  };
}

interface Lz4Plan {
  /** true when the output is provably ≤ maxBytes, so the native decoder may run unbounded */
  nativeSafe: boolean;
}

/** Walk frame/block headers (no decoding) and bound the output: Σ uncompressed blocks + blockMax per compressed block. */
function planLz4(data: Buffer, maxBytes: number): Lz4Plan {
  let pos = 0;
  let bound = 0;
  let frames = 0;
  while (pos < data.length) {
    if (data.length - pos < 4) throw corrupt('lz4', 'truncated frame magic');
    const magic = data.readUInt32LE(pos);
    if ((magic & LZ4_SKIPPABLE_MASK) >>> 0 === LZ4_SKIPPABLE_MAGIC) {
      if (data.length - pos < 8) throw corrupt('lz4', 'truncated skippable frame');
      const size = data.readUInt32LE(pos + 4);
      if (size > data.length - pos - 8) throw corrupt('lz4', 'truncated skippable frame');
      pos += 8 + size;
      continue;
    }
    if (magic !== LZ4_MAGIC) throw corrupt('lz4', 'bad frame magic');
    const f = readLz4FrameHeader(data, pos);
    if (f.contentSize !== null && f.contentSize > maxBytes) throw tooLarge('lz4', maxBytes);
    pos = f.dataStart;
    for (;;) {
      if (data.length - pos < 4) throw corrupt('lz4', 'truncated block header');
      const word = data.readUInt32LE(pos);
      pos += 4;
      if (word === 0) break;
      const size = word & 0x7fffffff;
      if (size > f.blockMax) throw corrupt('lz4', `block size ${size} exceeds maximum ${f.blockMax}`);
      if (size > data.length - pos) throw corrupt('lz4', 'truncated block');
      bound += word & 0x80000000 ? size : f.blockMax;
      pos += size + (f.blockChecksum ? 4 : 0);
    }
    if (f.contentChecksum) pos += 4;
    if (pos > data.length) throw corrupt('lz4', 'truncated frame');
    frames++;
  }
  if (frames === 0) throw corrupt('lz4', 'no lz4 frame');
  return { nativeSafe: bound <= maxBytes };
}

function lz4Decompress(data: Buffer, maxBytes: number): Buffer {
  const plan = planLz4(data, maxBytes);
  if (!plan.nativeSafe) return lz4DecodeFrames(data, maxBytes);
  try {
    return lz4.decompressFrameSync(data);
  } catch (e) {
    throw corrupt('lz4', errMsg(e));
  }
}

/**
 * Pure-TypeScript LZ4 frame decoder with a hard output cap; used when block headers alone cannot prove the
 * output fits in maxBytes (many tiny blocks, or 4 MiB blocks with a small limit). Supports linked and
 * independent blocks; skips (does not verify) the optional xxHash32 checksums.
 */
function lz4DecodeFrames(data: Buffer, maxBytes: number): Buffer {
  let cap = Math.min(maxBytes, Math.max(64 * 1024, data.length * 4));
  let out = Buffer.allocUnsafe(cap);
  let op = 0;
  const ensure = (need: number): void => {
    if (op + need <= cap) return;
    if (op + need > maxBytes) throw tooLarge('lz4', maxBytes);
    let n = cap;
    while (n < op + need) n *= 2;
    n = Math.min(n, maxBytes);
    const grown = Buffer.allocUnsafe(n);
    out.copy(grown, 0, 0, op);
    out = grown;
    cap = n;
  };

  let pos = 0;
  while (pos < data.length) {
    const magic = data.readUInt32LE(pos);
    if ((magic & LZ4_SKIPPABLE_MASK) >>> 0 === LZ4_SKIPPABLE_MAGIC) {
      pos += 8 + data.readUInt32LE(pos + 4);
      continue;
    }
    const f = readLz4FrameHeader(data, pos);
    pos = f.dataStart;
    const frameStart = op;
    for (;;) {
      const word = data.readUInt32LE(pos);
      pos += 4;
      if (word === 0) break;
      const size = word & 0x7fffffff;
      const end = pos + size;
      if (word & 0x80000000) {
        ensure(size);
        data.copy(out, op, pos, end);
        op += size;
      } else {
        const windowStart = f.blockIndependent ? op : frameStart;
        // decode one block; a block never yields more than blockMax
        let s = pos;
        const blockLimit = op + f.blockMax;
        while (s < end) {
          const token = data[s++]!;
          let lit = token >>> 4;
          if (lit === 15) {
            let b: number;
            do {
              if (s >= end) throw corrupt('lz4', 'truncated literal length');
              b = data[s++]!;
              lit += b;
            } while (b === 255);
          }
          if (lit > end - s) throw corrupt('lz4', 'literal run past block end');
          if (op + lit > blockLimit) throw corrupt('lz4', 'block exceeds its maximum size');
          ensure(lit);
          data.copy(out, op, s, s + lit);
          op += lit;
          s += lit;
          if (s === end) break; // last sequence: literals only
          if (end - s < 2) throw corrupt('lz4', 'truncated match offset');
          const offset = data[s]! | (data[s + 1]! << 8);
          s += 2;
          if (offset === 0 || offset > op - windowStart) throw corrupt('lz4', 'invalid match offset');
          let mlen = (token & 15) + 4;
          if ((token & 15) === 15) {
            let b: number;
            do {
              if (s >= end) throw corrupt('lz4', 'truncated match length');
              b = data[s++]!;
              mlen += b;
            } while (b === 255);
          }
          if (op + mlen > blockLimit) throw corrupt('lz4', 'block exceeds its maximum size');
          ensure(mlen);
          let from = op - offset;
          if (offset >= mlen) {
            out.copy(out, op, from, from + mlen);
            op += mlen;
          } else {
            for (let k = 0; k < mlen; k++) out[op++] = out[from++]!;
          }
        }
      }
      pos = end + (f.blockChecksum ? 4 : 0);
    }
    if (f.contentChecksum) pos += 4;
    if (f.contentSize !== null && op - frameStart !== f.contentSize) throw corrupt('lz4', 'content size mismatch');
  }
  return out.subarray(0, op);
}

// ── zstd ──

let zstdDctx: InstanceType<typeof zstdBinding.DCtx> | null = null;
const ZSTD_OUT_CHUNK = zstdBinding.dStreamOutSize();

/**
 * Streaming zstd decode with an output cap. Works for frames with and without a content size in the header
 * (streaming compressors such as librdkafka and zstd-jni omit it) and for concatenated frames.
 */
function zstdDecompress(data: Buffer, maxBytes: number): Buffer {
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
