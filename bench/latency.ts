// Section 4 (latency): produce call → consumer receives, at fixed rates.
// librdkafka producer with linger.ms=0; librdkafka consumer with a long
// fetch.wait.max.ms and fetch.min.bytes=1, so each record is delivered by the
// broker waking a parked long-poll. The send time (hrtime, same process)
// travels in the first 8 bytes of each 100-byte value.
import { Broker, freePort } from './broker.js';
import { bucketsBetween, histogramBuckets, quantileMs, scrapeMetrics, shareAbove } from './histogram.js';
import { createTopic, rdConsumer, rdDisconnect, rdProducer } from './clients.js';
import { ProduceApi } from '../src/protocol/messages/index.js';
import { buildBatch } from '../src/protocol/records/index.js';
import { RawClient } from './raw.js';
import { SqlLimit } from './sql-limit.js';
import { Collector, percentileSorted, sleep, type Ctx, type Row } from './stats.js';

interface Sample {
  ackP50: number;
  ackP99: number;
  p50: number;
  p99: number;
  p999: number;
  max: number;
  received: number;
  sent: number;
}

export async function measure(bootstrap: string, topic: string, rate: number, seconds: number, tag: number): Promise<Sample> {
  const warmup = Math.ceil(rate / 2); // the first half second is not counted
  const producer = await rdProducer(bootstrap, { 'linger.ms': 0, dr_cb: true, dr_msg_cb: true, 'socket.nagle.disable': true, 'request.required.acks': -1 });
  producer.setPollInterval(1);
  const ack: number[] = [];
  producer.on('delivery-report', (err: unknown, r: { value?: Buffer }) => {
    const now = process.hrtime.bigint();
    if (!err && r.value && r.value.readUInt32BE(12) >= warmup) ack.push(Number(now - r.value.readBigUInt64BE(0)) / 1e6);
  });
  const consumer = await rdConsumer(bootstrap, { 'fetch.wait.max.ms': 5000, 'fetch.min.bytes': 1, 'socket.nagle.disable': true, 'fetch.queue.backoff.ms': 0 });
  consumer.setDefaultConsumeTimeout(1000);
  consumer.setDefaultConsumeLoopTimeoutDelay(0);
  const total = warmup + Math.round(rate * seconds);
  const lat: number[] = [];
  let received = 0;
  let resolveAll!: () => void;
  const all = new Promise<void>((r) => (resolveAll = r));
  consumer.on('data', (m: { value: Buffer }) => {
    const now = process.hrtime.bigint();
    if (m.value.length < 16 || m.value.readUInt32BE(8) !== tag) return;
    received++;
    const i = m.value.readUInt32BE(12);
    if (i >= warmup) lat.push(Number(now - m.value.readBigUInt64BE(0)) / 1e6);
    if (received >= total) resolveAll();
  });
  consumer.assign([{ topic, partition: 0, offset: 0 }]);
  consumer.consume();
  await sleep(1500); // let the consumer park its first long-poll

  const t0 = process.hrtime.bigint();
  let sent = 0;
  const deadline = Date.now() + (seconds + 5) * 1000;
  while (sent < total && Date.now() < deadline) {
    const due = Math.min(total, Math.floor((Number(process.hrtime.bigint() - t0) / 1e9) * rate) + 1);
    while (sent < due) {
      const v = Buffer.alloc(100, 0x64);
      v.writeUInt32BE(tag, 8);
      v.writeUInt32BE(sent, 12);
      v.writeBigUInt64BE(process.hrtime.bigint(), 0);
      producer.produce(topic, 0, v, null);
      sent++;
    }
    await sleep(1);
  }
  const timer = setTimeout(resolveAll, 10_000);
  await all;
  clearTimeout(timer);
  await Promise.all([rdDisconnect(producer), rdDisconnect(consumer)]);
  const s = lat.sort((a, b) => a - b);
  const a = ack.sort((x, y) => x - y);
  return {
    ackP50: percentileSorted(a, 50),
    ackP99: percentileSorted(a, 99),
    p50: percentileSorted(s, 50),
    p99: percentileSorted(s, 99),
    p999: percentileSorted(s, 99.9),
    max: s[s.length - 1] ?? NaN,
    received,
    sent,
  };
}

/**
 * One-record Produce requests (acks=-1), one connection per partition, each
 * sending the next when the previous is answered: with one partition, the
 * commit path's own latency and ceiling; with several, how far commits of
 * different partitions run side by side.
 */
async function rawSequentialProduce(port: number, topic: string, partitions: number, perPartition: number): Promise<{ p50: number; p99: number; perSec: number }> {
  const raws = await Promise.all(Array.from({ length: partitions }, () => RawClient.connect('127.0.0.1', port)));
  const lat: number[] = [];
  const t0 = performance.now();
  try {
    await Promise.all(
      raws.map(async (raw, partition) => {
        for (let i = 0; i < perPartition; i++) {
          const records = buildBatch({ records: [{ key: null, value: Buffer.alloc(100, 0x65) }] });
          const s = performance.now();
          const r = await raw.request(ProduceApi, 9, { transactionalId: null, acks: -1, timeoutMs: 30_000, topicData: [{ name: topic, partitionData: [{ index: partition, records }] }] });
          const code = r.responses[0]?.partitionResponses[0]?.errorCode;
          if (code !== 0) throw new Error(`raw produce error ${code}`);
          lat.push(performance.now() - s);
        }
      }),
    );
  } finally {
    for (const raw of raws) raw.close();
  }
  const s = lat.sort((a, b) => a - b);
  return { p50: percentileSorted(s, 50), p99: percentileSorted(s, 99), perSec: lat.length / ((performance.now() - t0) / 1000) };
}

export async function runLatency(ctx: Ctx): Promise<Row[]> {
  const col = new Collector('latency');
  // Metrics on, for the broker's own view of each run: its Produce times and PostgreSQL's commit times.
  const metricsPort = await freePort();
  const broker = await Broker.start({ PGKAFKA_METRICS_ENABLED: 'true', PGKAFKA_METRICS_HOST: '127.0.0.1', PGKAFKA_METRICS_PORT: String(metricsPort) });
  const sql = await SqlLimit.create();
  const seconds = ctx.quick ? 3 : 10;
  let tag = 1;
  try {
    for (let run = 0; run < ctx.runs; run++) {
      // The floor in the same run: the broker's append statement committed straight from one connection at 1k/s.
      const floor = await sql.commitLatency(1000, seconds);
      ctx.log(`  run ${run + 1} PostgreSQL floor 1000/s: p50 ${floor.p50.toFixed(2)} p99 ${floor.p99.toFixed(2)} p99.9 ${floor.p999.toFixed(2)} ms (${floor.commits} commits)`);
      const floorName = 'PostgreSQL floor: append statement from one connection, 1k records/s, one commit at a time';
      col.add(`${floorName}: p50`, 'ms', floor.p50, { note: 'no broker, no client' });
      col.add(`${floorName}: p99`, 'ms', floor.p99);
      col.add(`${floorName}: p99.9`, 'ms', floor.p999);
      // And from PostgreSQL's own C client, with no Node.js process in the path.
      const cFloor = await sql.pgbenchCommitLatency(1000, seconds);
      if (cFloor) {
        ctx.log(`  run ${run + 1} PostgreSQL floor by pgbench 1000/s: p50 ${cFloor.p50.toFixed(2)} p99 ${cFloor.p99.toFixed(2)} p99.9 ${cFloor.p999.toFixed(2)} ms (${cFloor.commits} commits)`);
        const cName = 'PostgreSQL floor by pgbench (C client): append statement, 1k commits/s, one record each';
        col.add(`${cName}: p50`, 'ms', cFloor.p50, { note: "timed from each commit's scheduled start" });
        col.add(`${cName}: p99`, 'ms', cFloor.p99);
        col.add(`${cName}: p99.9`, 'ms', cFloor.p999);
      }
      for (const rate of [1000, 10_000]) {
        const topic = `lat-${rate}-${run}`;
        await createTopic(broker.bootstrap, topic, 1);
        const cpu0 = broker.sample().cpuSec;
        const metrics0 = await scrapeMetrics(metricsPort);
        const t0 = performance.now();
        const s = await measure(broker.bootstrap, topic, rate, seconds, tag++);
        const cpu = ((broker.sample().cpuSec - cpu0) / ((performance.now() - t0) / 1000)) * 100;
        const metrics1 = await scrapeMetrics(metricsPort);
        const between = (metric: string, labels?: string) => bucketsBetween(histogramBuckets(metrics0, metric, labels), histogramBuckets(metrics1, metric, labels));
        const commits = between('pgkafka_produce_commit_duration_seconds');
        const produces = between('pgkafka_request_duration_seconds', 'api="Produce"');
        ctx.log(
          `  run ${run + 1} ${rate}/s: sent ${s.sent}, received ${s.received}, p50 ${s.p50.toFixed(2)} p99 ${s.p99.toFixed(2)} p99.9 ${s.p999.toFixed(2)} max ${s.max.toFixed(1)} ms, ack p50 ${s.ackP50.toFixed(2)} p99 ${s.ackP99.toFixed(2)}, broker CPU ${cpu.toFixed(0)}%; ` +
            `broker Produce p99 ${quantileMs(produces, 0.99).toFixed(2)} ms, commit p50 ${quantileMs(commits, 0.5).toFixed(2)} p99 ${quantileMs(commits, 0.99).toFixed(2)} ms, ${(shareAbove(commits, 0.003) * 100).toFixed(1)}% of ${commits.at(-1)?.[1] ?? 0} commits over 3 ms`,
        );
        const name = `${rate / 1000}k records/s, 100 B, acks=all, linger.ms=0`;
        const lost = s.received < s.sent ? { note: `${s.sent - s.received} not received` } : {};
        // At 1k/s, also as a ratio of the same run's PostgreSQL floor.
        const vsFloor = (e2e: number, f: number) => (rate === 1000 ? { ratio: e2e / f } : {});
        col.add(`${name}: p50`, 'ms', s.p50, { ...lost, ...vsFloor(s.p50, floor.p50) });
        col.add(`${name}: p99`, 'ms', s.p99, vsFloor(s.p99, floor.p99));
        col.add(`${name}: p99.9`, 'ms', s.p999);
        col.add(`${name}: produce ack p50`, 'ms', s.ackP50, { note: 'delivery report, 1 ms poll' });
        col.add(`${name}: produce ack p99`, 'ms', s.ackP99);
        col.add(`${name}: broker CPU`, '%', cpu);
        // The broker's histograms over the same run (bucket-interpolated, as Prometheus' histogram_quantile).
        col.add(`${name}: broker Produce request p99`, 'ms', quantileMs(produces, 0.99), { note: 'read → answered, /metrics' });
        col.add(`${name}: PostgreSQL append commit p50`, 'ms', quantileMs(commits, 0.5), { note: 'one per flush, /metrics' });
        col.add(`${name}: PostgreSQL append commit p99`, 'ms', quantileMs(commits, 0.99));
        col.add(`${name}: PostgreSQL append commits over 3 ms`, '%', shareAbove(commits, 0.003) * 100);
      }
    }
    for (let run = 0; run < ctx.runs; run++) {
      for (const partitions of [1, 12]) {
        const topic = `lat-raw-${partitions}-${run}`;
        await createTopic(broker.bootstrap, topic, partitions);
        const r = await rawSequentialProduce(broker.port, topic, partitions, (ctx.quick ? 500 : 3000) / partitions);
        ctx.log(`  run ${run + 1} raw sequential produce, ${partitions} partition(s): p50 ${r.p50.toFixed(2)} p99 ${r.p99.toFixed(2)} ms, ${r.perSec.toFixed(0)} requests/s`);
        const name = partitions === 1 ? 'raw Produce, 1 record/request, one at a time' : `raw Produce, ${partitions} partitions × 1 connection, 1 record/request, one at a time each`;
        col.add(`${name}: p50`, 'ms', r.p50);
        col.add(`${name}: p99`, 'ms', r.p99);
        col.add(name, 'requests/s', r.perSec, { note: partitions === 1 ? 'per-connection ceiling' : 'commits of different partitions side by side' });
      }
    }
    col.judge('1k records/s, 100 B, acks=all, linger.ms=0: p50', 'ms', '≤ 2 ms', (m) => m <= 2);
    col.judge('1k records/s, 100 B, acks=all, linger.ms=0: p99', 'ms', '≤ 5 ms', (m) => m <= 5);
  } finally {
    broker.sample();
    ctx.peakRssKiB.value = Math.max(ctx.peakRssKiB.value, broker.peakHwmKiB);
    if (broker.logTail) ctx.log(`  broker warnings: ${broker.logTail.slice(-1500)}`);
    await broker.stop();
    await sql.drop();
  }
  return col.list();
}
