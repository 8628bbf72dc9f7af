// Admin clients against the APIs whose answer on a single-copy log is
// Kafka's: kafkajs's alterPartitionReassignments and
// listPartitionReassignments, @platformatic/kafka's describeClientQuotas,
// and its alterClientQuotas refused before sending (not advertised).
import { Admin } from '@platformatic/kafka';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../test/support/broker.js';

let broker: TestBroker;
beforeAll(async () => {
  broker = await startTestBroker();
});
afterAll(async () => {
  await broker?.destroy();
});

describe('partition reassignments through kafkajs admin', () => {
  it('accepts a reassignment to the existing replica, refuses one to an unknown broker, and lists nothing in progress', async () => {
    const admin = new Kafka({ clientId: 'compat-kafkajs', brokers: [broker.bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 0 } }).admin();
    await admin.connect();
    try {
      await admin.createTopics({ topics: [{ topic: 'kjs-reassign', numPartitions: 2 }] });
      const [meta] = (await admin.fetchTopicMetadata({ topics: ['kjs-reassign'] })).topics;
      const replica = meta!.partitions[0]!.replicas[0]!;
      await admin.alterPartitionReassignments({
        topics: [
          {
            topic: 'kjs-reassign',
            partitionAssignment: [
              { partition: 0, replicas: [replica] },
              { partition: 1, replicas: [replica] },
            ],
          },
        ],
      });
      await expect(admin.alterPartitionReassignments({ topics: [{ topic: 'kjs-reassign', partitionAssignment: [{ partition: 0, replicas: [replica + 100] }] }] })).rejects.toMatchObject({
        errors: [{ type: 'INVALID_REPLICA_ASSIGNMENT' }],
      });
      expect(await admin.listPartitionReassignments({})).toEqual({ topics: [] });
      expect(await admin.listPartitionReassignments({ topics: [{ topic: 'kjs-reassign', partitions: [0, 1] }] })).toEqual({ topics: [] });
    } finally {
      await admin.disconnect();
    }
  });
});

describe('client quotas through @platformatic/kafka admin', () => {
  it('describes no quota, and refuses to alter one (the broker does not serve AlterClientQuotas)', async () => {
    const admin = new Admin({ clientId: 'compat-platformatic', bootstrapBrokers: [broker.bootstrap], retries: 0 });
    try {
      expect(await admin.describeClientQuotas({ components: [{ entityType: 'user', matchType: 2 }] })).toEqual([]);
      await expect(
        admin.alterClientQuotas({ entries: [{ entities: [{ entityType: 'user', entityName: 'alice' }], ops: [{ key: 'producer_byte_rate', value: 1024, remove: false }] }] }),
      ).rejects.toMatchObject({ errors: [{ message: expect.stringMatching(/AlterClientQuotas/) }] });
    } finally {
      await admin.close();
    }
  });
});
