// Idempotent produce at the wire: InitProducerId, duplicates answered with
// their first offset and stored once, gaps and fenced epochs refused, and
// the state read back from the log after a restart.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/protocol/errors.js';
import { CreateTopicsApi, InitProducerIdApi, ProduceApi } from '../../src/protocol/messages/index.js';
import { buildBatch } from '../../src/protocol/records/index.js';
import { startTestBroker, type TestBroker } from '../support/broker.js';
import { RawClient } from '../support/raw-client.js';

let broker: TestBroker;
let client: RawClient;

beforeAll(async () => {
  broker = await startTestBroker();
  client = await RawClient.connect(broker.bootstrap);
  await client.request(CreateTopicsApi, 7, { topics: [{ name: 'idem', numPartitions: 1, replicationFactor: 1 }] });
});
afterAll(async () => {
  client?.close();
  await broker?.destroy();
});

async function produceWith(c: RawClient, producerId: bigint, producerEpoch: number, baseSequence: number, values: string[]) {
  const records = buildBatch({ producerId, producerEpoch, baseSequence, records: values.map((v) => ({ key: null, value: Buffer.from(v) })) });
  const res = await c.request(ProduceApi, 9, { acks: -1, timeoutMs: 1000, topicData: [{ name: 'idem', partitionData: [{ index: 0, records }] }] });
  return res.responses[0]!.partitionResponses[0]!;
}

const storedCount = async () => (await broker.query<{ n: string }>('SELECT sum(record_count)::text AS n FROM batches'))[0]!.n;

describe('idempotent producer', () => {
  it('hands out distinct producer ids and bumps an epoch on request (KIP-360)', async () => {
    const a = await client.request(InitProducerIdApi, 4, { transactionalId: null, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
    const b = await client.request(InitProducerIdApi, 1, { transactionalId: null, transactionTimeoutMs: 60_000 });
    expect(a).toMatchObject({ errorCode: 0, producerEpoch: 0 });
    expect(b.producerId).not.toBe(a.producerId);
    const bumped = await client.request(InitProducerIdApi, 4, { transactionalId: null, transactionTimeoutMs: 60_000, producerId: a.producerId, producerEpoch: 0 });
    expect(bumped).toMatchObject({ errorCode: 0, producerId: a.producerId, producerEpoch: 1 });
  });

  it('stores a retried batch once and answers the retry with its first offset', async () => {
    const { producerId } = await client.request(InitProducerIdApi, 4, { transactionalId: null, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
    const first = await produceWith(client, producerId, 0, 0, ['a', 'b']);
    const again = await produceWith(client, producerId, 0, 0, ['a', 'b']);
    expect(first).toMatchObject({ errorCode: 0 });
    expect(again).toMatchObject({ errorCode: 0, baseOffset: first.baseOffset });
    const next = await produceWith(client, producerId, 0, 2, ['c']);
    expect(next.baseOffset).toBe(first.baseOffset + 2n);
    expect(await storedCount()).toBe('3');
  });

  it('refuses a sequence gap and an older epoch, storing nothing', async () => {
    const { producerId } = await client.request(InitProducerIdApi, 4, { transactionalId: null, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
    await produceWith(client, producerId, 5, 0, ['x']);
    const before = await storedCount();
    expect((await produceWith(client, producerId, 5, 3, ['gap'])).errorCode).toBe(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
    expect((await produceWith(client, producerId, 4, 1, ['old'])).errorCode).toBe(ErrorCode.INVALID_PRODUCER_EPOCH);
    expect(await storedCount()).toBe(before);
  });

  it('recognises a retry after a broker restart, from the batches in PostgreSQL', async () => {
    const own = await startTestBroker();
    let c = await RawClient.connect(own.bootstrap);
    await c.request(CreateTopicsApi, 7, { topics: [{ name: 'idem', numPartitions: 1, replicationFactor: 1 }] });
    const { producerId } = await c.request(InitProducerIdApi, 4, { transactionalId: null, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
    const first = await produceWith(c, producerId, 0, 0, ['once']);
    c.close();
    await own.stop();
    const restarted = await startTestBroker({ schema: own.schema });
    try {
      c = await RawClient.connect(restarted.bootstrap);
      expect(await produceWith(c, producerId, 0, 0, ['once'])).toMatchObject({ errorCode: 0, baseOffset: first.baseOffset });
      expect((await produceWith(c, producerId, 0, 2, ['skipped one'])).errorCode).toBe(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
      expect(await restarted.query('SELECT 1 FROM batches')).toHaveLength(1);
      c.close();
    } finally {
      await restarted.destroy();
    }
  });

  it('serves transactional ids and refuses a transaction timeout above transaction.max.timeout.ms', async () => {
    const res = await client.request(InitProducerIdApi, 4, { transactionalId: 'tx-1', transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
    expect(res).toMatchObject({ errorCode: ErrorCode.NONE, producerEpoch: 0 });
    const badTimeout = await client.request(InitProducerIdApi, 4, { transactionalId: 'tx-1', transactionTimeoutMs: 10_000_000, producerId: -1n, producerEpoch: -1 });
    expect(badTimeout.errorCode).toBe(ErrorCode.INVALID_TRANSACTION_TIMEOUT);
  });

  it('forgets a producer after producer.id.expiration.ms: any sequence starts it afresh', async () => {
    const own = await startTestBroker({ producerIdExpirationMs: 300 });
    const c = await RawClient.connect(own.bootstrap);
    try {
      await c.request(CreateTopicsApi, 7, { topics: [{ name: 'idem', numPartitions: 1, replicationFactor: 1 }] });
      const { producerId } = await c.request(InitProducerIdApi, 4, { transactionalId: null, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
      await produceWith(c, producerId, 0, 0, ['a']);
      expect((await produceWith(c, producerId, 0, 5, ['gap'])).errorCode).toBe(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
      await new Promise((r) => setTimeout(r, 400));
      expect((await produceWith(c, producerId, 0, 5, ['after expiry'])).errorCode).toBe(0);
    } finally {
      c.close();
      await own.destroy();
    }
  });
});
