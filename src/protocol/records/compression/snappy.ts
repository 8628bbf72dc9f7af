// snappy: snappy-java (xerial) framing on write; raw or xerial on read, the declared size checked first.
import * as snappy from 'snappy';
import { asBuffer, CompressionError, corrupt, errMsg, tooLarge } from './errors.js';

/** snappy-java (xerial) stream header: magic, then int32 version = 1, int32 min compatible version = 1. */
export const XERIAL_MAGIC = Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00]);
const XERIAL_HEADER_LEN = 16;
/** snappy-java's SnappyOutputStream default block size (what Kafka's Java producer writes). */
export const XERIAL_BLOCK_SIZE = 32 * 1024;

function isXerial(data: Buffer, pos = 0): boolean {
  return data.length - pos >= XERIAL_HEADER_LEN && data.compare(XERIAL_MAGIC, 0, 8, pos, pos + 8) === 0;
}

export function frameXerial(blocks: Buffer[]): Buffer {
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
export function xerialSnappyCompress(data: Buffer): Buffer {
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
export function planSnappy(data: Buffer, maxBytes: number): SnappyPlan {
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

export function joinChecked(parts: Buffer[], total: number, codec: string): Buffer {
  let sum = 0;
  for (const p of parts) sum += p.length;
  if (sum !== total) throw corrupt(codec, `decoded ${sum} bytes, expected ${total}`);
  return parts.length === 1 ? parts[0]! : Buffer.concat(parts, total);
}

export function snappyDecompress(data: Buffer, maxBytes: number): Buffer {
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
