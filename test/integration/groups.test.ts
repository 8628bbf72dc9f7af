// Group APIs at the wire: exact error codes, offsets in PostgreSQL, and
// group state that outlives a broker restart.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/protocol/errors.js';
import {
  CreateTopicsApi,
  DeleteGroupsApi,
  DescribeGroupsApi,
  FindCoordinatorApi,
  HeartbeatApi,
  JoinGroupApi,
  ListGroupsApi,
  OffsetCommitApi,
  OffsetDeleteApi,
  OffsetFetchApi,
  SyncGroupApi,
} from '../../src/protocol/messages/index.js';
import { startTestBroker, type TestBroker } from '../support/broker.js';
import { subscription } from '../support/consumer-protocol.js';
import { RawClient } from '../support/raw-client.js';

let broker: TestBroker;
let client: RawClient;

beforeAll(async () => {
  broker = await startTestBroker({ groupMinSessionTimeoutMs: 1000, groupInitialRebalanceDelayMs: 0 });
  client = await RawClient.connect(broker.bootstrap);
  await client.request(CreateTopicsApi, 7, { topics: [{ name: 'events', numPartitions: 3, replicationFactor: 1 }] });
});
afterAll(async () => {
  client?.close();
  await broker?.destroy();
});

/** One member joined and synced: the group is Stable at the returned generation. */
async function stableMember(groupId: string, topics = ['events']) {
  const join = (memberId: string) =>
    client.request(JoinGroupApi, 7, {
      groupId,
      sessionTimeoutMs: 10_000,
      rebalanceTimeoutMs: 10_000,
      memberId,
      protocolType: 'consumer',
      protocols: [{ name: 'range', metadata: subscription(topics) }],
    });
  const first = await join('');
  expect(first.errorCode).toBe(ErrorCode.MEMBER_ID_REQUIRED);
  const joined = await join(first.memberId);
  expect(joined.errorCode).toBe(0);
  const synced = await client.request(SyncGroupApi, 5, {
    groupId,
    generationId: joined.generationId,
    memberId: joined.memberId,
    protocolType: 'consumer',
    protocolName: 'range',
    assignments: [{ memberId: joined.memberId, assignment: Buffer.from('assigned') }],
  });
  expect(synced.errorCode).toBe(0);
  expect(synced.assignment.toString()).toBe('assigned');
  return { memberId: joined.memberId, generationId: joined.generationId };
}

describe('group coordination', () => {
  it('names this broker as coordinator, one key or many', async () => {
    const single = await client.request(FindCoordinatorApi, 3, { key: 'g', keyType: 0 });
    expect(single).toMatchObject({ errorCode: 0, nodeId: 1, host: '127.0.0.1', port: broker.port });
    const batched = await client.request(FindCoordinatorApi, 4, { keyType: 0, coordinatorKeys: ['a', 'b'] });
    expect(batched.coordinators.map((c) => [c.key, c.errorCode, c.port])).toEqual([
      ['a', 0, broker.port],
      ['b', 0, broker.port],
    ]);
  });

  it('refuses session timeouts outside the broker limits and an empty group id', async () => {
    const res = await client.request(JoinGroupApi, 5, {
      groupId: 'g',
      sessionTimeoutMs: 10,
      rebalanceTimeoutMs: 1000,
      memberId: '',
      protocolType: 'consumer',
      protocols: [{ name: 'range', metadata: Buffer.alloc(0) }],
    });
    expect(res.errorCode).toBe(ErrorCode.INVALID_SESSION_TIMEOUT);
    const empty = await client.request(JoinGroupApi, 5, {
      groupId: '',
      sessionTimeoutMs: 10_000,
      rebalanceTimeoutMs: 1000,
      memberId: '',
      protocolType: 'consumer',
      protocols: [{ name: 'range', metadata: Buffer.alloc(0) }],
    });
    expect(empty.errorCode).toBe(ErrorCode.INVALID_GROUP_ID);
  });

  it('fences heartbeats by member id and generation', async () => {
    const { memberId, generationId } = await stableMember('fencing');
    expect((await client.request(HeartbeatApi, 4, { groupId: 'fencing', generationId, memberId })).errorCode).toBe(0);
    expect((await client.request(HeartbeatApi, 4, { groupId: 'fencing', generationId: generationId + 5, memberId })).errorCode).toBe(ErrorCode.ILLEGAL_GENERATION);
    expect((await client.request(HeartbeatApi, 4, { groupId: 'fencing', generationId, memberId: 'someone-else' })).errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
    expect((await client.request(HeartbeatApi, 4, { groupId: 'never-joined', generationId: 1, memberId: 'x' })).errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
  });

  it('stores committed offsets, leader epochs and metadata, and answers -1 for partitions never committed', async () => {
    const { memberId, generationId } = await stableMember('committer');
    const commit = await client.request(OffsetCommitApi, 8, {
      groupId: 'committer',
      generationIdOrMemberEpoch: generationId,
      memberId,
      topics: [
        {
          name: 'events',
          partitions: [
            { partitionIndex: 0, committedOffset: 42n, committedLeaderEpoch: 0, committedMetadata: 'meta' },
            { partitionIndex: 9, committedOffset: 1n, committedMetadata: null },
          ],
        },
      ],
    });
    expect(commit.topics[0]!.partitions.map((p) => p.errorCode)).toEqual([0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]);
    const fetched = await client.request(OffsetFetchApi, 8, { groups: [{ groupId: 'committer', topics: [{ name: 'events', partitionIndexes: [0, 1] }] }] });
    expect(fetched.groups[0]!.topics[0]!.partitions.map((p) => [p.partitionIndex, p.committedOffset, p.committedLeaderEpoch, p.metadata])).toEqual([
      [0, 42n, 0, 'meta'],
      [1, -1n, -1, ''],
    ]);
    const rows = await broker.query(`SELECT committed_offset::text AS o, convert_from(metadata, 'UTF8') AS metadata FROM committed_offsets WHERE group_id = 'committer'`);
    expect(rows).toEqual([{ o: '42', metadata: 'meta' }]);
    const stale = await client.request(OffsetCommitApi, 8, {
      groupId: 'committer',
      generationIdOrMemberEpoch: generationId - 1,
      memberId,
      topics: [{ name: 'events', partitions: [{ partitionIndex: 0, committedOffset: 1n, committedMetadata: null }] }],
    });
    expect(stale.topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.ILLEGAL_GENERATION);
  });

  it('accepts commits from a standalone consumer (generation -1) and lists the group as Empty', async () => {
    const commit = await client.request(OffsetCommitApi, 2, {
      groupId: 'standalone',
      generationIdOrMemberEpoch: -1,
      memberId: '',
      topics: [{ name: 'events', partitions: [{ partitionIndex: 2, committedOffset: 7n, committedMetadata: '' }] }],
    });
    expect(commit.topics[0]!.partitions[0]!.errorCode).toBe(0);
    const fetched = await client.request(OffsetFetchApi, 1, { groupId: 'standalone', topics: [{ name: 'events', partitionIndexes: [2] }] });
    expect(fetched.topics[0]!.partitions[0]!.committedOffset).toBe(7n);
    const listed = await client.request(ListGroupsApi, 4, { statesFilter: ['Empty'] });
    expect(listed.groups.map((g) => g.groupId)).toContain('standalone');
    const stable = await client.request(ListGroupsApi, 4, { statesFilter: ['Stable'] });
    expect(stable.groups.map((g) => g.groupId)).not.toContain('standalone');
  });

  it("names a classic group's type `classic` in ListGroups v5 and filters on it case-insensitively, as Kafka does", async () => {
    const listed = await client.request(ListGroupsApi, 5, { statesFilter: [], typesFilter: ['Classic'] });
    expect(listed.groups.find((g) => g.groupId === 'standalone')).toMatchObject({ groupState: 'Empty', groupType: 'classic' });
    const consumerOnly = await client.request(ListGroupsApi, 5, { statesFilter: [], typesFilter: ['consumer'] });
    expect(consumerOnly.groups.map((g) => g.groupId)).not.toContain('standalone');
  });

  it('describes a stable group with its members and says GROUP_ID_NOT_FOUND for an unknown one (v6)', async () => {
    const { memberId } = await stableMember('described');
    const res = await client.request(DescribeGroupsApi, 6, { groups: ['described', 'unknown-group'] });
    expect(res.groups[0]).toMatchObject({ groupId: 'described', errorCode: 0, groupState: 'Stable', protocolType: 'consumer', protocolData: 'range' });
    expect(res.groups[0]!.members.map((m) => [m.memberId, m.memberAssignment.toString()])).toEqual([[memberId, 'assigned']]);
    expect(res.groups[1]).toMatchObject({ groupId: 'unknown-group', errorCode: ErrorCode.GROUP_ID_NOT_FOUND, groupState: 'Dead' });
  });

  it('refuses to delete a group with members or offsets of a topic it subscribes to', async () => {
    const { memberId, generationId } = await stableMember('busy');
    await client.request(OffsetCommitApi, 8, {
      groupId: 'busy',
      generationIdOrMemberEpoch: generationId,
      memberId,
      topics: [{ name: 'events', partitions: [{ partitionIndex: 0, committedOffset: 1n, committedMetadata: null }] }],
    });
    const del = await client.request(DeleteGroupsApi, 2, { groupsNames: ['busy', 'no-such-group'] });
    expect(del.results.map((r) => r.errorCode)).toEqual([ErrorCode.NON_EMPTY_GROUP, ErrorCode.GROUP_ID_NOT_FOUND]);
    const offsets = await client.request(OffsetDeleteApi, 0, { groupId: 'busy', topics: [{ name: 'events', partitions: [{ partitionIndex: 0 }] }] });
    expect(offsets.topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC);
  });

  it('deletes an empty group together with its committed offsets', async () => {
    await client.request(OffsetCommitApi, 2, {
      groupId: 'doomed',
      generationIdOrMemberEpoch: -1,
      memberId: '',
      topics: [{ name: 'events', partitions: [{ partitionIndex: 0, committedOffset: 3n, committedMetadata: '' }] }],
    });
    const del = await client.request(DeleteGroupsApi, 0, { groupsNames: ['doomed'] });
    expect(del.results[0]!.errorCode).toBe(0);
    expect(await broker.query(`SELECT 1 FROM committed_offsets WHERE group_id = 'doomed'`)).toHaveLength(0);
    const fetched = await client.request(OffsetFetchApi, 1, { groupId: 'doomed', topics: [{ name: 'events', partitionIndexes: [0] }] });
    expect(fetched.topics[0]!.partitions[0]!.committedOffset).toBe(-1n);
  });
});

describe('group state across a broker restart', () => {
  it('restores a stable group: its member keeps heartbeating with the same generation, its offsets stay', async () => {
    const own = await startTestBroker({ groupMinSessionTimeoutMs: 1000, groupInitialRebalanceDelayMs: 0 });
    let c = await RawClient.connect(own.bootstrap);
    await c.request(CreateTopicsApi, 7, { topics: [{ name: 'events', numPartitions: 1, replicationFactor: 1 }] });
    const join = (memberId: string) =>
      c.request(JoinGroupApi, 5, {
        groupId: 'survivor',
        sessionTimeoutMs: 30_000,
        rebalanceTimeoutMs: 30_000,
        memberId,
        protocolType: 'consumer',
        protocols: [{ name: 'range', metadata: subscription(['events']) }],
      });
    const first = await join('');
    const joined = await join(first.memberId);
    await c.request(SyncGroupApi, 3, {
      groupId: 'survivor',
      generationId: joined.generationId,
      memberId: joined.memberId,
      assignments: [{ memberId: joined.memberId, assignment: Buffer.from('mine') }],
    });
    await c.request(OffsetCommitApi, 5, {
      groupId: 'survivor',
      generationIdOrMemberEpoch: joined.generationId,
      memberId: joined.memberId,
      topics: [{ name: 'events', partitions: [{ partitionIndex: 0, committedOffset: 11n, committedMetadata: null }] }],
    });
    c.close();
    await own.stop();

    const restarted = await startTestBroker({ schema: own.schema, groupMinSessionTimeoutMs: 1000, groupInitialRebalanceDelayMs: 0 });
    try {
      c = await RawClient.connect(restarted.bootstrap);
      const hb = await c.request(HeartbeatApi, 3, { groupId: 'survivor', generationId: joined.generationId, memberId: joined.memberId });
      expect(hb.errorCode).toBe(0);
      const sync = await c.request(SyncGroupApi, 3, { groupId: 'survivor', generationId: joined.generationId, memberId: joined.memberId, assignments: [] });
      expect(sync.assignment.toString()).toBe('mine');
      const fetched = await c.request(OffsetFetchApi, 5, { groupId: 'survivor', topics: [{ name: 'events', partitionIndexes: [0] }] });
      expect(fetched.topics[0]!.partitions[0]!.committedOffset).toBe(11n);
      c.close();
    } finally {
      await restarted.destroy();
    }
  });
});
