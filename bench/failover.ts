// Coordinator failover as a consumer group sees it: two brokers on one
// schema, a group of two members (kafkajs or librdkafka) coordinated by the
// second broker, records produced to every partition all along. The second
// broker is killed with SIGKILL and started again `--restart-after` ms later
// (as a supervisor would); the run then follows the group's commits and its
// slot's holder for `--observe` ms. Printed per run: kill → first commit
// after it, kill → every partition committed again, the slot's moves, the
// longest any partition went without a commit, and the generations gone
// through. Not part of `npm run bench` (a run takes over a minute).
//
//   npx tsx bench/failover.ts [--client kafkajs|librdkafka|both] [--runs 1]
//                             [--restart-after 10000] [--observe 60000]
import { createRequire } from 'node:module';
import { Kafka, logLevel } from 'kafkajs';
import { desiredOwner, slotOf } from '../src/coordinator/coordination.js';
import { spawnBroker, type BrokerProcess } from '../test/support/broker-process.js';
import { DATABASE_URL, dropSchema, freePort, pgClient, randomName } from './broker.js';
import { sleep, withTimeout } from './stats.js';

const require = createRequire(import.meta.url);
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const rdkafka: any = require('@confluentinc/kafka-javascript');

const PARTITIONS = 6;
const TOPIC = 'failover';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : fallback;
}

interface Member {
  stop(): Promise<void>;
}

function kafkajsMember(bootstrap: string[], groupId: string, i: number): Promise<Member> {
  const consumer = new Kafka({ clientId: `failover-kafkajs-${i}`, brokers: bootstrap, logLevel: logLevel.NOTHING }).consumer({
    groupId,
    sessionTimeout: 10_000,
    rebalanceTimeout: 10_000,
    heartbeatInterval: 1000,
    maxWaitTimeInMs: 200,
  });
  return (async () => {
    await consumer.connect();
    await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
    await consumer.run({ autoCommitInterval: 1000, eachMessage: async () => {} });
    return { stop: () => consumer.disconnect() };
  })();
}

function librdkafkaMember(bootstrap: string[], groupId: string, i: number): Promise<Member> {
  const c = new rdkafka.KafkaConsumer(
    {
      'metadata.broker.list': bootstrap.join(','),
      'client.id': `failover-librdkafka-${i}`,
      'group.id': groupId,
      'session.timeout.ms': 10_000,
      'heartbeat.interval.ms': 1000,
      'enable.auto.commit': true,
      'auto.commit.interval.ms': 1000,
      'fetch.wait.max.ms': 200,
    },
    { 'auto.offset.reset': 'earliest' },
  );
  return new Promise((resolve, reject) => {
    c.connect({ timeout: 20_000 }, (err: unknown) => {
      if (err) return reject(err);
      c.subscribe([TOPIC]);
      c.consume();
      resolve({ stop: () => new Promise<void>((r) => c.disconnect(() => r())) });
    });
    c.on('data', () => {});
    c.on('event.error', () => {});
  });
}

interface Sample {
  /** ms since the kill, by the database's clock */
  at: number;
  commits: Map<number, number>;
  holder: string;
  generation: number;
}

async function run(client: 'kafkajs' | 'librdkafka', restartAfterMs: number, observeMs: number) {
  const schema = randomName('failover');
  const ports = [await freePort(), await freePort()];
  const env = (node: number) => ({
    DATABASE_URL,
    PGKAFKA_SCHEMA: schema,
    PGKAFKA_NODE_ID: String(node),
    PGKAFKA_PORT: String(ports[node - 1]),
    PGKAFKA_METRICS_ENABLED: 'false',
  });
  // Started one after the other: the first creates the schema.
  const brokers: BrokerProcess[] = [await spawnBroker(env(1)), await spawnBroker(env(2))];
  const bootstrap = ports.map((p) => `127.0.0.1:${p}`);
  const db = await pgClient();
  await db.query(`SET search_path TO ${schema}`);
  const members: Member[] = [];
  let producing = true;
  let producerLoop: Promise<void> = Promise.resolve();
  try {
    const kafka = new Kafka({ clientId: 'failover-admin', brokers: bootstrap, logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: PARTITIONS }] });
    await admin.disconnect();
    let n = 0;
    while (desiredOwner(slotOf(`failover-${client}-${n}`), [1, 2]) !== 2) n++;
    const groupId = `failover-${client}-${n}`;
    const slot = slotOf(groupId);

    const producer = kafka.producer();
    await producer.connect();
    producerLoop = (async () => {
      while (producing) {
        await producer.send({ topic: TOPIC, messages: Array.from({ length: PARTITIONS }, (_, partition) => ({ partition, value: 'x' })) }).catch(() => {});
        await sleep(100);
      }
      await producer.disconnect();
    })();

    for (let i = 0; i < 2; i++) members.push(await (client === 'kafkajs' ? kafkajsMember : librdkafkaMember)(bootstrap, groupId, i));

    const read = async (since: Date): Promise<Sample> => {
      const { rows } = await db.query<{ partition: number; at: number }>(
        'SELECT partition, extract(epoch FROM commit_timestamp - $2::timestamptz) * 1000 AS at FROM committed_offsets WHERE group_id = $1',
        [groupId, since],
      );
      const slots = await db.query<{ holder: string; live: boolean }>("SELECT node_id || '/' || epoch AS holder, expires_at > now() AS live FROM coordinator_slots WHERE slot = $1", [slot]);
      const group = await db.query<{ generation: number }>('SELECT generation FROM groups WHERE group_id = $1', [groupId]);
      const now = await db.query<{ at: number }>('SELECT extract(epoch FROM now() - $1::timestamptz) * 1000 AS at', [since]);
      return {
        at: Number(now.rows[0]!.at),
        commits: new Map(rows.map((r) => [r.partition, Number(r.at)])),
        holder: slots.rows[0]!.live ? slots.rows[0]!.holder : `(${slots.rows[0]!.holder} expired)`,
        generation: group.rows[0]?.generation ?? 0,
      };
    };

    // Until every partition is committed within the last two seconds, then a few seconds of steady state.
    const warm = Date.now() + 60_000;
    for (;;) {
      const s = await read(new Date());
      if (s.commits.size === PARTITIONS && [...s.commits.values()].every((at) => at > -2000) && s.holder.startsWith('2/')) break;
      if (Date.now() > warm) throw new Error(`group ${groupId} never settled: ${JSON.stringify([...s.commits])} ${s.holder}`);
      await sleep(200);
    }
    await sleep(3000);

    brokers[1]!.child.kill('SIGKILL');
    await brokers[1]!.exited;
    const killedAt = new Date((await db.query<{ now: Date }>('SELECT now()')).rows[0]!.now);
    const restart = sleep(restartAfterMs).then(async () => (brokers[1] = await spawnBroker(env(2))));

    const samples: Sample[] = [];
    const until = Date.now() + observeMs;
    while (Date.now() < until) {
      samples.push(await read(killedAt));
      await sleep(100);
    }
    await restart;

    const before = samples[0]!;
    const lastBefore = Math.max(...before.commits.values());
    // Commit times per partition after the kill (each sample shows a partition's latest).
    const perPartition = new Map<number, number[]>();
    for (const s of samples) {
      for (const [p, at] of s.commits) {
        const list = perPartition.get(p) ?? [];
        if (at > 0 && list[list.length - 1] !== at) list.push(at);
        perPartition.set(p, list);
      }
    }
    const firstCommit = Math.min(...[...perPartition.values()].map((l) => l[0] ?? Infinity));
    const everyPartition = Math.max(...[...perPartition.values()].map((l) => l[0] ?? Infinity));
    let longestGap = 0;
    for (const [p, list] of perPartition) {
      const times = [before.commits.get(p) ?? lastBefore, ...list, samples[samples.length - 1]!.at];
      for (let i = 1; i < times.length; i++) longestGap = Math.max(longestGap, times[i]! - times[i - 1]!);
    }
    const moves: string[] = [];
    for (let i = 1; i < samples.length; i++) if (samples[i]!.holder !== samples[i - 1]!.holder) moves.push(`${Math.round(samples[i]!.at)} ms → ${samples[i]!.holder}`);
    const generations = new Set(samples.map((s) => s.generation));
    const result = {
      client,
      restartAfterMs,
      firstCommitMs: Math.round(firstCommit),
      everyPartitionMs: Math.round(everyPartition),
      longestGapMs: Math.round(longestGap),
      slotMoves: moves,
      generations: [...generations],
    };
    console.log(JSON.stringify(result));
    // Why the group rebalanced, as the brokers logged it (FAILOVER_LOG=1).
    if (process.env.FAILOVER_LOG) {
      for (const [i, b] of brokers.entries()) {
        for (const line of b.output().split('\n')) if (line.includes('preparing to rebalance') || line.includes('coordinator slots')) console.log(`  broker ${i + 1}: ${line}`);
      }
    }
    return result;
  } finally {
    producing = false;
    // A librdkafka consumer's disconnect can hang after its coordinator moved: bounded.
    for (const m of members) await withTimeout(m.stop(), 10_000, 'member stop').catch(() => {});
    // The producer loop ends within one send and disconnects: wait for it before the brokers stop.
    await withTimeout(producerLoop, 10_000, 'producer stop').catch(() => {});
    await db.end();
    for (const b of brokers) {
      if (b.child.exitCode === null) {
        b.child.kill('SIGTERM');
        await withTimeout(b.exited, 15_000, 'broker stop').catch(() => b.child.kill('SIGKILL'));
      }
    }
    await dropSchema(schema);
  }
}

const clients = arg('client', 'both') === 'both' ? (['kafkajs', 'librdkafka'] as const) : [arg('client', 'kafkajs') as 'kafkajs' | 'librdkafka'];
const runs = Number(arg('runs', '1'));
for (let r = 0; r < runs; r++) for (const c of clients) await run(c, Number(arg('restart-after', '10000')), Number(arg('observe', '60000')));
process.exit(0);
