import pg from 'pg';
import { connectionFor } from './hosts.js';
import type { ServerWatch } from './server-watch.js';

// int8 as bigint end to end (offsets, timestamps, producer ids); node-postgres
// would otherwise return strings.
const INT8_OID = 20;
const INT8_ARRAY_OID = 1016;
const parseInt8Array = pg.types.getTypeParser(1016 as never) as unknown as (v: string) => string[];

export const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8_OID) return (v: string) => BigInt(v);
    if (oid === INT8_ARRAY_OID) return (v: string) => parseInt8Array(v).map((x) => BigInt(x));
    return pg.types.getTypeParser(oid, format as never);
  },
} as unknown as pg.CustomTypesConfig;

export interface PoolOptions {
  connectionString: string;
  schema: string;
  max: number;
  applicationName?: string;
  /** How long a new connection gets to be accepted (node-postgres waits for the operating system's time-out otherwise). */
  connectTimeoutMs?: number;
  /** Watches the connections' statements for a server that stopped answering. */
  watch?: ServerWatch;
}

/**
 * The broker's pool. Every connection it opens carries an 'error' listener
 * for its whole life: node-postgres emits 'error' on a client whose server
 * goes away (a PostgreSQL restart, a terminated backend), and the pool
 * listens only while the client is idle. Without this, a connection lost
 * while checked out (between the statements of a transaction, or during its
 * ROLLBACK) raised an uncaught exception. The statement in flight fails on
 * its own; the pool drops the broken client when it is released.
 * A DATABASE_URL listing several hosts connects to the one hosts.ts chooses.
 */
export function createPool(options: PoolOptions): pg.Pool {
  const pool = new pg.Pool({
    ...connectionFor(options.connectionString),
    max: options.max,
    types: pgTypes,
    application_name: options.applicationName ?? 'pgkafka',
    options: `-c search_path=${options.schema}`,
    keepAlive: true,
    connectionTimeoutMillis: options.connectTimeoutMs,
  });
  pool.on('connect', (client) => {
    client.on('error', ignoreCheckedOutError);
    options.watch?.add(client);
  });
  return pool;
}

function ignoreCheckedOutError(): void {
  // Reported by the failed statement (or, for an idle client, by the pool's own 'error' event).
}

/** A client of its own (LISTEN); its owner hands it to the watch once connected. */
export function createClient(options: Omit<PoolOptions, 'max' | 'watch'>): pg.Client {
  const { Client, connectionString } = connectionFor(options.connectionString);
  return new Client({
    connectionString,
    types: pgTypes,
    application_name: options.applicationName ?? 'pgkafka',
    options: `-c search_path=${options.schema}`,
    keepAlive: true,
    connectionTimeoutMillis: options.connectTimeoutMs,
  });
}

/** A client for a one-off task (migrations, start-up checks, dropping a schema), going where DATABASE_URL's hosts say. */
export function oneOffClient(config: pg.ClientConfig & { connectionString: string }): pg.Client {
  const { Client, connectionString } = connectionFor(config.connectionString);
  return new Client({ ...config, connectionString });
}

/** Thrown inside inTransaction to roll back and return `value` instead of committing. */
export class Rollback<T> {
  constructor(readonly value: T) {}
}

/**
 * Runs `work` in one transaction on one pooled connection: COMMIT when it
 * returns, ROLLBACK when it throws (a thrown Rollback returns its value).
 * A connection whose ROLLBACK fails (lost with its server) is discarded, not
 * returned to the pool.
 */
export async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch((rollbackErr: Error) => (broken = rollbackErr));
    // Rolled back either way: a connection lost before COMMIT leaves nothing committed.
    if (err instanceof Rollback) return err.value as T;
    throw err;
  } finally {
    client.release(broken);
  }
}
