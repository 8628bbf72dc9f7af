// Every start-up failure ends the process with a non-zero code and a message
// that names the setting at fault and what to do, never the driver's raw
// text; a database that accepts connections and never answers times out.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort, launchBroker } from '../support/broker-process.js';
import { testDatabaseUrl } from '../support/broker.js';

/** Starts a broker that is expected to fail: its exit code, its output and the reason its fatal log line gives. */
async function startFails(env: Record<string, string>): Promise<{ code: number | null; output: string; reason: string | undefined }> {
  const broker = launchBroker({ PGKAFKA_PORT: String(await freePort()), ...env });
  const code = await broker.exited;
  const fatal = broker
    .output()
    .split('\n')
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as { code?: string; err?: string }];
      } catch {
        return [];
      }
    })
    .find((l) => l.code === 'PGKAFKA_START_FAILED');
  return { code, output: broker.output(), reason: fatal?.err };
}

describe('start-up failures', () => {
  it('times out on a database that accepts the connection and never answers, naming the setting', { timeout: 60_000 }, async () => {
    const silent: Socket[] = [];
    const server = createServer((s) => silent.push(s));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    try {
      const { code, reason } = await startFails({ DATABASE_URL: `postgresql://postgres@127.0.0.1:${port}/pgkafka`, PGKAFKA_DATABASE_CONNECT_TIMEOUT_MS: '500' });
      expect(code).toBe(1);
      expect(reason).toContain(`PostgreSQL at 127.0.0.1:${port} (DATABASE_URL) did not answer within 500 ms (PGKAFKA_DATABASE_CONNECT_TIMEOUT_MS)`);
    } finally {
      for (const s of silent) s.destroy();
      server.close();
    }
  });

  it('says nothing listens at the address of DATABASE_URL', { timeout: 60_000 }, async () => {
    const port = await freePort();
    const { code, reason } = await startFails({ DATABASE_URL: `postgresql://postgres@127.0.0.1:${port}/pgkafka` });
    expect(code).toBe(1);
    expect(reason).toContain(`nothing accepts connections at 127.0.0.1:${port} (DATABASE_URL)`);
  });

  it('says a database named in DATABASE_URL does not exist', { timeout: 60_000 }, async () => {
    const url = new URL(testDatabaseUrl());
    url.pathname = '/no_such_database_here';
    const { code, reason } = await startFails({ DATABASE_URL: url.toString() });
    expect(code).toBe(1);
    expect(reason).toContain('database "no_such_database_here" does not exist: create it (createdb no_such_database_here)');
  });

  it('refuses a DATABASE_URL that is no URL as a configuration error, before connecting anywhere', { timeout: 60_000 }, async () => {
    const { code, output } = await startFails({ DATABASE_URL: 'not a url' });
    expect(code).toBe(2);
    expect(output).toContain('invalid configuration: option databaseUrl (DATABASE_URL, from DATABASE_URL): a URL postgresql://user:password@host:5432/database');
    expect(output).not.toContain('ENOTFOUND');
  });

  it('exits non-zero with PostgreSQL’s own words when the embedded server cannot start', { timeout: 60_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pgkafka-broken-'));
    chmodSync(dir, 0o755);
    try {
      // A data directory of a PostgreSQL release that does not exist.
      mkdirSync(join(dir, 'pg'), { mode: 0o700 });
      writeFileSync(join(dir, 'pg', 'PG_VERSION'), '9\n');
      const { code, output, reason } = await startFails({ DATABASE_URL: '', PGKAFKA_DATA_DIR: dir });
      expect(code).toBe(1);
      // What the server itself said, as PostgreSQL says it ("FATAL: ..." or "postgres: could not ...").
      expect(reason).toMatch(/^embedded PostgreSQL did not start: (postgres: |.*FATAL)/);
      expect(output).not.toContain('Cannot read properties');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
