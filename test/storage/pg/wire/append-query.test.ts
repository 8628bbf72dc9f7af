// What AppendQuery sends on a connection, in order: Parse once per
// connection (as node-postgres does for a named statement), then the Bind
// message written in its pieces, Describe, Execute and Sync.
import { describe, expect, it } from 'vitest';
import { AppendQuery } from '../../../../src/storage/pg/wire/append-query.js';
import { bindMessage, type BindValue } from '../../../../src/storage/pg/wire/bind.js';

/** A connection that records what would go to PostgreSQL. */
function recordingConnection() {
  const sent: (string | Buffer)[] = [];
  const connection = {
    stream: { writable: true, write: (chunk: Buffer) => sent.push(chunk) > 0 },
    parse: (q: { name: string; text: string }) => sent.push(`Parse ${q.name}: ${q.text}`),
    describe: (m: { type: string; name: string }) => sent.push(`Describe ${m.type}${m.name}`),
    execute: () => sent.push('Execute'),
    sync: () => sent.push('Sync'),
    flush: () => sent.push('Flush'),
    submittedNamedStatements: {} as Record<string, string>,
    parsedStatements: {} as Record<string, string>,
  };
  return { sent, connection };
}

describe('AppendQuery', () => {
  const statement = { name: 'pgkafka_test', text: 'SELECT $1::int8, $2::bytea' };
  const large = Buffer.alloc(4096, 1);
  const values: BindValue[] = ['7', { chunks: [large], length: 4096 }];

  it('parses the statement once per connection, then binds in pieces, describes, executes and syncs', () => {
    const { sent, connection } = recordingConnection();
    new AppendQuery(statement, values).prepare(connection);
    new AppendQuery(statement, values).prepare(connection);
    const bind = Buffer.concat(bindMessage(statement.name, values));
    const shape = sent.map((s) => (typeof s === 'string' ? s : 'bytes'));
    expect(shape).toEqual(['Parse pgkafka_test: SELECT $1::int8, $2::bytea', 'bytes', 'bytes', 'bytes', 'Describe P', 'Execute', 'Sync', 'bytes', 'bytes', 'bytes', 'Describe P', 'Execute', 'Sync']);
    expect(Buffer.concat(sent.slice(1, 4) as Buffer[])).toEqual(bind);
    // The 4 KiB value goes to the socket as the buffer it was given.
    expect(sent[2]).toBe(large);
  });
});
