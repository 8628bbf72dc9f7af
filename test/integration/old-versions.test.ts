// The request versions Kafka 4.0 removed (KIP-896), served with Kafka 3.9's
// semantics, and the switch that serves only Kafka 4's versions.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/protocol/errors.js';
import {
  ApiVersionsApi,
  CreateTopicsApi,
  DeleteTopicsApi,
  DescribeAclsApi,
  DescribeConfigsApi,
  ListOffsetsApi,
  MetadataApi,
  OffsetCommitApi,
  OffsetFetchApi,
  OffsetForLeaderEpochApi,
  ProduceApi,
} from '../../src/protocol/messages/index.js';
import { buildBatch } from '../../src/protocol/records/index.js';
import { GroupStore } from '../../src/storage/pg/group-store.js';
import { startTestBroker, type TestBroker } from '../support/broker.js';
import { RawClient } from '../support/raw-client.js';

let broker: TestBroker;
let client: RawClient;

beforeAll(async () => {
  broker = await startTestBroker();
  client = await RawClient.connect(broker.bootstrap);
});
afterAll(async () => {
  client?.close();
  await broker?.destroy();
});

const batchOf = (n: number, baseTimestamp: bigint) =>
  buildBatch({ compression: 0, baseTimestamp, records: Array.from({ length: n }, (_, i) => ({ offsetDelta: i, timestampDelta: BigInt(i), key: null, value: Buffer.from(`v${i}`), headers: [] })) });

async function produce(topic: string, n: number, baseTimestamp = 1_700_000_000_000n) {
  const res = await client.request(ProduceApi, 7, { acks: -1, timeoutMs: 1000, topicData: [{ name: topic, partitionData: [{ index: 0, records: batchOf(n, baseTimestamp) }] }] });
  expect(res.responses[0]!.partitionResponses[0]!.errorCode).toBe(ErrorCode.NONE);
}

describe('versions Kafka 4.0 removed', () => {
  it('ApiVersions advertises the versions Kafka 3.9 served', async () => {
    const res = await client.request(ApiVersionsApi, 0, {});
    const byKey = new Map(res.apiKeys.map((k) => [k.apiKey, [k.minVersion, k.maxVersion]]));
    expect(byKey.get(ListOffsetsApi.apiKey)).toEqual([0, 11]);
    expect(byKey.get(OffsetCommitApi.apiKey)).toEqual([0, 10]);
    expect(byKey.get(OffsetFetchApi.apiKey)).toEqual([0, 10]);
    expect(byKey.get(CreateTopicsApi.apiKey)).toEqual([0, 7]);
    expect(byKey.get(DescribeConfigsApi.apiKey)).toEqual([0, 4]);
    expect(byKey.get(OffsetForLeaderEpochApi.apiKey)).toEqual([0, 4]);
    expect(byKey.get(ProduceApi.apiKey)).toEqual([0, 13]);
    expect(byKey.get(1)).toEqual([0, 18]);
  });

  it('CreateTopics v0 creates, DeleteTopics v0 deletes', async () => {
    const created = await client.request(CreateTopicsApi, 0, { topics: [{ name: 'old-created', numPartitions: 2, replicationFactor: 1 }], timeoutMs: 1000 });
    expect(created.topics).toEqual([expect.objectContaining({ name: 'old-created', errorCode: ErrorCode.NONE })]);
    const again = await client.request(CreateTopicsApi, 0, { topics: [{ name: 'old-created', numPartitions: 2, replicationFactor: 1 }], timeoutMs: 1000 });
    expect(again.topics[0]!.errorCode).toBe(ErrorCode.TOPIC_ALREADY_EXISTS);
    const meta = await client.request(MetadataApi, 0, { topics: [] });
    expect(meta.topics.find((t) => t.name === 'old-created')?.partitions).toHaveLength(2);
    const deleted = await client.request(DeleteTopicsApi, 0, { topicNames: ['old-created'], timeoutMs: 1000 });
    expect(deleted.responses).toEqual([expect.objectContaining({ name: 'old-created', errorCode: ErrorCode.NONE })]);
  });

  it('ListOffsets v0 answers MaxNumOffsets offsets, newest first', async () => {
    await client.request(CreateTopicsApi, 0, { topics: [{ name: 'old-offsets', numPartitions: 1, replicationFactor: 1 }], timeoutMs: 1000 });
    const ask = async (timestamp: bigint, maxNumOffsets: number) => {
      const res = await client.request(ListOffsetsApi, 0, { replicaId: -1, topics: [{ name: 'old-offsets', partitions: [{ partitionIndex: 0, timestamp, maxNumOffsets }] }] });
      const p = res.topics[0]!.partitions[0]!;
      return [p.errorCode, p.oldStyleOffsets];
    };
    // Empty log: one entry, the log start.
    expect(await ask(-1n, 10)).toEqual([ErrorCode.NONE, [0n]]);
    await produce('old-offsets', 5);
    expect(await ask(-1n, 10)).toEqual([ErrorCode.NONE, [5n, 0n]]);
    expect(await ask(-1n, 1)).toEqual([ErrorCode.NONE, [5n]]);
    expect(await ask(-2n, 10)).toEqual([ErrorCode.NONE, [0n]]);
    // Before the newest record's time: nothing; after it: the log start; from now on: the end too.
    expect(await ask(1_600_000_000_000n, 10)).toEqual([ErrorCode.NONE, []]);
    expect(await ask(1_700_000_000_010n, 10)).toEqual([ErrorCode.NONE, [0n]]);
    expect(await ask(BigInt(Date.now()) + 60_000n, 10)).toEqual([ErrorCode.NONE, [5n, 0n]]);
    // Negative timestamps other than -1 and -2 are not v0's.
    expect(await ask(-3n, 10)).toEqual([ErrorCode.UNSUPPORTED_VERSION, []]);
    const unknown = await client.request(ListOffsetsApi, 0, { replicaId: -1, topics: [{ name: 'old-offsets', partitions: [{ partitionIndex: 7, timestamp: -1n, maxNumOffsets: 1 }] }] });
    expect(unknown.topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  });

  it('OffsetCommit v0 stores a commit OffsetFetch v0 reads; v1 keeps the commit timestamp; v2 sets the expiry', async () => {
    await client.request(CreateTopicsApi, 0, { topics: [{ name: 'old-commits', numPartitions: 1, replicationFactor: 1 }], timeoutMs: 1000 });
    const commit = async (version: number, groupId: string, offset: bigint, extra: { commitTimestamp?: bigint; retentionTimeMs?: bigint } = {}) => {
      const res = await client.request(OffsetCommitApi, version, {
        groupId,
        generationIdOrMemberEpoch: -1,
        memberId: '',
        retentionTimeMs: extra.retentionTimeMs ?? -1n,
        topics: [{ name: 'old-commits', partitions: [{ partitionIndex: 0, committedOffset: offset, commitTimestamp: extra.commitTimestamp ?? -1n, committedMetadata: 'm' }] }],
      });
      return res.topics[0]!.partitions[0]!.errorCode;
    };
    const fetched = async (groupId: string) => {
      const res = await client.request(OffsetFetchApi, 0, { groupId, topics: [{ name: 'old-commits', partitionIndexes: [0] }] });
      const p = res.topics[0]!.partitions[0]!;
      return [p.errorCode, p.committedOffset, p.metadata];
    };
    expect(await commit(0, 'old-v0', 3n)).toBe(ErrorCode.NONE);
    expect(await fetched('old-v0')).toEqual([ErrorCode.NONE, 3n, 'm']);

    expect(await commit(1, 'old-v1', 4n, { commitTimestamp: 1_600_000_000_000n })).toBe(ErrorCode.NONE);
    expect(await fetched('old-v1')).toEqual([ErrorCode.NONE, 4n, 'm']);
    const [v1] = await broker.query<{ ms: string; expire: Date | null }>(
      "SELECT (extract(epoch FROM commit_timestamp) * 1000)::int8::text AS ms, expire_timestamp AS expire FROM committed_offsets WHERE group_id = 'old-v1'",
    );
    expect(v1).toEqual({ ms: '1600000000000', expire: null });

    expect(await commit(2, 'old-v2', 5n, { retentionTimeMs: 3_600_000n })).toBe(ErrorCode.NONE);
    const [v2] = await broker.query<{ after: number }>("SELECT extract(epoch FROM expire_timestamp - commit_timestamp)::float8 AS after FROM committed_offsets WHERE group_id = 'old-v2'");
    expect(v2!.after).toBeCloseTo(3600, 0);
    // A later commit without a retention time goes back to offsets.retention.minutes.
    expect(await commit(2, 'old-v2', 6n)).toBe(ErrorCode.NONE);
    const [v2b] = await broker.query<{ expire: Date | null }>("SELECT expire_timestamp AS expire FROM committed_offsets WHERE group_id = 'old-v2'");
    expect(v2b!.expire).toBeNull();
  });

  it('an offset committed with a retention time expires at its own time, others by offsets.retention.minutes', async () => {
    await client.request(CreateTopicsApi, 0, { topics: [{ name: 'old-expiry', numPartitions: 1, replicationFactor: 1 }], timeoutMs: 1000 });
    const commit = (groupId: string, retentionTimeMs: bigint) =>
      client.request(OffsetCommitApi, 3, {
        groupId,
        generationIdOrMemberEpoch: -1,
        memberId: '',
        retentionTimeMs,
        topics: [{ name: 'old-expiry', partitions: [{ partitionIndex: 0, committedOffset: 1n }] }],
      });
    await commit('old-short', 1n);
    await commit('old-default', -1n);
    await new Promise((r) => setTimeout(r, 50));
    const pool = new pg.Pool({ connectionString: broker.databaseUrl, options: `-c search_path=${broker.schema}`, max: 1 });
    try {
      // A week of offsets.retention.minutes: of these two, only the explicit retention has passed
      // (old-v1 above goes too: its v1 commit timestamp is years old, and expiry counts from it, as Kafka's).
      expect(await new GroupStore(pool).expireOffsets(7 * 24 * 3600 * 1000)).toBeGreaterThanOrEqual(1);
    } finally {
      await pool.end();
    }
    const left = await broker.query<{ group_id: string }>("SELECT group_id FROM committed_offsets WHERE topic = 'old-expiry' ORDER BY group_id");
    expect(left.map((r) => r.group_id)).toEqual(['old-default']);
  });

  it('DescribeConfigs v0 answers IsDefault false, as Kafka 3.9; DescribeAcls v0 answers SECURITY_DISABLED without an authorizer', async () => {
    await client.request(CreateTopicsApi, 0, { topics: [{ name: 'old-configs', numPartitions: 1, replicationFactor: 1 }], timeoutMs: 1000 });
    const res = await client.request(DescribeConfigsApi, 0, { resources: [{ resourceType: 2, resourceName: 'old-configs', configurationKeys: ['cleanup.policy', 'retention.ms'] }] });
    const r = res.results[0]!;
    expect(r.errorCode).toBe(ErrorCode.NONE);
    expect(r.configs.map((c) => [c.name, c.value, c.isDefault])).toEqual([
      ['cleanup.policy', 'delete', false],
      ['retention.ms', '604800000', false],
    ]);
    const acls = await client.request(DescribeAclsApi, 0, { resourceTypeFilter: 1, resourceNameFilter: null, principalFilter: null, hostFilter: null, operation: 1, permissionType: 1 });
    expect(acls.errorCode).toBe(ErrorCode.SECURITY_DISABLED);
  });
});

describe('PGKAFKA_KAFKA4_VERSIONS_ONLY', () => {
  let only4: TestBroker;
  beforeAll(async () => {
    only4 = await startTestBroker({ kafka4VersionsOnly: true });
  });
  afterAll(async () => {
    await only4?.destroy();
  });

  it("advertises Kafka 4's ranges", async () => {
    const c = await RawClient.connect(only4.bootstrap);
    const res = await c.request(ApiVersionsApi, 3, { clientSoftwareName: 't', clientSoftwareVersion: '1' });
    c.close();
    const byKey = new Map(res.apiKeys.map((k) => [k.apiKey, [k.minVersion, k.maxVersion]]));
    expect(byKey.get(ListOffsetsApi.apiKey)).toEqual([1, 11]);
    expect(byKey.get(OffsetCommitApi.apiKey)).toEqual([2, 10]);
    expect(byKey.get(CreateTopicsApi.apiKey)).toEqual([2, 7]);
    expect(byKey.get(DescribeConfigsApi.apiKey)).toEqual([1, 4]);
    // Produce keeps its advertised v0, as Kafka 4 (KAFKA-18659).
    expect(byKey.get(ProduceApi.apiKey)).toEqual([0, 13]);
    expect(byKey.get(MetadataApi.apiKey)).toEqual([0, 13]);
    expect(byKey.get(1)).toEqual([4, 18]);
  });

  it('closes the connection on a version Kafka 4 removed; ApiVersions above its range answers UNSUPPORTED_VERSION', async () => {
    const c = await RawClient.connect(only4.bootstrap);
    await expect(c.request(OffsetCommitApi, 1, { groupId: 'g', topics: [] })).rejects.toThrow(/connection closed/);
    c.close();
    const d = await RawClient.connect(only4.bootstrap);
    const frame = d.nextFrame();
    d.write(d.encode(ApiVersionsApi, 9, {}));
    const bytes = await frame;
    d.close();
    expect(bytes).not.toBeNull();
    // Header v0 (correlation id) then ApiVersions v0: error code UNSUPPORTED_VERSION (35).
    expect(bytes!.readInt16BE(4)).toBe(ErrorCode.UNSUPPORTED_VERSION);
  });
});
