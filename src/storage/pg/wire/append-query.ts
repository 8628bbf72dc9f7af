// The append statement on the wire: node-postgres runs it as any prepared
// statement, except that its Bind message is written in pieces, so the
// batches' bytes go to the socket from the request buffers they arrived in.
import pg from 'pg';

import { bindMessage, type BindValue } from './bind.js';

export type { BindValue } from './bind.js';

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
