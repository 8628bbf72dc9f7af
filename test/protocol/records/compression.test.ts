import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import * as snappy from 'snappy';
import * as lz4 from 'lz4-napi';
import * as zstd from 'zstd-napi';
import {
  type Compression,
  CompressionError,
  buildBatch,
  compress,
  compressAsync,
  decodeRecords,
  decompress,
  decompressAsync,
  parseBatches,
  XERIAL_MAGIC,
} from '../../../src/protocol/records/index.js';
import { pythonHas, runPython } from './helpers.js';

const CODECS: Compression[] = [0, 1, 2, 3, 4];
const text = Buffer.from('The quick brown fox jumps over the lazy dog. '.repeat(5000));
const random = Buffer.from(Array.from({ length: 100_000 }, (_, i) => (i * 2654435761) >>> 24));

function expectError(fn: () => unknown, code: string): void {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(CompressionError);
    expect((e as CompressionError).kafkaError).toBe(code);
    return;
  }
  throw new Error(`expected ${code}`);
}

describe('compress / decompress', () => {
  for (const codec of CODECS) {
    it(`codec ${codec}: sync and async round trips (empty, text, incompressible)`, async () => {
      for (const data of [Buffer.alloc(0), Buffer.from('a'), text, random]) {
        const c = compress(codec, data);
        expect(decompress(codec, c, data.length).equals(data)).toBe(true);
        expect((await decompressAsync(codec, c, data.length)).equals(data)).toBe(true);
        const ca = await compressAsync(codec, data);
        expect(decompress(codec, ca, data.length).equals(data)).toBe(true);
      }
    });
  }

  it('snappy writes xerial framing with 32 KiB blocks', () => {
    const c = compress(2, text);
    expect(c.subarray(0, 8)).toEqual(XERIAL_MAGIC);
    expect(c.readInt32BE(8)).toBe(1);
    expect(c.readInt32BE(12)).toBe(1);
    // walk the blocks as librdkafka's rd_kafka_snappy_java_uncompress does (after skipping 16 header bytes)
    let of = 16;
    let total = 0;
    let blocks = 0;
    while (of + 4 <= c.length) {
      const clen = c.readUInt32BE(of);
      of += 4;
      expect(clen).toBeLessThanOrEqual(c.length - of);
      const block = snappy.uncompressSync(c.subarray(of, of + clen), { asBuffer: true }) as Buffer;
      expect(block.length).toBeLessThanOrEqual(32 * 1024);
      total += block.length;
      of += clen;
      blocks++;
    }
    expect(of).toBe(c.length);
    expect(total).toBe(text.length);
    expect(blocks).toBe(Math.ceil(text.length / 32768));
    // librdkafka only recognises framing when the payload is longer than 16 + 4 bytes
    expect(compress(2, Buffer.alloc(0)).length).toBeGreaterThan(20);
  });

  it('snappy reads raw (unframed) snappy, as librdkafka producers write it', () => {
    const raw = snappy.compressSync(text);
    expect(decompress(2, raw).equals(text)).toBe(true);
  });

  it('snappy reads concatenated xerial streams', () => {
    const a = compress(2, Buffer.from('hello '));
    const b = compress(2, Buffer.from('world'));
    expect(decompress(2, Buffer.concat([a, b])).toString()).toBe('hello world');
  });

  it.runIf(pythonHas('snappy'))('kafka-python snappy_decode reads our xerial output; we read its output', () => {
    const ours = compress(2, text);
    const out = runPython('import sys,hashlib; from kafka.codec import snappy_decode; d=snappy_decode(sys.stdin.buffer.read()); print(len(d), hashlib.sha256(d).hexdigest())', ours).trim();
    const { createHash } = require_crypto();
    expect(out).toBe(`${text.length} ${createHash('sha256').update(text).digest('hex')}`);
    const theirs = Buffer.from(
      runPython('import sys,binascii; from kafka.codec import snappy_encode; sys.stdout.write(binascii.hexlify(snappy_encode(sys.stdin.buffer.read())).decode())', text),
      'hex',
    );
    expect(theirs.subarray(0, 8)).toEqual(XERIAL_MAGIC);
    expect(decompress(2, theirs).equals(text)).toBe(true);
  });

  it.runIf(pythonHas('lz4.frame'))('python-lz4 reads our LZ4 frames; we read its linked-block frames with checksums', () => {
    const ours = compress(3, text);
    expect(ours[4]! & 0x20).toBe(0x20); // independent blocks: the only mode Kafka's Java reader supports
    const out = runPython('import sys,lz4.frame; d=lz4.frame.decompress(sys.stdin.buffer.read()); print(len(d))', ours).trim();
    expect(out).toBe(String(text.length));
    const theirs = Buffer.from(
      runPython(
        'import sys,binascii,lz4.frame; sys.stdout.write(binascii.hexlify(lz4.frame.compress(sys.stdin.buffer.read(), block_linked=True, block_checksum=True, content_checksum=True, store_size=False)).decode())',
        text,
      ),
      'hex',
    );
    // native decoder (block headers prove output <= 256 MiB default limit)
    expect(decompress(3, theirs).equals(text)).toBe(true);
    // the pure-TS bounded fallback (used when block headers cannot prove the bound) decodes it too
    expect(decompress(3, theirs, text.length).equals(text)).toBe(true);
    expectError(() => decompress(3, theirs, text.length - 1), 'RECORD_TOO_LARGE');
  });

  it('zstd: frames without a content size (streaming compressors) decode', async () => {
    const stream = new zstd.CompressStream();
    const parts: Buffer[] = [];
    stream.on('data', (c: Buffer) => parts.push(c));
    const done = new Promise((r) => stream.on('end', r));
    stream.write(text.subarray(0, 1000));
    stream.end(text.subarray(1000));
    await done;
    const framed = Buffer.concat(parts);
    // frame header has no content size
    const binding = (await import('node:module')).createRequire(import.meta.url)('zstd-napi/binding') as {
      getFrameContentSize(b: Uint8Array): number | null;
    };
    expect(binding.getFrameContentSize(framed)).toBeNull();
    expect(decompress(4, framed, text.length).equals(text)).toBe(true);
    expectError(() => decompress(4, framed, text.length - 1), 'RECORD_TOO_LARGE');
    // concatenated frames
    expect(decompress(4, Buffer.concat([framed, compress(4, Buffer.from('!'))])).equals(Buffer.concat([text, Buffer.from('!')]))).toBe(true);
  });

  it('corrupt / truncated payloads → CORRUPT_MESSAGE, never an unexpected throw', () => {
    for (const codec of [1, 2, 3, 4] as Compression[]) {
      const c = compress(codec, text);
      for (const cut of [0, 1, 5, 10, 17, 30, Math.floor(c.length / 2), c.length - 1]) {
        expectError(() => decompress(codec, c.subarray(0, cut)), 'CORRUPT_MESSAGE');
      }
      const flipped = Buffer.from(c);
      for (let i = 20; i < flipped.length; i += 7) flipped[i]! ^= 0x5a;
      try {
        decompress(codec, flipped);
      } catch (e) {
        expect(e).toBeInstanceOf(CompressionError);
      }
    }
    expectError(() => decompress(5 as Compression, text), 'UNSUPPORTED_COMPRESSION_TYPE');
  });
});

describe('decompression bombs', () => {
  const ZEROS = Buffer.alloc(64 * 1024 * 1024); // 64 MiB of zeros
  const LIMIT = 1024 * 1024;

  it('gzip, snappy, lz4, zstd: 64 MiB of zeros refused at a 1 MiB limit (sync and async)', async () => {
    for (const codec of [1, 2, 3, 4] as Compression[]) {
      const bomb = compress(codec, ZEROS);
      expect(bomb.length).toBeLessThan(4 * 1024 * 1024);
      expectError(() => decompress(codec, bomb, LIMIT), 'RECORD_TOO_LARGE');
      await expect(decompressAsync(codec, bomb, LIMIT)).rejects.toMatchObject({ kafkaError: 'RECORD_TOO_LARGE' });
    }
  });

  it('lz4: native path and bounded TS fallback agree on our own frames', () => {
    for (const data of [text, random, Buffer.alloc(300_000, 7)]) {
      const c = compress(3, data);
      expect(decompress(3, c).equals(data)).toBe(true); // native
      expect(decompress(3, c, data.length).equals(data)).toBe(true); // fallback (bound = blocks * 64 KiB > length)
    }
  });

  it('bombs inside a batch: decodeRecords answers RECORD_TOO_LARGE', () => {
    for (const codec of [1, 2, 3, 4] as Compression[]) {
      const b = buildBatch({ compression: codec, records: [{ key: null, value: Buffer.alloc(8 * 1024 * 1024) }] });
      const h = parseBatches(b, { verifyCrc: true }).batches[0]!;
      expect(decodeRecords(b, h, LIMIT).error).toBe('RECORD_TOO_LARGE');
      expect(decodeRecords(b, h, 16 * 1024 * 1024).error).toBeNull();
    }
  });

  it('lying size headers are refused before allocation', () => {
    // raw snappy claiming 4 GiB
    expectError(() => decompress(2, Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f, 0x00]), LIMIT), 'RECORD_TOO_LARGE');
    // xerial block claiming 2 GiB
    const x = Buffer.concat([XERIAL_MAGIC, Buffer.from([0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 6, 0x80, 0x80, 0x80, 0x80, 0x08, 0])]);
    expectError(() => decompress(2, x, LIMIT), 'RECORD_TOO_LARGE');
    // lz4 frame with a content size of 1 TiB
    const lzf = lz4.compressFrameSync(Buffer.from('x'));
    const withSize = Buffer.concat([lzf.subarray(0, 4), Buffer.from([lzf[4]! | 0x08, lzf[5]!]), Buffer.from([0, 0, 0, 0, 0, 1, 0, 0]), lzf.subarray(6)]);
    expectError(() => decompress(3, withSize, LIMIT), 'RECORD_TOO_LARGE');
    // zstd with a content size far beyond the limit
    expectError(() => decompress(4, zstd.compress(Buffer.alloc(LIMIT + 1)), LIMIT), 'RECORD_TOO_LARGE');
    // gzip
    expectError(() => decompress(1, zlib.gzipSync(Buffer.alloc(LIMIT + 1)), LIMIT), 'RECORD_TOO_LARGE');
  });
});

function require_crypto(): typeof import('node:crypto') {
  return cryptoMod;
}
import * as cryptoMod from 'node:crypto';
