// lz4: the standard LZ4 frame format; the native decoder when block headers bound the output, else a bounded one.
import * as lz4 from 'lz4-napi';
import { corrupt, errMsg, tooLarge } from './errors.js';

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
export function planLz4(data: Buffer, maxBytes: number): Lz4Plan {
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

export function lz4Decompress(data: Buffer, maxBytes: number): Buffer {
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
export function lz4DecodeFrames(data: Buffer, maxBytes: number): Buffer {
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
