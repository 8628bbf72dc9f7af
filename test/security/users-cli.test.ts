// `pgkafka users` against real PostgreSQL: add (migrating a fresh schema),
// list, remove, and the usage errors.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runUsersCommand } from '../../src/cli/users.js';
import { passwordMatches } from '../../src/security/scram.js';
import { testDatabaseUrl } from '../support/broker.js';
import { runCli } from '../support/cli.js';

let url: string;
let schema: string;

const run = (args: string[], env: NodeJS.ProcessEnv = { DATABASE_URL: url, PGKAFKA_SCHEMA: schema }) => runCli(runUsersCommand, args, env);

beforeAll(() => {
  url = testDatabaseUrl();
  schema = `test_${randomBytes(6).toString('hex')}`;
});
afterAll(async () => {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin.end();
});

describe('pgkafka users', () => {
  it('adds, lists and removes SCRAM credentials, storing no password', async () => {
    expect(await run(['add', 'alice', '--password', 'pw-1'])).toMatchObject({ code: 0, out: 'User alice: SCRAM-SHA-256 credential stored (4096 iterations).\n' });
    expect((await run(['add', 'alice', '-p', 'pw-1', '-m', 'scram-sha-512', '--iterations', '8192'])).code).toBe(0);
    expect((await run(['add', 'bob', '-p', 'pw-2'])).code).toBe(0);
    expect((await run(['list'])).out).toBe('USER  MECHANISM     ITERATIONS\nalice SCRAM-SHA-256 4096\nalice SCRAM-SHA-512 8192\nbob   SCRAM-SHA-256 4096\n');
    const client = new pg.Client({ connectionString: url, options: `-c search_path=${schema}` });
    await client.connect();
    const { rows } = await client.query('SELECT salt, stored_key, server_key, iterations, mechanism FROM scram_credentials WHERE user_name = $1 ORDER BY mechanism', ['alice']);
    await client.end();
    expect(JSON.stringify(rows)).not.toContain('pw-1');
    expect(await passwordMatches('SCRAM-SHA-512', 'pw-1', { salt: rows[1].salt, storedKey: rows[1].stored_key, serverKey: rows[1].server_key, iterations: rows[1].iterations })).toBe(true);

    expect(await run(['remove', 'alice', '-m', 'SCRAM-SHA-512'])).toMatchObject({ code: 0, out: 'User alice: SCRAM-SHA-512 credential removed.\n' });
    expect(await run(['remove', 'bob'])).toMatchObject({ code: 0 });
    expect(await run(['remove', 'bob'])).toMatchObject({ code: 1, err: 'pgkafka users: user bob has no credential\n' });
    expect(JSON.parse((await run(['list', '--json'])).out)).toEqual([{ user: 'alice', mechanism: 'SCRAM-SHA-256', iterations: 4096 }]);
  });

  it('explains bad usage', async () => {
    expect((await run(['add', 'x'])).err).toMatch(/add needs --password/);
    expect((await run(['add', 'x', '-p', 'y', '-m', 'MD5'])).code).toBe(2);
    expect((await run(['add', 'x', '-p', 'y', '--iterations', '10'])).err).toMatch(/--iterations must be/);
    expect((await run(['frobnicate'])).err).toMatch(/unknown command/);
    expect((await run(['list'], {})).err).toMatch(/DATABASE_URL is not set/);
  });
});
