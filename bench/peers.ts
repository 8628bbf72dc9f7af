// Section 7 (peers): Redis Streams and NATS JetStream with the same record
// counts and sizes, beside pgkafka's librdkafka produce (and consume) measured
// in the same run. Durability differs and is printed: the machine's Redis runs
// with appendonly no (acknowledged writes are not durable), so a second Redis
// is started for the run with appendonly yes and appendfsync always (an
// acknowledged XADD is in an fsynced AOF, as a pgkafka ack is in a committed
// WAL); JetStream file storage syncs per its defaults (sync_interval 2 min:
// acknowledged ≠ fsynced); pgkafka acknowledges after a PostgreSQL commit
// with synchronous_commit=on.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { AckPolicy, connect, StorageType } from 'nats';
import { Broker, freePort } from './broker.js';
import { consumeRdkafka, createTopic, KEYS, produceRdkafka } from './clients.js';
import { Collector, sleep, type Ctx, type Row } from './stats.js';

/** A Redis of our own for the run, durable as a pgkafka ack is: AOF on, fsync before every reply. */
async function startDurableRedis(): Promise<{ port: number; stop: () => Promise<void> }> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'pgkafka-bench-redis-'));
  const child: ChildProcess = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'yes', '--appendfsync', 'always', '--dir', dir], { stdio: 'ignore' });
  const stop = async () => {
    if (child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  for (let i = 0; i < 100; i++) {
    const r = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    try {
      await r.connect();
      await r.ping();
      r.disconnect();
      return { port, stop };
    } catch {
      r.disconnect();
      await sleep(100);
    }
  }
  await stop();
  throw new Error('redis-server (durable) did not start');
}

async function redisRun(count: number, value: Buffer, port = 6379): Promise<{ write: number; read: number; durability: string }> {
  const r = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 2 });
  await r.connect();
  const key = `bench:${Date.now()}:${Math.random().toString(36).slice(2)}`;
  try {
    const aof = ((await r.config('GET', 'appendonly')) as string[])[1];
    const fsync = ((await r.config('GET', 'appendfsync')) as string[])[1];
    let t0 = performance.now();
    const per = 1000;
    const inFlight = 4;
    let next = 0;
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (next < count) {
          const start = next;
          const n = Math.min(per, count - start);
          next += n;
          const p = r.pipeline();
          for (let i = 0; i < n; i++) p.xadd(key, '*', 'k', KEYS[(start + i) & 1023]!, 'v', value);
          const res = await p.exec();
          if (res?.some(([e]) => e)) throw new Error('XADD failed');
        }
      }),
    );
    const write = count / ((performance.now() - t0) / 1000);
    await r.xgroup('CREATE', key, 'g', '0');
    t0 = performance.now();
    let got = 0;
    for (let i = 0; i < count && got < count; i++) {
      const res = (await r.xreadgroupBuffer('GROUP', 'g', 'c', 'COUNT', 1000, 'NOACK', 'STREAMS', key, '>')) as [Buffer, [Buffer, Buffer[]][]][] | null;
      if (!res) break;
      got += res[0]![1].length;
    }
    if (got < count) throw new Error(`XREADGROUP read ${got} of ${count}`);
    const read = count / ((performance.now() - t0) / 1000);
    return { write, read, durability: `appendonly ${aof}${aof === 'no' ? ': NOT durable' : `, appendfsync ${fsync}`}` };
  } finally {
    await r.del(key).catch(() => 0);
    r.disconnect();
  }
}

async function natsRun(count: number, value: Buffer): Promise<{ write: number; read: number; durability: string }> {
  const nc = await connect({ servers: '127.0.0.1:4222', timeout: 5000 });
  const jsm = await nc.jetstreamManager();
  const js = nc.jetstream();
  const stream = `BENCH_${Date.now()}_${Math.random().toString(36).slice(2, 8)}`.toUpperCase();
  const subject = `bench.${stream.toLowerCase()}`;
  try {
    await jsm.streams.add({ name: stream, subjects: [subject], storage: StorageType.File });
    let t0 = performance.now();
    const window = 1000;
    for (let i = 0; i < count; i += window) {
      const n = Math.min(window, count - i);
      await Promise.all(Array.from({ length: n }, () => js.publish(subject, value)));
    }
    const write = count / ((performance.now() - t0) / 1000);
    await jsm.consumers.add(stream, { durable_name: 'c', ack_policy: AckPolicy.None });
    const consumer = await js.consumers.get(stream, 'c');
    t0 = performance.now();
    let got = 0;
    for (let i = 0; i < count && got < count; i++) {
      const before = got;
      const iter = await consumer.fetch({ max_messages: 1000, expires: 5000 });
      for await (const m of iter) {
        void m;
        got++;
      }
      if (got === before) break;
    }
    if (got < count) throw new Error(`JetStream pull read ${got} of ${count}`);
    const read = count / ((performance.now() - t0) / 1000);
    return { write, read, durability: 'file storage, default sync (not fsync per ack)' };
  } finally {
    await jsm.streams.delete(stream).catch(() => false);
    await nc.close();
  }
}

export async function runPeers(ctx: Ctx): Promise<Row[]> {
  const col = new Collector('peers');
  const cases = [
    { valueSize: 100, count: ctx.quick ? 20_000 : 200_000 },
    { valueSize: 1024, count: ctx.quick ? 10_000 : 100_000 },
  ];
  const broker = await Broker.start();
  const durableRedis = await startDurableRedis();
  try {
    for (let run = 0; run < ctx.runs; run++) {
      for (const { valueSize, count } of cases) {
        const value = Buffer.alloc(valueSize, 0x67);
        const topic = `peer-${valueSize}-${run}`;
        await createTopic(broker.bootstrap, topic, 1);
        const pk = await produceRdkafka(broker.bootstrap, topic, 1, count, value);
        const pkWrite = count / pk.seconds;
        const pkc = await consumeRdkafka(broker.bootstrap, topic, [0], count);
        const pkRead = pkc.received / pkc.seconds;
        const rd = await redisRun(count, value);
        const rdDurable = await redisRun(count, value, durableRedis.port);
        const na = await natsRun(count, value);
        ctx.log(
          `  run ${run + 1} ${valueSize} B: pgkafka ${pkWrite.toFixed(0)}/${pkRead.toFixed(0)}, Redis ${rd.write.toFixed(0)}/${rd.read.toFixed(0)}, Redis durable ${rdDurable.write.toFixed(0)}/${rdDurable.read.toFixed(0)}, NATS ${na.write.toFixed(0)}/${na.read.toFixed(0)} records/s (write/read)`,
        );
        const c = `${valueSize} B, 1 partition/stream`;
        col.add(`pgkafka librdkafka produce, ${c}`, 'records/s', pkWrite, { note: 'acks=all, PG commit, fsync on' });
        col.add(`Redis XADD pipelined, ${c}`, 'records/s', rd.write, { ratio: pkWrite / rd.write, ratioOf: 'pgkafka÷this', note: rd.durability });
        col.add(`Redis XADD pipelined, durable (own instance), ${c}`, 'records/s', rdDurable.write, { ratio: pkWrite / rdDurable.write, ratioOf: 'pgkafka÷this', note: rdDurable.durability });
        col.add(`JetStream publish, 1000-ack windows, ${c}`, 'records/s', na.write, { ratio: pkWrite / na.write, ratioOf: 'pgkafka÷this', note: na.durability });
        col.add(`pgkafka librdkafka consume, ${c}`, 'records/s', pkRead);
        col.add(`Redis XREADGROUP COUNT 1000 NOACK, ${c}`, 'records/s', rd.read, { ratio: pkRead / rd.read, ratioOf: 'pgkafka÷this' });
        col.add(`JetStream pull fetch 1000, ack none, ${c}`, 'records/s', na.read, { ratio: pkRead / na.read, ratioOf: 'pgkafka÷this' });
      }
    }
    // The issue's target: ahead on durable produce of 1 KiB records (JetStream's acks are not fsynced here, so ahead of it a fortiori).
    col.judge('Redis XADD pipelined, durable (own instance), 1024 B, 1 partition/stream', 'records/s', 'pgkafka ahead (ratio > 1)', (m) => m > 1, true);
    col.judge('JetStream publish, 1000-ack windows, 1024 B, 1 partition/stream', 'records/s', 'pgkafka ahead (ratio > 1)', (m) => m > 1, true);
  } finally {
    broker.sample();
    ctx.peakRssKiB.value = Math.max(ctx.peakRssKiB.value, broker.peakHwmKiB);
    if (broker.logTail) ctx.log(`  broker warnings: ${broker.logTail.slice(-1500)}`);
    await broker.stop();
    await durableRedis.stop();
  }
  return col.list();
}
