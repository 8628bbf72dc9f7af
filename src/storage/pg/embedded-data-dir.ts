// The embedded PostgreSQL's data directory: where it is (a directory the
// server's user can reach), and who holds it (a live broker, or a server left
// behind by one that is gone).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';

/** The data directory used when none is configured (relative to the working directory). */
export const DEFAULT_DATA_DIR = '.pgkafka-data';
/** Where root's brokers keep their data when the default directory is out of the postgres user's reach (the FHS place for a service's state). */
export const ROOT_FALLBACK_PARENT = '/var/lib/pgkafka';
/** The file a broker writes into the data directory it holds: its pid, then its ports once it listens. */
const OWNER_FILE = 'broker.json';

export interface DataDirChoice {
  dir: string;
  /** Set when the configured default was out of reach and this directory was chosen instead. */
  movedFrom?: string;
}

/**
 * The directory the embedded PostgreSQL keeps its data in. As root the
 * server runs as the unprivileged user "postgres", which must be able to
 * enter every directory above its data: a clone under a private home
 * directory (mode 700) is not. Then the default directory moves to
 * ROOT_FALLBACK_PARENT, one sub-directory per working directory (the same one
 * at every start from there); a directory set explicitly is refused with a
 * message saying what to do.
 */
export function chooseDataDir(configured: string, asRoot: boolean): DataDirChoice {
  const dir = resolve(configured);
  if (!asRoot) return { dir };
  const closed = closedAncestor(dir);
  if (!closed) return { dir };
  if (configured === DEFAULT_DATA_DIR) {
    const fallback = join(ROOT_FALLBACK_PARENT, `${basename(dirname(dir)) || 'root'}-${createHash('sha256').update(dir).digest('hex').slice(0, 12)}`);
    try {
      mkdirSync(fallback, { recursive: true, mode: 0o755 });
      if (!closedAncestor(fallback)) return { dir: fallback, movedFrom: dir };
    } catch {
      // Not writable (a read-only root file system): refused below.
    }
  }
  throw new Error(
    `embedded PostgreSQL runs as user "postgres" when pgkafka runs as root, and it cannot enter ${closed.dir} (mode ${closed.mode.toString(8)}): ` +
      'set PGKAFKA_DATA_DIR to a directory other users can traverse, or set DATABASE_URL',
  );
}

/** The first directory on the way to `dir` (its nearest existing ancestor and those above) that other users cannot traverse. */
function closedAncestor(dir: string): { dir: string; mode: number } | null {
  let d = dir;
  while (!existsSync(d) && d !== dirname(d)) d = dirname(d);
  for (; ; d = dirname(d)) {
    const mode = statSync(d).mode & 0o777;
    if ((mode & 0o001) === 0) return { dir: d, mode };
    if (d === dirname(d)) return null;
  }
}

/** What postmaster.pid says: the server's pid and port (PostgreSQL's lock file, one value a line). */
export interface Postmaster {
  pid: number;
  port: number;
}

export function readPostmaster(pgDir: string): Postmaster | null {
  let text: string;
  try {
    text = readFileSync(join(pgDir, 'postmaster.pid'), 'utf8');
  } catch {
    return null;
  }
  const lines = text.split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  return Number.isInteger(pid) && pid > 0 ? { pid, port: Number.isInteger(port) ? port : 0 } : null;
}

/** The embedded PostgreSQL of a data directory, if one is running: its pid and port (for tools that read the database directly). */
export function runningEmbedded(dataDir: string): Postmaster | null {
  const pm = readPostmaster(join(resolve(dataDir), 'pg'));
  return pm && isPostgresOf(pm.pid, join(resolve(dataDir), 'pg')) ? pm : null;
}

export interface Owner {
  pid: number;
  kafkaPort?: number;
  postgresPort?: number;
}

export function readOwner(dataDir: string): Owner | null {
  try {
    const owner = JSON.parse(readFileSync(join(dataDir, OWNER_FILE), 'utf8')) as Owner;
    return Number.isInteger(owner.pid) ? owner : null;
  } catch {
    return null;
  }
}

export function writeOwner(dataDir: string, owner: Owner): void {
  writeFileSync(join(dataDir, OWNER_FILE), `${JSON.stringify(owner)}\n`);
}

export function removeOwner(dataDir: string): void {
  if (readOwner(dataDir)?.pid === process.pid) rmSync(join(dataDir, OWNER_FILE), { force: true });
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, under another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A process's command line (Linux's /proc, else ps), or null if it is gone. */
function commandLine(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    if (existsSync('/proc/self')) return null;
  }
  try {
    return execFileSync('ps', ['-o', 'command=', '-p', String(pid)], { encoding: 'utf8' }).trim() || null;
  } catch {
    return null;
  }
}

export function parentPid(pid: number): number | null {
  try {
    // The command name (field 2) may hold spaces and parentheses: the fields after the last ')' are fixed.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    if (existsSync('/proc/self')) return null;
  }
  try {
    return Number(execFileSync('ps', ['-o', 'ppid=', '-p', String(pid)], { encoding: 'utf8' }).trim()) || null;
  } catch {
    return null;
  }
}

/** Whether `pid` is a postgres server started on `pgDir` (a pid in a stale postmaster.pid may since belong to anything). */
export function isPostgresOf(pid: number, pgDir: string): boolean {
  const cmd = commandLine(pid);
  return cmd !== null && /(^|\/)postgres(\s|$)/.test(cmd.split(' -D ')[0]!) && cmd.includes(` -D ${pgDir}`);
}

/** Whether `ancestor` is among the first few ancestors of `pid` (a broker runs its server through a small shell wrapper). */
export function descendsFrom(pid: number, ancestor: number): boolean {
  let p: number | null = pid;
  for (let i = 0; i < 4 && p !== null && p > 1; i++) {
    p = parentPid(p);
    if (p === ancestor) return true;
  }
  return false;
}

/** Whether a live `pid` recorded in broker.json is still a broker's process (Node), not a pid reused since by something else (or one of ours). */
export function isBrokerProcess(pid: number): boolean {
  if (!isAlive(pid) || descendsFrom(process.pid, pid)) return false;
  const cmd = commandLine(pid);
  return cmd === null || /node|pgkafka|tsx/.test(cmd);
}
