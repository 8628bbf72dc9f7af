// A small kafkajs application against the library API, as a user's test
// suite runs it: `startBroker()` with no options (an ephemeral embedded
// PostgreSQL), a producer, a consumer group that commits what it processed,
// and a restarted member of that group that resumes after the commit.
import { Kafka, logLevel, type Consumer, type EachMessagePayload } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBroker, type Broker } from '../src/index.js';

let broker: Broker;
let kafka: Kafka;
beforeAll(async () => {
  broker = await startBroker();
  kafka = new Kafka({ clientId: 'orders-app', brokers: [broker.bootstrapServers], logLevel: logLevel.NOTHING });
});
afterAll(async () => {
  await broker?.stop();
});

/** The application's consumer: processes each order, then commits its offset (autocommit off). */
async function processOrders(groupId: string, expected: number): Promise<string[]> {
  const consumer: Consumer = kafka.consumer({ groupId });
  const seen: string[] = [];
  await consumer.connect();
  try {
    await consumer.subscribe({ topic: 'orders', fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`processed ${seen.length} of ${expected}`)), 30_000);
      void consumer.run({
        autoCommit: false,
        eachMessage: async ({ topic, partition, message }: EachMessagePayload) => {
          seen.push(`${message.key!.toString()}=${message.value!.toString()}`);
          await consumer.commitOffsets([{ topic, partition, offset: String(BigInt(message.offset) + 1n) }]);
          if (seen.length === expected) {
            clearTimeout(timer);
            resolve();
          }
        },
      });
    });
  } finally {
    await consumer.disconnect();
  }
  return seen.sort();
}

describe('a kafkajs application against startBroker()', () => {
  it('produces, consumes with a group, commits, and a restarted member resumes after the commit', async () => {
    const admin = kafka.admin();
    await admin.connect();
    try {
      expect(await admin.createTopics({ topics: [{ topic: 'orders', numPartitions: 2 }], waitForLeaders: true })).toBe(true);
      const producer = kafka.producer();
      await producer.connect();
      const orders = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => ({ key: `customer-${(from + i) % 3}`, value: `order-${from + i}` }));
      await producer.send({ topic: 'orders', acks: -1, messages: orders(0, 6) });

      const first = await processOrders('billing', 6);
      expect(first).toEqual(
        orders(0, 6)
          .map((o) => `${o.key}=${o.value}`)
          .sort(),
      );
      const committed = await admin.fetchOffsets({ groupId: 'billing', topics: ['orders'] });
      const ends = await admin.fetchTopicOffsets('orders');
      expect(committed[0]!.partitions.map((p) => [p.partition, p.offset]).sort()).toEqual(ends.map((p) => [p.partition, p.high]).sort());

      await producer.send({ topic: 'orders', acks: -1, messages: orders(6, 8) });
      await producer.disconnect();
      // Only what came after the commit: the group's offsets, not the beginning, decide where it resumes.
      expect(await processOrders('billing', 2)).toEqual(
        orders(6, 8)
          .map((o) => `${o.key}=${o.value}`)
          .sort(),
      );
    } finally {
      await admin.disconnect();
    }
  });
});
