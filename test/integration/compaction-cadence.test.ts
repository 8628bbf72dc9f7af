// The cleaner compacts on its own cadence, log.cleaner.backoff.ms, as Kafka's
// cleaner threads do, independently of log.retention.check.interval.ms: with
// a short backoff and a retention check an hour away, a compacted topic is
// cleaned within moments and a topic past its retention.ms keeps its batches.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreateTopicsApi, ProduceApi } from '../../src/protocol/messages/index.js';
import { buildBatch } from '../../src/protocol/records/index.js';
import { startTestBroker, type TestBroker } from '../support/broker.js';
import { RawClient } from '../support/raw-client.js';

let broker: TestBroker;
let client: RawClient;

beforeAll(async () => {
  broker = await startTestBroker({ logCleanerBackoffMs: 100, logRetentionCheckIntervalMs: 3_600_000 });
  client = await RawClient.connect(broker.bootstrap);
});
afterAll(async () => {
  client?.close();
  await broker?.destroy();
});

async function createTopic(name: string, configs: Record<string, string>) {
  const res = await client.request(CreateTopicsApi, 7, {
    topics: [{ name, numPartitions: 1, replicationFactor: 1, configs: Object.entries(configs).map(([n, value]) => ({ name: n, value })) }],
  });
  expect(res.topics[0]!.errorCode).toBe(0);
}

async function produce(topic: string, keys: string[], ageMs = 0) {
  const batch = buildBatch({ baseTimestamp: BigInt(Date.now() - ageMs), records: keys.map((k, i) => ({ offsetDelta: i, key: Buffer.from(k), value: Buffer.from(`${k}-${i}`) })) });
  const res = await client.request(ProduceApi, 9, { acks: -1, timeoutMs: 1000, topicData: [{ name: topic, partitionData: [{ index: 0, records: batch }] }] });
  expect(res.responses[0]!.partitionResponses[0]!.errorCode).toBe(0);
}

const batchOffsets = async (topic: string) =>
  (await broker.query<{ base_offset: string }>('SELECT b.base_offset::text FROM batches b JOIN topics t USING (topic_id) WHERE t.name = $1 ORDER BY b.base_offset', [topic])).map((r) => r.base_offset);

async function eventually<T>(read: () => Promise<T>, want: T, deadlineMs = 15_000): Promise<T> {
  const until = Date.now() + deadlineMs;
  let last = await read();
  while (JSON.stringify(last) !== JSON.stringify(want) && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 50));
    last = await read();
  }
  return last;
}

describe('compaction cadence', () => {
  it('compacts every log.cleaner.backoff.ms without waiting for the retention check', async () => {
    await createTopic('cadence-compact', { 'cleanup.policy': 'compact', 'min.cleanable.dirty.ratio': '0.01' });
    await createTopic('cadence-delete', { 'cleanup.policy': 'delete', 'retention.ms': '1000' });
    await produce('cadence-delete', ['old'], 60_000);
    await produce('cadence-delete', ['old-too'], 60_000);
    await produce('cadence-compact', ['a', 'b']); // 0..1, superseded by the next batch
    await produce('cadence-compact', ['a', 'b']); // 2..3, the newest batch: never compacted
    // The first batch lost both records to the second and is gone.
    expect(await eventually(() => batchOffsets('cadence-compact'), ['2'])).toEqual(['2']);
    // Retention has its own cadence (an hour here): the expired batches are still there.
    expect(await batchOffsets('cadence-delete')).toEqual(['0', '1']);
  });
});
