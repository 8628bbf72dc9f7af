// "The limit": the same records written straight into the broker's table shape
// by the fastest correct SQL path — real magic-v2 batches appended with the
// broker's statement shape (offsets assigned under the partition row lock, one
// statement per batch), from 4 concurrent connections across the partitions.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { buildBatch } from '../src/protocol/records/index.js';
import { boolArray, byteaArray, int2Array, int4Array, int8Array } from '../src/storage/pg/binary-array.js';
import { DATABASE_URL, pgClient, randomName } from './broker.js';
import { KEYS } from './clients.js';

// Same columns, keys and storage as migrations/0001_initial.sql.
const DDL = (s: string) => `
CREATE SCHEMA ${s};
CREATE TABLE ${s}.topics (topic_id uuid PRIMARY KEY, name text NOT NULL UNIQUE, partition_count int NOT NULL);
CREATE TABLE ${s}.partitions (
  topic_id uuid NOT NULL REFERENCES ${s}.topics ON DELETE CASCADE, partition int NOT NULL,
  next_offset bigint NOT NULL DEFAULT 0, log_start_offset bigint NOT NULL DEFAULT 0, leader_epoch int NOT NULL DEFAULT 0,
  PRIMARY KEY (topic_id, partition));
CREATE TABLE ${s}.batches (
  topic_id uuid NOT NULL, partition int NOT NULL, base_offset bigint NOT NULL, last_offset bigint NOT NULL,
  record_count int NOT NULL, first_timestamp bigint NOT NULL, max_timestamp bigint NOT NULL,
  producer_id bigint NOT NULL, producer_epoch smallint NOT NULL, base_sequence int NOT NULL,
  is_transactional boolean NOT NULL, is_control boolean NOT NULL, size int NOT NULL, data bytea NOT NULL,
  PRIMARY KEY (topic_id, partition, base_offset));
ALTER TABLE ${s}.batches ALTER COLUMN data SET STORAGE EXTERNAL;`;

// The broker's APPEND_SQL (src/storage/pg/log-store.ts), schema-qualified.
const APPEND = (s: string) => `
WITH o AS (
  UPDATE ${s}.partitions SET next_offset = next_offset + $3::int8
  WHERE topic_id = $1 AND partition = $2
  RETURNING next_offset - $3::int8 AS base, next_offset AS hw, log_start_offset
), b AS (
  SELECT * FROM unnest($4::int8[], $5::int4[], $6::int4[], $7::int8[], $8::int8[], $9::int8[], $10::int2[], $11::int4[], $12::bool[], $13::bool[], $14::bytea[])
    AS t(rel, last_delta, cnt, first_ts, max_ts, pid, epoch, seq, txn, ctl, data)
), ins AS (
  INSERT INTO ${s}.batches (topic_id, partition, base_offset, last_offset, record_count, first_timestamp, max_timestamp,
                       producer_id, producer_epoch, base_sequence, is_transactional, is_control, size, data)
  SELECT $1, $2, o.base + b.rel, o.base + b.rel + b.last_delta, b.cnt, b.first_ts, b.max_ts,
         b.pid, b.epoch, b.seq, b.txn, b.ctl, length(b.data), overlay(b.data placing int8send(o.base + b.rel) from 1 for 8)
  FROM o, b
)
SELECT o.base, o.hw, o.log_start_offset, pg_notify($15, $16 || ':' || o.hw) FROM o`;

export class SqlLimit {
  private constructor(readonly schema: string) {}

  static async create(): Promise<SqlLimit> {
    const schema = randomName('bench_sql');
    const c = await pgClient();
    try {
      await c.query(DDL(schema));
    } finally {
      await c.end();
    }
    return new SqlLimit(schema);
  }

  async drop(): Promise<void> {
    const c = await pgClient();
    try {
      await c.query(`DROP SCHEMA IF EXISTS ${this.schema} CASCADE`);
    } finally {
      await c.end();
    }
  }

  /**
   * Appends `count` records of `valueSize`-byte values (16-byte keys) to a fresh
   * topic of `partitions` partitions, in batches of `perBatch` records, from
   * `connections` connections. Returns elapsed seconds (batches are built before timing).
   */
  async run(partitions: number, count: number, valueSize: number, perBatch: number, connections = 4): Promise<{ seconds: number; batches: number; batchBytes: number }> {
    const topicId = randomUUID();
    const setup = await pgClient();
    try {
      await setup.query(`INSERT INTO ${this.schema}.topics VALUES ($1, $2, $3)`, [topicId, `t-${topicId}`, partitions]);
      await setup.query(`INSERT INTO ${this.schema}.partitions (topic_id, partition) SELECT $1, g FROM generate_series(0, $2 - 1) g`, [topicId, partitions]);
    } finally {
      await setup.end();
    }
    const value = Buffer.alloc(valueSize, 0x61);
    const makeParams = (n: number) => {
      const data = buildBatch({ records: Array.from({ length: n }, (_, i) => ({ key: KEYS[i & 1023]!, value })) });
      const ts = BigInt(Date.now());
      // The parameters of one batch never change except the partition: build them once.
      return {
        size: data.length,
        params: (p: number) => [
          topicId, p, BigInt(n), int8Array([0n]), int4Array([n - 1]), int4Array([n]), int8Array([ts]), int8Array([ts]),
          int8Array([-1n]), int2Array([-1]), int4Array([-1]), boolArray([false]), boolArray([false]), byteaArray([data]),
          'bench_sql_append', topicId,
        ],
      };
    };
    const full = makeParams(perBatch);
    // Work list: batches round-robin over partitions, the last batch of each partition possibly short.
    const perPartition = Math.ceil(count / partitions);
    const work: { p: number; n: number }[] = [];
    for (let sent = 0; sent < perPartition; sent += perBatch) {
      for (let p = 0; p < partitions; p++) work.push({ p, n: Math.min(perBatch, perPartition - sent) });
    }
    const shortCache = new Map<number, ReturnType<typeof makeParams>>();
    const clients = await Promise.all(Array.from({ length: connections }, async () => {
      const c = new pg.Client({ connectionString: DATABASE_URL });
      await c.connect();
      return c;
    }));
    const text = APPEND(this.schema);
    let next = 0;
    const t0 = performance.now();
    try {
      await Promise.all(clients.map(async (c, ci) => {
        while (next < work.length) {
          const w = work[next++]!;
          let shape = full;
          if (w.n !== perBatch) {
            shape = shortCache.get(w.n) ?? makeParams(w.n);
            shortCache.set(w.n, shape);
          }
          const { rows } = await c.query({ name: `append_${ci}`, text, values: shape.params(w.p) });
          if (rows.length !== 1) throw new Error('partition row missing');
        }
      }));
    } finally {
      var seconds = (performance.now() - t0) / 1000;
      await Promise.all(clients.map((c) => c.end()));
    }
    const check = await pgClient();
    try {
      const { rows } = await check.query(`SELECT sum(next_offset)::int8 AS n FROM ${this.schema}.partitions WHERE topic_id = $1`, [topicId]);
      if (BigInt(rows[0].n) < BigInt(count)) throw new Error(`SQL limit wrote ${rows[0].n} of ${count} records`);
    } finally {
      await check.end();
    }
    return { seconds, batches: work.length, batchBytes: full.size };
  }
}
