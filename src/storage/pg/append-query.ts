// The append statement on the wire: node-postgres runs it as any prepared
// statement, except that its Bind message is written in pieces, so the
// batches' bytes go to the socket from the request buffers they arrived in.
import pg from 'pg';

/** A Bind parameter: text, one binary value, or a binary value in consecutive pieces. */
export type BindValue = string | Buffer | { chunks: Buffer[]; length: number };

/**
 * PostgreSQL's Bind message for the unnamed portal: text parameters as text,
 * Buffers (and pieces) in binary, results in text. Returned as the pieces to
 * write, so large parameter values are not copied into one message buffer.
 */
function bindMessage(statement: string, values: readonly BindValue[]): Buffer[] {
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

interface PgConnection {
  stream: { writable: boolean; write(chunk: Buffer): boolean };
  parse(query: { text: string; name: string; types: number[] }): void;
  describe(message: { type: 'P'; name: string }): void;
  submittedNamedStatements: Record<string, string>;
}

interface PgQueryInternals {
  text: string;
  name: string;
  rows: number | undefined;
  hasBeenParsed(connection: PgConnection): boolean;
  _getRows(connection: PgConnection, rows: number | undefined): void;
}

const PgQuery = pg.Query as unknown as new (config: { name: string; text: string; values: unknown[] }) => PgQueryInternals;

/**
 * The append statement as node-postgres runs a prepared statement (Parse
 * once per connection, then Bind/Describe/Execute/Sync, results parsed by
 * pg), except that the Bind message is written in pieces: the batches'
 * bytes go to the socket straight from the request buffers they arrived in,
 * with no copy into a parameter buffer.
 */
export class AppendQuery extends PgQuery {
  private readonly bind: Buffer[];

  constructor(statement: { name: string; text: string }, values: readonly BindValue[]) {
    super({ ...statement, values: [] });
    this.bind = bindMessage(statement.name, values);
  }

  prepare(connection: PgConnection): void {
    if (!this.hasBeenParsed(connection)) {
      connection.parse({ text: this.text, name: this.name, types: [] });
      connection.submittedNamedStatements[this.name] = this.text;
    }
    if (connection.stream.writable) for (const piece of this.bind) connection.stream.write(piece);
    connection.describe({ type: 'P', name: '' });
    this._getRows(connection, this.rows);
  }
}
