// The Bind message as PostgreSQL's protocol spells it, byte for byte (as
// node-postgres's pg-protocol tests its serializer): 'B', the length (which
// counts itself), portal and statement names, the parameter formats, each
// value with its length, and the result formats.
import { describe, expect, it } from 'vitest';
import { bindMessage } from '../../../../src/storage/pg/wire/bind.js';

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex');

describe('bindMessage', () => {
  it('writes text parameters as text and Buffers as binary, with one text result format', () => {
    const bytes = Buffer.concat(bindMessage('st', ['ab', Buffer.from([0xff, 0x00])]));
    expect(bytes).toEqual(
      hex(`
      42 00000020
      00
      737400
      0002 0000 0001
      0002 00000002 6162 00000002 ff00
      0001 0000`),
    );
  });

  it('writes no parameters for a statement without them', () => {
    expect(Buffer.concat(bindMessage('', []))).toEqual(hex('42 0000000e 00 00 0000 0000 0001 0000'));
  });

  it('leaves a chunked value as its own pieces, the bytes around it in the message', () => {
    const big = Buffer.alloc(5, 0xaa);
    const tail = Buffer.from([0xbb]);
    const pieces = bindMessage('s', ['1', { chunks: [big, tail], length: 6 }, Buffer.from([0x07])]);
    // The value's pieces are written as they are, not copied.
    expect(pieces).toContain(big);
    expect(pieces).toContain(tail);
    expect(Buffer.concat(pieces)).toEqual(
      hex(`
      42 00000029
      00
      7300
      0003 0000 0001 0001
      0003 00000001 31 00000006 aaaaaaaaaa bb 00000001 07
      0001 0000`),
    );
  });

  it('counts a multi-byte statement name and text parameter by their UTF-8 bytes', () => {
    const bytes = Buffer.concat(bindMessage('é', ['ü']));
    expect(bytes).toEqual(hex('42 00000018 00 c3a900 0001 0000 0001 00000002 c3bc 0001 0000'));
  });
});
