// Section 1 (produce) and 2 (the limit, same run): records/s with acks=all
// through kafkajs, the node librdkafka client and kcat (C librdkafka, no
// JavaScript layer), and the same records written straight into the same table
// shape by SQL; ratios pair-wise per run.
import { Broker, pgClient } from './broker.js';
import { createTopic, produceKafkajs, produceRdkafka } from './clients.js';
import { kcatVersion, produceKcat, removeKcatInput, writeKcatInput } from './kcat.js';
import { SqlLimit } from './sql-limit.js';
import { Collector, median, type Ctx, type Row } from './stats.js';

const KEY_SIZE = 16;

async function observedBatchShape(broker: Broker, topic: string): Promise<{ records: number; bytes: number; rows: number; total: number }> {
  const c = await pgClient();
  try {
    const { rows } = await c.query(
      `SELECT avg(b.record_count)::float8 AS r, avg(b.size)::float8 AS s, count(*)::int AS n, sum(b.record_count)::int8 AS total
       FROM ${broker.schema}.batches b JOIN ${broker.schema}.topics t USING (topic_id) WHERE t.name = $1`,
      [topic],
    );
    return { records: Math.max(1, Math.round(rows[0].r ?? 1)), bytes: Math.round(rows[0].s ?? 0), rows: rows[0].n, total: Number(rows[0].total ?? 0) };
  } finally {
    await c.end();
  }
}

export async function runProduce(ctx: Ctx): Promise<Row[]> {
  const col = new Collector('produce');
  const lim = new Collector('limit');
  const broker = await Broker.start();
  const sql = await SqlLimit.create();
  const kcatVer = kcatVersion();
  if (!kcatVer) ctx.log('  kcat not runnable (set BENCH_KCAT); its cases are skipped');
  else ctx.log(`  ${kcatVer}`);
  const kcatFiles = new Map<number, string>();
  const cases = [
    { valueSize: 100, count: ctx.quick ? 20_000 : 200_000 },
    { valueSize: 1024, count: ctx.quick ? 10_000 : 100_000 },
  ];
  try {
    // kcat input files, written before anything is timed
    if (kcatVer) for (const { valueSize, count } of cases) kcatFiles.set(valueSize, writeKcatInput(count, valueSize));
    for (let run = 0; run < ctx.runs; run++) {
      for (const { valueSize, count } of cases) {
        for (const partitions of [1, 12]) {
          const name = `${valueSize}B × ${partitions}p`;
          const value = Buffer.alloc(valueSize, 0x62);
          const mb = (s: number) => (count * (valueSize + KEY_SIZE)) / 1e6 / s;

          const tk = `kjs-${valueSize}-${partitions}-${run}`;
          await createTopic(broker.bootstrap, tk, partitions);
          // one send per partition batch must stay under message.max.bytes (1 MiB): 1000 × 100 B, 800 × 1 KiB
          const k = await produceKafkajs(broker.bootstrap, tk, partitions, count, value, valueSize > 512 ? 800 : 1000);
          if (k.errors) ctx.log(`  kafkajs ${name}: ${k.errors} errors, first: ${k.firstError}`);

          const tr = `rd-${valueSize}-${partitions}-${run}`;
          await createTopic(broker.bootstrap, tr, partitions);
          const r = await produceRdkafka(broker.bootstrap, tr, partitions, count, value);
          if (r.errors) ctx.log(`  librdkafka ${name}: ${r.errors} errors, first: ${r.firstError}`);
          const shape = await observedBatchShape(broker, tr);

          // kcat: the whole process, from the pre-written file of this value size
          let kc: { seconds: number; errors: number; shape: Awaited<ReturnType<typeof observedBatchShape>> } | undefined;
          if (kcatVer) {
            const file = kcatFiles.get(valueSize)!;
            const tc = `kc-${valueSize}-${partitions}-${run}`;
            await createTopic(broker.bootstrap, tc, partitions);
            const x = await produceKcat(broker.bootstrap, tc, partitions, file);
            const cs = await observedBatchShape(broker, tc);
            const errors = Math.max(0, count - cs.total);
            if (x.code !== 0 || errors) ctx.log(`  kcat ${name}: exit ${x.code}, ${cs.total} of ${count} stored; ${x.stderr.slice(0, 500)}`);
            kc = { seconds: x.seconds, errors, shape: cs };
          }

          const l = await sql.run(partitions, count, valueSize, shape.records);
          const limitRate = count / l.seconds;
          ctx.log(
            `  run ${run + 1} ${name}: kafkajs ${(count / k.seconds).toFixed(0)}/s, librdkafka ${(count / r.seconds).toFixed(0)}/s ` +
              `(stored ${shape.rows} batches of ~${shape.records} records / ${shape.bytes} B)` +
              (kc ? `, kcat ${(count / kc.seconds).toFixed(0)}/s (${kc.shape.rows} batches of ~${kc.shape.records})` : '') +
              `, SQL limit ${limitRate.toFixed(0)}/s`,
          );
          const err = (e: number) => (e ? { note: `${e} failed deliveries` } : {});
          col.add(`kafkajs ${name}`, 'records/s', count / k.seconds, { ratio: l.seconds / k.seconds, ratioOf: 'SQL limit', ...err(k.errors) });
          col.add(`kafkajs ${name}`, 'MB/s', mb(k.seconds));
          col.add(`librdkafka ${name}`, 'records/s', count / r.seconds, { ratio: l.seconds / r.seconds, ratioOf: 'SQL limit', ...err(r.errors) });
          col.add(`librdkafka ${name}`, 'MB/s', mb(r.seconds));
          col.add(`librdkafka ${name}`, 'records/batch', shape.records, { note: 'as stored by the broker' });
          if (kc) {
            col.add(`kcat ${name}`, 'records/s', count / kc.seconds, { ratio: l.seconds / kc.seconds, ratioOf: 'SQL limit', note: 'whole process', ...err(kc.errors) });
            col.add(`kcat ${name}`, 'MB/s', mb(kc.seconds));
            col.add(`kcat ${name}`, 'records/batch', kc.shape.records, { note: 'as stored by the broker' });
          }
          lim.add(`SQL append ${name}`, 'records/s', limitRate, { note: `4 conns, ${shape.records} records (${l.batchBytes} B)/batch` });
          lim.add(`SQL append ${name}`, 'MB/s', mb(l.seconds));
        }
      }
    }
    // The target applies to the fastest librdkafka client (node binding or kcat) of each case, by median records/s.
    for (const { valueSize } of cases) {
      for (const partitions of [1, 12]) {
        const name = `${valueSize}B × ${partitions}p`;
        const candidates = [`librdkafka ${name}`, `kcat ${name}`].filter((c) => col.get(c, 'records/s'));
        const fastest = candidates.reduce((a, b) => (median(col.get(b, 'records/s')!.values) > median(col.get(a, 'records/s')!.values) ? b : a));
        const client = fastest.startsWith('kcat') ? 'kcat' : 'node librdkafka';
        col.judge(fastest, 'records/s', `≥0.8× limit (fastest librdkafka client: ${client})`, (m) => m >= 0.8, true);
        ctx.log(`  ${name}: target judged on ${client}`);
      }
    }
  } finally {
    for (const f of kcatFiles.values()) removeKcatInput(f);
    broker.sample();
    ctx.peakRssKiB.value = Math.max(ctx.peakRssKiB.value, broker.peakHwmKiB);
    col.add('broker peak RSS (VmHWM)', 'MiB', broker.peakHwmKiB / 1024);
    if (broker.logTail) ctx.log(`  broker warnings: ${broker.logTail.slice(-1500)}`);
    await broker.stop();
    await sql.drop();
  }
  return [...col.list(), ...lim.list()];
}
