// Section `cluster`: produce and fetch throughput with 1, 2 and 3 broker
// processes on one schema, the same load each time (12 partitions, so 12, 6
// or 4 led by each broker), to show what scaling the brokers out buys and
// where PostgreSQL becomes the limit. Each broker count gets a fresh schema;
// the counts run in turns within each run (1, 2, 3, then 3, 2, 1, …) and the
// ratios 2/1 and 3/1 are pair-wise per run. The load is kcat (C librdkafka:
// the client that costs the machine least per record, and which sends each
// partition's requests to its leader as Metadata names it); the node
// librdkafka client stands in when kcat cannot run. The brokers' fetch cache
// is off, so every Fetch reads PostgreSQL (a consumer catching up) whatever
// the brokers' memory adds up to. CPU per process from /proc: the brokers,
// their PostgreSQL sessions, the whole PostgreSQL server and the machine.
import { readdirSync, readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import type pg from 'pg';
import { Broker, CLK_TCK, pgClient, procStat, randomName } from './broker.js';
import { consumeRdkafka, createTopic, produceRdkafka } from './clients.js';
import { consumeKcat, kcatVersion, produceKcat, removeKcatInput, writeKcatInput } from './kcat.js';
import { Collector, fmt, median, sleep, type Ctx, type Row } from './stats.js';

const PARTITIONS = 12;
const BROKER_COUNTS = [1, 2, 3];
const KEY_SIZE = 16;

/** CPU seconds of every live child of `parent`, by pid. */
function childrenCpu(parent: number): Map<number, number> {
  const out = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const { ppid, cpuSec } = procStat(Number(entry));
      if (ppid === parent) out.set(Number(entry), cpuSec);
    } catch {
      /* gone meanwhile */
    }
  }
  return out;
}

/** Busy CPU seconds of the whole machine (all cores), from /proc/stat. */
function machineBusySec(): number {
  const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/);
  const t = ticks.map(Number);
  // user nice system idle iowait irq softirq steal
  return (t.slice(0, 8).reduce((a, b) => a + b, 0) - t[3]! - t[4]!) / CLK_TCK;
}

/** CPU (in % of one core) over an interval, per kind of process. */
interface CpuShare {
  brokers: number;
  /** The brokers' own PostgreSQL sessions (application_name `pgkafka <instance>`). */
  sessions: number;
  /** Every process of the PostgreSQL server (its other users' work included). */
  server: number;
  machine: number;
}

/** Samples CPU before and after a measurement. */
class CpuMeter {
  private constructor(
    private readonly db: pg.Client,
    private readonly postmaster: number,
  ) {}

  static async create(db: pg.Client): Promise<CpuMeter | undefined> {
    // The server's processes are the children of the postmaster, the parent of this session's backend (when it runs here).
    const { rows } = await db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    const pid = rows[0]!.pid;
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'postgres') return new CpuMeter(db, procStat(pid).ppid);
    } catch {
      /* no such process here */
    }
    return undefined; // PostgreSQL on another machine
  }

  async measure<T>(schema: string, brokers: Broker[], work: () => Promise<T>): Promise<{ result: T; cpu: CpuShare }> {
    const brokers0 = brokers.reduce((n, b) => n + b.sample().cpuSec, 0);
    const server0 = childrenCpu(this.postmaster);
    const machine0 = machineBusySec();
    const t0 = performance.now();
    const result = await work();
    const seconds = (performance.now() - t0) / 1000;
    const server1 = childrenCpu(this.postmaster);
    const machine1 = machineBusySec();
    const brokers1 = brokers.reduce((n, b) => n + b.sample().cpuSec, 0);
    const { rows } = await this.db.query<{ pid: number }>(`SELECT a.pid FROM pg_stat_activity a JOIN ${schema}.brokers b ON a.application_name = 'pgkafka ' || b.instance_id::text`);
    const delta = (pid: number) => server1.get(pid)! - (server0.get(pid) ?? 0);
    const pct = (sec: number) => (sec / seconds) * 100;
    return {
      result,
      cpu: {
        brokers: pct(brokers1 - brokers0),
        sessions: pct(rows.filter((r) => server1.has(r.pid)).reduce((n, r) => n + delta(r.pid), 0)),
        server: pct([...server1.keys()].reduce((n, pid) => n + delta(pid), 0)),
        machine: pct(machine1 - machine0),
      },
    };
  }
}

/** N brokers on one fresh schema, node ids 1..N; the first alone creates the schema. */
async function startCluster(n: number): Promise<{ schema: string; brokers: Broker[] }> {
  const schema = randomName('bench');
  // PGKAFKA_FETCH_CACHE_MAX_BYTES 0: every Fetch reads PostgreSQL, whatever the brokers' memory adds up to.
  const env = (node: number) => ({ PGKAFKA_SCHEMA: schema, PGKAFKA_NODE_ID: String(node), PGKAFKA_FETCH_CACHE_MAX_BYTES: '0' });
  const brokers = [await Broker.start(env(1))];
  const rest = await Promise.allSettled(BROKER_COUNTS.slice(1, n).map((node) => Broker.start(env(node))));
  for (const r of rest) if (r.status === 'fulfilled') brokers.push(r.value);
  const failed = rest.find((r) => r.status === 'rejected');
  if (failed) {
    await stopCluster(brokers);
    throw (failed as PromiseRejectedResult).reason;
  }
  return { schema, brokers };
}

async function stopCluster(brokers: Broker[]): Promise<void> {
  // All but the last keep the schema: the last one to stop drops it.
  await Promise.all(brokers.slice(0, -1).map((b) => b.stop(true)));
  await brokers[brokers.length - 1]?.stop();
}

/** Waits until the topic's partitions are led by all `n` brokers, evenly, then a probe more (every broker's Metadata then names the leaders). */
async function spreadLeaders(db: pg.Client, schema: string, topic: string, n: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { rows } = await db.query<{ node: number; led: number }>(
      `SELECT p.leader_node_id AS node, count(*)::int AS led FROM ${schema}.partitions p JOIN ${schema}.topics t USING (topic_id)
       WHERE t.name = $1 AND p.leader_instance <> '' GROUP BY 1`,
      [topic],
    );
    if (rows.length === n && rows.every((r) => r.led === PARTITIONS / n)) break;
    if (Date.now() > deadline) throw new Error(`${topic}: leaders not spread over ${n} brokers: ${JSON.stringify(rows)}`);
    await sleep(200);
  }
  await sleep(1500);
}

/** Records stored in the topic, and how many per stored batch on average. */
async function stored(db: pg.Client, schema: string, topic: string): Promise<{ records: number; perBatch: number }> {
  const { rows } = await db.query<{ n: string | null; avg: number | null }>(
    `SELECT sum(b.record_count)::int8 AS n, avg(b.record_count)::float8 AS avg FROM ${schema}.batches b JOIN ${schema}.topics t USING (topic_id) WHERE t.name = $1`,
    [topic],
  );
  return { records: Number(rows[0]!.n ?? 0), perBatch: rows[0]!.avg ?? 0 };
}

export async function runCluster(ctx: Ctx): Promise<Row[]> {
  const col = new Collector('cluster');
  const load = new Collector('cluster');
  const kcatVer = kcatVersion();
  const client = kcatVer ? 'kcat' : 'librdkafka';
  ctx.log(kcatVer ? `  ${kcatVer}` : '  kcat not runnable (set BENCH_KCAT): the node librdkafka client drives the load');
  const cases = [
    { valueSize: 100, count: ctx.quick ? 50_000 : 200_000 },
    { valueSize: 1024, count: ctx.quick ? 20_000 : 50_000 },
  ];
  const files = new Map<number, string>();
  const db = await pgClient();
  const meter = await CpuMeter.create(db);
  if (!meter) ctx.log('  PostgreSQL is not a process of this machine: no CPU figures for it');
  /** CPU per row, per run, to print as the row's note. */
  const cpuOf = new Map<string, CpuShare[]>();
  /** The same per record, split between the brokers and their PostgreSQL sessions. */
  const cpuPerRecord = new Map<string, { brokers: number; pg: number }[]>();
  try {
    if (kcatVer) for (const { valueSize, count } of cases) files.set(valueSize, writeKcatInput(count, valueSize));
    for (let run = 0; run < ctx.runs; run++) {
      const order = run % 2 ? [...BROKER_COUNTS].reverse() : BROKER_COUNTS;
      /** records/s per row of this run, and the row of 1 broker it compares with. */
      const rates = new Map<string, { rate: number; one: string }>();
      for (const n of order) {
        load.add('machine load average (1 min) as each broker count starts', '', loadavg()[0]!, { note: `${cpus().length} cores; others' work included` });
        const { schema, brokers } = await startCluster(n);
        const bootstrap = brokers[0]!.bootstrap;
        try {
          for (const { valueSize, count } of cases) {
            const size = valueSize >= 1024 ? `${valueSize / 1024} KiB` : `${valueSize} B`;
            const topic = `cluster-${valueSize}`;
            await createTopic(bootstrap, topic, PARTITIONS);
            await spreadLeaders(db, schema, topic, n);

            const timed = async <T>(work: () => Promise<T>) => (meter ? meter.measure(schema, brokers, work) : { result: await work(), cpu: undefined });
            const produced = await timed<{ seconds: number; stderr?: string }>(() =>
              kcatVer ? produceKcat(bootstrap, topic, PARTITIONS, files.get(valueSize)!) : produceRdkafka(bootstrap, topic, PARTITIONS, count, Buffer.alloc(valueSize, 0x62)),
            );
            const { records: storedCount, perBatch } = await stored(db, schema, topic);
            if (storedCount !== count) ctx.log(`  ${n} broker(s) ${size}: ${storedCount} of ${count} records stored; ${produced.result.stderr?.slice(0, 300) ?? ''}`);
            const fetched = await timed(async () => {
              if (kcatVer) return consumeKcat(bootstrap, topic);
              const r = await consumeRdkafka(bootstrap, topic, [...Array(PARTITIONS).keys()], count);
              return { ...r, code: 0, stderr: '' };
            });
            if (fetched.result.received !== storedCount) ctx.log(`  ${n} broker(s) ${size}: fetched ${fetched.result.received} of ${storedCount}; ${fetched.result.stderr.slice(0, 300)}`);

            const brokersLabel = `${n} broker${n > 1 ? 's' : ''}`;
            for (const [op, seconds, records, cpu] of [
              ['produce', produced.result.seconds, storedCount, produced.cpu],
              ['fetch', fetched.result.seconds, fetched.result.received, fetched.cpu],
            ] as const) {
              const caseOf = (label: string) => `${op} ${size} × ${PARTITIONS}p, ${label}`;
              const kase = caseOf(brokersLabel);
              const rate = records / seconds;
              rates.set(kase, { rate, one: caseOf('1 broker') });
              col.add(kase, 'records/s', rate);
              col.add(kase, 'MB/s', (records * (valueSize + KEY_SIZE)) / 1e6 / seconds);
              if (op === 'produce') col.add(kase, 'records/batch', perBatch, { note: 'as stored' });
              if (cpu) {
                cpuOf.set(kase, [...(cpuOf.get(kase) ?? []), cpu]);
                // What a record costs, whatever share of the machine the run got: CPU seconds over the records.
                const perRecord = (pct: number) => ((pct / 100) * seconds * 1e6) / records;
                col.add(kase, 'CPU µs/record', perRecord(cpu.brokers + cpu.sessions));
                (cpuPerRecord.get(kase) ?? cpuPerRecord.set(kase, []).get(kase)!).push({ brokers: perRecord(cpu.brokers), pg: perRecord(cpu.sessions) });
              }
              ctx.log(
                `  run ${run + 1} ${kase}: ${rate.toFixed(0)} records/s` +
                  (cpu
                    ? ` (CPU % of a core: brokers ${cpu.brokers.toFixed(0)}, their PG sessions ${cpu.sessions.toFixed(0)}, all PG ${cpu.server.toFixed(0)}, machine ${cpu.machine.toFixed(0)})`
                    : ''),
              );
            }
          }
        } finally {
          for (const b of brokers) if (b.logTail) ctx.log(`  broker warnings (${n} brokers): ${b.logTail.slice(-1000)}`);
          await stopCluster(brokers);
          for (const b of brokers) ctx.peakRssKiB.value = Math.max(ctx.peakRssKiB.value, b.peakHwmKiB);
        }
      }
      // Ratios pair-wise within the run, once every broker count has run (1 broker runs last in reversed turns).
      for (const [kase, { rate, one }] of rates) {
        if (kase === one) continue;
        const ratio = rate / rates.get(one)!.rate;
        for (const unit of ['records/s', 'MB/s']) {
          const row = col.get(kase, unit)!;
          (row.ratios ??= []).push(ratio);
          row.ratioOf = 'of 1 broker';
        }
      }
    }
    for (const row of col.list()) {
      const split = cpuPerRecord.get(row.case);
      if (split && row.unit === 'CPU µs/record') {
        row.note = `brokers ${fmt(median(split.map((c) => c.brokers)))} + their PG sessions ${fmt(median(split.map((c) => c.pg)))}`;
      }
      const cpu = cpuOf.get(row.case);
      if (!cpu || row.unit !== 'records/s') continue;
      const med = (k: keyof CpuShare) => median(cpu.map((c) => c[k])).toFixed(0);
      row.note = `${client}; CPU % (of one core): brokers ${med('brokers')}, their PG sessions ${med('sessions')}, all PG ${med('server')}, machine ${med('machine')} of ${cpus().length * 100}`;
    }
  } finally {
    for (const f of files.values()) removeKcatInput(f);
    await db.end();
  }
  // Rows grouped by case, broker counts in order, whatever order they ran in.
  const group = (r: Row) => r.case.replace(/, \d brokers?$/, '');
  const groups = [...new Set(col.list().map(group))];
  const key = (r: Row) => groups.indexOf(group(r)) * 10 + Number(/(\d) brokers?$/.exec(r.case)?.[1] ?? 0);
  return [...col.list().sort((a, b) => key(a) - key(b)), ...load.list()];
}
