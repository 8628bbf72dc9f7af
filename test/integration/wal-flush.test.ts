// A produce is answered, and its record shown to consumers, only once
// PostgreSQL's commit of it is durable, with or without producer ids. The
// test owns a PostgreSQL server and makes every synchronous commit wait for
// a standby that never comes (synchronous_standby_names), so nothing can
// become durable until the setting is lifted. (An append committed without
// its WAL flush, followed by a transaction meant to wait for that flush,
// was tried: one that writes no WAL of its own does not wait, and this test
// caught it.)
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreateTopicsApi, FetchApi, InitProducerIdApi, ProduceApi } from '../../src/protocol/messages/index.js';
import { buildBatch, decodeRecords, parseBatches } from '../../src/protocol/records/index.js';
import { freePort, spawnBroker, type BrokerProcess } from '../support/broker-process.js';
import { startOwnedPostgres, type OwnedPostgres } from '../support/postgres-server.js';
import { RawClient } from '../support/raw-client.js';

let server: OwnedPostgres;
let broker: BrokerProcess | null = null;
let bootstrap: string;

async function admin(sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: server.url });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

/** Synchronous commits wait for a standby that does not exist (on) or not (off). */
async function standbyRequired(on: boolean): Promise<void> {
  await admin(on ? "ALTER SYSTEM SET synchronous_standby_names = 'pgkafka_absent_standby'" : 'ALTER SYSTEM RESET synchronous_standby_names');
  await admin('SELECT pg_reload_conf()');
  await new Promise((r) => setTimeout(r, 300)); // backends take the reloaded setting at their next command
}

beforeAll(async () => {
  server = await startOwnedPostgres();
  const port = await freePort();
  broker = await spawnBroker({ DATABASE_URL: server.url, PGKAFKA_SCHEMA: 'pgkafka', PGKAFKA_PORT: String(port) });
  bootstrap = `127.0.0.1:${port}`;
});
afterAll(async () => {
  if (broker && broker.child.exitCode === null && broker.child.signalCode === null) {
    broker.child.kill('SIGKILL');
    await broker.exited;
  }
  await server?.destroy();
});

async function fetchValues(client: RawClient, topic: string) {
  const res = await client.request(FetchApi, 12, {
    replicaId: -1,
    maxWaitMs: 0,
    minBytes: 1,
    maxBytes: 1 << 20,
    sessionEpoch: -1,
    topics: [{ topic, partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1 << 20 }] }],
  });
  const p = res.responses[0]!.partitions[0]!;
  const buf = (p.records as Buffer | null) ?? Buffer.alloc(0);
  return { highWatermark: p.highWatermark, values: parseBatches(buf, { mode: 'log' }).batches.flatMap((h) => decodeRecords(buf, h).records.map((r) => r.value!.toString())) };
}

describe('acknowledgement waits for durability', () => {
  it.each([
    ['a producer without a producer id', false],
    ['an idempotent producer', true],
  ])('answers %s only after the WAL flush, and shows the record to consumers only then', { timeout: 60_000 }, async (_name, idempotent) => {
    const topic = idempotent ? 'durable-idempotent' : 'durable-plain';
    const producer = await RawClient.connect(bootstrap);
    const consumer = await RawClient.connect(bootstrap);
    try {
      const created = await producer.request(CreateTopicsApi, 7, { topics: [{ name: topic, numPartitions: 1, replicationFactor: 1 }], timeoutMs: 5000 });
      expect(created.topics[0]!.errorCode).toBe(0);
      const ids = idempotent
        ? await producer.request(InitProducerIdApi, 4, { transactionalId: null, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 })
        : { producerId: -1n, producerEpoch: -1 };
      const records = buildBatch({ producerId: ids.producerId, producerEpoch: ids.producerEpoch, baseSequence: idempotent ? 0 : -1, records: [{ key: null, value: Buffer.from('durable') }] });

      await standbyRequired(true);
      let answered = false;
      const produced = producer.request(ProduceApi, 9, { acks: -1, timeoutMs: 30_000, topicData: [{ name: topic, partitionData: [{ index: 0, records }] }] }).finally(() => (answered = true));
      await new Promise((r) => setTimeout(r, 1500));
      expect(answered).toBe(false);
      expect(await fetchValues(consumer, topic)).toEqual({ highWatermark: 0n, values: [] });

      await standbyRequired(false);
      const res = await produced;
      expect(res.responses[0]!.partitionResponses[0]!.errorCode).toBe(0);
      expect(res.responses[0]!.partitionResponses[0]!.baseOffset).toBe(0n);
      expect(await fetchValues(consumer, topic)).toEqual({ highWatermark: 1n, values: ['durable'] });
    } finally {
      await standbyRequired(false);
      producer.close();
      consumer.close();
    }
  });
});
