// DescribeLogDirs (partition sizes) and DescribeTopicPartitions (paged
// partition metadata), for admin tools.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/protocol/errors.js';
import { CreateTopicsApi, DescribeLogDirsApi, DescribeTopicPartitionsApi, ProduceApi } from '../../src/protocol/messages/index.js';
import { buildBatch } from '../../src/protocol/records/index.js';
import { startTestBroker, type TestBroker } from '../support/broker.js';
import { RawClient } from '../support/raw-client.js';

let broker: TestBroker;
let client: RawClient;

beforeAll(async () => {
  broker = await startTestBroker();
  client = await RawClient.connect(broker.bootstrap);
  await client.request(CreateTopicsApi, 7, {
    topics: [
      { name: 'alpha', numPartitions: 3, replicationFactor: 1 },
      { name: 'beta', numPartitions: 2, replicationFactor: 1 },
    ],
  });
  const records = buildBatch({ records: [{ key: Buffer.from('k'), value: Buffer.alloc(500) }] });
  await client.request(ProduceApi, 9, { acks: -1, timeoutMs: 1000, topicData: [{ name: 'alpha', partitionData: [{ index: 1, records }] }] });
});
afterAll(async () => {
  client?.close();
  await broker?.destroy();
});

describe('DescribeLogDirs', () => {
  it('reports the stored bytes of each partition in one log dir', async () => {
    const res = await client.request(DescribeLogDirsApi, 4, { topics: [{ topic: 'alpha', partitions: [0, 1] }] });
    const dir = res.results[0]!;
    expect(dir.errorCode).toBe(0);
    expect(dir.logDir).toBe(`postgresql:${broker.schema}`);
    expect(dir.totalBytes).toBeGreaterThan(0n);
    const sizes = dir.topics[0]!.partitions.map((p) => [p.partitionIndex, p.partitionSize]);
    const stored = await broker.query<{ size: number }>(`SELECT b.size FROM batches b JOIN topics t USING (topic_id) WHERE t.name = 'alpha'`);
    expect(sizes).toEqual([
      [0, 0n],
      [1, BigInt(stored[0]!.size)],
    ]);
  });

  it('describes every topic when none are named', async () => {
    const res = await client.request(DescribeLogDirsApi, 2, { topics: null });
    expect(res.results[0]!.topics.map((t) => [t.name, t.partitions.length])).toEqual([
      ['alpha', 3],
      ['beta', 2],
    ]);
  });
});

describe('DescribeTopicPartitions', () => {
  it('pages through partitions with a cursor', async () => {
    const first = await client.request(DescribeTopicPartitionsApi, 0, { topics: [], responsePartitionLimit: 2, cursor: null });
    expect(first.topics.map((t) => [t.name, t.partitions.map((p) => p.partitionIndex)])).toEqual([['alpha', [0, 1]]]);
    expect(first.nextCursor).toEqual({ topicName: 'alpha', partitionIndex: 2 });
    const second = await client.request(DescribeTopicPartitionsApi, 0, { topics: [], responsePartitionLimit: 2, cursor: first.nextCursor });
    expect(second.topics.map((t) => [t.name, t.partitions.map((p) => p.partitionIndex)])).toEqual([
      ['alpha', [2]],
      ['beta', [0]],
    ]);
    const third = await client.request(DescribeTopicPartitionsApi, 0, { topics: [], responsePartitionLimit: 2, cursor: second.nextCursor });
    expect(third.topics.map((t) => [t.name, t.partitions.map((p) => p.partitionIndex)])).toEqual([['beta', [1]]]);
    expect(third.nextCursor).toBeNull();
  });

  it('answers UNKNOWN_TOPIC_OR_PARTITION for a missing topic', async () => {
    const res = await client.request(DescribeTopicPartitionsApi, 0, { topics: [{ name: 'gamma' }, { name: 'beta' }], responsePartitionLimit: 100, cursor: null });
    expect(res.topics.map((t) => [t.name, t.errorCode])).toEqual([
      ['beta', 0],
      ['gamma', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
    ]);
    expect(res.topics[0]!.partitions[0]).toMatchObject({ leaderId: 1, replicaNodes: [1], isrNodes: [1], eligibleLeaderReplicas: [], lastKnownElr: [] });
  });
});
