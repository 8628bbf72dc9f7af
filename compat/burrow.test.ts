// Burrow 1.2.1 (Debian's `burrow`, built on Sarama 1.22), LinkedIn's lag
// monitor: it learns committed offsets by consuming __consumer_offsets from
// the beginning on every partition (Sarama partition consumers, no group) and
// the partitions' ends by ListOffsets, and reports each group's lag over its
// HTTP API. It will not start without ZooKeeper, so the test runs Debian's
// `zookeeper` server beside it.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../test/support/broker.js';
import { freePort } from '../test/support/broker-process.js';

const BURROW = '/usr/bin/Burrow';
const JARS = '/usr/share/java';
const ZOOKEEPER_CLASSPATH = ['zookeeper.jar', 'zookeeper-jute.jar', 'slf4j-api.jar', 'slf4j-nop.jar'].map((j) => join(JARS, j)).join(':');
const TOPIC = 'burrow-orders';
const GROUP = 'burrow-lag-group';

let broker: TestBroker;
let kafka: Kafka;
let dir: string;
let httpPort: number;
const children: ChildProcess[] = [];

function start(cmd: string, args: string[]): ChildProcess {
  const child = spawn(cmd, args, { cwd: dir, stdio: 'ignore' });
  children.push(child);
  return child;
}

async function produce(perPartition: number): Promise<void> {
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({ topic: TOPIC, messages: [0, 1].flatMap((partition) => Array.from({ length: perPartition }, (_, i) => ({ partition, value: `v${i}` }))) });
  await producer.disconnect();
}

beforeAll(async () => {
  broker = await startTestBroker();
  kafka = new Kafka({ clientId: 'burrow-test', brokers: [broker.bootstrap], logLevel: logLevel.NOTHING });
  dir = mkdtempSync(join(tmpdir(), 'pgkafka-burrow-'));
  const [zkPort, port] = [await freePort(), await freePort()];
  httpPort = port;
  start('java', ['-cp', ZOOKEEPER_CLASSPATH, 'org.apache.zookeeper.server.ZooKeeperServerMain', String(zkPort), join(dir, 'zookeeper')]);

  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 2 }] });
  await produce(10);
  await admin.setOffsets({
    groupId: GROUP,
    topic: TOPIC,
    partitions: [
      { partition: 0, offset: '4' },
      { partition: 1, offset: '10' },
    ],
  });
  await admin.disconnect();

  const servers = `["${broker.bootstrap}"]`;
  writeFileSync(
    join(dir, 'burrow.toml'),
    `[general]
pidfile="${join(dir, 'burrow.pid')}"
[logging]
filename="${join(dir, 'burrow.log')}"
level="info"
[zookeeper]
servers=["127.0.0.1:${zkPort}"]
root-path="/burrow"
[client-profile.pgkafka]
client-id="burrow"
kafka-version="2.0.0"
[cluster.local]
class-name="kafka"
servers=${servers}
client-profile="pgkafka"
topic-refresh=2
offset-refresh=1
[consumer.local]
class-name="kafka"
cluster="local"
servers=${servers}
client-profile="pgkafka"
offsets-topic="__consumer_offsets"
start-latest=false
[httpserver.default]
address="127.0.0.1:${httpPort}"
[storage.default]
class-name="inmemory"
workers=2
intervals=10
expire-group=604800
min-distance=0
[evaluator.default]
class-name="caching"
expire-cache=1
`,
  );
  start(BURROW, ['--config-dir', dir]);
}, 60_000);

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await broker?.destroy();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

interface LagPartition {
  topic: string;
  partition: number;
  end: { offset: number } | null;
  current_lag: number;
}

/** Burrow's lag answer for the group, once it has one whose partitions satisfy `done` (Burrow is polled, as its users poll it). */
async function lagUntil(done: (partitions: LagPartition[]) => boolean): Promise<LagPartition[]> {
  let last: unknown = null;
  for (let attempt = 0; attempt < 150; attempt++) {
    try {
      const res = await fetch(`http://127.0.0.1:${httpPort}/v3/kafka/local/consumer/${GROUP}/lag`);
      last = await res.json();
      const partitions = ((last as { status?: { partitions?: LagPartition[] } }).status?.partitions ?? []).filter((p) => p.topic === TOPIC);
      if (done(partitions)) return partitions.sort((a, b) => a.partition - b.partition);
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`Burrow never reported the expected lag; last answer: ${JSON.stringify(last)}`);
}

const summary = (ps: LagPartition[]) => ps.map((p) => ({ partition: p.partition, committed: p.end?.offset, lag: p.current_lag }));

describe('Burrow 1.2.1', () => {
  it("reports the group's committed offsets and lag, read from __consumer_offsets, and the lag follows new records", async () => {
    const first = await lagUntil((ps) => ps.length === 2 && ps.every((p) => p.end !== null));
    expect(summary(first)).toEqual([
      { partition: 0, committed: 4, lag: 6 },
      { partition: 1, committed: 10, lag: 0 },
    ]);
    await produce(5);
    const grown = await lagUntil((ps) => ps.length === 2 && ps[0]!.current_lag === 11 && ps.find((p) => p.partition === 1)?.current_lag === 5);
    expect(summary(grown)).toEqual([
      { partition: 0, committed: 4, lag: 11 },
      { partition: 1, committed: 10, lag: 5 },
    ]);
    // A new commit reaches Burrow through __consumer_offsets too.
    const admin = kafka.admin();
    await admin.connect();
    await admin.setOffsets({ groupId: GROUP, topic: TOPIC, partitions: [{ partition: 0, offset: '15' }] });
    await admin.disconnect();
    const caughtUp = await lagUntil((ps) => ps.length === 2 && ps.find((p) => p.partition === 0)?.end?.offset === 15);
    expect(summary(caughtUp)).toEqual([
      { partition: 0, committed: 15, lag: 0 },
      { partition: 1, committed: 10, lag: 5 },
    ]);
  });
});
