// Log lifecycle through real clients: kafkajs admin (createPartitions,
// deleteTopicRecords, fetchTopicOffsets), and consumers whose committed
// offset fell below the log start getting their auto.offset.reset applied
// (kafkajs, and librdkafka through kcat -G).
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../test/support/broker.js';
import { kcat, KCAT_FORMAT, parseKcatFormat } from './support/kcat.js';

let broker: TestBroker;
let kafka: Kafka;

beforeAll(async () => {
  broker = await startTestBroker({ groupMinSessionTimeoutMs: 1000, groupInitialRebalanceDelayMs: 0 });
  kafka = new Kafka({ brokers: [broker.bootstrap], clientId: 'compat-retention', logLevel: logLevel.NOTHING });
});
afterAll(async () => {
  await broker?.destroy();
});

/** A topic whose partition 0 holds offsets 0..9 and whose low watermark was moved to 6 with deleteTopicRecords. */
async function trimmedTopic(topic: string, committedGroup: string) {
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }] });
    const producer = kafka.producer();
    await producer.connect();
    for (let i = 0; i < 10; i++) await producer.send({ topic, acks: -1, messages: [{ key: `k${i}`, value: `v${i}` }] });
    await producer.disconnect();
    await admin.setOffsets({ groupId: committedGroup, topic, partitions: [{ partition: 0, offset: '2' }] });
    await admin.deleteTopicRecords({ topic, partitions: [{ partition: 0, offset: '6' }] });
    const offsets = await admin.fetchTopicOffsets(topic);
    expect(offsets).toEqual([{ partition: 0, offset: '10', high: '10', low: '6' }]);
  } finally {
    await admin.disconnect();
  }
}

describe('kafkajs admin', () => {
  it('adds partitions that fetchTopicMetadata sees, and refuses to shrink', async () => {
    const admin = kafka.admin();
    await admin.connect();
    try {
      await admin.createTopics({ topics: [{ topic: 'grow-kjs', numPartitions: 2 }] });
      await admin.createPartitions({ topicPartitions: [{ topic: 'grow-kjs', count: 5 }] });
      const md = await admin.fetchTopicMetadata({ topics: ['grow-kjs'] });
      expect(md.topics[0]!.partitions.map((p) => p.partitionId).sort()).toEqual([0, 1, 2, 3, 4]);
      await expect(admin.createPartitions({ topicPartitions: [{ topic: 'grow-kjs', count: 3 }] })).rejects.toThrow(/partitions/i);
    } finally {
      await admin.disconnect();
    }
    const out = await kcat(broker.bootstrap, ['-L', '-t', 'grow-kjs', '-J']);
    expect(JSON.parse(out.stdout.toString()).topics[0].partitions).toHaveLength(5);
  });
});

describe('a committed offset below the log start', () => {
  it('kafkajs: OFFSET_OUT_OF_RANGE, then fromBeginning resets to the new earliest offset', async () => {
    await trimmedTopic('trim-kjs', 'kjs-lagging');
    const consumer = kafka.consumer({ groupId: 'kjs-lagging', sessionTimeout: 6000, heartbeatInterval: 500 });
    await consumer.connect();
    await consumer.subscribe({ topic: 'trim-kjs', fromBeginning: true });
    const seen: string[] = [];
    const done = new Promise<void>((resolve) => {
      void consumer.run({
        eachMessage: async ({ message }) => {
          seen.push(`${message.offset}:${message.value!.toString()}`);
          if (seen.length === 4) resolve();
        },
      });
    });
    await Promise.race([done, new Promise((_, reject) => setTimeout(() => reject(new Error(`timed out; seen ${seen.join(',')}`)), 20_000))]);
    await consumer.disconnect();
    expect(seen).toEqual(['6:v6', '7:v7', '8:v8', '9:v9']);
  });

  it('librdkafka (kcat -G): auto.offset.reset=earliest starts at the log start, =latest at the end', async () => {
    await trimmedTopic('trim-rdk', 'rdk-early');
    const early = await kcat(broker.bootstrap, ['-G', 'rdk-early', '-X', 'auto.offset.reset=earliest', '-X', 'session.timeout.ms=6000', '-e', '-f', KCAT_FORMAT, 'trim-rdk'], undefined, 30_000);
    expect(parseKcatFormat(early.stdout).map((r) => r.offset)).toEqual([6, 7, 8, 9]);

    const admin = kafka.admin();
    await admin.connect();
    await admin.setOffsets({ groupId: 'rdk-late', topic: 'trim-rdk', partitions: [{ partition: 0, offset: '1' }] });
    await admin.disconnect();
    const late = await kcat(broker.bootstrap, ['-G', 'rdk-late', '-X', 'auto.offset.reset=latest', '-X', 'session.timeout.ms=6000', '-e', '-f', KCAT_FORMAT, 'trim-rdk'], undefined, 30_000);
    expect(parseKcatFormat(late.stdout)).toEqual([]);
  });
});
