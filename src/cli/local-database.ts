// The database `pgkafka groups` and `pgkafka users` read and write: DATABASE_URL,
// or else the embedded PostgreSQL of the local data dir, found the way
// PostgreSQL's own tools find a running server: its postmaster.pid names the
// server's process and port.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Config } from '../config/schema.js';
import { EMBEDDED_DATABASE } from '../storage/pg/database.js';
import { chooseDataDir } from '../storage/pg/embedded-data-dir.js';
import { EMBEDDED_PASSWORD, EMBEDDED_USER } from '../storage/pg/embedded-postgres.js';

/** postmaster.pid: line 1 the postmaster's pid, line 4 its port. */
const PID_LINE = 0;
const PORT_LINE = 3;

export type LocalDatabase = { url: string } | { error: string };

export function localDatabase(config: Pick<Config, 'databaseUrl' | 'dataDir'>): LocalDatabase {
  if (config.databaseUrl) return { url: config.databaseUrl };
  // The broker's own choice: as root, a default data dir user postgres cannot reach moves elsewhere.
  let dataDir: string;
  try {
    dataDir = resolve(chooseDataDir(config.dataDir, process.getuid?.() === 0).dir);
  } catch {
    // A directory postgres could not enter holds no running server of ours: said below.
    dataDir = resolve(config.dataDir);
  }
  const pidFile = resolve(dataDir, 'pg', 'postmaster.pid');
  let lines: string[];
  try {
    lines = readFileSync(pidFile, 'utf8').split('\n');
  } catch {
    return { error: `DATABASE_URL is not set and no embedded database is running in ${dataDir} (PGKAFKA_DATA_DIR): start the broker there (pgkafka start) or set DATABASE_URL` };
  }
  const pid = Number(lines[PID_LINE]);
  const port = Number(lines[PORT_LINE]);
  if (!Number.isInteger(pid) || pid <= 0 || !Number.isInteger(port) || port <= 0 || !alive(pid)) {
    return { error: `the embedded database in ${dataDir} is not running (stale ${pidFile}): start the broker there (pgkafka start) or set DATABASE_URL` };
  }
  return { url: `postgresql://${EMBEDDED_USER}:${EMBEDDED_PASSWORD}@127.0.0.1:${port}/${EMBEDDED_DATABASE}` };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: the process exists but belongs to another user (the embedded server runs as its own user under root).
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
