// PostgreSQL's Bind message (frontend/backend protocol, message 'B'),
// written in pieces so that large parameter values go to the socket from the
// buffers they are in, without a copy into one message buffer.
/** A Bind parameter: text, one binary value, or a binary value in consecutive pieces. */
export type BindValue = string | Buffer | { chunks: Buffer[]; length: number };

/**
 * PostgreSQL's Bind message for the unnamed portal: text parameters as text,
 * Buffers (and pieces) in binary, results in text. Returned as the pieces to
 * write, so large parameter values are not copied into one message buffer.
 */
export function bindMessage(statement: string, values: readonly BindValue[]): Buffer[] {
  const n = values.length;
  const encoded = values.map((v) => (typeof v === 'string' ? Buffer.from(v, 'utf8') : v));
  const headLength = 1 + 4 + 1 + Buffer.byteLength(statement) + 1 + 2 + 2 * n + 2;
  let length = headLength - 1 + 4; // the length field counts itself, not the type byte; + result formats
  for (const v of encoded) length += 4 + v.length;
  let small = headLength;
  for (const v of encoded) small += 4 + (Buffer.isBuffer(v) ? v.length : 0);
  const out = Buffer.allocUnsafe(small + 4);
  out[0] = 0x42; // 'B'
  out.writeInt32BE(length, 1);
  out[5] = 0; // unnamed portal
  let pos = 6 + out.write(statement, 6, 'utf8');
  out[pos++] = 0;
  out.writeInt16BE(n, pos);
  pos += 2;
  for (const v of values) {
    out.writeInt16BE(typeof v === 'string' ? 0 : 1, pos);
    pos += 2;
  }
  out.writeInt16BE(n, pos);
  pos += 2;
  const pieces: Buffer[] = [];
  let start = 0;
  for (const v of encoded) {
    out.writeInt32BE(v.length, pos);
    pos += 4;
    if (Buffer.isBuffer(v)) {
      v.copy(out, pos);
      pos += v.length;
    } else {
      pieces.push(out.subarray(start, pos), ...(v as { chunks: Buffer[] }).chunks);
      start = pos;
    }
  }
  out.writeInt16BE(1, pos); // one result format code:
  out.writeInt16BE(0, pos + 2); // text
  pieces.push(out.subarray(start, pos + 4));
  return pieces;
}
