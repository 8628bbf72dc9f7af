// Transactions with real clients: librdkafka (confluent-kafka-python) and
// kafkajs transactional producers commit, abort, send offsets and are
// fenced by a second instance; read_committed consumers (librdkafka,
// kafkajs) see committed transactions only, and never part of one. The
// broker finalizes transaction.version 2, which neither client implements:
// they keep to the earlier protocol (the Java client's use of version 2 is
// in java-client.test.ts and differential/transactions-v2.test.ts).
import { fileURLToPath } from 'node:url';
import { Kafka, logLevel, type EachBatchPayload } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DescribeTransactionsApi } from '../src/protocol/messages/index.js';
import { startTestBroker, type TestBroker } from '../test/support/broker.js';
import { RawClient } from '../test/support/raw-client.js';
import { runJavaClient } from './support/java.js';
import { dataset, toJson } from './support/records.js';
import { PYTHON, run } from './support/spawn.js';

let broker: TestBroker;
beforeAll(async () => {
  broker = await startTestBroker();
});
afterAll(async () => {
  await broker?.destroy();
});

const range = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

describe('transactions with real clients', () => {
  it('librdkafka: commit, abort, send_offsets_to_transaction, fencing; read_committed sees committed records only', async () => {
    const kafka = new Kafka({ brokers: [broker.bootstrap], logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'tx-rdk', numPartitions: 1 }] });
    await admin.disconnect();
    const script = fileURLToPath(new URL('./python/transactional.py', import.meta.url));
    const result = await run(PYTHON, [script, broker.bootstrap, 'tx-rdk', 'rdk-txn', 'rdk-txn-group'], { timeoutMs: 90_000 });
    expect(result.stderr).not.toMatch(/Traceback/);
    const summary = JSON.parse(result.stdout.toString());
    expect(summary.group_offset).toBe(7);
    expect(summary.zombie_commit).not.toBe('committed');
    expect(summary.read_committed).toEqual([...range('c', 10), ...range('o', 5), 'fresh']);
    expect(summary.read_uncommitted).toEqual([...range('c', 10), ...range('a', 5), ...range('o', 5), 'zombie', 'fresh']);
    // The broker finalizes transaction.version 2, which librdkafka does not implement (KIP-890 part 2 is not in
    // librdkafka 2.16): it keeps to EndTxn below v5, so its epoch moved only with InitProducerId: the successor's
    // fenced the open transaction (abort with a bump) and took the next epoch. Under version 2 each EndTxn would bump it.
    const raw = await RawClient.connect(broker.bootstrap);
    const described = await raw.request(DescribeTransactionsApi, 0, { transactionalIds: ['rdk-txn'] });
    raw.close();
    expect(described.transactionStates[0]).toMatchObject({ transactionState: 'CompleteCommit', producerEpoch: 2 });
  });

  it('kafkajs: transaction() with send, sendOffsets, commit and abort; a read_committed consumer sees whole committed transactions', async () => {
    const kafka = new Kafka({ brokers: [broker.bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 5, initialRetryTime: 100 } });
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'tx-kjs', numPartitions: 2 }] });
    const producer = kafka.producer({ transactionalId: 'kjs-txn', idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();

    const committed = await producer.transaction();
    await committed.send({ topic: 'tx-kjs', messages: [...range('c', 6)].map((value, i) => ({ value, partition: i % 2 })) });
    await committed.sendOffsets({ consumerGroupId: 'kjs-offsets', topics: [{ topic: 'tx-kjs', partitions: [{ partition: 0, offset: '3' }] }] });
    await committed.commit();

    const aborted = await producer.transaction();
    await aborted.send({ topic: 'tx-kjs', messages: range('a', 4).map((value, i) => ({ value, partition: i % 2 })) });
    await aborted.abort();

    const last = await producer.transaction();
    await last.send({ topic: 'tx-kjs', messages: range('d', 2).map((value, i) => ({ value, partition: i % 2 })) });
    await last.commit();

    const offsets = await admin.fetchOffsets({ groupId: 'kjs-offsets', topics: ['tx-kjs'] });
    expect(offsets[0]!.partitions.find((p) => p.partition === 0)!.offset).toBe('3');

    // Fencing: a second producer with the same transactional id.
    const zombie = await producer.transaction();
    await zombie.send({ topic: 'tx-kjs', messages: [{ value: 'zombie', partition: 0 }] });
    const successor = kafka.producer({ transactionalId: 'kjs-txn', idempotent: true, maxInFlightRequests: 1 });
    await successor.connect();
    const fresh = await successor.transaction(); // InitProducerId: fences the first instance
    await expect(zombie.commit()).rejects.toThrow();
    await fresh.send({ topic: 'tx-kjs', messages: [{ value: 'fresh', partition: 1 }] });
    await fresh.commit();

    const consumer = kafka.consumer({ groupId: 'kjs-reader', readUncommitted: false });
    await consumer.connect();
    await consumer.subscribe({ topic: 'tx-kjs', fromBeginning: true });
    const seen: string[] = [];
    const done = new Promise<void>((resolve) => {
      void consumer.run({
        eachBatch: async ({ batch }: EachBatchPayload) => {
          for (const m of batch.messages) seen.push(m.value!.toString());
          if (seen.length >= 9) resolve();
        },
      });
    });
    await Promise.race([done, new Promise((r) => setTimeout(r, 20_000))]);
    await new Promise((r) => setTimeout(r, 500));
    await consumer.disconnect();
    await Promise.allSettled([producer.disconnect(), successor.disconnect(), admin.disconnect()]);
    expect(seen.sort()).toEqual([...range('c', 6), ...range('d', 2), 'fresh'].sort());
  });
});

describe('transactions version 2 turned off (transactionVersion 0)', () => {
  it('the Java client keeps to the earlier protocol: one epoch per producer session, fenced by AddPartitionsToTxn', async () => {
    const off = await startTestBroker({ transactionVersion: 0 });
    try {
      const input = dataset('tv-off', { partitions: 1, perPartition: 3 });
      const res = await runJavaClient(off.bootstrap, [
        { id: 'create', op: 'createTopics', topics: ['tv-off-in', 'tv-off-out'].map((name) => ({ name, partitions: 1, configs: {} })) },
        { id: 'produce', op: 'produce', topic: 'tv-off-in', config: {}, records: toJson(input).map((r) => ({ ...r, timestamp: null })) },
        {
          id: 'txn',
          op: 'transactions',
          input: 'tv-off-in',
          output: 'tv-off-out',
          group: 'tv-off',
          transactionalId: 'tv-off-id',
          expect: input.length,
          aborted: toJson(input.slice(0, 1)),
          after: toJson(input.slice(1, 2)),
          zombie: toJson(input.slice(2, 3)),
        },
        { id: 'describe', op: 'describeTransactions', ids: ['tv-off-id'] },
      ]);
      expect(res.txn.copied).toBe(input.length);
      expect(res.txn.zombie).toMatch(/^ProducerFencedException: /);
      // Its commits kept the epoch: only the successor's InitProducerId moved it.
      expect(res.describe['tv-off-id']).toMatchObject({ state: 'Empty', producerEpoch: 1 });
    } finally {
      await off.destroy();
    }
  }, 120_000);
});
