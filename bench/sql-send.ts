// Section sql-send: producing from SQL (send() in the application's own
// transaction, docs/sql.md), side by side with a plain INSERT of the same
// value into an application table, in the same run on the same PostgreSQL:
// - one record per transaction from 8 connections (BEGIN; send; COMMIT), per second;
// - 10,000 records in one transaction, records per second (the statement and
//   its COMMIT; and until a consumer has them all);
// - COMMIT → a librdkafka consumer (parked long poll) receiving, p50/p99, and
//   the COMMIT round trip itself;
// - a Kafka producer's acks and produce→consume p99 on the partition while a
//   sending transaction stays open there, against the same without it.
import pg from 'pg';
import { Broker, DATABASE_URL } from './broker.js';
import { createTopic, rdConsumer, rdDisconnect } from './clients.js';
import { measure } from './latency.js';
import { percentileSorted, sleep, type Ctx, type Row } from './stats.js';

const VALUE = 'v'.repeat(100);

interface RunFigures {
  sendsPerSec: number;
  insertsPerSec: number;
  deliveredPerSec: number;
  bulkSendPerSec: number;
  bulkInsertPerSec: number;
  bulkDeliveredPerSec: number;
  commitToConsumerP50: number;
  commitToConsumerP99: number;
  sendCommitP50: number;
  sendCommitP99: number;
  insertCommitP50: number;
  insertCommitP99: number;
  ackP99Alone: number;
  ackP99OpenTxn: number;
  ackP99OpenInsert: number;
  e2eP99Alone: number;
  e2eP99OpenTxn: number;
}

/** Runs `body` in a loop on `connections` connections for `seconds`; the transactions per second. */
async function loop(pool: pg.Pool, connections: number, seconds: number, body: (c: pg.PoolClient, i: number) => Promise<unknown>): Promise<{ perSec: number; count: number }> {
  let count = 0;
  const until = performance.now() + seconds * 1000;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      const c = await pool.connect();
      try {
        while (performance.now() < until) {
          await c.query('BEGIN');
          await body(c, count++);
          await c.query('COMMIT');
        }
      } finally {
        c.release();
      }
    }),
  );
  return { perSec: count / ((performance.now() - t0) / 1000), count };
}

/** Resolves once a consumer of the topic's partitions has received `count` records since it started; the seconds from `since`. */
async function drained(bootstrap: string, topic: string, partitions: number, count: number, since: number): Promise<number> {
  const c = await rdConsumer(bootstrap, { 'fetch.wait.max.ms': 100, 'queued.min.messages': 200_000 });
  c.setDefaultConsumeTimeout(200);
  c.assign(Array.from({ length: partitions }, (_, partition) => ({ topic, partition, offset: 0 })));
  let received = 0;
  const deadline = Date.now() + 120_000;
  while (received < count && Date.now() < deadline) {
    const msgs: unknown[] = await new Promise((resolve, reject) => c.consume(10_000, (err: unknown, m: unknown[]) => (err ? reject(err) : resolve(m))));
    received += msgs.length;
  }
  const seconds = (performance.now() - since) / 1000;
  await rdDisconnect(c);
  if (received < count) throw new Error(`only ${received} of ${count} records delivered`);
  return seconds;
}

async function oneRun(ctx: Ctx): Promise<RunFigures> {
  const broker = await Broker.start();
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 10 });
  const s = broker.schema;
  try {
    await createTopic(broker.bootstrap, 'sql-tput', 8);
    await createTopic(broker.bootstrap, 'sql-bulk', 1);
    await createTopic(broker.bootstrap, 'sql-latency', 1);
    await createTopic(broker.bootstrap, 'sql-open', 1);
    await pool.query(`CREATE TABLE ${s}.bench_app (id bigserial PRIMARY KEY, k text, v text)`);
    const seconds = ctx.quick ? 3 : 10;

    // 1. One record per transaction, 8 connections.
    const insert = await loop(pool, 8, seconds, (c, i) => c.query(`INSERT INTO ${s}.bench_app (k, v) VALUES ($1, $2)`, [`key-${i}`, VALUE]));
    const t0 = performance.now();
    const sends = await loop(pool, 8, seconds, (c, i) => c.query(`SELECT ${s}.send('sql-tput', $1::text, $2::text)`, [`key-${i}`, VALUE]));
    const deliveredSeconds = await drained(broker.bootstrap, 'sql-tput', 8, sends.count, t0);
    ctx.log(`   1/txn x8: send ${sends.perSec.toFixed(0)}/s, insert ${insert.perSec.toFixed(0)}/s, delivered ${(sends.count / deliveredSeconds).toFixed(0)}/s`);

    // 2. 10,000 records in one transaction.
    const bulk = async (sql: string) => {
      const c = await pool.connect();
      try {
        const t = performance.now();
        await c.query('BEGIN');
        await c.query(sql);
        await c.query('COMMIT');
        return (performance.now() - t) / 1000;
      } finally {
        c.release();
      }
    };
    const bulkInsert = await bulk(`INSERT INTO ${s}.bench_app (k, v) SELECT 'key-' || i, '${VALUE}' FROM generate_series(1, 10000) i`);
    const b0 = performance.now();
    const bulkSend = await bulk(`SELECT count(${s}.send('sql-bulk', 'key-' || i, '${VALUE}')) FROM generate_series(1, 10000) i`);
    const bulkDelivered = await drained(broker.bootstrap, 'sql-bulk', 1, 10_000, b0);
    ctx.log(`   10,000 in one txn: send ${(10_000 / bulkSend).toFixed(0)}/s, insert ${(10_000 / bulkInsert).toFixed(0)}/s, delivered ${(10_000 / bulkDelivered).toFixed(0)}/s`);

    // 3. COMMIT → consumer, and the COMMIT round trips.
    const consumer = await rdConsumer(broker.bootstrap, { 'fetch.wait.max.ms': 5000, 'fetch.min.bytes': 1, 'socket.nagle.disable': true, 'fetch.queue.backoff.ms': 0 });
    consumer.setDefaultConsumeTimeout(1000);
    consumer.setDefaultConsumeLoopTimeoutDelay(0);
    const committedAt = new Map<number, bigint>();
    const e2e: number[] = [];
    consumer.on('data', (m: { value: Buffer }) => {
      const at = committedAt.get(Number(m.value.toString()));
      if (at !== undefined) e2e.push(Number(process.hrtime.bigint() - at) / 1e6);
    });
    consumer.assign([{ topic: 'sql-latency', partition: 0, offset: 0 }]);
    consumer.consume();
    await sleep(1500); // the consumer's first long poll parks
    const sendCommit: number[] = [];
    const insertCommit: number[] = [];
    const c = await pool.connect();
    try {
      const n = ctx.quick ? 300 : 1000;
      for (let i = 0; i < n; i++) {
        await c.query('BEGIN');
        await c.query(`SELECT ${s}.send('sql-latency', NULL::text, $1::text)`, [String(i)]);
        const at = process.hrtime.bigint();
        committedAt.set(i, at);
        await c.query('COMMIT');
        sendCommit.push(Number(process.hrtime.bigint() - at) / 1e6);
        await c.query('BEGIN');
        await c.query(`INSERT INTO ${s}.bench_app (k, v) VALUES (NULL, $1)`, [String(i)]);
        const at2 = process.hrtime.bigint();
        await c.query('COMMIT');
        insertCommit.push(Number(process.hrtime.bigint() - at2) / 1e6);
        await sleep(5); // 200 commits a second or fewer: the consumer's long poll parks again in between
      }
      const deadline = Date.now() + 10_000;
      while (e2e.length < n && Date.now() < deadline) await sleep(50);
    } finally {
      c.release();
      await rdDisconnect(consumer);
    }
    const q = (xs: number[], p: number) =>
      percentileSorted(
        [...xs].sort((a, b) => a - b),
        p,
      );
    ctx.log(`   COMMIT → consumer p50 ${q(e2e, 50).toFixed(2)} ms p99 ${q(e2e, 99).toFixed(2)} ms over ${e2e.length}`);

    // 4. A producer's latency on a partition with and without an open sending transaction there.
    const windowSeconds = ctx.quick ? 5 : 30;
    const alone = await measure(broker.bootstrap, 'sql-open', 200, windowSeconds, 1);
    const open = await pool.connect();
    let withOpen;
    try {
      await open.query('BEGIN');
      await open.query(`SELECT ${s}.send('sql-open', 'open', 'open transaction', NULL, 0)`);
      withOpen = await measure(broker.bootstrap, 'sql-open', 200, windowSeconds, 2);
      await open.query('COMMIT');
    } catch (err) {
      open.release();
      throw err;
    }
    // The same with a transaction open that only INSERTed into the application's table: any open transaction that wrote holds back PostgreSQL's xmin horizon.
    let withInsert;
    try {
      await open.query('BEGIN');
      await open.query(`INSERT INTO ${s}.bench_app (k, v) VALUES ('open', 'open transaction')`);
      withInsert = await measure(broker.bootstrap, 'sql-open', 200, windowSeconds, 3);
      await open.query('COMMIT');
    } finally {
      open.release();
    }
    ctx.log(
      `   producer ack p99 alone ${alone.ackP99.toFixed(2)} ms, with a ${windowSeconds} s open sending transaction ${withOpen.ackP99.toFixed(2)} ms, open INSERT ${withInsert.ackP99.toFixed(2)} ms`,
    );

    return {
      sendsPerSec: sends.perSec,
      insertsPerSec: insert.perSec,
      deliveredPerSec: sends.count / deliveredSeconds,
      bulkSendPerSec: 10_000 / bulkSend,
      bulkInsertPerSec: 10_000 / bulkInsert,
      bulkDeliveredPerSec: 10_000 / bulkDelivered,
      commitToConsumerP50: q(e2e, 50),
      commitToConsumerP99: q(e2e, 99),
      sendCommitP50: q(sendCommit, 50),
      sendCommitP99: q(sendCommit, 99),
      insertCommitP50: q(insertCommit, 50),
      insertCommitP99: q(insertCommit, 99),
      ackP99Alone: alone.ackP99,
      ackP99OpenTxn: withOpen.ackP99,
      ackP99OpenInsert: withInsert.ackP99,
      e2eP99Alone: alone.p99,
      e2eP99OpenTxn: withOpen.p99,
    };
  } finally {
    broker.sample();
    ctx.peakRssKiB.value = Math.max(ctx.peakRssKiB.value, broker.peakHwmKiB);
    await pool.end();
    await broker.stop();
  }
}

export async function runSqlSend(ctx: Ctx): Promise<Row[]> {
  const runs: RunFigures[] = [];
  for (let i = 0; i < ctx.runs; i++) runs.push(await oneRun(ctx));
  const col = (f: (r: RunFigures) => number) => runs.map(f);
  const section = 'sql-send';
  return [
    {
      section,
      case: 'send(), 1 record per transaction, 8 connections',
      unit: 'txn/s',
      values: col((r) => r.sendsPerSec),
      ratios: col((r) => r.sendsPerSec / r.insertsPerSec),
      ratioOf: 'of plain INSERT',
    },
    { section, case: 'plain INSERT, 1 row per transaction, 8 connections', unit: 'txn/s', values: col((r) => r.insertsPerSec) },
    { section, case: 'send(), 1 per transaction: delivered to a consumer', unit: 'rec/s', values: col((r) => r.deliveredPerSec) },
    {
      section,
      case: 'send(), 10,000 records in one transaction',
      unit: 'rec/s',
      values: col((r) => r.bulkSendPerSec),
      ratios: col((r) => r.bulkSendPerSec / r.bulkInsertPerSec),
      ratioOf: 'of plain INSERT',
    },
    { section, case: 'plain INSERT, 10,000 rows in one transaction', unit: 'rows/s', values: col((r) => r.bulkInsertPerSec) },
    { section, case: 'send(), 10,000 in one transaction: delivered to a consumer', unit: 'rec/s', values: col((r) => r.bulkDeliveredPerSec) },
    { section, case: 'COMMIT → consumer receives, p50', unit: 'ms', values: col((r) => r.commitToConsumerP50) },
    { section, case: 'COMMIT → consumer receives, p99', unit: 'ms', values: col((r) => r.commitToConsumerP99) },
    { section, case: 'COMMIT of a send() transaction, p50 / p99', unit: 'ms', values: col((r) => r.sendCommitP50), note: `p99 ${runs.map((r) => r.sendCommitP99.toFixed(2)).join(', ')}` },
    { section, case: 'COMMIT of a plain INSERT transaction, p50 / p99', unit: 'ms', values: col((r) => r.insertCommitP50), note: `p99 ${runs.map((r) => r.insertCommitP99.toFixed(2)).join(', ')}` },
    { section, case: 'producer ack p99, no open sending transaction', unit: 'ms', values: col((r) => r.ackP99Alone) },
    {
      section,
      case: 'producer ack p99, a sending transaction open on the partition',
      unit: 'ms',
      values: col((r) => r.ackP99OpenTxn),
      ratios: col((r) => r.ackP99OpenTxn / r.ackP99Alone),
      ratioOf: 'of without',
      note: `produce→consume p99 ${runs.map((r) => `${r.e2eP99Alone.toFixed(1)}→${r.e2eP99OpenTxn.toFixed(1)}`).join(', ')} ms`,
    },
    {
      section,
      case: 'producer ack p99, a plain INSERT transaction open meanwhile',
      unit: 'ms',
      values: col((r) => r.ackP99OpenInsert),
      ratios: col((r) => r.ackP99OpenInsert / r.ackP99Alone),
      ratioOf: 'of without',
    },
  ];
}
