// A DATABASE_URL listing several hosts: the storage layer's connections go to
// the first one, in order, that gives read-write sessions, and a URL under
// which none does stops start-up with a message naming every host and why.
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/storage/pg/database.js';
import { createLogger } from '../../src/observability/logger.js';
import { createPool, oneOffClient } from '../../src/storage/pg/pool.js';
import { testDatabaseUrl } from '../support/broker.js';
import { freePort } from '../support/broker-process.js';

/** The test database's URL with `hosts` (host:port each) in place of its own, and `query` added. */
function withHosts(hosts: string[], query: string): string {
  const url = new URL(testDatabaseUrl());
  const auth = url.username ? `${url.username}${url.password ? `:${url.password}` : ''}@` : '';
  const params = new URLSearchParams(url.search);
  for (const [k, v] of new URLSearchParams(query)) params.set(k, v);
  return `postgresql://${auth}${hosts.join(',')}${url.pathname}?${params.toString()}`;
}
const self = () => {
  const url = new URL(testDatabaseUrl());
  return `${url.hostname}:${url.port || 5432}`;
};

const pools: pg.Pool[] = [];
afterAll(async () => {
  for (const p of pools) await p.end();
});

describe('several hosts in DATABASE_URL', () => {
  it('connects the pool to the first host that accepts read-write sessions, past one that refuses connections', async () => {
    const dead = `127.0.0.1:${await freePort()}`;
    const pool = createPool({ connectionString: withHosts([dead, self()], 'target_session_attrs=read-write'), schema: 'public', max: 2 });
    pools.push(pool);
    const { rows } = await pool.query<{ port: number; ro: string }>("SELECT inet_server_port() AS port, current_setting('transaction_read_only') AS ro");
    expect(rows[0]).toEqual({ port: Number(self().split(':')[1]), ro: 'off' });
  });

  it('stops start-up naming each host and why when none gives read-write sessions; primary asks only that the host is not in recovery', async () => {
    const dead = `127.0.0.1:${await freePort()}`;
    // default_transaction_read_only makes the (only) real server answer as a standby would.
    const readOnly = withHosts([dead, self()], 'target_session_attrs=read-write&options=-c%20default_transaction_read_only%3Don');
    const client = oneOffClient({ connectionString: readOnly });
    await expect(client.connect()).rejects.toThrow(`no host of DATABASE_URL accepts read-write sessions: ${dead}: ECONNREFUSED; ${self()} is read-only`);
    await expect(openDatabase({ databaseUrl: readOnly, dataDir: '', databaseConnectTimeoutMs: 2000 }, createLogger('silent'))).rejects.toThrow(
      /no host of DATABASE_URL accepts read-write sessions: .*: start PostgreSQL \(or promote a standby\), or fix DATABASE_URL/,
    );
    // With target_session_attrs=primary the same server is fine: it is not in recovery.
    const primary = oneOffClient({ connectionString: readOnly.replace('read-write', 'primary') });
    await primary.connect();
    expect((await primary.query('SELECT pg_is_in_recovery() AS r')).rows[0]).toEqual({ r: false });
    await primary.end();
  });
});
