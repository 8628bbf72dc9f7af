// Acknowledged records survive restarts and kill -9: the broker answers
// acks=all only after the PostgreSQL commit.
import { Kafka, logLevel } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { FetchApi, ProduceApi } from '../../src/protocol/messages/index.js';
import { buildBatch, decodeRecords, parseBatches } from '../../src/protocol/records/index.js';
import { scratchSchema, testDatabaseUrl } from '../support/broker.js';
import { freePort, spawnBroker } from '../support/broker-process.js';
import { RawClient } from '../support/raw-client.js';

const schema = scratchSchema();

async function readAll(bootstrap: string, topic: string, partition: number): Promise<Map<bigint, string>> {
  const client = await RawClient.connect(bootstrap);
  const out = new Map<bigint, string>();
  try {
    let offset = 0n;
    for (;;) {
      const res = await client.request(FetchApi, 11, {
        replicaId: -1,
        maxWaitMs: 0,
        minBytes: 1,
        maxBytes: 1 << 24,
        sessionEpoch: -1,
        topics: [{ topic, partitions: [{ partition, fetchOffset: offset, partitionMaxBytes: 1 << 24 }] }],
      });
      const p = res.responses[0]!.partitions[0]!;
      expect(p.errorCode).toBe(0);
      const buf = p.records as Buffer;
      if (buf.length === 0) return out;
      for (const h of parseBatches(buf, { mode: 'log' }).batches) {
        for (const r of decodeRecords(buf, h).records) out.set(h.baseOffset + BigInt(r.offsetDelta), r.value!.toString());
        offset = h.baseOffset + BigInt(h.lastOffsetDelta) + 1n;
      }
    }
  } finally {
    client.close();
  }
}

describe('durability', () => {
  it('keeps every record with its offset across a graceful restart', async () => {
    const port = await freePort();
    const env = { DATABASE_URL: testDatabaseUrl(), PGKAFKA_SCHEMA: schema, PGKAFKA_PORT: String(port) };
    const first = await spawnBroker(env);
    const kafka = new Kafka({ brokers: [`127.0.0.1:${port}`], logLevel: logLevel.NOTHING });
    const producer = kafka.producer();
    await producer.connect();
    for (let i = 0; i < 20; i++) await producer.send({ topic: 'restart', acks: -1, messages: [{ key: `k${i}`, value: `v${i}` }] });
    await producer.disconnect();
    const before = await readAll(`127.0.0.1:${port}`, 'restart', 0);
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);

    const second = await spawnBroker(env);
    try {
      const after = await readAll(`127.0.0.1:${port}`, 'restart', 0);
      expect(after.size).toBe(20);
      expect([...after.entries()]).toEqual([...before.entries()]);
      expect([...after.values()]).toEqual(Array.from({ length: 20 }, (_, i) => `v${i}`));
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
  });

  it('answers a parked long-poll fetch before exiting on SIGTERM', async () => {
    const port = await freePort();
    const broker = await spawnBroker({ DATABASE_URL: testDatabaseUrl(), PGKAFKA_SCHEMA: schema, PGKAFKA_PORT: String(port) });
    const client = await RawClient.connect(`127.0.0.1:${port}`);
    await client.request(ProduceApi, 9, {
      acks: -1,
      timeoutMs: 1000,
      topicData: [{ name: 'parked', partitionData: [{ index: 0, records: buildBatch({ records: [{ key: null, value: Buffer.from('a') }] }) }] }],
    });
    const pending = client.request(FetchApi, 11, {
      replicaId: -1,
      maxWaitMs: 20_000,
      minBytes: 1,
      maxBytes: 1 << 20,
      sessionEpoch: -1,
      topics: [{ topic: 'parked', partitions: [{ partition: 0, fetchOffset: 1n, partitionMaxBytes: 1 << 20 }] }],
    });
    await new Promise((r) => setTimeout(r, 300));
    const started = Date.now();
    broker.child.kill('SIGTERM');
    const res = await pending;
    expect(res.responses[0]!.partitions[0]!.errorCode).toBe(0);
    expect(res.responses[0]!.partitions[0]!.highWatermark).toBe(1n);
    expect(await broker.exited).toBe(0);
    expect(Date.now() - started).toBeLessThan(10_000);
    client.close();
  });

  it('loses no acknowledged record when killed with SIGKILL during acks=all production', async () => {
    const port = await freePort();
    const env = { DATABASE_URL: testDatabaseUrl(), PGKAFKA_SCHEMA: schema, PGKAFKA_PORT: String(port) };
    const acknowledged = new Map<bigint, string>();
    for (let round = 0; round < 3; round++) {
      const broker = await spawnBroker(env);
      const clients = await Promise.all([0, 1, 2].map(() => RawClient.connect(`127.0.0.1:${port}`)));
      let stop = false;
      const writers = clients.map(async (client, w) => {
        for (let i = 0; !stop; i++) {
          const value = `r${round}-w${w}-${i}`;
          try {
            const res = await client.request(ProduceApi, 9, {
              acks: -1,
              timeoutMs: 5000,
              topicData: [{ name: 'killed', partitionData: [{ index: 0, records: buildBatch({ records: [{ key: null, value: Buffer.from(value) }] }) }] }],
            });
            const p = res.responses[0]!.partitionResponses[0]!;
            if (p.errorCode === 0) acknowledged.set(p.baseOffset, value);
          } catch {
            return; // the connection died with the broker: this request was never acknowledged
          }
        }
      });
      await new Promise((r) => setTimeout(r, 400 + Math.random() * 600));
      broker.child.kill('SIGKILL');
      stop = true;
      await Promise.all(writers);
      await broker.exited;
      for (const c of clients) c.close();
    }
    expect(acknowledged.size).toBeGreaterThan(30);
    const broker = await spawnBroker(env);
    try {
      const stored = await readAll(`127.0.0.1:${port}`, 'killed', 0);
      for (const [offset, value] of acknowledged) expect(stored.get(offset)).toBe(value);
      // Offsets stay dense: every offset below the high watermark holds a record.
      expect([...stored.keys()]).toEqual(Array.from({ length: stored.size }, (_, i) => BigInt(i)));
    } finally {
      broker.child.kill('SIGTERM');
      await broker.exited;
    }
  });
});
