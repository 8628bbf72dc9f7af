// Offset commit metadata is kept as sent and returned byte for byte, NUL
// characters included, for OffsetCommit and TxnOffsetCommit; only metadata
// longer than offset.metadata.max.bytes is refused (OFFSET_METADATA_TOO_LARGE).
import { fileURLToPath } from 'node:url';
import { runner } from 'node-pg-migrate';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/protocol/errors.js';
import { AddOffsetsToTxnApi, CreateTopicsApi, EndTxnApi, InitProducerIdApi, OffsetCommitApi, OffsetFetchApi, TxnOffsetCommitApi } from '../../src/protocol/messages/index.js';
import { scratchSchema, startTestBroker, testDatabaseUrl, type TestBroker } from '../support/broker.js';
import { RawClient } from '../support/raw-client.js';

let broker: TestBroker;
let client: RawClient;

beforeAll(async () => {
  broker = await startTestBroker({ offsetMetadataMaxBytes: 16 });
  client = await RawClient.connect(broker.bootstrap);
  await client.request(CreateTopicsApi, 7, { topics: [{ name: 'meta', numPartitions: 4, replicationFactor: 1 }] });
});
afterAll(async () => {
  client?.close();
  await broker?.destroy();
});

const fetchMetadata = async (groupId: string, partitions: number[]) => {
  const res = await client.request(OffsetFetchApi, 8, { groups: [{ groupId, topics: [{ name: 'meta', partitionIndexes: partitions }] }] });
  return res.groups[0]!.topics[0]!.partitions.map((p) => [p.errorCode, p.committedOffset, p.metadata]);
};

describe('OffsetCommit metadata', () => {
  it('stores metadata holding NUL characters and returns it as sent, at v2 and v8', async () => {
    for (const version of [2, 8]) {
      const groupId = `nul-${version}`;
      const res = await client.request(OffsetCommitApi, version, {
        groupId,
        generationIdOrMemberEpoch: -1,
        memberId: '',
        topics: [
          {
            name: 'meta',
            partitions: [
              { partitionIndex: 0, committedOffset: 1n, committedMetadata: 'Hello\u0000world!' },
              { partitionIndex: 1, committedOffset: 2n, committedMetadata: 'trailing\u0000' },
              { partitionIndex: 2, committedOffset: 3n, committedMetadata: '\u0000' },
              { partitionIndex: 3, committedOffset: 4n, committedMetadata: null },
            ],
          },
        ],
      });
      expect(res.topics[0]!.partitions.map((p) => p.errorCode)).toEqual([0, 0, 0, 0]);
      expect(await fetchMetadata(groupId, [0, 1, 2, 3])).toEqual([
        [0, 1n, 'Hello\u0000world!'],
        [0, 2n, 'trailing\u0000'],
        [0, 3n, '\u0000'],
        // A null metadata is answered as the empty string, as Kafka answers it.
        [0, 4n, ''],
      ]);
    }
    const stored = await broker.query<{ metadata: Buffer | null }>("SELECT metadata FROM committed_offsets WHERE group_id = 'nul-8' ORDER BY partition");
    expect(stored.map((r) => r.metadata?.toString('hex') ?? null)).toEqual([Buffer.from('Hello\0world!').toString('hex'), Buffer.from('trailing\0').toString('hex'), '00', null]);
  });

  it('refuses only metadata longer than offset.metadata.max.bytes, counted in characters as Kafka counts them', async () => {
    const res = await client.request(OffsetCommitApi, 8, {
      groupId: 'sizes',
      generationIdOrMemberEpoch: -1,
      memberId: '',
      topics: [
        {
          name: 'meta',
          partitions: [
            { partitionIndex: 0, committedOffset: 1n, committedMetadata: 'x'.repeat(16) },
            { partitionIndex: 1, committedOffset: 1n, committedMetadata: 'x'.repeat(17) },
            // 16 characters, 32 bytes of UTF-8: Kafka compares String.length() with the limit.
            { partitionIndex: 2, committedOffset: 1n, committedMetadata: '\u00e9'.repeat(16) },
            { partitionIndex: 3, committedOffset: 1n, committedMetadata: '\u0000'.repeat(17) },
          ],
        },
      ],
    });
    expect(res.topics[0]!.partitions.map((p) => p.errorCode)).toEqual([0, ErrorCode.OFFSET_METADATA_TOO_LARGE, 0, ErrorCode.OFFSET_METADATA_TOO_LARGE]);
    expect(await fetchMetadata('sizes', [0, 1, 2, 3])).toEqual([
      [0, 1n, 'x'.repeat(16)],
      [0, -1n, ''],
      [0, 1n, '\u00e9'.repeat(16)],
      [0, -1n, ''],
    ]);
  });
});

describe('TxnOffsetCommit metadata', () => {
  it('stages metadata holding NUL characters and commits it as sent, across a broker restart', async () => {
    const own = await startTestBroker({ offsetMetadataMaxBytes: 16 });
    let c = await RawClient.connect(own.bootstrap);
    await c.request(CreateTopicsApi, 7, { topics: [{ name: 'meta', numPartitions: 2, replicationFactor: 1 }] });
    const init = await c.request(InitProducerIdApi, 4, { transactionalId: 'meta-tx', transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
    expect(init.errorCode).toBe(0);
    const ids = { transactionalId: 'meta-tx', producerId: init.producerId, producerEpoch: init.producerEpoch };
    expect((await c.request(AddOffsetsToTxnApi, 3, { ...ids, groupId: 'tx-nul' })).errorCode).toBe(0);
    const commit = await c.request(TxnOffsetCommitApi, 3, {
      ...ids,
      groupId: 'tx-nul',
      generationId: -1,
      memberId: '',
      groupInstanceId: null,
      topics: [
        {
          name: 'meta',
          partitions: [
            { partitionIndex: 0, committedOffset: 7n, committedLeaderEpoch: -1, committedMetadata: 'Hello\u0000world!' },
            { partitionIndex: 1, committedOffset: 8n, committedLeaderEpoch: -1, committedMetadata: 'x'.repeat(17) },
          ],
        },
      ],
    });
    expect(commit.topics[0]!.partitions.map((p) => p.errorCode)).toEqual([0, ErrorCode.OFFSET_METADATA_TOO_LARGE]);
    c.close();
    await own.stop();

    // The restarted coordinator reloads the staged offsets from PostgreSQL before the commit moves them.
    const restarted = await startTestBroker({ schema: own.schema, offsetMetadataMaxBytes: 16 });
    try {
      c = await RawClient.connect(restarted.bootstrap);
      expect((await c.request(EndTxnApi, 3, { ...ids, committed: true })).errorCode).toBe(0);
      const res = await c.request(OffsetFetchApi, 8, { groups: [{ groupId: 'tx-nul', topics: [{ name: 'meta', partitionIndexes: [0, 1] }] }] });
      expect(res.groups[0]!.topics[0]!.partitions.map((p) => [p.errorCode, p.committedOffset, p.metadata])).toEqual([
        [0, 7n, 'Hello\u0000world!'],
        [0, -1n, ''],
      ]);
      c.close();
    } finally {
      await restarted.destroy();
    }
  });
});

describe('migration 0010', () => {
  const schema = scratchSchema();

  it('converts metadata committed before it to the same bytes', async () => {
    const migrationsDir = fileURLToPath(new URL('../../migrations', import.meta.url));
    const db = new pg.Client({ connectionString: testDatabaseUrl() });
    await db.connect();
    try {
      await db.query(`CREATE SCHEMA ${schema}`);
      const migrateTo = (count: number) =>
        runner({ dbClient: db, dir: migrationsDir, direction: 'up', count, migrationsTable: 'schema_migrations', schema, checkOrder: true, singleTransaction: true, log: () => {} });
      await migrateTo(9);
      await db.query(`INSERT INTO ${schema}.committed_offsets (group_id, topic, partition, committed_offset, metadata) VALUES ('g', 't', 0, 5, 'caf\u00e9 \u2615'), ('g', 't', 1, 6, NULL)`);
      await db.query(`INSERT INTO ${schema}.txn_offsets (transactional_id, group_id, topic, partition, committed_offset, metadata) VALUES ('tx', 'g', 't', 0, 5, 'staged')`);
      await migrateTo(Infinity);
      const { rows } = await db.query<{ metadata: Buffer | null }>(`SELECT metadata FROM ${schema}.committed_offsets ORDER BY partition`);
      expect(rows.map((r) => r.metadata)).toEqual([Buffer.from('caf\u00e9 \u2615'), null]);
      const staged = await db.query<{ metadata: Buffer }>(`SELECT metadata FROM ${schema}.txn_offsets`);
      expect(staged.rows[0]!.metadata).toEqual(Buffer.from('staged'));
    } finally {
      await db.end();
    }
  });
});
