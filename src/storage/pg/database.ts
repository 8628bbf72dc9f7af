import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { locatorFor, NoAcceptableHost, type DatabaseHost } from './hosts.js';
import { oneOffClient } from './pool.js';
import type { Logger } from '../../observability/logger.js';
import { LogCode } from '../../observability/log-codes.js';
import { chooseDataDir, descendsFrom, isAlive, isBrokerProcess, isPostgresOf, readOwner, readPostmaster, removeOwner, writeOwner, type Owner } from './embedded-data-dir.js';
import { EMBEDDED_PASSWORD, EMBEDDED_USER, freePort, hasCluster, initdb, PortInUseError, serverUser, startServer, type ServerProcess } from './embedded-postgres.js';

export interface Database {
  connectionString: string;
  kind: 'external' | 'embedded';
  /** The embedded server's data directory (the one chosen, which may differ from the configured one as root). */
  dataDir?: string;
  /** Records the broker's Kafka port beside its pid in the data directory it holds, for the message refusing a second broker. */
  announce(kafkaPort: number): void;
  /** Stops the embedded server (last, once nothing uses it); nothing for an external one. */
  stop(): Promise<void>;
}

export interface DatabaseOptions {
  databaseUrl?: string;
  dataDir: string;
  /** Unset: a free port, chosen at each start. */
  embeddedPgPort?: number;
  databaseConnectTimeoutMs: number;
}

/** A start-up failure whose message says which setting is wrong and what to do. */
export class DatabaseStartError extends Error {}

export const EMBEDDED_DATABASE = 'pgkafka';

/** Where the embedded PostgreSQL's cluster lives inside `dataDir`. */
export const embeddedClusterDir = (dataDir: string): string => join(dataDir, 'pg');
/** Delays between attempts to start an embedded PostgreSQL that exited on its own. */
const RESTART_FIRST_MS = 500;
const RESTART_MAX_MS = 10_000;
/** Attempts at a free port when another process took the one chosen before the server bound it. */
const PORT_ATTEMPTS = 3;
/** How long a server left behind by a gone broker gets for its fast shutdown before an immediate one. */
const STALE_FAST_SHUTDOWN_MS = 30_000;

/**
 * The PostgreSQL the broker stores into: the server named by DATABASE_URL,
 * or else an embedded PostgreSQL (real binaries from the embedded-postgres
 * package) whose data lives in dataDir and survives restarts.
 */
export async function openDatabase(options: DatabaseOptions, log: Logger): Promise<Database> {
  if (options.databaseUrl) {
    // Several hosts: which one the connections go to, at start-up and after each failover.
    const locator = locatorFor(options.databaseUrl);
    const onChosen = (host: DatabaseHost, passedOver: string[]) =>
      log.info({ host: `${host.host}:${host.port}`, passedOver, code: LogCode.DATABASE_HOST_CHOSEN }, `PostgreSQL connections go to ${host.host}:${host.port}`);
    locator?.on('chosen', onChosen);
    const unwatch = async () => void locator?.off('chosen', onChosen);
    try {
      await probe(options.databaseUrl, options.databaseConnectTimeoutMs);
    } catch (err) {
      await unwatch();
      throw err;
    }
    return { connectionString: options.databaseUrl, kind: 'external', announce: () => {}, stop: unwatch };
  }
  return openEmbedded(options, log);
}

/** Connects once and runs a query, so an unreachable, wrong or silent server fails start-up at once with a message naming the setting. */
async function probe(connectionString: string, timeoutMs: number): Promise<void> {
  const client = oneOffClient({ connectionString, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
  } catch (err) {
    if (err instanceof NoAcceptableHost) throw new DatabaseStartError(`${err.message}: start PostgreSQL (or promote a standby), or fix DATABASE_URL`);
    throw new DatabaseStartError(explainConnectError(err as Error & { code?: string }, client, timeoutMs));
  } finally {
    await client.end().catch(() => {});
  }
}

/** What went wrong connecting to DATABASE_URL, in the user's terms (never its password). */
export function explainConnectError(err: Error & { code?: string }, at: { host: string; port: number; user?: string; database?: string }, timeoutMs: number): string {
  const where = `PostgreSQL at ${at.host}:${at.port} (DATABASE_URL)`;
  const fix = 'fix DATABASE_URL (postgresql://user:password@host:5432/database), or unset it to use the embedded PostgreSQL';
  switch (err.code) {
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `DATABASE_URL names host "${at.host}", which does not resolve: ${fix}`;
    case 'ECONNREFUSED':
      return `nothing accepts connections at ${at.host}:${at.port} (DATABASE_URL): start PostgreSQL there, or ${fix}`;
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
    case 'ETIMEDOUT':
      return `${where} cannot be reached (${err.code}): check the network, or ${fix}`;
    case '3D000':
      return `${where}: database "${at.database}" does not exist: create it (createdb ${at.database}) or name another in DATABASE_URL`;
    case '28000':
    case '28P01':
      return `${where} refused user "${at.user}": ${err.message}: fix the user or password in DATABASE_URL`;
  }
  if (/timeout/i.test(err.message)) {
    return `${where} did not answer within ${timeoutMs} ms (PGKAFKA_DATABASE_CONNECT_TIMEOUT_MS): check that a PostgreSQL server, not another service, listens there, or raise the timeout`;
  }
  return `${where}: ${err.message}`;
}

async function openEmbedded(options: DatabaseOptions, log: Logger): Promise<Database> {
  const asRoot = process.getuid?.() === 0;
  const choice = chooseDataDir(options.dataDir, asRoot);
  const dataDir = choice.dir;
  if (choice.movedFrom) {
    log.info(
      { dataDir, unreachable: choice.movedFrom },
      `the default data directory is out of reach of user "${EMBEDDED_USER}" (pgkafka runs as root): using ${dataDir}; PGKAFKA_DATA_DIR chooses another`,
    );
  }
  mkdirSync(dataDir, { recursive: true, mode: 0o755 });
  const pgDir = embeddedClusterDir(dataDir);
  await takeOver(dataDir, pgDir, log);
  const owner: Owner = { pid: process.pid };
  writeOwner(dataDir, owner);
  try {
    const user = await serverUser(asRoot);
    if (!hasCluster(pgDir)) {
      log.info({ dataDir: pgDir }, 'initialising the embedded PostgreSQL (first start in this data directory: a few seconds)');
      await initdb(pgDir, user);
    }
    log.info({ dataDir: pgDir }, 'starting the embedded PostgreSQL');
    const onLog = (line: string) => log.debug({ embeddedPostgres: line });
    let server: ServerProcess | null = null;
    for (let attempt = 1; !server; attempt++) {
      const port = options.embeddedPgPort ?? (await freePort());
      try {
        server = await startServer(pgDir, port, user, onLog);
      } catch (err) {
        if (!(err instanceof PortInUseError)) throw new DatabaseStartError(`${(err as Error).message} (data directory ${pgDir})`);
        if (options.embeddedPgPort !== undefined) throw new DatabaseStartError(`${err.message}: set PGKAFKA_EMBEDDED_PG_PORT to a free port, or leave it unset to pick one`);
        if (attempt >= PORT_ATTEMPTS) throw new DatabaseStartError(err.message);
      }
    }
    const port = server.port;
    owner.postgresPort = port;
    writeOwner(dataDir, owner);
    const stopServer = () => server!.stop();
    try {
      await createDatabase(port, options.databaseConnectTimeoutMs);
    } catch (err) {
      await stopServer();
      throw err;
    }
    log.info({ port, dataDir: pgDir, pid: server.pid }, 'embedded PostgreSQL started');
    const supervisor = superviseEmbedded(server, (s) => (server = s), pgDir, user, onLog, log);
    return {
      connectionString: `postgresql://${EMBEDDED_USER}:${EMBEDDED_PASSWORD}@127.0.0.1:${port}/${EMBEDDED_DATABASE}`,
      kind: 'embedded',
      dataDir,
      announce(kafkaPort) {
        owner.kafkaPort = kafkaPort;
        writeOwner(dataDir, owner);
      },
      stop: async () => {
        supervisor.stop();
        await stopServer();
        removeOwner(dataDir);
      },
    };
  } catch (err) {
    removeOwner(dataDir);
    throw err;
  }
}

async function createDatabase(port: number, timeoutMs: number): Promise<void> {
  const client = new pg.Client({
    connectionString: `postgresql://${EMBEDDED_USER}:${EMBEDDED_PASSWORD}@127.0.0.1:${port}/postgres`,
    connectionTimeoutMillis: timeoutMs,
    query_timeout: timeoutMs,
  });
  client.on('error', () => {});
  await client.connect();
  try {
    const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [EMBEDDED_DATABASE]);
    if (exists.rowCount === 0) await client.query(`CREATE DATABASE ${EMBEDDED_DATABASE}`);
  } finally {
    await client.end();
  }
}

/**
 * Before starting a server on the data directory: refuse if another live
 * broker holds it; stop a server that a broker now gone left running (its
 * postmaster.pid would make ours refuse to start); remove a postmaster.pid
 * whose pid now belongs to some other process.
 */
async function takeOver(dataDir: string, pgDir: string, log: Logger): Promise<void> {
  const owner = readOwner(dataDir);
  const pm = readPostmaster(pgDir);
  const running = pm !== null && isPostgresOf(pm.pid, pgDir);
  const ownerAlive = owner !== null && owner.pid !== process.pid && isAlive(owner.pid);
  if (ownerAlive && (running ? descendsFrom(pm.pid, owner.pid) : isBrokerProcess(owner.pid))) {
    const ports = [owner.kafkaPort && `Kafka port ${owner.kafkaPort}`, owner.postgresPort && `PostgreSQL port ${owner.postgresPort}`].filter(Boolean).join(', ');
    throw new DatabaseStartError(
      `data directory ${dataDir} is in use by another pgkafka broker (pid ${owner.pid}${ports ? `, ${ports}` : ''}): stop that broker, or give this one its own PGKAFKA_DATA_DIR (or DATABASE_URL)`,
    );
  }
  if (pm === null) return;
  if (!running) {
    // PostgreSQL would take a live pid for another postmaster: this one is verified not to be.
    if (isAlive(pm.pid)) rmSync(join(pgDir, 'postmaster.pid'), { force: true });
    return;
  }
  log.warn(
    { pid: pm.pid, port: pm.port, dataDir: pgDir, code: LogCode.EMBEDDED_PG_LEFT_RUNNING },
    'an embedded PostgreSQL left running by a broker that is gone (killed?) holds the data directory: stopping it (fast shutdown) before starting ours',
  );
  process.kill(pm.pid, 'SIGINT');
  if (!(await exitedWithin(pm.pid, STALE_FAST_SHUTDOWN_MS))) {
    process.kill(pm.pid, 'SIGQUIT');
    if (!(await exitedWithin(pm.pid, 10_000))) throw new DatabaseStartError(`the embedded PostgreSQL left running on ${pgDir} (pid ${pm.pid}) does not stop: stop it by hand`);
  }
}

async function exitedWithin(pid: number, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (!isAlive(pid)) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return !isAlive(pid);
}

/**
 * The broker is the embedded PostgreSQL's only supervisor: when the server
 * exits on its own (killed, crashed), it is started again on the same data
 * directory and port (PostgreSQL runs crash recovery), with growing delays
 * while that fails. The pool and the LISTEN connection reconnect by themselves.
 */
function superviseEmbedded(
  first: ServerProcess,
  replace: (s: ServerProcess) => void,
  pgDir: string,
  user: { uid: number; gid: number } | null,
  onLog: (line: string) => void,
  log: Logger,
): { stop(): void } {
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  const watch = (server: ServerProcess) => {
    server.child.once('exit', (exitCode, signal) => {
      if (stopped) return;
      log.error({ exitCode, signal, code: LogCode.EMBEDDED_PG_EXITED }, 'embedded PostgreSQL exited; starting it again');
      restart(server.port, RESTART_FIRST_MS, 1);
    });
  };
  const restart = (port: number, delay: number, attempt: number) => {
    timer = setTimeout(() => {
      timer = null;
      if (stopped) return;
      startServer(pgDir, port, user, onLog).then(
        (server) => {
          if (stopped) {
            void server.stop();
            return;
          }
          replace(server);
          log.info({ attempt, code: LogCode.EMBEDDED_PG_RESTARTED }, 'embedded PostgreSQL started again');
          watch(server);
        },
        (err: Error) => {
          if (stopped) return;
          log.warn({ err: err.message, attempt, code: LogCode.EMBEDDED_PG_START_FAILED }, 'embedded PostgreSQL did not start; retrying');
          restart(port, Math.min(delay * 2, RESTART_MAX_MS), attempt + 1);
        },
      );
    }, delay);
  };
  watch(first);
  return {
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}

/** Whether PostgreSQL answers a query through `pool` within `timeoutMs`: null if so, else why not (for /ready). */
export async function databaseUnreachable(pool: pg.Pool, timeoutMs: number): Promise<string | null> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string>((resolve) => (timer = setTimeout(() => resolve(`PostgreSQL did not answer within ${timeoutMs} ms`), timeoutMs)));
  const ping = pool.query('SELECT 1').then(
    () => null,
    (err: Error) => `PostgreSQL: ${err.message}`,
  );
  try {
    return await Promise.race([ping, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
