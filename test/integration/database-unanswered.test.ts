// A statement waiting for an answer that will not come: the server's machine
// vanished (nothing closed, new connections unanswered), or a firewall forgot
// the connection (the server lives on, the connection's packets are lost).
// Either way the statement fails within the stall time and one probe, not the
// system's TCP time-out of about 15 minutes, and the pool serves again; a
// statement that is merely slow is left alone; a broker on such a server
// answers a produce with a retriable error and stores nothing twice.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/observability/logger.js';
import { ErrorCode, errorName, isRetriable } from '../../src/protocol/errors.js';
import { Notifications } from '../../src/storage/pg/notifications.js';
import { createPool } from '../../src/storage/pg/pool.js';
import { ServerWatch } from '../../src/storage/pg/server-watch.js';
import { startTestBroker, testDatabaseUrl } from '../support/broker.js';
import { PgProxy } from '../support/pg-proxy.js';
import { RawClient } from '../support/raw-client.js';
import { allValues, createTopic, fetch, plainProduce } from '../support/txn-wire.js';
import { sleep, within } from '../support/wait.js';

const STALL_MS = 300;
const PROBE_TIMEOUT_MS = 1000;

let proxy: PgProxy;
let url: string;
beforeAll(async () => {
  const target = new URL(testDatabaseUrl());
  proxy = await PgProxy.start(target.hostname, Number(target.port));
  url = PgProxy.urlThrough(testDatabaseUrl(), proxy.port);
});
afterAll(async () => {
  await proxy?.close();
});

/** A log that keeps its lines, to read what the watch said. */
function recordingLog() {
  const lines: Record<string, unknown>[] = [];
  const destination = { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) > 0, on() {}, listenerCount: () => 1 };
  return { log: createLogger('info', destination as unknown as NodeJS.WritableStream), lines };
}

/** A pool through the proxy, watched with the test's short times. */
function watchedPool(max: number) {
  const { log, lines } = recordingLog();
  const watch = new ServerWatch({ connectionString: url, stallMs: STALL_MS, probeTimeoutMs: PROBE_TIMEOUT_MS, log });
  const pool = createPool({ connectionString: url, schema: 'public', max, connectTimeoutMs: PROBE_TIMEOUT_MS, watch });
  pool.on('error', () => {});
  return { log, lines, watch, pool, codes: () => lines.map((l) => l.code).filter(Boolean) };
}

const failure = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (err: Error) => err,
  );

describe('a statement whose answer will not come', () => {
  it('fails when the server vanished, with its idle and LISTEN connections dropped, and the pool serves once it answers', { timeout: 60_000 }, async () => {
    const { log, lines, watch, pool, codes } = watchedPool(3);
    const listen = new Notifications({ connectionString: url, schema: 'public', watch }, ['unanswered_test'], log);
    try {
      await listen.start();
      await Promise.all([pool.query('SELECT 1'), pool.query('SELECT 1')]);
      proxy.vanish();
      // Without the watch this statement would wait for the system's TCP time-out, far past the test's.
      expect((await failure(pool.query('SELECT 1')))?.message).toMatch(/stopped answering|Connection terminated/);
      const warned = lines.find((l) => l.code === 'PGKAFKA_DATABASE_UNANSWERED');
      expect(warned).toMatchObject({ server: `127.0.0.1:${proxy.port}` });
      // The idle pool connection and the LISTEN one went with it (the LISTEN one says so and reconnects).
      expect(warned!.connections).toBeGreaterThanOrEqual(3);
      expect(await within(5000, () => codes().includes('PGKAFKA_LISTEN_LOST'))).toBeGreaterThanOrEqual(0);
      proxy.up();
      let answered = false;
      await within(
        10_000,
        async () =>
          (answered = await pool.query('SELECT 1 AS one').then(
            (r) => r.rows[0].one === 1,
            () => false,
          )),
      );
      expect(answered).toBe(true);
      expect(await within(10_000, () => codes().includes('PGKAFKA_LISTEN_RESTORED'))).toBeGreaterThanOrEqual(0);
    } finally {
      proxy.up();
      await listen.stop();
      watch.stop();
      await pool.end();
    }
  });

  it('fails when the server answers but the connection was forgotten on the way, dropping only that connection', { timeout: 60_000 }, async () => {
    const { watch, pool, codes } = watchedPool(2);
    try {
      await pool.query('SELECT 1');
      // The proxy forgets the pool's connection and serves new ones, as a firewall whose idle time-out passed.
      proxy.vanish();
      proxy.up();
      expect((await failure(pool.query('SELECT 1')))?.message).toMatch(/not running the statement/);
      expect(codes()).toContain('PGKAFKA_DATABASE_STATEMENT_LOST');
      expect(codes()).not.toContain('PGKAFKA_DATABASE_UNANSWERED');
      expect((await pool.query<{ one: number }>('SELECT 1 AS one')).rows[0]!.one).toBe(1);
    } finally {
      proxy.up();
      watch.stop();
      await pool.end();
    }
  });

  it('leaves a statement that is slow on a server that answers', { timeout: 30_000 }, async () => {
    const { watch, pool, codes } = watchedPool(2);
    try {
      const { rows } = await pool.query<{ outcome: string }>("SELECT pg_sleep(2), 'done' AS outcome");
      expect(rows[0]!.outcome).toBe('done');
      expect(codes()).toEqual([]);
    } finally {
      watch.stop();
      await pool.end();
    }
  });

  it('a broker on a vanished server answers a produce with a retriable error, and stores it once it is sent again', { timeout: 90_000 }, async () => {
    const broker = await startTestBroker({ databaseUrl: url, databaseStallProbeMs: STALL_MS, databaseConnectTimeoutMs: PROBE_TIMEOUT_MS });
    const client = await RawClient.connect(broker.bootstrap);
    try {
      await createTopic(client, 'vanishing');
      expect(errorName((await plainProduce(client, 'vanishing', ['before'])).errorCode)).toBe('NONE');
      proxy.vanish();
      const during = plainProduce(client, 'vanishing', ['during']);
      // The server comes back (a failover's new primary at the same address) once the watch had its time.
      await sleep(STALL_MS + PROBE_TIMEOUT_MS + 500);
      proxy.up();
      const code = (await during).errorCode;
      expect({ code: errorName(code), retriable: isRetriable(code) }).toMatchObject({ retriable: true });
      let again: number = ErrorCode.UNKNOWN_SERVER_ERROR;
      await within(30_000, async () => (again = (await plainProduce(client, 'vanishing', ['during'])).errorCode) === ErrorCode.NONE);
      expect(errorName(again)).toBe('NONE');
      expect(allValues(await fetch(client, 'vanishing', 0))).toEqual(['before', 'during']);
    } finally {
      proxy.up();
      client.close();
      await broker.destroy();
    }
  });
});
