// KIP-848 consumer groups at the wire: ConsumerGroupHeartbeat and
// ConsumerGroupDescribe, the group's place in ListGroups, DescribeGroups,
// the offset APIs, JoinGroup and DeleteGroups, and its state in PostgreSQL
// across a broker restart.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/protocol/errors.js';
import {
  ApiVersionsApi,
  ConsumerGroupDescribeApi,
  ConsumerGroupHeartbeatApi,
  CreateTopicsApi,
  DeleteGroupsApi,
  DescribeGroupsApi,
  JoinGroupApi,
  ListGroupsApi,
  OffsetCommitApi,
  OffsetFetchApi,
  type ConsumerGroupHeartbeatRequest,
} from '../../src/protocol/messages/index.js';
import { PassThrough } from 'node:stream';
import { runGroupsCommand } from '../../src/cli/groups.js';
import { startTestBroker, type TestBroker } from '../support/broker.js';
import { subscription } from '../support/consumer-protocol.js';
import { RawClient } from '../support/raw-client.js';

let broker: TestBroker;
let client: RawClient;
let topicId: string;
const NOW = { groupConsumerAssignmentIntervalMs: 0 };

beforeAll(async () => {
  // Targets on the heartbeat that bumps the epoch, so each step's answer is known (the 1 s interval is a unit test's).
  broker = await startTestBroker(NOW);
  client = await RawClient.connect(broker.bootstrap);
  const created = await client.request(CreateTopicsApi, 7, { topics: [{ name: 'orders', numPartitions: 4, replicationFactor: 1 }] });
  topicId = created.topics[0]!.topicId;
});
afterAll(async () => {
  client?.close();
  await broker?.destroy();
});

const heartbeat = (body: Partial<ConsumerGroupHeartbeatRequest> & { groupId: string; memberId: string; memberEpoch: number }, version = 1, c = client) =>
  c.request(ConsumerGroupHeartbeatApi, version, { rebalanceTimeoutMs: -1, ...body });

const join = (groupId: string, memberId: string, extra: Partial<ConsumerGroupHeartbeatRequest> = {}) =>
  heartbeat({ groupId, memberId, memberEpoch: 0, rebalanceTimeoutMs: 30000, subscribedTopicNames: ['orders'], topicPartitions: [], ...extra });

describe('ConsumerGroupHeartbeat', () => {
  it('is advertised in ApiVersions with ConsumerGroupDescribe, v0-1 each', async () => {
    const versions = await client.request(ApiVersionsApi, 3, { clientSoftwareName: 'test', clientSoftwareVersion: '1' });
    expect(versions.apiKeys.find((k) => k.apiKey === 68)).toMatchObject({ minVersion: 0, maxVersion: 1 });
    expect(versions.apiKeys.find((k) => k.apiKey === 69)).toMatchObject({ minVersion: 0, maxVersion: 1 });
  });

  it('refuses malformed requests as Kafka does', async () => {
    expect(await join('g-invalid', '')).toMatchObject({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: "MemberId can't be empty." });
    expect(await join('g-invalid', 'm', { rebalanceTimeoutMs: -1 })).toMatchObject({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'RebalanceTimeoutMs must be provided in first request.' });
    expect(await join('g-invalid', 'm', { topicPartitions: null })).toMatchObject({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'TopicPartitions must be empty when (re-)joining.' });
    expect(await join('g-invalid', 'm', { serverAssignor: 'sticky' })).toMatchObject({
      errorCode: ErrorCode.UNSUPPORTED_ASSIGNOR,
      errorMessage: 'ServerAssignor sticky is not supported. Supported assignors: uniform, range.',
    });
    expect(await heartbeat({ groupId: 'g-invalid', memberId: 'm', memberEpoch: -3 })).toMatchObject({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'MemberEpoch is invalid.' });
    expect(await heartbeat({ groupId: 'g-invalid', memberId: 'm', memberEpoch: 4 })).toMatchObject({ errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: 'Consumer group g-invalid not found.' });
    // v0: the coordinator names the member.
    const v0 = await heartbeat({ groupId: 'g-v0', memberId: '', memberEpoch: 0, rebalanceTimeoutMs: 30000, subscribedTopicNames: ['orders'], topicPartitions: [] }, 0);
    expect(v0.errorCode).toBe(ErrorCode.NONE);
    expect(v0.memberId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('joins, assigns by topic id, and shows the group in ConsumerGroupDescribe, ListGroups and DescribeGroups', async () => {
    const joined = await join('g-life', 'member-1');
    // A new group's first member is at epoch 2, as on Kafka 4.3.1.
    expect(joined).toMatchObject({ errorCode: ErrorCode.NONE, memberId: 'member-1', memberEpoch: 2, heartbeatIntervalMs: 5000 });
    expect(joined.assignment!.topicPartitions).toEqual([{ topicId, partitions: [0, 1, 2, 3] }]);

    const described = await client.request(ConsumerGroupDescribeApi, 1, { groupIds: ['g-life', 'nothing'], includeAuthorizedOperations: false });
    expect(described.groups[0]).toMatchObject({ errorCode: 0, groupId: 'g-life', groupState: 'Stable', groupEpoch: 2, assignmentEpoch: 2, assignorName: 'uniform' });
    expect(described.groups[0]!.members[0]).toMatchObject({
      memberId: 'member-1',
      memberEpoch: 2,
      clientId: 'pgkafka-test',
      subscribedTopicNames: ['orders'],
      assignment: { topicPartitions: [{ topicId, topicName: 'orders', partitions: [0, 1, 2, 3] }] },
      targetAssignment: { topicPartitions: [{ topicId, topicName: 'orders', partitions: [0, 1, 2, 3] }] },
      memberType: 1,
    });
    expect(described.groups[1]).toMatchObject({ errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: 'Group nothing not found.' });

    const listed = await client.request(ListGroupsApi, 5, { statesFilter: ['stable'], typesFilter: ['consumer'] });
    expect(listed.groups).toContainEqual({ groupId: 'g-life', protocolType: 'consumer', groupState: 'Stable', groupType: 'consumer' });
    expect((await client.request(ListGroupsApi, 5, { statesFilter: [], typesFilter: ['classic'] })).groups.map((g) => g.groupId)).not.toContain('g-life');

    const v6 = await client.request(DescribeGroupsApi, 6, { groups: ['g-life'], includeAuthorizedOperations: false });
    expect(v6.groups[0]).toMatchObject({ errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: 'Group g-life is not a classic group.', groupState: 'Dead' });
    const v5 = await client.request(DescribeGroupsApi, 5, { groups: ['g-life'], includeAuthorizedOperations: false });
    expect(v5.groups[0]).toMatchObject({ errorCode: ErrorCode.NONE, groupState: 'Dead', members: [] });

    // A classic member may join it (a mixed group, group.consumer.migration.policy bidirectional): first it is given its id (KIP-394).
    const classic = await client.request(JoinGroupApi, 7, {
      groupId: 'g-life',
      sessionTimeoutMs: 10000,
      rebalanceTimeoutMs: 10000,
      memberId: '',
      protocolType: 'consumer',
      protocols: [{ name: 'range', metadata: subscription(['orders']) }],
    });
    expect(classic.errorCode).toBe(ErrorCode.MEMBER_ID_REQUIRED);
  });

  it('commits and fetches offsets with the member epoch: STALE_MEMBER_EPOCH, UNKNOWN_MEMBER_ID', async () => {
    await join('g-offsets', 'm1');
    const commit = (memberId: string, epoch: number) =>
      client.request(OffsetCommitApi, 9, {
        groupId: 'g-offsets',
        generationIdOrMemberEpoch: epoch,
        memberId,
        topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, committedOffset: 5n, committedLeaderEpoch: -1, committedMetadata: null }] }],
      });
    expect((await commit('m1', 2)).topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.NONE);
    expect((await commit('m1', 3)).topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.STALE_MEMBER_EPOCH);
    expect((await commit('ghost', 2)).topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
    const fetch = (memberId: string | null, memberEpoch: number) =>
      client.request(OffsetFetchApi, 9, { groups: [{ groupId: 'g-offsets', memberId, memberEpoch, topics: [{ name: 'orders', partitionIndexes: [0] }] }], requireStable: false });
    const fetched = await fetch('m1', 2);
    expect(fetched.groups[0]!.errorCode).toBe(ErrorCode.NONE);
    expect(fetched.groups[0]!.topics[0]!.partitions[0]!.committedOffset).toBe(5n);
    expect((await fetch('m1', 1)).groups[0]!.errorCode).toBe(ErrorCode.STALE_MEMBER_EPOCH);
    expect((await fetch('ghost', 2)).groups[0]!.errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
    expect((await fetch(null, -1)).groups[0]!.errorCode).toBe(ErrorCode.NONE);

    // Lag in `pgkafka groups`: the member owns every partition; partition 0 is committed at 5 of 0 produced (lag 0).
    const out = new PassThrough();
    const chunks: Buffer[] = [];
    out.on('data', (d: Buffer) => chunks.push(d));
    expect(await runGroupsCommand(['--group', 'g-offsets', '--json'], { DATABASE_URL: broker.databaseUrl, PGKAFKA_SCHEMA: broker.schema }, out, new PassThrough())).toBe(0);
    const [lag] = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
      state: string;
      members: number;
      partitions: { partition: number; consumerId: string | null; currentOffset: string | null }[];
    }[];
    expect(lag).toMatchObject({ state: 'Stable', members: 1 });
    expect(lag!.partitions.map((p) => [p.partition, p.consumerId])).toEqual([0, 1, 2, 3].map((p) => [p, 'm1']));

    // Not empty: DeleteGroups refuses it; once its member leaves it goes, with its offsets.
    expect((await client.request(DeleteGroupsApi, 2, { groupsNames: ['g-offsets'] })).results[0]!.errorCode).toBe(ErrorCode.NON_EMPTY_GROUP);
    expect(await heartbeat({ groupId: 'g-offsets', memberId: 'm1', memberEpoch: -1 })).toMatchObject({ errorCode: ErrorCode.NONE, memberId: 'm1', memberEpoch: -1 });
    expect((await client.request(ListGroupsApi, 5, { statesFilter: ['empty'], typesFilter: ['consumer'] })).groups.map((g) => g.groupId)).toContain('g-offsets');
    expect((await client.request(DeleteGroupsApi, 2, { groupsNames: ['g-offsets'] })).results[0]!.errorCode).toBe(ErrorCode.NONE);
    expect((await fetch(null, -1)).groups[0]!.topics[0]!.partitions[0]!.committedOffset).toBe(-1n);
  });

  it('keeps epochs and assignments across a broker restart: members go on heartbeating with no new epoch', async () => {
    const own = await startTestBroker(NOW);
    let c = await RawClient.connect(own.bootstrap);
    const created = await c.request(CreateTopicsApi, 7, { topics: [{ name: 'orders', numPartitions: 4, replicationFactor: 1 }] });
    const id = created.topics[0]!.topicId;
    const a = await heartbeat({ groupId: 'g-restart', memberId: 'a', memberEpoch: 0, rebalanceTimeoutMs: 30000, subscribedTopicNames: ['orders'], topicPartitions: [] }, 1, c);
    const b = await heartbeat({ groupId: 'g-restart', memberId: 'b', memberEpoch: 0, rebalanceTimeoutMs: 30000, subscribedTopicNames: ['orders'], topicPartitions: [] }, 1, c);
    expect(b.memberEpoch).toBe(3);
    // a revokes what b is to get, then b gets it.
    const revoking = await heartbeat({ groupId: 'g-restart', memberId: 'a', memberEpoch: 2, topicPartitions: [{ topicId: id, partitions: [0, 1, 2, 3] }] }, 1, c);
    const kept = revoking.assignment!.topicPartitions[0]!.partitions;
    expect(kept).toHaveLength(2);
    const aDone = await heartbeat({ groupId: 'g-restart', memberId: 'a', memberEpoch: 2, topicPartitions: [{ topicId: id, partitions: kept }] }, 1, c);
    expect(aDone.memberEpoch).toBe(3);
    const bDone = await heartbeat({ groupId: 'g-restart', memberId: 'b', memberEpoch: 3, topicPartitions: [] }, 1, c);
    const bOwned = bDone.assignment!.topicPartitions[0]!.partitions;
    expect([...kept, ...bOwned].sort()).toEqual([0, 1, 2, 3]);
    expect(a.memberEpoch).toBe(2);

    c.close();
    const { schema } = own;
    await own.stop();
    const restarted = await startTestBroker({ ...NOW, schema });
    try {
      c = await RawClient.connect(restarted.bootstrap);
      const again = await heartbeat({ groupId: 'g-restart', memberId: 'a', memberEpoch: 3, topicPartitions: [{ topicId: id, partitions: kept }] }, 1, c);
      expect(again).toMatchObject({ errorCode: ErrorCode.NONE, memberEpoch: 3, assignment: null });
      const described = await c.request(ConsumerGroupDescribeApi, 1, { groupIds: ['g-restart'], includeAuthorizedOperations: false });
      expect(described.groups[0]).toMatchObject({ groupState: 'Stable', groupEpoch: 3, assignmentEpoch: 3 });
      c.close();
    } finally {
      await restarted.destroy();
    }
  });
});
