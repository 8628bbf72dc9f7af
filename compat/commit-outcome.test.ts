// Idempotent producers while the broker's PostgreSQL connection is cut
// around append commits, again and again: before PostgreSQL sees the
// statement, halfway through it, before its commit, with the backend left
// holding its uncommitted rows, and after the commit with the answer lost
// (test/support/pg-proxy.ts). The broker settles each lost statement's
// outcome before answering, so librdkafka (@confluentinc/kafka-javascript,
// enable.idempotence=true) and kafkajs (idempotent: true) end with every
// record exactly once, in the order sent, on every partition.
import ck from '@confluentinc/kafka-javascript';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, testDatabaseUrl, type TestBroker } from '../test/support/broker.js';
import { CUT_POINTS, PgProxy } from '../test/support/pg-proxy.js';
import { readStored } from './support/records.js';

const CUTS = 35;
const PARTITIONS = 3;
/** At least this many records per client, however early the cuts are done. */
const MIN_RECORDS = 600;

let proxy: PgProxy;
let broker: TestBroker;
let kafka: Kafka;

beforeAll(async () => {
  const direct = new URL(testDatabaseUrl());
  proxy = await PgProxy.start(direct.hostname, Number(direct.port || 5432));
  broker = await startTestBroker({ databaseUrl: PgProxy.urlThrough(testDatabaseUrl(), proxy.port), autoCreateTopicsEnable: false });
  kafka = new Kafka({ clientId: 'compat-commit-outcome', brokers: [broker.bootstrap], logLevel: logLevel.NOTHING, retry: { initialRetryTime: 50, maxRetryTime: 500, retries: 30 } });
  const admin = kafka.admin();
  await admin.connect();
  for (const topic of ['cut-rdkafka', 'cut-kafkajs']) expect(await admin.createTopics({ topics: [{ topic, numPartitions: PARTITIONS }], waitForLeaders: true })).toBe(true);
  await admin.disconnect();
});
afterAll(async () => {
  await broker?.destroy();
  await proxy?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Cuts the connection of the next append statement at each cut point in turn, CUTS times; resolves with the cuts made. */
async function cutRepeatedly(): Promise<string[]> {
  const made = proxy.cuts.length;
  for (let i = 0; i < CUTS; i++) {
    const cut = proxy.arm(CUT_POINTS[i % CUT_POINTS.length]!);
    const timedOut = sleep(20_000).then(() => 'timed out' as const);
    if ((await Promise.race([cut, timedOut])) === 'timed out') {
      proxy.disarm();
      throw new Error(`cut ${i} was not made within 20 s`);
    }
    await sleep(150 + Math.random() * 150);
  }
  return proxy.cuts.slice(made);
}

/** The values stored in each partition of `topic`, in offset order. */
async function storedValues(topic: string): Promise<string[][]> {
  const records = (await readStored(broker, topic)).flatMap((b) => b.records);
  return Array.from({ length: PARTITIONS }, (_, p) => records.filter((r) => r.partition === p).map((r) => r.value!.toString()));
}

describe('idempotent producers while PostgreSQL connections are cut around commits', () => {
  it(`librdkafka (enable.idempotence=true): every record exactly once, in order, across ${CUTS} cuts`, async () => {
    const producer = new ck.Producer({
      'bootstrap.servers': broker.bootstrap,
      'client.id': 'compat-commit-outcome-rdkafka',
      'enable.idempotence': true,
      'linger.ms': 1,
      'retry.backoff.ms': 20,
      dr_cb: true,
    });
    await new Promise<void>((res, rej) => producer.connect({}, (err) => (err ? rej(err) : res())));
    producer.setPollInterval(5);
    const delivered: string[] = [];
    const failed: string[] = [];
    producer.on('delivery-report', (err, report) => {
      if (err) failed.push(`${String(report.value)}: ${err.message}`);
      else delivered.push(String(report.value));
    });
    const sent: string[][] = Array.from({ length: PARTITIONS }, () => []);
    let n = 0;
    let cutsDone = false;
    const cuts = cutRepeatedly().finally(() => (cutsDone = true));
    try {
      while (!cutsDone || n < MIN_RECORDS) {
        // A few records to each partition, then wait while many are outstanding: several requests in flight at once.
        for (let i = 0; i < 6; i++, n++) {
          const p = n % PARTITIONS;
          producer.produce('cut-rdkafka', p, Buffer.from(`r${n}`));
          sent[p]!.push(`r${n}`);
        }
        while (n - delivered.length - failed.length > 600) await sleep(5);
        await sleep(3);
      }
      await new Promise<void>((res, rej) => producer.flush(60_000, (err) => (err ? rej(err) : res())));
    } finally {
      await new Promise<void>((res) => producer.disconnect(() => res()));
    }
    const made = await cuts;
    expect(made).toHaveLength(CUTS);
    expect(failed).toEqual([]);
    expect(delivered).toHaveLength(n);
    expect(await storedValues('cut-rdkafka')).toEqual(sent);
  }, 240_000);

  it(`kafkajs (idempotent: true): every record exactly once, in order, across ${CUTS} cuts`, async () => {
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
    await producer.connect();
    const sent: string[][] = Array.from({ length: PARTITIONS }, () => []);
    let n = 0;
    let cutsDone = false;
    const cuts = cutRepeatedly().finally(() => (cutsDone = true));
    try {
      // One sender per partition, each awaiting its sends, so each partition's order is the order sent.
      await Promise.all(
        Array.from({ length: PARTITIONS }, async (_, p) => {
          while (!cutsDone || n < MIN_RECORDS) {
            const values = Array.from({ length: 3 }, () => `k${n++}`);
            await producer.send({ topic: 'cut-kafkajs', acks: -1, messages: values.map((value) => ({ partition: p, value })) });
            sent[p]!.push(...values);
          }
        }),
      );
    } finally {
      await producer.disconnect();
    }
    expect(await cuts).toHaveLength(CUTS);
    expect(await storedValues('cut-kafkajs')).toEqual(sent);
  }, 240_000);
});
