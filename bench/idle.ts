// Section 5 (idle): N consumers long-polling empty partitions (raw Fetch v11,
// max_wait_ms 500, min_bytes 1, one connection each: the broker serves one
// request at a time per connection, so pipelined long-polls would queue) for a
// window; PostgreSQL queries per second and broker CPU during it, with 0
// consumers as the housekeeping baseline.
import { Broker, pgClient } from './broker.js';
import { createTopic } from './clients.js';
import { fetchPartition, RawClient } from './raw.js';
import { Collector, sleep, type Ctx, type Row } from './stats.js';

interface Counters {
  xact: number;
  scans: number;
  statements: number | null;
}

async function counters(schema: string, statements: boolean): Promise<Counters> {
  const c = await pgClient();
  try {
    const x = await c.query(`SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = current_database()`);
    const t = await c.query(`SELECT coalesce(sum(coalesce(seq_scan, 0) + coalesce(idx_scan, 0)), 0)::int8 AS n FROM pg_stat_user_tables WHERE schemaname = $1`, [schema]);
    let st: number | null = null;
    if (statements) {
      const s = await c.query(`SELECT coalesce(sum(calls), 0)::int8 AS n FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`);
      st = Number(s.rows[0].n);
    }
    return { xact: Number(x.rows[0].n), scans: Number(t.rows[0].n), statements: st };
  } finally {
    await c.end();
  }
}

async function hasPgStatStatements(): Promise<boolean> {
  const c = await pgClient();
  try {
    const { rows } = await c.query(`SELECT current_setting('shared_preload_libraries') AS l`);
    if (!String(rows[0].l).includes('pg_stat_statements')) return false;
    await c.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    return true;
  } catch {
    return false;
  } finally {
    await c.end();
  }
}

export async function runIdle(ctx: Ctx): Promise<Row[]> {
  const col = new Collector('idle');
  const consumers = 500;
  const connections = consumers;
  const windowSec = ctx.quick ? 5 : 20;
  const settleMs = ctx.quick ? 2000 : 11_000; // PG 15 backends flush pending stats within ~10 s when idle
  const statements = await hasPgStatStatements();
  ctx.log(`  query counter: ${statements ? 'pg_stat_statements calls' : 'pg_stat_database xact deltas (whole database) + table scans in the broker schema'}`);
  const broker = await Broker.start({ PGKAFKA_LOG_LEVEL: 'info' });
  try {
    await createTopic(broker.bootstrap, 'idle', consumers);
    const window = async (label: string, n: number, run: number) => {
      await sleep(settleMs);
      const c0 = await counters(broker.schema, statements);
      const cpu0 = broker.sample().cpuSec;
      const t0 = performance.now();
      await sleep(windowSec * 1000);
      const sec = (performance.now() - t0) / 1000;
      const c1 = await counters(broker.schema, statements);
      const cpu = ((broker.sample().cpuSec - cpu0) / sec) * 100;
      // the two counter snapshots themselves commit 2 transactions (not subtracted: tiny)
      const xps = (c1.xact - c0.xact) / sec;
      const sps = (c1.scans - c0.scans) / sec;
      const qps = statements ? (c1.statements! - c0.statements!) / sec : xps;
      ctx.log(`  run ${run + 1} ${label}: ${qps.toFixed(2)} queries/s, ${sps.toFixed(2)} scans/s of broker tables, broker CPU ${cpu.toFixed(1)}%`);
      col.add(`${label}: PostgreSQL queries`, 'queries/s', qps, { note: statements ? 'pg_stat_statements' : 'xact commits, whole db' });
      col.add(`${label}: scans of broker tables`, 'scans/s', sps, { note: 'pg_stat_user_tables' });
      col.add(`${label}: broker CPU`, '%', cpu);
      return { qps, sps };
    };
    for (let run = 0; run < ctx.runs; run++) {
      const w0 = await window('0 consumers (housekeeping)', 0, run);
      // start the long-pollers
      const clients = await Promise.all(Array.from({ length: connections }, () => RawClient.connect('127.0.0.1', broker.port)));
      let stop = false;
      let polls = 0;
      let errors = 0;
      const stopAt = Date.now() + settleMs + windowSec * 1000 + 30_000; // hard bound
      const pollers = Array.from({ length: consumers }, async (_, p) => {
        const c = clients[p % connections]!;
        while (!stop && Date.now() < stopAt) {
          try {
            const f = await fetchPartition(c, 'idle', p, 0n, { maxWaitMs: 500, minBytes: 1, timeoutMs: 10_000 });
            if (f.errorCode) errors++;
            polls++;
          } catch {
            errors++;
            await sleep(100);
          }
        }
      });
      const polls0 = polls;
      const t0 = performance.now();
      const w1 = await window(`${consumers} consumers long-polling`, consumers, run);
      const pollRate = (polls - polls0) / ((performance.now() - t0) / 1000);
      stop = true;
      await Promise.all(pollers);
      for (const c of clients) c.close();
      ctx.log(`    ${pollRate.toFixed(0)} Fetch responses/s (${errors} errors); extra queries/s vs baseline ${(w1.qps - w0.qps).toFixed(2)}, extra scans/s ${(w1.sps - w0.sps).toFixed(2)}`);
      col.add(`${consumers} consumers long-polling: Fetch responses`, 'responses/s', pollRate, { note: errors ? `${errors} errors` : 'max_wait 500 ms' });
      col.add(`${consumers} consumers: extra queries vs 0 consumers`, 'queries/s', w1.qps - w0.qps, { note: statements ? '' : 'whole db: other sessions count too' });
      col.add(`${consumers} consumers: extra scans of broker tables vs 0 consumers`, 'scans/s', w1.sps - w0.sps);
    }
    // pg_stat_database counts every session of the database (other test suites too); the broker-schema
    // table scans are the broker's alone, so they decide unless pg_stat_statements is available.
    if (statements) col.judge(`${consumers} consumers: extra queries vs 0 consumers`, 'queries/s', 'independent of consumers (< 1/s extra)', (m) => m < 1);
    else col.judge(`${consumers} consumers: extra scans of broker tables vs 0 consumers`, 'scans/s', 'independent of consumers (< 1/s extra)', (m) => m < 1);
  } finally {
    broker.sample();
    ctx.peakRssKiB.value = Math.max(ctx.peakRssKiB.value, broker.peakHwmKiB);
    if (broker.logTail) ctx.log(`  broker warnings: ${broker.logTail.slice(-1500)}`);
    await broker.stop();
  }
  return col.list();
}
