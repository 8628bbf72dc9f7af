import pg from 'pg';

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
}

export function createPool(options: PoolOptions): pg.Pool {
  return new pg.Pool({
    connectionString: options.connectionString,
    max: options.max,
    types: pgTypes,
    application_name: options.applicationName ?? 'pgkafka',
    options: `-c search_path=${options.schema}`,
  });
}

export function createClient(options: Omit<PoolOptions, 'max'>): pg.Client {
  return new pg.Client({
    connectionString: options.connectionString,
    types: pgTypes,
    application_name: options.applicationName ?? 'pgkafka',
    options: `-c search_path=${options.schema}`,
  });
}

/** Thrown inside inTransaction to roll back and return `value` instead of committing. */
export class Rollback<T> {
  constructor(readonly value: T) {}
}

/**
 * Runs `work` in one transaction on one pooled connection: COMMIT when it
 * returns, ROLLBACK when it throws (a thrown Rollback returns its value).
 */
export async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    if (err instanceof Rollback) return err.value as T;
    throw err;
  } finally {
    client.release();
  }
}
