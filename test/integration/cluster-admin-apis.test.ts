// The admin APIs whose answer on a single-copy log is Kafka's own answer:
// OffsetForLeaderEpoch, ElectLeaders, AlterPartitionReassignments,
// ListPartitionReassignments, DescribeClientQuotas, AlterReplicaLogDirs and ListConfigResources, at every version
// served, over the wire; with an authorizer, the refusals Kafka gives. ListConfigResources v1 lists the
// resources of every config type, the groups among them those with configs set.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/protocol/errors.js';
import {
  AlterPartitionReassignmentsApi,
  AlterReplicaLogDirsApi,
  ApiVersionsApi,
  CreateTopicsApi,
  DescribeClientQuotasApi,
  ElectLeadersApi,
  IncrementalAlterConfigsApi,
  ListConfigResourcesApi,
  ListPartitionReassignmentsApi,
  MetadataApi,
  OffsetCommitApi,
  OffsetForLeaderEpochApi,
  ProduceApi,
} from '../../src/protocol/messages/index.js';
import { buildBatch } from '../../src/protocol/records/index.js';
import { AclOperation as Op, AclPermission, CLUSTER_NAME, PatternType, ResourceType } from '../../src/security/acl.js';
import { startTestBroker, type TestBroker } from '../support/broker.js';
import { RawClient } from '../support/raw-client.js';
import { addUser, connectAs } from '../support/sasl.js';

let broker: TestBroker;
let client: RawClient;
let nodeId: number;

beforeAll(async () => {
  broker = await startTestBroker({ listeners: 'PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0', authorizerEnabled: true, superUsers: 'User:admin', allowEveryoneIfNoAclFound: false });
  await addUser(broker, 'admin', 'admin-secret');
  await addUser(broker, 'nobody', 'nobody-secret');
  client = await connectAs(broker, 'admin', 'admin-secret');
  const created = await client.request(CreateTopicsApi, 7, {
    topics: [
      { name: 'two', numPartitions: 2, replicationFactor: 1 },
      { name: 'one', numPartitions: 1, replicationFactor: 1 },
    ],
  });
  expect(created.topics.map((t) => t.errorCode)).toEqual([0, 0]);
  nodeId = (await client.request(MetadataApi, 12, { topics: [{ name: 'two' }] })).topics[0]!.partitions[0]!.leaderId;
  for (let i = 0; i < 3; i++) {
    const res = await client.request(ProduceApi, 9, {
      acks: -1,
      timeoutMs: 1000,
      topicData: [{ name: 'two', partitionData: [{ index: 0, records: buildBatch({ records: [{ key: null, value: Buffer.from(`v${i}`) }] }) }] }],
    });
    expect(res.responses[0]!.partitionResponses[0]!.errorCode).toBe(0);
  }
});
afterAll(async () => {
  client?.close();
  await broker?.destroy();
});

const nobody = () => connectAs(broker, 'nobody', 'nobody-secret');

describe('ApiVersions', () => {
  it('advertises the new APIs with the versions served', async () => {
    const res = await client.request(ApiVersionsApi, 3, { clientSoftwareName: 'test', clientSoftwareVersion: '1' });
    const byKey = new Map(res.apiKeys.map((k) => [k.apiKey, [k.minVersion, k.maxVersion]]));
    // OffsetForLeaderEpoch and AlterReplicaLogDirs from v0, as Kafka 3.9 (docs/apis.md#old-versions).
    expect([23, 34, 43, 45, 46, 48, 74].map((k) => byKey.get(k))).toEqual([
      [0, 4],
      [0, 2],
      [0, 2],
      [0, 1],
      [0, 0],
      [0, 1],
      [0, 1],
    ]);
    expect(byKey.has(49)).toBe(false);
  });

  it("finalizes metadata.version at Kafka 4.3's level and transaction.version 2, as a Kafka 4 broker does, from v3; none below", async () => {
    const res = await client.request(ApiVersionsApi, 3, { clientSoftwareName: 'test', clientSoftwareVersion: '1' });
    // v3 leaves out transaction.version's supported range, whose minimum is 0 (KAFKA-17492); v4 has it.
    expect(res.supportedFeatures).toEqual([{ name: 'metadata.version', minVersion: 7, maxVersion: 30 }]);
    const finalized = [
      { name: 'metadata.version', minVersionLevel: 30, maxVersionLevel: 30 },
      { name: 'transaction.version', minVersionLevel: 2, maxVersionLevel: 2 },
    ];
    expect(res.finalizedFeatures).toEqual(finalized);
    const v4 = await client.request(ApiVersionsApi, 4, { clientSoftwareName: 'test', clientSoftwareVersion: '1' });
    expect(v4.supportedFeatures).toEqual([
      { name: 'metadata.version', minVersion: 7, maxVersion: 30 },
      { name: 'transaction.version', minVersion: 0, maxVersion: 2 },
    ]);
    expect(v4.finalizedFeatures).toEqual(finalized);
    // Clients keep the features of the highest epoch they have seen; -1 would make them ignore these.
    expect(res.finalizedFeaturesEpoch).toBeGreaterThanOrEqual(0n);
    const v2 = await client.request(ApiVersionsApi, 2, {});
    expect([v2.supportedFeatures, v2.finalizedFeatures]).toEqual([[], []]);
  });
});

describe('OffsetForLeaderEpoch', () => {
  it('answers the current epoch with the log end offset, an older one with the log start, a newer one or -1 with -1, at v2-v4', async () => {
    for (const version of [2, 3, 4]) {
      const res = await client.request(OffsetForLeaderEpochApi, version, {
        replicaId: -1,
        topics: [
          {
            topic: 'two',
            partitions: [
              { partition: 0, currentLeaderEpoch: -1, leaderEpoch: 0 },
              { partition: 1, currentLeaderEpoch: 0, leaderEpoch: 0 },
              { partition: 0, currentLeaderEpoch: -1, leaderEpoch: 5 },
              { partition: 0, currentLeaderEpoch: -1, leaderEpoch: -1 },
              { partition: 0, currentLeaderEpoch: 3, leaderEpoch: 0 },
              { partition: 7, currentLeaderEpoch: -1, leaderEpoch: 0 },
            ],
          },
          { topic: 'nowhere', partitions: [{ partition: 0, currentLeaderEpoch: -1, leaderEpoch: 0 }] },
        ],
      });
      expect(res.topics.map((t) => [t.topic, t.partitions.map((p) => [p.partition, p.errorCode, p.leaderEpoch, p.endOffset])])).toEqual([
        [
          'two',
          [
            [0, 0, 0, 3n],
            [1, 0, 0, 0n],
            [0, 0, -1, -1n],
            [0, 0, -1, -1n],
            [0, ErrorCode.UNKNOWN_LEADER_EPOCH, -1, -1n],
            [7, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1, -1n],
          ],
        ],
        ['nowhere', [[0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1, -1n]]],
      ]);
    }
  });

  it('answers TOPIC_AUTHORIZATION_FAILED for a topic the principal may not describe, after the others', async () => {
    await broker.context.authorizer.create([
      { resourceType: ResourceType.TOPIC, resourceName: 'one', patternType: PatternType.LITERAL, principal: 'User:nobody', host: '*', operation: Op.DESCRIBE, permissionType: AclPermission.ALLOW },
    ]);
    const c = await nobody();
    try {
      const res = await c.request(OffsetForLeaderEpochApi, 4, {
        replicaId: -1,
        topics: [
          { topic: 'two', partitions: [{ partition: 0, currentLeaderEpoch: -1, leaderEpoch: 0 }] },
          { topic: 'one', partitions: [{ partition: 0, currentLeaderEpoch: -1, leaderEpoch: 0 }] },
        ],
      });
      expect(res.topics.map((t) => [t.topic, t.partitions[0]!.errorCode, t.partitions[0]!.endOffset])).toEqual([
        ['one', 0, 0n],
        ['two', ErrorCode.TOPIC_AUTHORIZATION_FAILED, -1n],
      ]);
    } finally {
      c.close();
    }
  });
});

describe('ElectLeaders', () => {
  it('answers ELECTION_NOT_NEEDED for each named partition, preferred or unclean, and UNKNOWN_TOPIC_OR_PARTITION for unknown ones', async () => {
    for (const [version, electionType] of [
      [0, 0],
      [1, 0],
      [1, 1],
      [2, 0],
      [2, 1],
    ] as const) {
      const res = await client.request(ElectLeadersApi, version, {
        electionType,
        timeoutMs: 1000,
        topicPartitions: [
          { topic: 'two', partitions: [0, 1, 2] },
          { topic: 'nowhere', partitions: [0] },
        ],
      });
      expect(res.replicaElectionResults.map((t) => [t.topic, t.partitionResult.map((p) => [p.partitionId, p.errorCode])])).toEqual([
        [
          'two',
          [
            [0, ErrorCode.ELECTION_NOT_NEEDED],
            [1, ErrorCode.ELECTION_NOT_NEEDED],
            [2, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
          ],
        ],
        ['nowhere', [[0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]]],
      ]);
      if (version >= 1) expect(res.errorCode).toBe(0);
    }
  });

  it('lists every topic with no partition for all partitions (null), and refuses an unknown election type', async () => {
    const all = await client.request(ElectLeadersApi, 2, { electionType: 0, timeoutMs: 1000, topicPartitions: null });
    expect(all.replicaElectionResults.map((t) => [t.topic, t.partitionResult.length])).toEqual([
      ['one', 0],
      ['two', 0],
    ]);
    const bad = await client.request(ElectLeadersApi, 2, { electionType: 7, timeoutMs: 1000, topicPartitions: [{ topic: 'two', partitions: [0] }] });
    expect([bad.errorCode, bad.replicaElectionResults[0]!.partitionResult[0]!.errorCode]).toEqual([ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_REQUEST]);
  });

  it('needs ALTER on the cluster', async () => {
    const c = await nobody();
    try {
      const res = await c.request(ElectLeadersApi, 2, { electionType: 0, timeoutMs: 1000, topicPartitions: [{ topic: 'two', partitions: [0] }] });
      expect([res.errorCode, res.replicaElectionResults[0]!.partitionResult[0]!.errorCode]).toEqual([ErrorCode.CLUSTER_AUTHORIZATION_FAILED, ErrorCode.CLUSTER_AUTHORIZATION_FAILED]);
    } finally {
      c.close();
    }
  });
});

describe('AlterPartitionReassignments and ListPartitionReassignments', () => {
  const alter = (version: number, partitions: { partitionIndex: number; replicas: number[] | null }[], topic = 'two', allowReplicationFactorChange = true, c = client) =>
    c.request(AlterPartitionReassignmentsApi, version, { timeoutMs: 1000, allowReplicationFactorChange, topics: [{ name: topic, partitions }] });

  it("answers Kafka's errors per partition, and a reassignment to the existing replica as a no-op", async () => {
    for (const version of [0, 1]) {
      const res = await alter(version, [
        { partitionIndex: 0, replicas: [nodeId] },
        { partitionIndex: 1, replicas: null },
        { partitionIndex: 0, replicas: [] },
        { partitionIndex: 0, replicas: [nodeId + 100] },
        { partitionIndex: 0, replicas: [nodeId, nodeId] },
        { partitionIndex: 9, replicas: [nodeId] },
      ]);
      expect(res.errorCode).toBe(0);
      expect(res.responses[0]!.partitions.map((p) => [p.partitionIndex, p.errorCode, p.errorMessage])).toEqual([
        [0, 0, null],
        [1, ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, null], // Kafka's controller sends no message (differential/admin-apis.test.ts)
        [0, ErrorCode.INVALID_REPLICA_ASSIGNMENT, 'The manual partition assignment includes an empty replica list.'],
        [0, ErrorCode.INVALID_REPLICA_ASSIGNMENT, `The manual partition assignment includes broker ${nodeId + 100}, but no such broker is registered.`],
        [0, ErrorCode.INVALID_REPLICA_ASSIGNMENT, `The manual partition assignment includes the broker ${nodeId} more than once.`],
        [9, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'Unable to find partition two:9.'],
      ]);
    }
    const unknown = await alter(1, [{ partitionIndex: 0, replicas: [nodeId] }], 'nowhere');
    expect(unknown.responses[0]!.partitions[0]).toMatchObject({ errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: 'Unable to find a topic named nowhere.' });
  });

  it('refuses a second replica with INVALID_REPLICATION_FACTOR, and echoes allow_replication_factor_change at v1', async () => {
    const other = await startTestBroker({ schema: broker.schema, nodeId: nodeId + 1, listeners: 'PLAINTEXT://127.0.0.1:0', authorizerEnabled: true, superUsers: 'User:ANONYMOUS' });
    try {
      // Two registered brokers: a list naming both is valid but cannot be placed.
      let res = await alter(1, [{ partitionIndex: 0, replicas: [nodeId, nodeId + 1] }], 'two', false);
      for (let i = 0; i < 50 && res.responses[0]!.partitions[0]!.errorCode === ErrorCode.INVALID_REPLICA_ASSIGNMENT; i++) {
        await new Promise((r) => setTimeout(r, 100)); // until this broker has seen the other one's registration
        res = await alter(1, [{ partitionIndex: 0, replicas: [nodeId, nodeId + 1] }], 'two', false);
      }
      expect(res.allowReplicationFactorChange).toBe(false);
      expect(res.responses[0]!.partitions[0]!.errorCode).toBe(ErrorCode.INVALID_REPLICATION_FACTOR);
      const allowed = await alter(1, [{ partitionIndex: 0, replicas: [nodeId + 1, nodeId] }]);
      expect(allowed.allowReplicationFactorChange).toBe(true);
      expect(allowed.responses[0]!.partitions[0]!.errorCode).toBe(ErrorCode.INVALID_REPLICATION_FACTOR);
      // One copy served by every broker: moving it to the other broker changes nothing.
      expect((await alter(1, [{ partitionIndex: 0, replicas: [nodeId + 1] }])).responses[0]!.partitions[0]!.errorCode).toBe(0);
    } finally {
      await other.stop();
    }
  });

  it('lists nothing in progress, for all topics or named ones', async () => {
    await alter(1, [{ partitionIndex: 0, replicas: [nodeId] }]);
    expect(await client.request(ListPartitionReassignmentsApi, 0, { timeoutMs: 1000, topics: null })).toMatchObject({ errorCode: 0, errorMessage: null, topics: [] });
    expect(
      await client.request(ListPartitionReassignmentsApi, 0, {
        timeoutMs: 1000,
        topics: [
          { name: 'two', partitionIndexes: [0, 1] },
          { name: 'nowhere', partitionIndexes: [0] },
        ],
      }),
    ).toMatchObject({ errorCode: 0, topics: [] });
  });

  it('needs ALTER (alter) and DESCRIBE (list) on the cluster', async () => {
    const c = await nobody();
    try {
      const res = await alter(1, [{ partitionIndex: 0, replicas: [nodeId] }], 'two', true, c);
      expect([res.errorCode, res.responses[0]!.partitions[0]!.errorCode]).toEqual([ErrorCode.CLUSTER_AUTHORIZATION_FAILED, ErrorCode.CLUSTER_AUTHORIZATION_FAILED]);
      expect((await c.request(ListPartitionReassignmentsApi, 0, { timeoutMs: 1000, topics: null })).errorCode).toBe(ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
    } finally {
      c.close();
    }
  });
});

describe('DescribeClientQuotas', () => {
  const describeQuotas = (components: { entityType: string; matchType: number; match: string | null }[], c = client, version = 1) =>
    c.request(DescribeClientQuotasApi, version, { components, strict: false });

  it('matches no entry with a valid filter (no quota is ever set), at v0 and v1', async () => {
    for (const version of [0, 1]) {
      expect(await describeQuotas([], client, version)).toMatchObject({ errorCode: 0, errorMessage: '', entries: [] });
      expect(
        await describeQuotas(
          [
            { entityType: 'user', matchType: 0, match: 'alice' },
            { entityType: 'client-id', matchType: 2, match: null },
          ],
          client,
          version,
        ),
      ).toMatchObject({ errorCode: 0, entries: [] });
    }
  });

  it('refuses the filters Kafka refuses', async () => {
    const cases: [{ entityType: string; matchType: number; match: string | null }[], number][] = [
      [[{ entityType: '', matchType: 2, match: null }], ErrorCode.INVALID_REQUEST],
      [
        [
          { entityType: 'user', matchType: 2, match: null },
          { entityType: 'user', matchType: 1, match: null },
        ],
        ErrorCode.INVALID_REQUEST,
      ],
      [[{ entityType: 'group', matchType: 2, match: null }], ErrorCode.UNSUPPORTED_VERSION],
      [[{ entityType: 'user', matchType: 0, match: null }], ErrorCode.INVALID_REQUEST],
      [[{ entityType: 'user', matchType: 1, match: 'x' }], ErrorCode.INVALID_REQUEST],
      [[{ entityType: 'user', matchType: 2, match: 'x' }], ErrorCode.INVALID_REQUEST],
      [[{ entityType: 'user', matchType: 9, match: null }], ErrorCode.INVALID_REQUEST],
      [
        [
          { entityType: 'ip', matchType: 2, match: null },
          { entityType: 'user', matchType: 2, match: null },
        ],
        ErrorCode.INVALID_REQUEST,
      ],
    ];
    for (const [components, errorCode] of cases) {
      const res = await describeQuotas(components);
      expect([res.errorCode, res.entries], JSON.stringify(components)).toEqual([errorCode, null]);
    }
  });

  it('needs DESCRIBE_CONFIGS on the cluster', async () => {
    const c = await nobody();
    try {
      expect((await describeQuotas([], c)).errorCode).toBe(ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
    } finally {
      c.close();
    }
    await broker.context.authorizer.create([
      {
        resourceType: ResourceType.CLUSTER,
        resourceName: CLUSTER_NAME,
        patternType: PatternType.LITERAL,
        principal: 'User:nobody',
        host: '*',
        operation: Op.DESCRIBE_CONFIGS,
        permissionType: AclPermission.ALLOW,
      },
    ]);
    const allowed = await nobody();
    try {
      expect((await describeQuotas([], allowed)).errorCode).toBe(0);
    } finally {
      allowed.close();
    }
  });
});

describe('AlterReplicaLogDirs', () => {
  it('answers NONE for the one log dir, LOG_DIR_NOT_FOUND for another, REPLICA_NOT_AVAILABLE for a partition not hosted, at v1 and v2', async () => {
    const logDir = `postgresql:${broker.schema}`;
    for (const version of [1, 2]) {
      const res = await client.request(AlterReplicaLogDirsApi, version, {
        dirs: [
          {
            path: logDir,
            topics: [
              { name: 'two', partitions: [0, 5] },
              { name: 'nowhere', partitions: [0] },
            ],
          },
          { path: 'another-log-dir', topics: [{ name: 'two', partitions: [1] }] },
        ],
      });
      expect(res.results.map((t) => [t.topicName, t.partitions.map((p) => [p.partitionIndex, p.errorCode])])).toEqual([
        [
          'two',
          [
            [0, 0],
            [5, ErrorCode.REPLICA_NOT_AVAILABLE],
            [1, ErrorCode.LOG_DIR_NOT_FOUND],
          ],
        ],
        ['nowhere', [[0, ErrorCode.REPLICA_NOT_AVAILABLE]]],
      ]);
    }
  });

  it('needs ALTER on the cluster', async () => {
    const c = await nobody();
    try {
      const res = await c.request(AlterReplicaLogDirsApi, 2, { dirs: [{ path: `postgresql:${broker.schema}`, topics: [{ name: 'two', partitions: [0] }] }] });
      expect(res.results[0]!.partitions[0]!.errorCode).toBe(ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
    } finally {
      c.close();
    }
  });
});

describe('ListConfigResources', () => {
  const GROUP = 32;
  const list = (resourceTypes: number[]) => client.request(ListConfigResourcesApi, 1, { resourceTypes });
  const setGroupConfig = async (groupId: string, configOperation: number, value: string | null) => {
    const res = await client.request(IncrementalAlterConfigsApi, 1, {
      resources: [{ resourceType: GROUP, resourceName: groupId, configs: [{ name: 'consumer.session.timeout.ms', configOperation, value }] }],
      validateOnly: false,
    });
    expect(res.responses[0]!.errorCode).toBe(0);
  };
  const byName = (a: { resourceName: string }, b: { resourceName: string }) => (a.resourceName < b.resourceName ? -1 : 1);

  it('lists no client metrics resource at v0, and needs DESCRIBE_CONFIGS on the cluster', async () => {
    expect(await client.request(ListConfigResourcesApi, 0, { resourceTypes: [] })).toMatchObject({ errorCode: 0, configResources: [] });
    await addUser(broker, 'quiet', 'quiet-secret');
    const c = await connectAs(broker, 'quiet', 'quiet-secret');
    try {
      expect(await c.request(ListConfigResourcesApi, 0, { resourceTypes: [] })).toMatchObject({ errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, configResources: [] });
      expect(await c.request(ListConfigResourcesApi, 1, { resourceTypes: [GROUP] })).toMatchObject({ errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, configResources: [] });
    } finally {
      c.close();
    }
  });

  it("v1 lists as groups those with configs set, existing or not, not a group that has none; every type when none is asked, in Kafka's order", async () => {
    // A group that exists (it has committed offsets) but has no configs.
    const committed = await client.request(OffsetCommitApi, 8, {
      groupId: 'lcr-plain',
      generationIdOrMemberEpoch: -1,
      memberId: '',
      groupInstanceId: null,
      topics: [{ name: 'one', partitions: [{ partitionIndex: 0, committedOffset: 0n, committedLeaderEpoch: -1, committedMetadata: null }] }],
    });
    expect(committed.topics[0]!.partitions[0]!.errorCode).toBe(0);
    expect(await list([GROUP])).toMatchObject({ errorCode: 0, configResources: [] });
    await setGroupConfig('lcr-a', 0, '50000');
    await setGroupConfig('lcr-b', 0, '50000');
    expect((await list([GROUP])).configResources.sort(byName)).toEqual([
      { resourceName: 'lcr-a', resourceType: GROUP },
      { resourceName: 'lcr-b', resourceType: GROUP },
    ]);
    // A group whose last config is deleted is no longer listed.
    await setGroupConfig('lcr-a', 1, null);
    expect((await list([GROUP])).configResources).toEqual([{ resourceName: 'lcr-b', resourceType: GROUP }]);
    const node = String(nodeId);
    expect((await list([])).configResources).toEqual([
      { resourceName: 'lcr-b', resourceType: GROUP },
      { resourceName: node, resourceType: 8 },
      { resourceName: node, resourceType: 4 },
      { resourceName: 'one', resourceType: 2 },
      { resourceName: 'two', resourceType: 2 },
      { resourceName: '__consumer_offsets', resourceType: 2 },
    ]);
    expect((await list([2, 32, 2])).configResources.map((r) => r.resourceType)).toEqual([32, 2, 2, 2]);
    expect(await list([16])).toMatchObject({ errorCode: 0, configResources: [] });
  });

  it('v1 refuses the whole request when any type asked is not a config resource type, as UNSUPPORTED_VERSION', async () => {
    expect(await list([32, 1])).toMatchObject({ errorCode: ErrorCode.UNSUPPORTED_VERSION, configResources: [] });
  });
});
