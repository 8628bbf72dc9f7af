// ACLs on the group, transaction and producer-id APIs over the wire
// (RawClient, exact versions), with Kafka's error codes: OffsetCommit,
// OffsetFetch, FindCoordinator, Join/Sync/Heartbeat/LeaveGroup, ListGroups,
// DeleteGroups, OffsetDelete, InitProducerId (IDEMPOTENT_WRITE and KIP-679),
// AddPartitionsToTxn, AddOffsetsToTxn, TxnOffsetCommit, EndTxn,
// DescribeProducers, DescribeTransactions and ListTransactions. A refused
// request stores nothing (checked in PostgreSQL); prefixed ACLs, DENY over
// ALLOW and super users are exercised along the way.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/protocol/errors.js';
import {
  AddOffsetsToTxnApi,
  AddPartitionsToTxnApi,
  CreateTopicsApi,
  DeleteGroupsApi,
  DescribeProducersApi,
  DescribeTransactionsApi,
  EndTxnApi,
  FindCoordinatorApi,
  HeartbeatApi,
  InitProducerIdApi,
  JoinGroupApi,
  LeaveGroupApi,
  ListGroupsApi,
  ListTransactionsApi,
  OffsetCommitApi,
  OffsetDeleteApi,
  OffsetFetchApi,
  SyncGroupApi,
  TxnOffsetCommitApi,
} from '../../src/protocol/messages/index.js';
import { AclOperation as Op, AclPermission, CLUSTER_NAME, PatternType, ResourceType } from '../../src/security/acl.js';
import { startTestBroker, type TestBroker } from '../support/broker.js';
import { subscription } from '../support/consumer-protocol.js';
import type { RawClient } from '../support/raw-client.js';
import { addUser, connectAs } from '../support/sasl.js';

const USERS = ['admin', 'alice', 'bob', 'carol', 'dave', 'erin', 'frank', 'writer'] as const;
type User = (typeof USERS)[number];

let broker: TestBroker;
const clients = {} as Record<User, RawClient>;

beforeAll(async () => {
  broker = await startTestBroker({
    listeners: 'PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0',
    authorizerEnabled: true,
    superUsers: 'User:admin',
    groupMinSessionTimeoutMs: 1000,
    groupInitialRebalanceDelayMs: 0,
  });
  for (const user of USERS) {
    await addUser(broker, user, `${user}-secret`);
    clients[user] = await connectAs(broker, user, `${user}-secret`);
  }
  const created = await clients.admin.request(CreateTopicsApi, 7, {
    topics: ['orders', 'secret', 'logs'].map((name) => ({ name, numPartitions: name === 'orders' ? 2 : 1, replicationFactor: 1 })),
  });
  expect(created.topics.map((t) => t.errorCode)).toEqual([0, 0, 0]);
});
afterAll(async () => {
  for (const c of Object.values(clients)) c.close();
  await broker?.destroy();
});

interface AclOptions {
  pattern?: number;
  permission?: number;
}

async function acl(user: User, resourceType: number, resourceName: string, operation: number, { pattern = PatternType.LITERAL, permission = AclPermission.ALLOW }: AclOptions = {}) {
  await broker.context.authorizer.create([{ resourceType, resourceName, patternType: pattern, principal: `User:${user}`, host: '*', operation, permissionType: permission }]);
}

const committed = async (groupId: string) =>
  (
    await broker.query<{ topic: string; partition: number; committed_offset: string }>(
      'SELECT topic, partition, committed_offset::text FROM committed_offsets WHERE group_id = $1 ORDER BY topic, partition',
      [groupId],
    )
  ).map((r) => `${r.topic}/${r.partition}@${r.committed_offset}`);

/** OffsetCommit v8 from outside group management; returns the error of each partition as topic/partition:code. */
async function commit(user: User, groupId: string, offsets: Record<string, number[]>, offset = 5n) {
  const res = await clients[user].request(OffsetCommitApi, 8, {
    groupId,
    generationIdOrMemberEpoch: -1,
    memberId: '',
    groupInstanceId: null,
    topics: Object.entries(offsets).map(([name, partitions]) => ({
      name,
      partitions: partitions.map((partitionIndex) => ({ partitionIndex, committedOffset: offset, committedLeaderEpoch: -1, committedMetadata: null })),
    })),
  });
  return res.topics.flatMap((t) => t.partitions.map((p) => `${t.name}/${p.partitionIndex}:${p.errorCode}`));
}

const join = (user: User, groupId: string, memberId = '') =>
  clients[user].request(JoinGroupApi, 7, {
    groupId,
    sessionTimeoutMs: 10_000,
    rebalanceTimeoutMs: 10_000,
    memberId,
    protocolType: 'consumer',
    protocols: [{ name: 'range', metadata: subscription(['orders']) }],
  });

const sync = (user: User, groupId: string, generationId: number, memberId: string) =>
  clients[user].request(SyncGroupApi, 5, { groupId, generationId, memberId, protocolType: 'consumer', protocolName: 'range', assignments: [{ memberId, assignment: Buffer.from('a') }] });

const heartbeat = (user: User, groupId: string, generationId: number, memberId: string) => clients[user].request(HeartbeatApi, 4, { groupId, generationId, memberId });

async function stableMember(user: User, groupId: string) {
  const first = await join(user, groupId);
  expect(first.errorCode).toBe(ErrorCode.MEMBER_ID_REQUIRED);
  const joined = await join(user, groupId, first.memberId);
  expect(joined.errorCode).toBe(ErrorCode.NONE);
  expect((await sync(user, groupId, joined.generationId, joined.memberId)).errorCode).toBe(ErrorCode.NONE);
  return { memberId: joined.memberId, generationId: joined.generationId };
}

const listGroups = async (user: User) => (await clients[user].request(ListGroupsApi, 4, { statesFilter: [] })).groups.map((g) => g.groupId).sort();

describe('OffsetCommit and OffsetFetch', () => {
  it('OffsetCommit without READ on the group refuses every partition and stores nothing', async () => {
    expect(await commit('bob', 'g-commit', { orders: [0, 1], secret: [0] })).toEqual(['orders/0:30', 'orders/1:30', 'secret/0:30']);
    expect(await committed('g-commit')).toEqual([]);
  });

  it('OffsetCommit with READ on the group commits only the topics it may READ', async () => {
    await acl('bob', ResourceType.GROUP, 'g-commit', Op.READ);
    await acl('bob', ResourceType.TOPIC, 'orders', Op.READ);
    expect(await commit('bob', 'g-commit', { orders: [0, 1], secret: [0] })).toEqual(['orders/0:0', 'orders/1:0', 'secret/0:29']);
    expect(await committed('g-commit')).toEqual(['orders/0@5', 'orders/1@5']);
  });

  it('OffsetCommit v10 checks topics named by id too', async () => {
    const ids = Object.fromEntries((await broker.query<{ name: string; topic_id: string }>('SELECT name, topic_id::text FROM topics')).map((r) => [r.name, r.topic_id]));
    const res = await clients.bob.request(OffsetCommitApi, 10, {
      groupId: 'g-commit',
      generationIdOrMemberEpoch: -1,
      memberId: '',
      groupInstanceId: null,
      topics: ['orders', 'secret'].map((name) => ({ topicId: ids[name]!, partitions: [{ partitionIndex: 0, committedOffset: 7n, committedLeaderEpoch: -1, committedMetadata: null }] })),
    });
    expect(res.topics.map((t) => [t.topicId, t.partitions[0]!.errorCode])).toEqual([
      [ids.orders, 0],
      [ids.secret, ErrorCode.TOPIC_AUTHORIZATION_FAILED],
    ]);
    expect(await committed('g-commit')).toEqual(['orders/0@7', 'orders/1@5']);
  });

  it('OffsetFetch without DESCRIBE on the group: per partition in v1, the request error in v2-7, the group error in v8', async () => {
    const v1 = await clients.carol.request(OffsetFetchApi, 1, { groupId: 'g-commit', topics: [{ name: 'orders', partitionIndexes: [0, 1] }] });
    expect(v1.topics.flatMap((t) => t.partitions.map((p) => [p.partitionIndex, p.committedOffset, p.errorCode]))).toEqual([
      [0, -1n, 30],
      [1, -1n, 30],
    ]);
    const v5 = await clients.carol.request(OffsetFetchApi, 5, { groupId: 'g-commit', topics: [{ name: 'orders', partitionIndexes: [0] }] });
    expect(v5).toMatchObject({ errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, topics: [] });
    const v7all = await clients.carol.request(OffsetFetchApi, 7, { groupId: 'g-commit', topics: null });
    expect(v7all).toMatchObject({ errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, topics: [] });
    const v8 = await clients.bob.request(OffsetFetchApi, 8, {
      groups: [
        { groupId: 'g-commit', topics: null },
        { groupId: 'g-hidden', topics: null },
      ],
    });
    expect(v8.groups.map((g) => [g.groupId, g.errorCode])).toEqual([
      ['g-commit', 0],
      ['g-hidden', ErrorCode.GROUP_AUTHORIZATION_FAILED],
    ]);
  });

  it('OffsetFetch answers TOPIC_AUTHORIZATION_FAILED for asked topics it may not DESCRIBE, and leaves them out of "all topics"', async () => {
    expect(await commit('admin', 'g-commit', { secret: [0] }, 9n)).toEqual(['secret/0:0']);
    const asked = await clients.bob.request(OffsetFetchApi, 5, {
      groupId: 'g-commit',
      topics: [
        { name: 'secret', partitionIndexes: [0] },
        { name: 'orders', partitionIndexes: [0] },
      ],
    });
    expect(asked.errorCode).toBe(0);
    expect(asked.topics.map((t) => [t.name, t.partitions.map((p) => [p.partitionIndex, p.committedOffset, p.errorCode])])).toEqual([
      ['orders', [[0, 7n, 0]]],
      ['secret', [[0, -1n, ErrorCode.TOPIC_AUTHORIZATION_FAILED]]],
    ]);
    const all = await clients.bob.request(OffsetFetchApi, 8, { groups: [{ groupId: 'g-commit', topics: null }] });
    expect(all.groups[0]!.topics.map((t) => t.name)).toEqual(['orders']);
    const allV6 = await clients.bob.request(OffsetFetchApi, 6, { groupId: 'g-commit', topics: null });
    expect(allV6.topics.map((t) => t.name)).toEqual(['orders']);
    const asAdmin = await clients.admin.request(OffsetFetchApi, 8, { groups: [{ groupId: 'g-commit', topics: null }] });
    expect(asAdmin.groups[0]!.topics.map((t) => t.name).sort()).toEqual(['orders', 'secret']);
  });
});

describe('FindCoordinator', () => {
  it('needs DESCRIBE on the group or on the transactional id', async () => {
    const single = await clients.bob.request(FindCoordinatorApi, 3, { key: 'g-hidden', keyType: 0 });
    expect(single).toMatchObject({ errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, errorMessage: 'Group authorization failed.', nodeId: -1, host: '', port: -1 });
    const allowed = await clients.bob.request(FindCoordinatorApi, 3, { key: 'g-commit', keyType: 0 });
    expect(allowed).toMatchObject({ errorCode: 0, port: broker.ports.SASL_PLAINTEXT });
    const batched = await clients.bob.request(FindCoordinatorApi, 4, { keyType: 0, coordinatorKeys: ['g-commit', 'g-hidden'] });
    expect(batched.coordinators.map((c) => [c.key, c.errorCode, c.nodeId])).toEqual([
      ['g-commit', 0, 1],
      ['g-hidden', ErrorCode.GROUP_AUTHORIZATION_FAILED, -1],
    ]);
    const txn = await clients.bob.request(FindCoordinatorApi, 4, { keyType: 1, coordinatorKeys: ['tx-find'] });
    expect(txn.coordinators[0]!.errorCode).toBe(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
    const txnV1 = await clients.bob.request(FindCoordinatorApi, 1, { key: 'tx-find', keyType: 1 });
    expect(txnV1).toMatchObject({ errorCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, errorMessage: 'Transactional Id authorization failed.' });
    await acl('bob', ResourceType.TRANSACTIONAL_ID, 'tx-find', Op.DESCRIBE);
    expect((await clients.bob.request(FindCoordinatorApi, 4, { keyType: 1, coordinatorKeys: ['tx-find'] })).coordinators[0]!.errorCode).toBe(0);
  });
});

describe('group membership', () => {
  let member: { memberId: string; generationId: number };

  beforeAll(async () => {
    await acl('alice', ResourceType.GROUP, 'team-', Op.READ, { pattern: PatternType.PREFIXED });
    member = await stableMember('alice', 'team-a');
  });

  it('JoinGroup, SyncGroup and Heartbeat need READ on the group', async () => {
    const joined = await join('bob', 'team-a');
    expect(joined).toMatchObject({ errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, memberId: '', generationId: -1, members: [] });
    expect((await sync('bob', 'team-a', member.generationId, member.memberId)).errorCode).toBe(ErrorCode.GROUP_AUTHORIZATION_FAILED);
    expect((await heartbeat('bob', 'team-a', member.generationId, member.memberId)).errorCode).toBe(ErrorCode.GROUP_AUTHORIZATION_FAILED);
    // The member bob tried to impersonate is untouched and the group stayed Stable.
    expect((await heartbeat('alice', 'team-a', member.generationId, member.memberId)).errorCode).toBe(0);
    expect(broker.context.groups.get('team-a')?.stateAsString()).toBe('Stable');
  });

  it('LeaveGroup needs READ on the group: the request error from v3, and the member stays', async () => {
    const v3 = await clients.bob.request(LeaveGroupApi, 3, { groupId: 'team-a', members: [{ memberId: member.memberId, groupInstanceId: null }] });
    expect(v3).toMatchObject({ errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, members: [] });
    const v0 = await clients.bob.request(LeaveGroupApi, 0, { groupId: 'team-a', memberId: member.memberId });
    expect(v0.errorCode).toBe(ErrorCode.GROUP_AUTHORIZATION_FAILED);
    expect(broker.context.groups.get('team-a')?.hasMember(member.memberId)).toBe(true);
  });

  it('a prefixed ALLOW covers every group of the prefix; a DENY overrides it', async () => {
    await acl('alice', ResourceType.GROUP, 'team-locked', Op.READ, { permission: AclPermission.DENY });
    expect((await join('alice', 'team-locked')).errorCode).toBe(ErrorCode.GROUP_AUTHORIZATION_FAILED);
    expect(broker.context.groups.get('team-locked')).toBeUndefined();
    expect((await join('alice', 'team-b')).errorCode).toBe(ErrorCode.MEMBER_ID_REQUIRED);
    expect((await join('alice', 'other-team')).errorCode).toBe(ErrorCode.GROUP_AUTHORIZATION_FAILED);
  });

  it('the member itself leaves', async () => {
    const left = await clients.alice.request(LeaveGroupApi, 3, { groupId: 'team-a', members: [{ memberId: member.memberId, groupInstanceId: null }] });
    expect(left.errorCode).toBe(0);
    expect(left.members.map((m) => m.errorCode)).toEqual([0]);
  });
});

describe('ListGroups', () => {
  it('lists every group with DESCRIBE on the cluster, else only the groups it may DESCRIBE', async () => {
    const all = await listGroups('admin');
    expect(all).toEqual(expect.arrayContaining(['g-commit', 'team-a', 'team-b']));
    expect(await listGroups('bob')).toEqual(['g-commit']);
    expect(await listGroups('alice')).toEqual(all.filter((g) => g.startsWith('team-')));
    expect(await listGroups('carol')).toEqual([]);
    await acl('carol', ResourceType.CLUSTER, CLUSTER_NAME, Op.DESCRIBE);
    expect(await listGroups('carol')).toEqual(all);
  });
});

describe('DeleteGroups and OffsetDelete', () => {
  it('DeleteGroups deletes only the groups it may DELETE', async () => {
    for (const g of ['g-del-yes', 'g-del-no']) expect(await commit('admin', g, { orders: [0] })).toEqual(['orders/0:0']);
    await acl('bob', ResourceType.GROUP, 'g-del-yes', Op.DELETE);
    const res = await clients.bob.request(DeleteGroupsApi, 2, { groupsNames: ['g-del-no', 'g-del-yes'] });
    expect(res.results.map((r) => [r.groupId, r.errorCode])).toEqual([
      ['g-del-yes', 0],
      ['g-del-no', ErrorCode.GROUP_AUTHORIZATION_FAILED],
    ]);
    expect(await committed('g-del-yes')).toEqual([]);
    expect(await committed('g-del-no')).toEqual(['orders/0@5']);
  });

  it('OffsetDelete needs DELETE on the group, and READ on each topic', async () => {
    expect(await commit('admin', 'g-odel', { orders: [0, 1], secret: [0] })).toEqual(['orders/0:0', 'orders/1:0', 'secret/0:0']);
    const request = {
      groupId: 'g-odel',
      topics: [
        { name: 'orders', partitions: [{ partitionIndex: 0 }] },
        { name: 'secret', partitions: [{ partitionIndex: 0 }] },
      ],
    };
    const refused = await clients.bob.request(OffsetDeleteApi, 0, request);
    expect(refused).toMatchObject({ errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, topics: [] });
    expect(await committed('g-odel')).toEqual(['orders/0@5', 'orders/1@5', 'secret/0@5']);
    await acl('bob', ResourceType.GROUP, 'g-odel', Op.DELETE);
    const res = await clients.bob.request(OffsetDeleteApi, 0, request);
    expect(res.errorCode).toBe(0);
    expect(res.topics.map((t) => [t.name, t.partitions[0]!.errorCode])).toEqual([
      ['orders', 0],
      ['secret', ErrorCode.TOPIC_AUTHORIZATION_FAILED],
    ]);
    expect(await committed('g-odel')).toEqual(['orders/1@5', 'secret/0@5']);
  });
});

describe('InitProducerId', () => {
  const idempotent = (user: User) => clients[user].request(InitProducerIdApi, 4, { transactionalId: null, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });

  it('a transactional id needs WRITE on it; nothing is stored when refused', async () => {
    const refused = await clients.bob.request(InitProducerIdApi, 4, { transactionalId: 'tx-bob', transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
    expect(refused).toMatchObject({ errorCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, producerId: -1n, producerEpoch: -1 });
    expect(await broker.query('SELECT 1 FROM transactions WHERE transactional_id = $1', ['tx-bob'])).toEqual([]);
    await acl('bob', ResourceType.TRANSACTIONAL_ID, 'tx-bob', Op.WRITE);
    const granted = await clients.bob.request(InitProducerIdApi, 4, { transactionalId: 'tx-bob', transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
    expect(granted.errorCode).toBe(0);
    expect(granted.producerId).toBeGreaterThanOrEqual(0n);
  });

  it('an idempotent producer needs IDEMPOTENT_WRITE on the cluster', async () => {
    expect(await idempotent('dave')).toMatchObject({ errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, producerId: -1n, producerEpoch: -1 });
    await acl('dave', ResourceType.CLUSTER, CLUSTER_NAME, Op.IDEMPOTENT_WRITE);
    expect((await idempotent('dave')).errorCode).toBe(0);
  });

  it('or WRITE on at least one topic (KIP-679), unless a DENY cancels it', async () => {
    await acl('erin', ResourceType.TOPIC, 'logs', Op.WRITE);
    expect((await idempotent('erin')).errorCode).toBe(0);
    await acl('frank', ResourceType.TOPIC, 'log', Op.WRITE, { pattern: PatternType.PREFIXED });
    await acl('frank', ResourceType.TOPIC, 'lo', Op.WRITE, { pattern: PatternType.PREFIXED, permission: AclPermission.DENY });
    expect((await idempotent('frank')).errorCode).toBe(ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
    // READ on a topic is not enough.
    expect((await idempotent('alice')).errorCode).toBe(ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
  });
});

describe('transactions', () => {
  const TXN = 'tx-w';
  let producer: { producerId: bigint; producerEpoch: number };

  const addPartitions = async (user: User, topics: Record<string, number[]>) => {
    const res = await clients[user].request(AddPartitionsToTxnApi, 3, {
      v3AndBelowTransactionalId: TXN,
      v3AndBelowProducerId: producer.producerId,
      v3AndBelowProducerEpoch: producer.producerEpoch,
      v3AndBelowTopics: Object.entries(topics).map(([name, partitions]) => ({ name, partitions })),
    });
    return res.resultsByTopicV3AndBelow.flatMap((t) => t.resultsByPartition.map((p) => `${t.name}/${p.partitionIndex}:${p.partitionErrorCode}`));
  };
  const describeTxn = async (user: User) => (await clients[user].request(DescribeTransactionsApi, 0, { transactionalIds: [TXN] })).transactionStates[0]!;
  const txnOffsetCommit = async (user: User, groupId: string, topics: Record<string, number[]>) => {
    const res = await clients[user].request(TxnOffsetCommitApi, 3, {
      transactionalId: TXN,
      groupId,
      producerId: producer.producerId,
      producerEpoch: producer.producerEpoch,
      generationId: -1,
      memberId: '',
      groupInstanceId: null,
      topics: Object.entries(topics).map(([name, partitions]) => ({
        name,
        partitions: partitions.map((partitionIndex) => ({ partitionIndex, committedOffset: 11n, committedLeaderEpoch: -1, committedMetadata: null })),
      })),
    });
    return res.topics.flatMap((t) => t.partitions.map((p) => `${t.name}/${p.partitionIndex}:${p.errorCode}`));
  };
  const stagedOffsets = async () =>
    (await broker.query<{ group_id: string; topic: string; partition: number }>('SELECT group_id, topic, partition FROM txn_offsets WHERE transactional_id = $1 ORDER BY 1, 2, 3', [TXN])).map(
      (r) => `${r.group_id}:${r.topic}/${r.partition}`,
    );

  beforeAll(async () => {
    await acl('writer', ResourceType.TRANSACTIONAL_ID, TXN, Op.WRITE);
    await acl('writer', ResourceType.TOPIC, 'orders', Op.WRITE);
    await acl('writer', ResourceType.TOPIC, 'logs', Op.WRITE);
    const res = await clients.writer.request(InitProducerIdApi, 4, { transactionalId: TXN, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
    expect(res.errorCode).toBe(0);
    producer = { producerId: res.producerId, producerEpoch: res.producerEpoch };
  });

  it('AddPartitionsToTxn needs WRITE on the transactional id', async () => {
    expect(await addPartitions('carol', { orders: [0], logs: [0] })).toEqual(['orders/0:53', 'logs/0:53']);
    expect((await describeTxn('admin')).topics).toEqual([]);
  });

  it('AddPartitionsToTxn adds nothing when a topic is refused: TOPIC_AUTHORIZATION_FAILED, the others OPERATION_NOT_ATTEMPTED', async () => {
    expect(await addPartitions('writer', { orders: [0, 7], secret: [0] })).toEqual(['orders/0:55', 'orders/7:3', 'secret/0:29']);
    expect(await describeTxn('admin')).toMatchObject({ transactionState: 'Empty', topics: [] });
    expect(await addPartitions('writer', { orders: [0], logs: [0] })).toEqual(['orders/0:0', 'logs/0:0']);
    expect((await describeTxn('admin')).topics.map((t) => t.topic).sort()).toEqual(['logs', 'orders']);
  });

  it('AddPartitionsToTxn v4+ is for brokers: CLUSTER_ACTION on the cluster', async () => {
    const request = {
      transactions: [{ transactionalId: TXN, producerId: producer.producerId, producerEpoch: producer.producerEpoch, verifyOnly: true, topics: [{ name: 'orders', partitions: [0] }] }],
    };
    const refused = await clients.writer.request(AddPartitionsToTxnApi, 4, request);
    expect(refused).toMatchObject({ errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, resultsByTransaction: [] });
    const asAdmin = await clients.admin.request(AddPartitionsToTxnApi, 4, request);
    expect(asAdmin.errorCode).toBe(0);
    expect(asAdmin.resultsByTransaction[0]!.topicResults[0]!.resultsByPartition[0]!.partitionErrorCode).toBe(0);
  });

  it('DescribeTransactions needs DESCRIBE on the transactional id and shows only describable topics', async () => {
    expect((await describeTxn('carol')).errorCode).toBe(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
    await acl('carol', ResourceType.TRANSACTIONAL_ID, TXN, Op.DESCRIBE);
    await acl('carol', ResourceType.TOPIC, 'orders', Op.DESCRIBE);
    const described = await describeTxn('carol');
    expect(described).toMatchObject({ errorCode: 0, transactionState: 'Ongoing', producerId: producer.producerId });
    expect(described.topics).toEqual([expect.objectContaining({ topic: 'orders', partitions: [0] })]);
  });

  it('ListTransactions lists only the transactional ids it may DESCRIBE', async () => {
    const list = async (user: User) =>
      (await clients[user].request(ListTransactionsApi, 1, { stateFilters: [], producerIdFilters: [], durationFilter: -1n })).transactionStates.map((t) => t.transactionalId).sort();
    expect(await list('admin')).toEqual(['tx-bob', TXN]);
    expect(await list('carol')).toEqual([TXN]);
    expect(await list('dave')).toEqual([]);
  });

  it('AddOffsetsToTxn needs WRITE on the transactional id, then READ on the group', async () => {
    const addOffsets = async (user: User, groupId: string) =>
      (await clients[user].request(AddOffsetsToTxnApi, 3, { transactionalId: TXN, producerId: producer.producerId, producerEpoch: producer.producerEpoch, groupId })).errorCode;
    expect(await addOffsets('carol', 'g-txn')).toBe(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
    expect(await addOffsets('writer', 'g-txn')).toBe(ErrorCode.GROUP_AUTHORIZATION_FAILED);
    await acl('writer', ResourceType.GROUP, 'g-txn', Op.READ);
    expect(await addOffsets('writer', 'g-txn')).toBe(0);
  });

  it('TxnOffsetCommit checks the transactional id, the group, then each topic; refused offsets are not staged', async () => {
    expect(await txnOffsetCommit('carol', 'g-txn', { orders: [0] })).toEqual(['orders/0:53']);
    expect(await txnOffsetCommit('writer', 'g-txn-other', { orders: [0] })).toEqual(['orders/0:30']);
    // WRITE on a topic does not grant READ.
    expect(await txnOffsetCommit('writer', 'g-txn', { orders: [0] })).toEqual(['orders/0:29']);
    expect(await stagedOffsets()).toEqual([]);
    await acl('writer', ResourceType.TOPIC, 'orders', Op.READ);
    expect(await txnOffsetCommit('writer', 'g-txn', { orders: [0, 1], secret: [0] })).toEqual(['orders/0:0', 'orders/1:0', 'secret/0:29']);
    expect(await stagedOffsets()).toEqual(['g-txn:orders/0', 'g-txn:orders/1']);
  });

  it('EndTxn needs WRITE on the transactional id', async () => {
    const end = (user: User) => clients[user].request(EndTxnApi, 3, { transactionalId: TXN, producerId: producer.producerId, producerEpoch: producer.producerEpoch, committed: true });
    expect((await end('carol')).errorCode).toBe(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
    expect((await describeTxn('admin')).transactionState).toBe('Ongoing');
    expect(await committed('g-txn')).toEqual([]);
    expect((await end('writer')).errorCode).toBe(0);
    expect(await committed('g-txn')).toEqual(['orders/0@11', 'orders/1@11']);
  });
});

describe('DescribeProducers', () => {
  it('needs READ on the topic', async () => {
    const res = await clients.bob.request(DescribeProducersApi, 0, {
      topics: [
        { name: 'secret', partitionIndexes: [0] },
        { name: 'orders', partitionIndexes: [0, 1] },
      ],
    });
    expect(res.topics.map((t) => [t.name, t.partitions.map((p) => p.errorCode)])).toEqual([
      ['secret', [ErrorCode.TOPIC_AUTHORIZATION_FAILED]],
      ['orders', [0, 0]],
    ]);
    expect(res.topics[0]!.partitions[0]!.errorMessage).toBe('Topic authorization failed.');
  });
});
