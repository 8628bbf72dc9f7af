// Per-record produce errors (KIP-467) as librdkafka reports them
// (@confluentinc/kafka-javascript 1.10.1, librdkafka 2.15.1, Produce v8+):
// when the broker names two or more invalid records of a batch in
// record_errors, those fail with INVALID_RECORD and the rest of the batch
// with the local ERR__INVALID_DIFFERENT_RECORD. (With a single one, or none,
// librdkafka fails every record of the batch with the partition's error.)
import ck from '@confluentinc/kafka-javascript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../test/support/broker.js';

const INVALID_RECORD = 87;
const INVALID_DIFFERENT_RECORD = ck.CODES.ERRORS.ERR__INVALID_DIFFERENT_RECORD;

let broker: TestBroker;
let admin: ReturnType<InstanceType<typeof ck.KafkaJS.Kafka>['admin']>;
beforeAll(async () => {
  broker = await startTestBroker({ autoCreateTopicsEnable: false });
  admin = new ck.KafkaJS.Kafka({ kafkaJS: { brokers: [broker.bootstrap], clientId: 'compat-record-errors', logLevel: ck.KafkaJS.logLevel.NOTHING } }).admin();
  await admin.connect();
});
afterAll(async () => {
  await admin?.disconnect().catch(() => {});
  await broker?.destroy();
});

interface Message {
  key: string | null;
  timestamp?: number;
}

/** Produces the messages as one batch (a long linger) and returns each delivery report's error code (0: delivered). */
async function produceBatch(topic: string, messages: Message[]): Promise<number[]> {
  const producer = new ck.Producer({ 'bootstrap.servers': broker.bootstrap, 'client.id': 'compat-record-errors', dr_cb: true, 'linger.ms': 200, acks: -1 } as never);

  await new Promise<void>((res, rej) => producer.connect({ timeout: 10_000 } as never, (e) => (e ? rej(e) : res())));
  try {
    const codes = new Array<number | undefined>(messages.length);
    let reported = 0;
    const done = new Promise<void>((res) => {
      producer.on('delivery-report', (err, report) => {
        codes[report.opaque as number] = err ? err.code : 0;
        if (++reported === messages.length) res();
      });
    });
    producer.setPollInterval(20);
    messages.forEach((m, i) => producer.produce(topic, 0, Buffer.from(`value-${i}`), m.key, m.timestamp ?? Date.now(), i));
    await Promise.race([done, new Promise((_, rej) => setTimeout(() => rej(new Error(`${reported} of ${messages.length} delivery reports`)), 20_000))]);
    return codes as number[];
  } finally {
    await new Promise<void>((res) => producer.disconnect(() => res()));
  }
}

describe('librdkafka and record_errors', () => {
  it('fails exactly the keyless records of a batch to a compacted topic', async () => {
    const topic = 'record-errors-compact';
    await admin.createTopics({ topics: [{ topic, numPartitions: 1, configEntries: [{ name: 'cleanup.policy', value: 'compact' }] }] });
    const codes = await produceBatch(topic, [{ key: 'a' }, { key: null }, { key: 'c' }, { key: null }]);
    expect(codes).toEqual([INVALID_DIFFERENT_RECORD, INVALID_RECORD, INVALID_DIFFERENT_RECORD, INVALID_RECORD]);
    const offsets = await admin.fetchTopicOffsets(topic);
    expect(offsets.map((o) => o.high)).toEqual(['0']); // nothing of the batch was stored
  });

  it('fails exactly the records whose timestamps are out of bounds, though the batch header looks fine', async () => {
    const topic = 'record-errors-time';
    await admin.createTopics({ topics: [{ topic, numPartitions: 1, configEntries: [{ name: 'message.timestamp.before.max.ms', value: '60000' }] }] });
    const now = Date.now();
    const old = now - 3_600_000;
    const codes = await produceBatch(topic, [
      { key: 'a', timestamp: now },
      { key: 'b', timestamp: old },
      { key: 'c', timestamp: old },
      { key: 'd', timestamp: now },
    ]);
    // librdkafka reports every listed record as INVALID_RECORD, whatever the partition's error (INVALID_TIMESTAMP).
    expect(codes).toEqual([INVALID_DIFFERENT_RECORD, INVALID_RECORD, INVALID_RECORD, INVALID_DIFFERENT_RECORD]);
  });
});
