// Offset commit metadata through real clients: kafka-python commits
// metadata holding NUL characters and its admin client reads it back as
// sent; kafkajs's admin reads the same.
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../test/support/broker.js';
import { runPythonJson } from './support/spawn.js';

let broker: TestBroker;
beforeAll(async () => {
  broker = await startTestBroker();
});
afterAll(async () => {
  await broker?.destroy();
});

describe('offset commit metadata with NUL characters', () => {
  it('kafka-python commits it and reads it back; kafkajs admin fetches the same', async () => {
    const kafka = new Kafka({ clientId: 'compat-kafkajs', brokers: [broker.bootstrap], logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    await admin.connect();
    try {
      await admin.createTopics({ topics: [{ topic: 'kp-meta', numPartitions: 3 }] });
      const commits = [
        [0, 5, 'Hello\u0000world!'],
        [1, 6, 'trailing\u0000'],
        [2, 7, 'plain'],
      ];
      const res = await runPythonJson<{ committed: [number, number, string][] }>('offset_metadata.py', 'run', { bootstrap: broker.bootstrap, group: 'kp-meta-group', topic: 'kp-meta', commits });
      expect(res.committed).toEqual(commits);
      const fetched = await admin.fetchOffsets({ groupId: 'kp-meta-group', topics: ['kp-meta'] });
      expect(fetched[0]!.partitions.map((p) => [p.partition, p.offset, p.metadata]).sort()).toEqual([
        [0, '5', 'Hello\u0000world!'],
        [1, '6', 'trailing\u0000'],
        [2, '7', 'plain'],
      ]);
    } finally {
      await admin.disconnect();
    }
  });
});
