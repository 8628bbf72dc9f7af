// Section kafka: real Apache Kafka on the same machine, measured in the same
// runs with the same tools. Kafka's own kafka-producer-perf-test (acks=all)
// and kafka-consumer-perf-test run against pgkafka, against Kafka with its
// defaults (an acknowledged write is in the page cache, not fsynced) and
// against Kafka with flush.messages=1 (an fsync per write: pgkafka's
// durability, whose acknowledgement follows a PostgreSQL commit). pgkafka's
// figures are printed as ratios of each Kafka's, pair-wise per run.
import { kafkaClasspath, KAFKA_START_JVM, startApacheKafka, type ApacheKafka } from '../compat/support/apache-kafka.js';
import { runJavaClient } from '../compat/support/java.js';
import { run } from '../compat/support/spawn.js';
import { Broker, procSample } from './broker.js';
import { createTopic } from './clients.js';
import { Collector, type Ctx, type Row } from './stats.js';

/** The tools' JVMs, as kafka-run-class.sh starts them (a 256 MiB heap for the perf tools' scripts). */
const TOOL_JVM = ['-Xmx256m', '-XX:+UseG1GC', '-Djava.awt.headless=true'];

async function tool(mainClass: string, args: string[], timeoutMs: number): Promise<string> {
  const r = await run('java', [...TOOL_JVM, '-cp', kafkaClasspath(), mainClass, ...args], { timeoutMs });
  if (r.code !== 0 || r.timedOut) throw new Error(`${mainClass} ${r.timedOut ? 'timed out' : `exited ${r.code}`}: ${r.stderr.slice(-2000)}`);
  return r.stdout.toString('utf8');
}

/** kafka-producer-perf-test's closing line: "N records sent, X records/sec (Y MB/sec), Z ms avg latency, …". */
async function producerPerf(bootstrap: string, topic: string, count: number, recordSize: number): Promise<{ recordsPerSec: number; avgLatencyMs: number }> {
  const out = await tool(
    'org.apache.kafka.tools.ProducerPerformance',
    ['--topic', topic, '--num-records', String(count), '--record-size', String(recordSize), '--throughput', '-1', '--producer-props', `bootstrap.servers=${bootstrap}`, 'acks=all'],
    300_000,
  );
  const m = /(\d+) records sent, ([\d.]+) records\/sec \([\d.]+ MB\/sec\), ([\d.]+) ms avg latency/.exec(out.trim().split('\n').at(-1) ?? '');
  if (!m || Number(m[1]) !== count) throw new Error(`kafka-producer-perf-test: unexpected summary: ${out.slice(-500)}`);
  return { recordsPerSec: Number(m[2]), avgLatencyMs: Number(m[3]) };
}

/** kafka-consumer-perf-test's data line; fetch.nMsg.sec leaves out the group's join. */
async function consumerPerf(bootstrap: string, topic: string, count: number): Promise<number> {
  const out = await tool(
    'org.apache.kafka.tools.ConsumerPerformance',
    ['--bootstrap-server', bootstrap, '--topic', topic, '--messages', String(count), '--timeout', '60000', '--group', `perf-${topic}`],
    300_000,
  );
  const lines = out.trim().split('\n');
  const header = lines.findIndex((l) => l.includes('fetch.nMsg.sec'));
  if (header < 0 || !lines[header + 1]) throw new Error(`kafka-consumer-perf-test: unexpected output: ${out.slice(-500)}`);
  const names = lines[header]!.split(',').map((s) => s.trim());
  const values = lines[header + 1]!.split(',').map((s) => s.trim());
  const consumed = Number(values[names.indexOf('data.consumed.in.nMsg')]);
  if (consumed < count) throw new Error(`kafka-consumer-perf-test read ${consumed} of ${count} records`);
  return Number(values[names.indexOf('fetch.nMsg.sec')]);
}

function cpuSeconds(pid: number): number {
  return procSample(pid).cpuSec;
}

export async function runKafka(ctx: Ctx): Promise<Row[]> {
  const col = new Collector('kafka');
  const cases = [
    { valueSize: 100, count: ctx.quick ? 20_000 : 500_000 },
    { valueSize: 1024, count: ctx.quick ? 10_000 : 200_000 },
  ];
  const pgkafka = await Broker.start();
  const peers: { name: string; kafka: ApacheKafka }[] = [];
  try {
    peers.push({ name: 'Kafka (defaults: no fsync per write)', kafka: await startApacheKafka({}, { jvm: KAFKA_START_JVM }) });
    peers.push({ name: 'Kafka (flush.messages=1: fsync per write)', kafka: await startApacheKafka({ 'log.flush.interval.messages': 1 }, { jvm: KAFKA_START_JVM }) });
    const targets = [{ name: 'pgkafka', bootstrap: pgkafka.bootstrap, pid: pgkafka.pid }, ...peers.map((p) => ({ name: p.name, bootstrap: p.kafka.bootstrap, pid: p.kafka.pid }))];
    for (let run = 0; run < ctx.runs; run++) {
      for (const { valueSize, count } of cases) {
        for (const partitions of [1, 12]) {
          const kase = `${valueSize} B × ${partitions}p`;
          const produced = new Map<string, number>();
          const consumed = new Map<string, number>();
          for (const t of targets) {
            const topic = `perf-${valueSize}-${partitions}-${run}`;
            await createTopic(t.bootstrap, topic, partitions);
            const cpu0 = cpuSeconds(t.pid);
            const p = await producerPerf(t.bootstrap, topic, count, valueSize);
            const cpuPerRecordUs = ((cpuSeconds(t.pid) - cpu0) / count) * 1e6;
            const c = await consumerPerf(t.bootstrap, topic, count);
            produced.set(t.name, p.recordsPerSec);
            consumed.set(t.name, c);
            ctx.log(
              `  run ${run + 1} ${kase} ${t.name}: produce ${p.recordsPerSec.toFixed(0)} records/s (avg latency ${p.avgLatencyMs.toFixed(1)} ms, broker CPU ${cpuPerRecordUs.toFixed(1)} µs/record), consume ${c.toFixed(0)} records/s`,
            );
            col.add(`${t.name}: producer-perf-test acks=all, ${kase}`, 'records/s', p.recordsPerSec, { note: `avg latency ${p.avgLatencyMs.toFixed(1)} ms` });
            col.add(`${t.name}: broker CPU while producing, ${kase}`, 'µs/record', cpuPerRecordUs);
          }
          for (const peer of peers) {
            col.add(`pgkafka ÷ ${peer.name}: produce, ${kase}`, 'ratio', produced.get('pgkafka')! / produced.get(peer.name)!, {
              ratio: produced.get('pgkafka')! / produced.get(peer.name)!,
              ratioOf: 'pgkafka÷Kafka',
            });
            col.add(`pgkafka ÷ ${peer.name}: consume, ${kase}`, 'ratio', consumed.get('pgkafka')! / consumed.get(peer.name)!, {
              ratio: consumed.get('pgkafka')! / consumed.get(peer.name)!,
              ratioOf: 'pgkafka÷Kafka',
            });
          }
          for (const t of targets) col.add(`${t.name}: consumer-perf-test, ${kase}`, 'records/s', consumed.get(t.name)!);
        }
      }
    }
    // End-to-end latency at 1k records/s with Apache Kafka's Java client (its defaults: idempotent, acks=all).
    const seconds = ctx.quick ? 5 : 20;
    for (let run = 0; run < ctx.runs; run++) {
      const p99 = new Map<string, number>();
      for (const t of targets) {
        const topic = `latency-${run}`;
        await createTopic(t.bootstrap, topic, 1);
        const res = await runJavaClient(t.bootstrap, [{ id: 'latency', op: 'latency', topic, rate: 1000, seconds, valueSize: 100 }], {}, (seconds + 90) * 1000);
        const l = res.latency as { error?: string; sent: number; received: number; p50Ms: number; p99Ms: number; maxMs: number };
        if (l.error || l.received < l.sent) throw new Error(`latency run on ${t.name}: ${l.error ?? `received ${l.received} of ${l.sent}`}`);
        ctx.log(`  run ${run + 1} latency at 1k/s ${t.name}: p50 ${l.p50Ms.toFixed(2)} ms, p99 ${l.p99Ms.toFixed(2)} ms, max ${l.maxMs.toFixed(1)} ms`);
        col.add(`${t.name}: end-to-end latency p50, Java client at 1k records/s, 100 B`, 'ms', l.p50Ms);
        col.add(`${t.name}: end-to-end latency p99, Java client at 1k records/s, 100 B`, 'ms', l.p99Ms);
        p99.set(t.name, l.p99Ms);
      }
      for (const peer of peers) {
        const ratio = p99.get('pgkafka')! / p99.get(peer.name)!;
        col.add(`pgkafka ÷ ${peer.name}: latency p99 at 1k records/s`, 'ratio', ratio, { ratio, ratioOf: 'pgkafka÷Kafka' });
      }
    }
    // The brief's target: as fast as Kafka on the same machine at the same durability.
    for (const { valueSize } of cases) {
      for (const partitions of [1, 12]) {
        col.judge(`pgkafka ÷ ${peers[1]!.name}: produce, ${valueSize} B × ${partitions}p`, 'ratio', 'pgkafka ≥ 1× Kafka at the same durability', (m) => m >= 1, true);
      }
    }
  } finally {
    pgkafka.sample();
    ctx.peakRssKiB.value = Math.max(ctx.peakRssKiB.value, pgkafka.peakHwmKiB);
    await pgkafka.stop();
    for (const p of peers) await p.kafka.stop();
  }
  return col.list();
}
