// "The limit": the same records written straight into the broker's tables
// (created by its migrations) by the fastest correct SQL path — real magic-v2
// batches appended with the broker's own statement and parameters
// (src/storage/pg/log-store.ts: offsets assigned under the partition row lock,
// one statement per batch), from 4 concurrent connections across the partitions.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { buildBatch } from '../src/protocol/records/index.js';
import { createLogger } from '../src/observability/logger.js';
import { APPEND_SQL, appendParams } from '../src/storage/pg/log-store.js';
import { migrate } from '../src/storage/pg/migrate.js';
import { DATABASE_URL, pgClient, randomName } from './broker.js';
import { KEYS } from './clients.js';
import { percentileSorted, sleep } from './stats.js';

export class SqlLimit {
  private constructor(readonly schema: string) {}

  static async create(): Promise<SqlLimit> {
    // The broker's own tables, from its migrations.
    const schema = randomName('bench_sql');
    await migrate(DATABASE_URL, schema, createLogger('silent'));
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
      // The broker's own parameters for one batch; they never change except the partition, so they are built once.
      const base = appendParams(topicId, 0, BigInt(n), [
        {
          data,
          relativeOffset: 0n,
          lastOffsetDelta: n - 1,
          recordCount: n,
          firstTimestamp: ts,
          maxTimestamp: ts,
          producerId: -1n,
          producerEpoch: -1,
          baseSequence: -1,
          isTransactional: false,
          isControl: false,
        },
      ]);
      return {
        size: data.length,
        params: (p: number) => base.map((v, i) => (i === 1 ? p : v)),
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
    const clients = await Promise.all(
      Array.from({ length: connections }, async () => {
        const c = new pg.Client({ connectionString: DATABASE_URL, options: `-c search_path=${this.schema}` });
        await c.connect();
        return c;
      }),
    );
    const text = APPEND_SQL;
    let next = 0;
    const t0 = performance.now();
    let seconds: number;
    try {
      await Promise.all(
        clients.map(async (c, ci) => {
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
        }),
      );
    } finally {
      seconds = (performance.now() - t0) / 1000;
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

  /**
   * The latency floor: one-record 100-byte batches due at `rate` per second,
   * appended to a fresh one-partition topic with the broker's statement from
   * one connection, one statement at a time, each taking every record that
   * came due while the previous one committed (as the broker's flush of a
   * partition does). Latency is from when a record is produced (its due time, or
   * the loop's wake-up past it) to its commit.
   */
  async commitLatency(rate: number, seconds: number): Promise<{ p50: number; p99: number; p999: number; commits: number }> {
    const topicId = randomUUID();
    const c = new pg.Client({ connectionString: DATABASE_URL, options: `-c search_path=${this.schema}` });
    await c.connect();
    try {
      await c.query('INSERT INTO topics VALUES ($1, $2, 1)', [topicId, `t-${topicId}`]);
      await c.query('INSERT INTO partitions (topic_id, partition) VALUES ($1, 0)', [topicId]);
      const data = buildBatch({ records: [{ key: null, value: Buffer.alloc(100, 0x64) }] });
      const ts = BigInt(Date.now());
      const batch = (i: number) => ({
        data,
        relativeOffset: BigInt(i),
        lastOffsetDelta: 0,
        recordCount: 1,
        firstTimestamp: ts,
        maxTimestamp: ts,
        producerId: -1n,
        producerEpoch: -1,
        baseSequence: -1,
        isTransactional: false,
        isControl: false,
      });
      const warmup = Math.ceil(rate / 2);
      const total = warmup + Math.round(rate * seconds);
      const lat: number[] = [];
      let generated = 0;
      let commits = 0;
      const t0 = performance.now();
      const dueAt = (i: number) => t0 + (i * 1000) / rate;
      // A record is produced at its due time, or when the loop wakes from a sleep past it (as the e2e producer's loop).
      let wokeAt = t0;
      while (generated < total) {
        const now = performance.now();
        const due = Math.min(total, Math.floor(((now - t0) / 1000) * rate) + 1);
        if (due === generated) {
          await sleep(Math.max(0, dueAt(generated) - now));
          wokeAt = performance.now();
          continue;
        }
        const first = generated;
        generated = due;
        const params = appendParams(
          topicId,
          0,
          BigInt(due - first),
          Array.from({ length: due - first }, (_, i) => batch(i)),
        );
        await c.query({ name: 'append_floor', text: APPEND_SQL, values: params });
        commits++;
        const done = performance.now();
        for (let i = Math.max(first, warmup); i < due; i++) lat.push(done - Math.max(dueAt(i), wokeAt));
      }
      const s = lat.sort((a, b) => a - b);
      return { p50: percentileSorted(s, 50), p99: percentileSorted(s, 99), p999: percentileSorted(s, 99.9), commits };
    } finally {
      await c.end();
    }
  }

  /**
   * The same floor measured by PostgreSQL's own C client, so that no Node.js
   * process is in it: pgbench runs the append statement (its parameters
   * written in, prepared once) from one connection at `rate` commits per
   * second, one record per commit. pgbench times each commit from when it
   * was scheduled, so a stall also counts against the commits it delays.
   * Null when pgbench is not installed (BENCH_PGBENCH names another).
   */
  async pgbenchCommitLatency(rate: number, seconds: number): Promise<{ p50: number; p99: number; p999: number; commits: number } | null> {
    const pgbench = process.env.BENCH_PGBENCH ?? 'pgbench';
    const topicId = randomUUID();
    const setup = await pgClient();
    try {
      await setup.query(`INSERT INTO ${this.schema}.topics VALUES ($1, $2, 1)`, [topicId, `t-${topicId}`]);
      await setup.query(`INSERT INTO ${this.schema}.partitions (topic_id, partition) VALUES ($1, 0)`, [topicId]);
    } finally {
      await setup.end();
    }
    const data = buildBatch({ records: [{ key: null, value: Buffer.alloc(100, 0x64) }] });
    const literals = [`'${topicId}'::uuid`, '0', '1', `'{0}'`, `'{0}'`, `'{1}'`, `'{0}'`, `'{0}'`, `'{-1}'`, `'{-1}'`, `'{-1}'`, `'{f}'`, `'{f}'`, `ARRAY['\\x${data.toString('hex')}'::bytea]`];
    // $14 before $1, so that $1 does not match the start of $10–$14.
    let statement = APPEND_SQL;
    for (let i = literals.length; i >= 1; i--) statement = statement.replaceAll(`$${i}`, literals[i - 1]!);
    const dir = mkdtempSync(join(tmpdir(), 'pgkafka-bench-pgbench-'));
    try {
      writeFileSync(join(dir, 'append.sql'), `${statement.replace(/\s+/g, ' ').trim()};\n`);
      const args = ['-n', '-c', '1', '-M', 'prepared', '-R', String(rate), '-T', String(seconds + 1), '-l', '--log-prefix', join(dir, 'log'), '-f', join(dir, 'append.sql'), DATABASE_URL];
      const code = await new Promise<number | null>((resolve) => {
        const child = spawn(pgbench, args, { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, PGOPTIONS: `-c search_path=${this.schema}` } });
        let err = '';
        child.stderr.on('data', (c: Buffer) => (err = (err + c.toString()).slice(-2000)));
        child.on('error', () => resolve(null));
        child.on('exit', (c) => {
          if (c !== 0) process.stderr.write(`  pgbench exited with ${c}: ${err}\n`);
          resolve(c);
        });
      });
      if (code !== 0) return null;
      // Log lines: client transaction latency_us script epoch_s epoch_us [lag_us]; the first second is warm-up.
      const lines = readdirSync(dir)
        .filter((f) => f.startsWith('log'))
        .flatMap((f) => readFileSync(join(dir, f), 'utf8').trim().split('\n'));
      const rows = lines.map((l) => l.split(' ').map(Number)).filter((r) => r.length >= 6);
      const check = await pgClient();
      try {
        const { rows: stored } = await check.query(`SELECT next_offset FROM ${this.schema}.partitions WHERE topic_id = $1`, [topicId]);
        if (Number(stored[0]?.next_offset) !== rows.length) throw new Error(`pgbench committed ${rows.length} appends, the partition holds ${stored[0]?.next_offset}`);
      } finally {
        await check.end();
      }
      const start = Math.min(...rows.map((r) => r[4]!)) + 1;
      const lat = rows
        .filter((r) => r[4]! >= start)
        .map((r) => r[2]! / 1000)
        .sort((a, b) => a - b);
      return { p50: percentileSorted(lat, 50), p99: percentileSorted(lat, 99), p999: percentileSorted(lat, 99.9), commits: lat.length };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
}
