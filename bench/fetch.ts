// Section 3 (fetch): a librdkafka consumer (assign() from offset 0) and kcat
// (C librdkafka, no JavaScript layer) reading N records of 100 B values through
// the broker, plus a raw Fetch loop, against the same rows read
// straight from PostgreSQL — a SELECT of the batch bytes in offset order, and
// COPY (SELECT …) TO STDOUT (FORMAT binary) through a minimal pg submittable
// (no pg-copy-streams here). Ratios pair-wise per run.
import type pg from 'pg';
import { Broker, pgClient } from './broker.js';
import { consumeRdkafka, createTopic, produceRdkafka } from './clients.js';
import { consumeKcat, kcatVersion } from './kcat.js';
import { fetchPartition, RawClient } from './raw.js';
import { Collector, median, type Ctx, type Row } from './stats.js';

/** COPY … TO STDOUT as a pg "submittable": counts the bytes of the CopyData messages. */
class CopyOut {
  bytes = 0;
  private error: Error | null = null;
  readonly done: Promise<number>;
  private resolve!: (n: number) => void;
  private reject!: (e: Error) => void;

  constructor(readonly text: string) {
    this.done = new Promise((res, rej) => {
      this.resolve = res;
      this.reject = rej;
    });
  }
  submit(connection: { query(text: string): void }): void {
    connection.query(this.text);
  }
  handleCopyData(msg: { chunk: Buffer }): void {
    this.bytes += msg.chunk.length;
  }
  handleCommandComplete(): void {}
  handleRowDescription(): void {}
  handleDataRow(): void {}
  handleEmptyQuery(): void {}
  handleError(err: Error): void {
    this.error = err;
  }
  handleReadyForQuery(): void {
    if (this.error) this.reject(this.error);
    else this.resolve(this.bytes);
  }
}

async function copyOut(c: pg.Client, text: string): Promise<number> {
  const q = new CopyOut(text);
  (c as unknown as { query(s: unknown): void }).query(q);
  return q.done;
}

const RD_CASE = 'librdkafka consumer, assign() from 0';
const KCAT_CASE = 'kcat -C -o beginning -e, 4 MiB fetch';

export async function runFetch(ctx: Ctx): Promise<Row[]> {
  const col = new Collector('fetch');
  const count = ctx.quick ? 100_000 : 1_000_000;
  const value = Buffer.alloc(100, 0x63);
  const broker = await Broker.start();
  const c = await pgClient();
  const kcatVer = kcatVersion();
  if (!kcatVer) ctx.log('  kcat not runnable (set BENCH_KCAT); its case is skipped');
  try {
    const topic = 'fetch-100b';
    await createTopic(broker.bootstrap, topic, 1);
    const p = await produceRdkafka(broker.bootstrap, topic, 1, count, value, 300_000);
    if (p.errors) throw new Error(`populating ${topic}: ${p.errors} failed deliveries (${p.firstError})`);
    const { rows: meta } = await c.query(
      `SELECT t.topic_id, count(*)::int AS batches, sum(b.record_count)::int8 AS records, sum(b.size)::int8 AS bytes
       FROM ${broker.schema}.topics t JOIN ${broker.schema}.batches b USING (topic_id) WHERE t.name = $1 GROUP BY t.topic_id`,
      [topic],
    );
    const { topic_id: topicId, batches } = meta[0];
    const storedBytes = Number(meta[0].bytes);
    ctx.log(`  populated ${count} records in ${batches} batches (${(storedBytes / 1e6).toFixed(1)} MB) at ${(count / p.seconds).toFixed(0)}/s`);
    const selectSql = `SELECT data FROM ${broker.schema}.batches WHERE topic_id = $1 AND partition = 0 ORDER BY base_offset`;
    const copySql = `COPY (SELECT data FROM ${broker.schema}.batches WHERE topic_id = '${topicId}' AND partition = 0 ORDER BY base_offset) TO STDOUT (FORMAT binary)`;

    for (let run = 0; run < ctx.runs; run++) {
      const kcpu0 = broker.sample().cpuSec;
      const k = await consumeRdkafka(broker.bootstrap, topic, [0], count);
      const kcpu = broker.sample().cpuSec - kcpu0;
      if (k.received < count) ctx.log(`  run ${run + 1}: consumer received only ${k.received} of ${count}`);

      // kcat: the whole process (start, connect, read to the end of the partition, exit)
      let kc: { seconds: number; received: number; cpu: number } | undefined;
      if (kcatVer) {
        const cpu0 = broker.sample().cpuSec;
        const x = await consumeKcat(broker.bootstrap, topic);
        kc = { seconds: x.seconds, received: x.received, cpu: broker.sample().cpuSec - cpu0 };
        if (x.code !== 0 || x.received !== count) ctx.log(`  run ${run + 1}: kcat exit ${x.code}, received ${x.received} of ${count}; ${x.stderr.slice(0, 500)}`);
      }

      // Raw Fetch loop (no record decoding): what the broker's fetch path delivers.
      const raw = await RawClient.connect('127.0.0.1', broker.port);
      let t0 = performance.now();
      const cpu0 = broker.sample().cpuSec;
      let off = 0n;
      let rawRecords = 0;
      for (let i = 0; i < 100_000 && rawRecords < count; i++) {
        const f = await fetchPartition(raw, topic, 0, off, { partitionMaxBytes: 4_194_304 });
        if (f.errorCode || f.records === 0) throw new Error(`raw fetch at ${off}: error ${f.errorCode}, ${f.records} records`);
        rawRecords += f.records;
        off = f.nextOffset;
      }
      const rawSec = (performance.now() - t0) / 1000;
      const rawCpu = broker.sample().cpuSec - cpu0;
      raw.close();

      t0 = performance.now();
      const sel = await c.query<{ data: Buffer }>(selectSql, [topicId]);
      const selSec = (performance.now() - t0) / 1000;
      const selBytes = sel.rows.reduce((n, r) => n + r.data.length, 0);
      if (selBytes !== storedBytes) throw new Error(`SELECT returned ${selBytes} bytes, stored ${storedBytes}`);

      t0 = performance.now();
      const copyBytes = await copyOut(c, copySql);
      const copySec = (performance.now() - t0) / 1000;
      if (copyBytes < storedBytes) throw new Error(`COPY returned ${copyBytes} bytes, stored ${storedBytes}`);

      const rate = k.received / k.seconds;
      ctx.log(
        `  run ${run + 1}: consumer ${rate.toFixed(0)}/s,${kc ? ` kcat ${(kc.received / kc.seconds).toFixed(0)}/s,` : ''} raw fetch ${(rawRecords / rawSec).toFixed(0)}/s, SELECT ${(count / selSec).toFixed(0)}/s, COPY binary ${(count / copySec).toFixed(0)}/s`,
      );
      col.add(RD_CASE, 'records/s', rate, {
        ratio: selSec / k.seconds,
        ratioOf: 'SELECT',
        note: `broker CPU ${((kcpu / k.seconds) * 100).toFixed(0)}%`,
      });
      col.add(RD_CASE, 'MB/s', (k.received * 116) / 1e6 / k.seconds, {
        ratio: copySec / k.seconds,
        ratioOf: 'COPY binary',
      });
      if (kc) {
        const lost = kc.received < count ? `, ${count - kc.received} not received` : '';
        col.add(KCAT_CASE, 'records/s', kc.received / kc.seconds, {
          ratio: selSec / kc.seconds,
          ratioOf: 'SELECT',
          note: `whole process, broker CPU ${((kc.cpu / kc.seconds) * 100).toFixed(0)}%${lost}`,
        });
        col.add(KCAT_CASE, 'MB/s', (kc.received * 116) / 1e6 / kc.seconds, { ratio: copySec / kc.seconds, ratioOf: 'COPY binary' });
      }
      col.add('raw Fetch v11 loop, 4 MiB/partition, no decoding', 'records/s', rawRecords / rawSec, {
        ratio: selSec / rawSec,
        ratioOf: 'SELECT',
        note: `broker CPU ${((rawCpu / rawSec) * 100).toFixed(0)}%`,
      });
      col.add('direct SELECT data ORDER BY base_offset', 'records/s', count / selSec, { note: `${batches} rows` });
      col.add('direct COPY (SELECT …) TO STDOUT binary', 'records/s', count / copySec);
    }
    // The target applies to the fastest consumer (node librdkafka or kcat), by median records/s.
    const consumers = [RD_CASE, KCAT_CASE].filter((k) => col.get(k, 'records/s'));
    const fastest = consumers.reduce((a, b) => (median(col.get(b, 'records/s')!.values) > median(col.get(a, 'records/s')!.values) ? b : a));
    const client = fastest === KCAT_CASE ? 'kcat' : 'node librdkafka';
    col.judge(fastest, 'records/s', `≥0.8× direct read (SELECT) (fastest consumer: ${client})`, (m) => m >= 0.8, true);
    ctx.log(`  fetch target judged on ${client}`);
  } finally {
    await c.end();
    broker.sample();
    ctx.peakRssKiB.value = Math.max(ctx.peakRssKiB.value, broker.peakHwmKiB);
    col.add('broker peak RSS (VmHWM)', 'MiB', broker.peakHwmKiB / 1024);
    if (broker.logTail) ctx.log(`  broker warnings: ${broker.logTail.slice(-1500)}`);
    await broker.stop();
  }
  return col.list();
}
