// Producing from SQL for Node.js applications: send(client, record) calls the
// broker schema's send() function on the application's own connection or
// transaction, so the record reaches the topic if and only if that
// transaction commits (docs/sql.md). It imports nothing of the broker: the
// SQL function does the work (partition, ACLs, the outbox).

/** A connection or transaction to run the call on: node-postgres's Client, Pool or PoolClient (and anything with `query(text, values)`), Prisma's `$queryRawUnsafe`, or Knex's `raw`. */
export type SqlClient = { query(text: string, values: unknown[]): unknown } | { $queryRawUnsafe(text: string, ...values: unknown[]): unknown } | { raw(sql: string, bindings: unknown[]): unknown };

/** A header value: a string (sent as UTF-8), bytes, or null. */
export type SqlHeaderValue = string | Buffer | Uint8Array | null;

export interface SqlRecord {
  topic: string;
  /** Picks the partition as the Java client and kafkajs do (murmur2) unless `partition` is given; null or absent: no key. */
  key?: string | Buffer | Uint8Array | null;
  /** A string (UTF-8), bytes, or null (a tombstone). */
  value: string | Buffer | Uint8Array | null;
  /** As kafkajs takes them (an object), or as pairs to keep order and repeated names. */
  headers?: Record<string, SqlHeaderValue | undefined> | [string, SqlHeaderValue][];
  /** The partition; absent: by key, else one partition per transaction. */
  partition?: number;
}

export interface SqlSendOptions {
  /** The broker's schema (its `schema` option, PGKAFKA_SCHEMA); default `pgkafka`. */
  schema?: string;
}

const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;

const bytes = (v: string | Buffer | Uint8Array | null | undefined): Buffer | null =>
  v === null || v === undefined ? null : typeof v === 'string' ? Buffer.from(v, 'utf8') : Buffer.isBuffer(v) ? v : Buffer.from(v.buffer, v.byteOffset, v.byteLength);

/**
 * Sends one record inside the client's current transaction (outside one, it
 * is its own): consumers see it after the commit, never before, once. Resolves
 * with the partition chosen. Rejects as the SQL function does: an unknown
 * topic or partition (SQLSTATE 42704, UNKNOWN_TOPIC_OR_PARTITION), a role
 * without a WRITE ACL on the topic (42501, row-level security).
 */
export async function send(client: SqlClient, record: SqlRecord, options: SqlSendOptions = {}): Promise<number> {
  const schema = options.schema ?? 'pgkafka';
  if (!IDENTIFIER.test(schema)) throw new TypeError(`schema must be a lower-case SQL identifier: ${schema}`);
  const pairs = Array.isArray(record.headers) ? record.headers : Object.entries(record.headers ?? {}).filter(([, v]) => v !== undefined);
  const values = [record.topic, bytes(record.key), bytes(record.value), pairs.map(([k]) => k), pairs.map(([, v]) => bytes(v as SqlHeaderValue)), record.partition ?? null];
  const text = `SELECT ${schema}.send($1::text, $2::bytea, $3::bytea, $4::text[], $5::bytea[], $6::int4) AS partition`;
  const result = await run(client, text, values);
  const partition = rowsOf(result)[0]?.partition;
  if (typeof partition !== 'number') throw new Error(`${schema}.send answered no partition`);
  return partition;
}

function run(client: SqlClient, text: string, values: unknown[]): unknown {
  if ('query' in client && typeof client.query === 'function') return client.query(text, values);
  if ('$queryRawUnsafe' in client && typeof client.$queryRawUnsafe === 'function') return client.$queryRawUnsafe(text, ...values);
  if ('raw' in client && typeof client.raw === 'function') return client.raw(text.replace(/\$\d+/g, '?'), values);
  throw new TypeError('send() needs a client with query(text, values), $queryRawUnsafe or raw');
}

/** The rows of a result: node-postgres's and Knex's `{ rows }`, or Prisma's array. */
function rowsOf(result: unknown): { partition?: unknown }[] {
  if (Array.isArray(result)) return result as { partition?: unknown }[];
  const rows = (result as { rows?: unknown } | null)?.rows;
  return Array.isArray(rows) ? (rows as { partition?: unknown }[]) : [];
}
