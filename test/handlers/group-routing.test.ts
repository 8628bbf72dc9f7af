// The preamble every group API shares (routeGroup): a group id the broker
// cannot keep is refused with INVALID_GROUP_ID by the APIs that refuse it,
// and looked up and found nowhere by DescribeGroups and DeleteGroups, as
// Kafka does for the empty group id; OffsetCommit and OffsetFetch serve the
// empty id, as Kafka does.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/protocol/errors.js';
import {
  CreateTopicsApi,
  DeleteGroupsApi,
  DescribeGroupsApi,
  HeartbeatApi,
  JoinGroupApi,
  LeaveGroupApi,
  OffsetCommitApi,
  OffsetDeleteApi,
  OffsetFetchApi,
  SyncGroupApi,
} from '../../src/protocol/messages/index.js';
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

// The empty id, and one PostgreSQL text cannot hold.
const INVALID = ['', 'a\u0000b'];

describe('group ids the broker cannot keep', () => {
  it.each(INVALID)('are refused by the membership APIs (%j), JoinGroup echoing the member id', async (groupId) => {
    const joined = await client.request(JoinGroupApi, 5, {
      groupId,
      sessionTimeoutMs: 10_000,
      rebalanceTimeoutMs: 10_000,
      memberId: 'someone',
      groupInstanceId: null,
      protocolType: 'consumer',
      protocols: [{ name: 'range', metadata: Buffer.alloc(0) }],
    });
    expect(joined).toMatchObject({ errorCode: ErrorCode.INVALID_GROUP_ID, memberId: 'someone', generationId: -1 });
    const synced = await client.request(SyncGroupApi, 3, { groupId, generationId: 1, memberId: 'someone', groupInstanceId: null, assignments: [] });
    expect(synced.errorCode).toBe(ErrorCode.INVALID_GROUP_ID);
    expect((await client.request(HeartbeatApi, 3, { groupId, generationId: 1, memberId: 'someone', groupInstanceId: null })).errorCode).toBe(ErrorCode.INVALID_GROUP_ID);
    const left = await client.request(LeaveGroupApi, 3, { groupId, members: [{ memberId: 'someone', groupInstanceId: null }] });
    expect(left).toMatchObject({ errorCode: ErrorCode.INVALID_GROUP_ID, members: [] });
  });

  it('are refused by the offset APIs (a NUL in the id)', async () => {
    const groupId = 'a\u0000b';
    const committed = await client.request(OffsetCommitApi, 8, {
      groupId,
      generationIdOrMemberEpoch: -1,
      memberId: '',
      groupInstanceId: null,
      topics: [{ name: 't', partitions: [{ partitionIndex: 0, committedOffset: 1n, committedLeaderEpoch: -1, committedMetadata: '' }] }],
    });
    expect(committed.topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.INVALID_GROUP_ID);
    expect((await client.request(OffsetFetchApi, 7, { groupId, topics: null, requireStable: false })).errorCode).toBe(ErrorCode.INVALID_GROUP_ID);
    const fetched = await client.request(OffsetFetchApi, 8, { groups: [{ groupId, topics: null }], requireStable: false });
    expect(fetched.groups[0]!.errorCode).toBe(ErrorCode.INVALID_GROUP_ID);
    const deleted = await client.request(OffsetDeleteApi, 0, { groupId, topics: [{ name: 't', partitions: [{ partitionIndex: 0 }] }] });
    expect(deleted).toMatchObject({ errorCode: ErrorCode.INVALID_GROUP_ID, topics: [] });
  });

  it.each(INVALID)('are described and deleted as groups that do not exist (%j)', async (groupId) => {
    const v5 = await client.request(DescribeGroupsApi, 5, { groups: [groupId], includeAuthorizedOperations: false });
    expect(v5.groups[0]).toMatchObject({ groupId, errorCode: ErrorCode.NONE, groupState: 'Dead', members: [] });
    const v6 = await client.request(DescribeGroupsApi, 6, { groups: [groupId], includeAuthorizedOperations: false });
    expect(v6.groups[0]).toMatchObject({ groupId, errorCode: ErrorCode.GROUP_ID_NOT_FOUND, groupState: 'Dead' });
    const deleted = await client.request(DeleteGroupsApi, 2, { groupsNames: [groupId] });
    expect(deleted.results).toEqual([expect.objectContaining({ groupId, errorCode: ErrorCode.GROUP_ID_NOT_FOUND })]);
  });

  // After the others: it leaves offsets under the empty id, which Kafka then describes as an Empty group.
  it('but the empty id keeps offsets, as Kafka keeps them for old consumers: OffsetCommit and OffsetFetch serve it, OffsetDelete refuses it', async () => {
    await client.request(CreateTopicsApi, 7, { topics: [{ name: 'empty-id-topic', numPartitions: 1, replicationFactor: 1, configs: [] }], timeoutMs: 10_000, validateOnly: false });
    const committed = await client.request(OffsetCommitApi, 8, {
      groupId: '',
      generationIdOrMemberEpoch: -1,
      memberId: '',
      groupInstanceId: null,
      topics: [{ name: 'empty-id-topic', partitions: [{ partitionIndex: 0, committedOffset: 7n, committedLeaderEpoch: -1, committedMetadata: 'old' }] }],
    });
    expect(committed.topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.NONE);
    const v7 = await client.request(OffsetFetchApi, 7, { groupId: '', topics: null, requireStable: false });
    expect(v7).toMatchObject({ errorCode: ErrorCode.NONE, topics: [{ name: 'empty-id-topic', partitions: [{ partitionIndex: 0, committedOffset: 7n, metadata: 'old', errorCode: ErrorCode.NONE }] }] });
    const v8 = await client.request(OffsetFetchApi, 8, { groups: [{ groupId: '', topics: null }], requireStable: false });
    expect(v8.groups[0]).toMatchObject({ groupId: '', errorCode: ErrorCode.NONE, topics: [{ name: 'empty-id-topic', partitions: [{ partitionIndex: 0, committedOffset: 7n }] }] });
    const deleted = await client.request(OffsetDeleteApi, 0, { groupId: '', topics: [{ name: 'empty-id-topic', partitions: [{ partitionIndex: 0 }] }] });
    expect(deleted).toMatchObject({ errorCode: ErrorCode.INVALID_GROUP_ID, topics: [] });
  });
});
