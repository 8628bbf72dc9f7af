// Compacted topics through real clients: kafkajs writes keyed records and
// tombstones (value: null), the cleaner compacts, and kcat (librdkafka)
// reading from the beginning sees the compacted view: the latest value per
// key at its original offset, the tombstone until delete.retention.ms has
// passed after the cleaner first kept it (KIP-534 horizon, attribute bit 6
// in the rewritten batch), then nothing of the deleted key. kcat-written gzip
// batches, compacted, are read back by a kafkajs consumer across the gaps.
// An idempotent producer whose newest batch lost every record keeps it as an
// empty batch, goes on producing without a sequence error, and readers skip it.
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../test/support/broker.js';
import { kcatConsume, kcatProduce } from './support/kcat.js';

let broker: TestBroker;
let kafka: Kafka;

beforeAll(async () => {
  broker = await startTestBroker({ logRetentionCheckIntervalMs: 3_600_000, logCleanerBackoffMs: 3_600_000, groupMinSessionTimeoutMs: 1000, groupInitialRebalanceDelayMs: 0 });
  kafka = new Kafka({ brokers: [broker.bootstrap], clientId: 'compat-compaction', logLevel: logLevel.NOTHING });
});
afterAll(async () => {
  await broker?.destroy();
});

const configs = { 'cleanup.policy': 'compact', 'min.cleanable.dirty.ratio': '0.01', 'delete.retention.ms': '60000' };

async function createTopic(topic: string) {
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.createTopics({ topics: [{ topic, numPartitions: 1, configEntries: Object.entries(configs).map(([name, value]) => ({ name, value })) }] });
  } finally {
    await admin.disconnect();
  }
}

const view = (recs: { offset: number; key: Buffer | null; value: Buffer | null }[]) => recs.map((r) => `${r.offset}:${r.key?.toString() ?? '∅'}=${r.value?.toString() ?? '∅'}`);

describe('kafkajs writes, kcat reads the compacted view', () => {
  it('latest value per key at its original offset; the tombstone, then nothing', async () => {
    const topic = 'compact-kjs';
    await createTopic(topic);
    const producer = kafka.producer();
    await producer.connect();
    try {
      await producer.send({ topic, acks: -1, messages: [1, 2, 3, 4].map((i) => ({ key: `k${i}`, value: `a${i}` })) }); // 0..3
      await producer.send({ topic, acks: -1, messages: [1, 2, 3, 4].map((i) => ({ key: `k${i}`, value: `b${i}` })) }); // 4..7
      await producer.send({
        topic,
        acks: -1,
        messages: [
          { key: 'k2', value: null },
          { key: 'k1', value: 'c1' },
        ],
      }); // 8..9
      await producer.send({ topic, acks: -1, messages: [{ key: 'k5', value: 'newest' }] }); // 10
    } finally {
      await producer.disconnect();
    }
    expect(await kcatConsume(broker.bootstrap, topic)).toHaveLength(11);

    const now = Date.now();
    await broker.cleaner.runOnce(now);
    expect(view(await kcatConsume(broker.bootstrap, topic))).toEqual(['6:k3=b3', '7:k4=b4', '8:k2=∅', '9:k1=c1', '10:k5=newest']);
    // librdkafka read the tombstone's batch with the delete-horizon attribute set.
    const horizon = await broker.query<{ base_offset: string }>(`SELECT b.base_offset::text FROM batches b JOIN topics t USING (topic_id) WHERE t.name = $1 AND get_byte(b.data, 22) & 64 <> 0`, [
      topic,
    ]);
    expect(horizon).toEqual([{ base_offset: '8' }]);

    await broker.cleaner.runOnce(now + 60_001);
    expect(view(await kcatConsume(broker.bootstrap, topic))).toEqual(['6:k3=b3', '7:k4=b4', '9:k1=c1', '10:k5=newest']);
  });
});

describe('kcat writes (gzip), kafkajs consumes the compacted view', () => {
  it('reads across the offset gaps with the codec kept', async () => {
    const topic = 'compact-rdk';
    await createTopic(topic);
    const rec = (key: string, value: string | null) => ({ partition: 0, key: Buffer.from(key), value: value === null ? null : Buffer.from(value.repeat(40)), headers: [] });
    await kcatProduce(broker.bootstrap, topic, [rec('a', 'x'), rec('b', 'x'), rec('c', 'x')], { codec: 'gzip' }); // 0..2
    await kcatProduce(broker.bootstrap, topic, [rec('a', 'y'), rec('b', 'y')], { codec: 'gzip' }); // 3..4
    await kcatProduce(broker.bootstrap, topic, [rec('d', 'z')], { codec: 'gzip' }); // 5
    await broker.cleaner.runOnce();
    const codecs = await broker.query<{ attrs: number }>(`SELECT get_byte(b.data, 22) & 7 AS attrs FROM batches b JOIN topics t USING (topic_id) WHERE t.name = $1 ORDER BY b.base_offset`, [topic]);
    expect(codecs.map((c) => c.attrs)).toEqual([1, 1, 1]);

    const consumer = kafka.consumer({ groupId: 'compact-rdk-reader', sessionTimeout: 6000, heartbeatInterval: 500 });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    const seen: string[] = [];
    const done = new Promise<void>((resolve) => {
      void consumer.run({
        eachMessage: async ({ message }) => {
          seen.push(`${message.offset}:${message.key!.toString()}=${message.value!.toString().slice(0, 1)}`);
          if (message.offset === '5') resolve();
        },
      });
    });
    await Promise.race([done, new Promise((_, reject) => setTimeout(() => reject(new Error(`timed out; seen ${seen.join(',')}`)), 20_000))]);
    await consumer.disconnect();
    expect(seen).toEqual(['2:c=x', '3:a=y', '4:b=y', '5:d=z']);
  });
});

describe('an idempotent producer whose newest batch is compacted away', () => {
  it('keeps producing in sequence; kcat and kafkajs read past the empty batch', async () => {
    const topic = 'compact-idem';
    await createTopic(topic);
    const idem = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    const other = kafka.producer();
    await idem.connect();
    await other.connect();
    try {
      await idem.send({
        topic,
        acks: -1,
        messages: [
          { key: 'a', value: 'i1' },
          { key: 'b', value: 'i1' },
        ],
      }); // 0..1
      await idem.send({
        topic,
        acks: -1,
        messages: [
          { key: 'a', value: 'i2' },
          { key: 'b', value: 'i2' },
        ],
      }); // 2..3: idem's newest
      await other.send({
        topic,
        acks: -1,
        messages: [
          { key: 'a', value: 'o' },
          { key: 'b', value: 'o' },
        ],
      }); // 4..5
      await other.send({ topic, acks: -1, messages: [{ key: 'z', value: 'newest' }] }); // 6
      await broker.cleaner.runOnce();
      const rows = await broker.query<{ base_offset: string; record_count: number }>(
        `SELECT b.base_offset::text, b.record_count FROM batches b JOIN topics t USING (topic_id) WHERE t.name = $1 ORDER BY b.base_offset`,
        [topic],
      );
      expect(rows).toEqual([
        { base_offset: '2', record_count: 0 },
        { base_offset: '4', record_count: 2 },
        { base_offset: '6', record_count: 1 },
      ]);
      await idem.send({ topic, acks: -1, messages: [{ key: 'c', value: 'i3' }] }); // 7: sequence 4 follows the empty batch's
    } finally {
      await idem.disconnect();
      await other.disconnect();
    }
    expect(view(await kcatConsume(broker.bootstrap, topic))).toEqual(['4:a=o', '5:b=o', '6:z=newest', '7:c=i3']);

    const consumer = kafka.consumer({ groupId: 'compact-idem-reader', sessionTimeout: 6000, heartbeatInterval: 500 });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    const seen: string[] = [];
    const done = new Promise<void>((resolve) => {
      void consumer.run({
        eachMessage: async ({ message }) => {
          seen.push(`${message.offset}:${message.key!.toString()}=${message.value!.toString()}`);
          if (message.offset === '7') resolve();
        },
      });
    });
    await Promise.race([done, new Promise((_, reject) => setTimeout(() => reject(new Error(`timed out; seen ${seen.join(',')}`)), 20_000))]);
    await consumer.disconnect();
    expect(seen).toEqual(['4:a=o', '5:b=o', '6:z=newest', '7:c=i3']);
  });
});
