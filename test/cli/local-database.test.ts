// Where `pgkafka groups` and `pgkafka users` connect without DATABASE_URL:
// the embedded PostgreSQL of the data dir, found by its postmaster.pid (the
// server's pid and port), and a clear refusal when it is not running.
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runUsersCommand } from '../../src/cli/users.js';
import { localDatabase } from '../../src/cli/local-database.js';
import { testDatabaseUrl } from '../support/broker.js';
import { runCli } from '../support/cli.js';

const dirs: string[] = [];
function dataDir(pidFile?: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'pgkafka-cli-'));
  dirs.push(dir);
  if (pidFile !== undefined) {
    mkdirSync(join(dir, 'pg'));
    writeFileSync(join(dir, 'pg', 'postmaster.pid'), pidFile);
  }
  return dir;
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('localDatabase', () => {
  it('uses DATABASE_URL when set', () => {
    expect(localDatabase({ databaseUrl: 'postgresql://db/x', dataDir: dataDir() })).toEqual({ url: 'postgresql://db/x' });
  });

  it("connects to the running embedded server's port", () => {
    const dir = dataDir(`${process.pid}\n/some/dir/pg\n1700000000\n54411\n/tmp\n127.0.0.1\n  5432001    65536\nready\n`);
    expect(localDatabase({ databaseUrl: undefined, dataDir: dir })).toEqual({ url: 'postgresql://postgres:postgres@127.0.0.1:54411/pgkafka' });
  });

  it('refuses a data dir without a running server, naming it', () => {
    const empty = dataDir();
    expect(localDatabase({ databaseUrl: undefined, dataDir: empty })).toEqual({
      error: `DATABASE_URL is not set and no embedded database is running in ${empty} (PGKAFKA_DATA_DIR): start the broker there (pgkafka start) or set DATABASE_URL`,
    });
    // A pid that cannot be running (above the kernel's maximum).
    const stale = dataDir('2147483646\n/x\n1\n54412\n');
    expect(localDatabase({ databaseUrl: undefined, dataDir: stale })).toMatchObject({ error: expect.stringMatching(/is not running \(stale .*postmaster\.pid\)/) as unknown });
  });

  it('is where pgkafka users connects without DATABASE_URL', async () => {
    // The tests' PostgreSQL stands in for a running embedded server: its port in a postmaster.pid.
    const port = new URL(testDatabaseUrl()).port || '5432';
    const dir = dataDir(`${process.pid}\n/x/pg\n1700000000\n${port}\n`);
    const listed = await runCli(runUsersCommand, ['list'], { PGKAFKA_DATA_DIR: dir, PGKAFKA_SCHEMA: 'no_such_schema' });
    expect(listed.code).toBe(1);
    // That server answered: it has no database called pgkafka (or, if it has one, no pgkafka tables in that schema).
    expect(listed.err).toMatch(/database "pgkafka" does not exist|no pgkafka tables in schema 'no_such_schema'/);
    const stopped = await runCli(runUsersCommand, ['list'], { PGKAFKA_DATA_DIR: dataDir() });
    expect(stopped).toMatchObject({ code: 2, err: expect.stringMatching(/^pgkafka users: DATABASE_URL is not set and no embedded database is running in /) as unknown });
  });
});
