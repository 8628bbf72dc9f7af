// PostgreSQL stopped under a transaction of the storage pool (the test owns the
// server): the transaction fails with nothing uncaught, idle connections are
// reported through the pool's 'error' event, and the pool serves again once
// PostgreSQL is back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOwnedPostgres, type OwnedPostgres } from '../support/postgres-server.js';
import { sleep, within } from '../support/wait.js';
import { createPool, inTransaction } from '../../src/storage/pg/pool.js';

/** PostgreSQL back → the pool answers a query within this. */
const RECOVERY_BOUND_MS = 10_000;

let server: OwnedPostgres;
beforeAll(async () => {
  server = await startOwnedPostgres();
});
afterAll(async () => {
  await server?.destroy();
});

describe('PostgreSQL restart', () => {
  it('fails a transaction whose PostgreSQL stops under it, with nothing uncaught, and the pool serves again after the restart', async () => {
    await server.start();
    const pool = createPool({ connectionString: server.url, schema: 'public', max: 2 });
    const idleErrors: string[] = [];
    pool.on('error', (err) => idleErrors.push(err.message)); // as the broker logs them
    try {
      // Connections that sit idle in the pool while the server stops, and one inside a transaction.
      await Promise.all([pool.query('SELECT 1'), pool.query('SELECT 1')]);
      let inside = false;
      const inFlight = inTransaction(pool, async (c) => {
        await c.query('SELECT 1');
        inside = true;
        await c.query('SELECT pg_sleep(20)');
      }).then(
        () => null,
        (err: Error) => err,
      );
      expect(await within(5000, () => inside)).toBeGreaterThanOrEqual(0);
      await sleep(100);
      await server.stop('immediate');
      expect(await inFlight).toBeInstanceOf(Error);
      // The idle connection is reported through the pool's 'error' event, which may come a moment after the
      // statement in the transaction failed; a query sent before it would take that dead connection instead.
      expect(await within(5000, () => idleErrors.length > 0)).toBeGreaterThanOrEqual(0);
      await expect(pool.query('SELECT 1')).rejects.toThrow();
      await server.start();
      let answered = false;
      const ms = await within(
        RECOVERY_BOUND_MS,
        async () =>
          (answered = await pool.query('SELECT 1 AS one').then(
            (r) => r.rows[0].one === 1,
            () => false,
          )),
      );
      expect({ answered, ms: ms >= 0 }).toEqual({ answered: true, ms: true });
      expect(await inTransaction(pool, async (c) => (await c.query('SELECT 2 AS two')).rows[0].two)).toBe(2);
    } finally {
      await pool.end();
    }
  });
});
