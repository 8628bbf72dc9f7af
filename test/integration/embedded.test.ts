// `npm start` on a bare machine: with no DATABASE_URL the broker runs on an
// embedded PostgreSQL whose data directory survives restarts.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FetchApi, ProduceApi } from '../../src/protocol/messages/index.js';
import { buildBatch, decodeRecords, parseBatches } from '../../src/protocol/records/index.js';
import { freePort, spawnBroker } from '../support/broker-process.js';
import { RawClient } from '../support/raw-client.js';

const dataDir = mkdtempSync(join(tmpdir(), 'pgkafka-embedded-'));
// As root, the embedded server runs as "postgres" and must be able to enter the directory.
chmodSync(dataDir, 0o755);
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe('embedded PostgreSQL', () => {
  it('refuses, with a message, a data directory the postgres user cannot enter when run as root', async () => {
    if (process.getuid?.() !== 0) return;
    const closed = mkdtempSync(join(tmpdir(), 'pgkafka-closed-'));
    try {
      await expect(spawnBroker({ DATABASE_URL: '', PGKAFKA_DATA_DIR: join(closed, 'data'), PGKAFKA_PORT: String(await freePort()) })).rejects.toThrow(
        /cannot enter .*pgkafka-closed-.*PGKAFKA_DATA_DIR/s,
      );
    } finally {
      rmSync(closed, { recursive: true, force: true });
    }
  });

  it('starts without DATABASE_URL and keeps the log across restarts', async () => {
    const env = { DATABASE_URL: '', PGKAFKA_DATA_DIR: dataDir, PGKAFKA_PORT: String(await freePort()), PGKAFKA_EMBEDDED_PG_PORT: String(await freePort()) };
    const bootstrap = `127.0.0.1:${env.PGKAFKA_PORT}`;
    let broker = await spawnBroker(env);
    try {
      expect(broker.output()).toContain('embedded PostgreSQL started');
      const client = await RawClient.connect(bootstrap);
      const res = await client.request(ProduceApi, 9, {
        acks: -1,
        timeoutMs: 1000,
        topicData: [{ name: 'local', partitionData: [{ index: 0, records: buildBatch({ records: [{ key: Buffer.from('k'), value: Buffer.from('kept') }] }) }] }],
      });
      expect(res.responses[0]!.partitionResponses[0]!.errorCode).toBe(0);
      client.close();
    } finally {
      broker.child.kill('SIGTERM');
      await broker.exited;
    }
    broker = await spawnBroker(env);
    try {
      const client = await RawClient.connect(bootstrap);
      const fetched = await client.request(FetchApi, 11, {
        replicaId: -1,
        maxWaitMs: 0,
        minBytes: 1,
        maxBytes: 1 << 20,
        sessionEpoch: -1,
        topics: [{ topic: 'local', partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1 << 20 }] }],
      });
      const buf = fetched.responses[0]!.partitions[0]!.records as Buffer;
      const [header] = parseBatches(buf, { mode: 'log' }).batches;
      expect(decodeRecords(buf, header!).records.map((r) => r.value!.toString())).toEqual(['kept']);
      client.close();
    } finally {
      broker.child.kill('SIGTERM');
      expect(await broker.exited).toBe(0);
    }
  });
});
