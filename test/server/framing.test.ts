import { describe, expect, it } from 'vitest';
import { FrameDecoder, FrameSizeError } from '../../src/server/framing.js';

function frame(body: Buffer): Buffer {
  const size = Buffer.alloc(4);
  size.writeInt32BE(body.length);
  return Buffer.concat([size, body]);
}

describe('FrameDecoder', () => {
  const bodies = [Buffer.from('first frame'), Buffer.alloc(0), Buffer.from('a third, longer frame body'.repeat(5))];
  const stream = Buffer.concat(bodies.map(frame));

  it('cuts the same frames whatever the split points', () => {
    for (let a = 0; a <= stream.length; a++) {
      for (let b = a; b <= stream.length; b += 7) {
        const decoder = new FrameDecoder(1024);
        const frames = [stream.subarray(0, a), stream.subarray(a, b), stream.subarray(b)].flatMap((chunk) => decoder.push(chunk));
        expect(frames.map((f) => f.toString())).toEqual(bodies.map((f) => f.toString()));
        expect(decoder.buffered).toBe(0);
      }
    }
  });

  it('delivers byte-at-a-time input', () => {
    const decoder = new FrameDecoder(1024);
    const frames: Buffer[] = [];
    for (const byte of stream) frames.push(...decoder.push(Buffer.from([byte])));
    expect(frames.map((f) => f.toString())).toEqual(bodies.map((f) => f.toString()));
  });

  it('keeps an incomplete frame until the rest arrives', () => {
    const decoder = new FrameDecoder(1024);
    expect(decoder.push(stream.subarray(0, 6))).toEqual([]);
    expect(decoder.buffered).toBe(6);
  });

  it('returns the frames before a bad size prefix, and reports the prefix on the next push', () => {
    const decoder = new FrameDecoder(1024);
    const bad = Buffer.alloc(4);
    bad.writeInt32BE(-5);
    expect(decoder.push(Buffer.concat([frame(Buffer.from('ok')), bad])).map((f) => f.toString())).toEqual(['ok']);
    expect(decoder.failure).toBeInstanceOf(FrameSizeError);
    expect(() => decoder.push(Buffer.alloc(1))).toThrow(FrameSizeError);
  });

  it('refuses a size above the limit or below zero', () => {
    const big = Buffer.alloc(4);
    big.writeInt32BE(1025);
    expect(() => new FrameDecoder(1024).push(big)).toThrow(FrameSizeError);
    const negative = Buffer.alloc(4);
    negative.writeInt32BE(-1);
    expect(() => new FrameDecoder(1024).push(negative)).toThrow(FrameSizeError);
  });
});
