// kafkajs producing to many partitions in one request: the broker commits
// the partitions' small appends together (one transaction for several), and
// each partition still holds its records in order, at contiguous offsets,
// as kafkajs was told and as kcat reads them back.
import { Kafka, logLevel, type Producer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../test/support/broker.js';
import { kcatConsume } from './support/kcat.js';
import { readStored } from './support/records.js';

const TOPIC = 'kjs-shared';
const PARTITIONS = 12;
const SENDS = 20;

let broker: TestBroker;
let producer: Producer;
beforeAll(async () => {
  broker = await startTestBroker({ autoCreateTopicsEnable: false });
  const kafka = new Kafka({ clientId: 'compat-shared-append', brokers: [broker.bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 2 } });
  const admin = kafka.admin();
  await admin.connect();
  expect(await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: PARTITIONS }], waitForLeaders: true })).toBe(true);
  await admin.disconnect();
  producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
});
afterAll(async () => {
  await producer?.disconnect();
  await broker?.destroy();
});

describe('kafkajs: one request to many partitions', () => {
  it('is acknowledged per partition at contiguous offsets, stored in order, with partitions committed together', async () => {
    // Four senders at once, each request carrying one record for every partition.
    const acknowledged = new Map<string, string>();
    let next = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (next < SENDS) {
          const send = next++;
          const res = await producer.send({
            topic: TOPIC,
            acks: -1,
            messages: Array.from({ length: PARTITIONS }, (_, partition) => ({ partition, value: `${send}:${partition}` })),
          });
          expect(res.map((r) => r.errorCode)).toEqual(new Array(PARTITIONS).fill(0));
          for (const r of res) acknowledged.set(`${r.partition}@${r.baseOffset}`, `${send}:${r.partition}`);
        }
      }),
    );
    const stored = (await readStored(broker, TOPIC)).flatMap((b) => b.records);
    for (let partition = 0; partition < PARTITIONS; partition++) {
      const records = stored.filter((r) => r.partition === partition);
      expect(records.map((r) => r.offset)).toEqual(Array.from({ length: SENDS }, (_, i) => i));
      // Each record lies at the offset kafkajs was given for it.
      for (const r of records) expect(r.value!.toString()).toBe(acknowledged.get(`${partition}@${r.offset}`));
    }
    // Appends of different partitions shared transactions (batches written by one transaction carry its id in xmin).
    const [{ widest }] = await broker.query<{ widest: number }>(
      `SELECT max(n)::int AS widest FROM (
         SELECT count(DISTINCT b.partition) AS n FROM batches b JOIN topics t USING (topic_id) WHERE t.name = $1 GROUP BY b.xmin::text
       ) per_transaction`,
      [TOPIC],
    );
    expect(widest).toBeGreaterThan(1);
    // And through Fetch: kcat reads every record back.
    const read = await kcatConsume(broker.bootstrap, TOPIC);
    expect(read).toHaveLength(PARTITIONS * SENDS);
  }, 60_000);
});
