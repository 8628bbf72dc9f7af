// Differential: the request versions Kafka 4.0 removed (KIP-896), sent as the
// same raw requests to Apache Kafka 3.9.1 (the last release serving them, from
// compat/java/kafka39/pom.xml) and to pgkafka.
// Left out on purpose: OffsetCommit/OffsetFetch v0 (Kafka 3.9 kept v0 commits
// in ZooKeeper and a KRaft broker refuses them; pgkafka stores them like the
// others), ListOffsets v0 by timestamp (Kafka answers from its segment files'
// modification times), and the configs Kafka 4.0 removed (DescribeConfigs is
// asked for named configs both releases have).
import { describe, it } from 'vitest';
import {
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
import type { RawClient } from '../../test/support/raw-client.js';
import { awaitCoordinator, createTopics, eventually, expectSame, onBoth, usePair } from '../support/differential.js';

const pair = usePair({ kafka: { 'auto.create.topics.enable': false }, pgkafka: { autoCreateTopicsEnable: false }, kafkaStart: { release: '3.9' } });

const byName = <T extends { name: string | null }>(xs: T[]) => [...xs].sort((a, b) => (a.name ?? '').localeCompare(b.name ?? ''));

async function produce(c: RawClient, topic: string, n: number) {
  const records = buildBatch({
    compression: 0,
    baseTimestamp: 1_700_000_000_000n,
    records: Array.from({ length: n }, (_, i) => ({ offsetDelta: i, timestampDelta: BigInt(i), key: null, value: Buffer.from(`v${i}`), headers: [] })),
  });
  const res = await c.request(ProduceApi, 7, { acks: -1, timeoutMs: 10_000, topicData: [{ name: topic, partitionData: [{ index: 0, records }] }] });
  return res.responses[0]!.partitionResponses[0]!.errorCode;
}

describe('differential with Kafka 3.9.1: versions Kafka 4.0 removed', () => {
  it('CreateTopics v0 and v1, DeleteTopics v0, Metadata v0 (an empty list is every topic)', async () => {
    const outcome = await onBoth(pair(), async (connect) => {
      const c = await connect();
      const create = async (version: number, topics: { name: string; numPartitions: number }[], validateOnly = false) =>
        byName((await c.request(CreateTopicsApi, version, { topics: topics.map((t) => ({ ...t, replicationFactor: 1 })), timeoutMs: 10_000, validateOnly })).topics);
      const v0 = await create(0, [
        { name: 'o-v0', numPartitions: 2 },
        { name: 'bad name', numPartitions: 1 },
      ]);
      const again = await create(0, [{ name: 'o-v0', numPartitions: 2 }]);
      const v1 = await create(1, [{ name: 'o-v1', numPartitions: 1 }], true);
      const v1zero = await create(1, [{ name: 'o-zero', numPartitions: 0 }]);
      const metadata = await eventually(
        async () => byName((await c.request(MetadataApi, 0, { topics: [] })).topics).map((t) => ({ name: t.name, errorCode: t.errorCode, partitions: t.partitions.length })),
        (ts) => ts.some((t) => t.name === 'o-v0' && t.partitions === 2),
      );
      const deleted = byName((await c.request(DeleteTopicsApi, 0, { topicNames: ['o-v0', 'o-never'], timeoutMs: 10_000 })).responses);
      return { v0, again, v1, v1zero, metadata, deleted };
    });
    expectSame(outcome);
  });

  it('ListOffsets v0: latest and earliest with MaxNumOffsets, an empty log, a timestamp below -2, an unknown partition', async () => {
    const outcome = await onBoth(pair(), async (connect) => {
      const c = await connect();
      await createTopics(c, [
        { name: 'o-offsets', numPartitions: 1 },
        { name: 'o-empty', numPartitions: 1 },
      ]);
      const produced = await produce(c, 'o-offsets', 3);
      const ask = async (topic: string, partitionIndex: number, timestamp: bigint, maxNumOffsets: number) => {
        const res = await c.request(ListOffsetsApi, 0, { replicaId: -1, topics: [{ name: topic, partitions: [{ partitionIndex, timestamp, maxNumOffsets }] }] });
        return res.topics[0]!.partitions[0];
      };
      return {
        produced,
        latest: await ask('o-offsets', 0, -1n, 5),
        latestOne: await ask('o-offsets', 0, -1n, 1),
        earliest: await ask('o-offsets', 0, -2n, 5),
        empty: await ask('o-empty', 0, -1n, 5),
        maxTimestamp: await ask('o-offsets', 0, -3n, 5),
        unknown: await ask('o-offsets', 4, -1n, 1),
      };
    });
    expectSame(outcome);
  });

  it('OffsetCommit v1 (commit timestamp) and v2 (retention time), read back with OffsetFetch v1', async () => {
    const outcome = await onBoth(pair(), async (connect) => {
      const c = await connect();
      await createTopics(c, [{ name: 'o-commits', numPartitions: 2 }]);
      await awaitCoordinator(c, ['o-g1', 'o-g2', 'o-none']);
      const commit = async (version: number, groupId: string, partitions: { partitionIndex: number; committedOffset: bigint; commitTimestamp?: bigint }[], retentionTimeMs = -1n) =>
        (
          await c.request(OffsetCommitApi, version, {
            groupId,
            generationIdOrMemberEpoch: -1,
            memberId: '',
            retentionTimeMs,
            topics: [{ name: 'o-commits', partitions: partitions.map((p) => ({ committedMetadata: 'm', commitTimestamp: -1n, ...p })) }],
          })
        ).topics;
      const fetch = async (groupId: string) => (await c.request(OffsetFetchApi, 1, { groupId, topics: [{ name: 'o-commits', partitionIndexes: [0, 1, 2] }] })).topics;
      return {
        v1: await commit(1, 'o-g1', [
          { partitionIndex: 0, committedOffset: 5n, commitTimestamp: 1_600_000_000_000n },
          { partitionIndex: 1, committedOffset: 6n },
        ]),
        v1Read: await fetch('o-g1'),
        v1Member: await c.request(OffsetCommitApi, 1, {
          groupId: 'o-g1',
          generationIdOrMemberEpoch: 3,
          memberId: 'nobody',
          topics: [{ name: 'o-commits', partitions: [{ partitionIndex: 0, committedOffset: 1n }] }],
        }),
        v2: await commit(2, 'o-g2', [{ partitionIndex: 0, committedOffset: 7n }], 3_600_000n),
        v2Read: await fetch('o-g2'),
        unknownGroupRead: await fetch('o-none'),
      };
    });
    expectSame(outcome);
  });

  it('DescribeConfigs v0 (IsDefault), OffsetForLeaderEpoch v0 and v1, DescribeAcls v0 without an authorizer', async () => {
    const outcome = await onBoth(pair(), async (connect) => {
      const c = await connect();
      await createTopics(c, [{ name: 'o-configs', numPartitions: 1, configs: [{ name: 'retention.ms', value: '3600000' }] }]);
      await produce(c, 'o-configs', 2);
      const configs = await c.request(DescribeConfigsApi, 0, {
        resources: [
          { resourceType: 2, resourceName: 'o-configs', configurationKeys: ['cleanup.policy', 'retention.ms', 'segment.bytes'] },
          { resourceType: 2, resourceName: 'o-unknown', configurationKeys: null },
        ],
      });
      const epochs = async (version: number) =>
        (
          await c.request(OffsetForLeaderEpochApi, version, {
            topics: [
              {
                topic: 'o-configs',
                partitions: [
                  { partition: 0, leaderEpoch: 0 },
                  { partition: 3, leaderEpoch: 0 },
                ],
              },
            ],
          })
        ).topics;
      return {
        configs: configs.results.map((r) => ({ ...r, configs: byName(r.configs) })),
        epochsV0: await epochs(0),
        epochsV1: await epochs(1),
        acls: await c.request(DescribeAclsApi, 0, { resourceTypeFilter: 1, resourceNameFilter: null, principalFilter: null, hostFilter: null, operation: 1, permissionType: 1 }),
      };
    });
    expectSame(outcome);
  });
});
