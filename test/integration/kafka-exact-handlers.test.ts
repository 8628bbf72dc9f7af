// SyncGroup, DescribeTransactions, DescribeProducers and DeleteGroups answer
// exactly as Apache Kafka's broker does, at the wire (RawClient, exact
// versions): the order of their checks, their error codes, the fields that
// go with an error, and duplicates in a request. The broker has the
// authorizer on, so the place of authorization among the checks shows.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/protocol/errors.js';
import { CreateTopicsApi, DeleteGroupsApi, DescribeProducersApi, DescribeTransactionsApi, InitProducerIdApi, JoinGroupApi, OffsetCommitApi, SyncGroupApi } from '../../src/protocol/messages/index.js';
import { startTestBroker, type TestBroker } from '../support/broker.js';
import { subscription } from '../support/consumer-protocol.js';
import { RawClient } from '../support/raw-client.js';
import { addUser, connectAs } from '../support/sasl.js';

let broker: TestBroker;
/** A super user. */
let admin: RawClient;
/** A user no ACL names: refused everything. */
let guest: RawClient;

beforeAll(async () => {
  broker = await startTestBroker({
    listeners: 'PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0',
    authorizerEnabled: true,
    superUsers: 'User:admin',
    groupMinSessionTimeoutMs: 1000,
    groupInitialRebalanceDelayMs: 0,
  });
  for (const user of ['admin', 'guest']) await addUser(broker, user, `${user}-secret`);
  admin = await connectAs(broker, 'admin', 'admin-secret');
  guest = await connectAs(broker, 'guest', 'guest-secret');
  const created = await admin.request(CreateTopicsApi, 7, { topics: [{ name: 'orders', numPartitions: 2, replicationFactor: 1 }] });
  expect(created.topics.map((t) => t.errorCode)).toEqual([0]);
});
afterAll(async () => {
  admin?.close();
  guest?.close();
  await broker?.destroy();
});

const join = (c: RawClient, groupId: string, memberId = '') =>
  c.request(JoinGroupApi, 7, {
    groupId,
    sessionTimeoutMs: 30_000,
    rebalanceTimeoutMs: 30_000,
    memberId,
    protocolType: 'consumer',
    protocols: [{ name: 'range', metadata: subscription(['orders']) }],
  });

/** One member joined and synced: the group is Stable, its protocol consumer/range. */
async function stableMember(c: RawClient, groupId: string) {
  const first = await join(c, groupId);
  expect(first.errorCode).toBe(ErrorCode.MEMBER_ID_REQUIRED);
  const joined = await join(c, groupId, first.memberId);
  expect(joined).toMatchObject({ errorCode: 0, protocolType: 'consumer', protocolName: 'range' });
  const synced = await c.request(SyncGroupApi, 5, {
    groupId,
    generationId: joined.generationId,
    memberId: joined.memberId,
    protocolType: 'consumer',
    protocolName: 'range',
    assignments: [{ memberId: joined.memberId, assignment: Buffer.from('mine') }],
  });
  expect(synced.errorCode).toBe(0);
  return { memberId: joined.memberId, generationId: joined.generationId };
}

describe('SyncGroup', () => {
  const sync = (c: RawClient, version: number, body: { groupId: string; generationId: number; memberId: string; protocolType?: string | null; protocolName?: string | null }) =>
    c.request(SyncGroupApi, version, { assignments: [], ...body });

  it('v5 without a protocol type or name answers INCONSISTENT_GROUP_PROTOCOL before authorization and the group; v4 does not need them', async () => {
    const { memberId, generationId } = await stableMember(admin, 'sync-mandatory');
    const base = { groupId: 'sync-mandatory', generationId, memberId };
    expect(await sync(admin, 5, { ...base, protocolType: null, protocolName: 'range' })).toMatchObject({
      errorCode: ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
      protocolType: null,
      protocolName: null,
      assignment: Buffer.alloc(0),
    });
    expect((await sync(admin, 5, { ...base, protocolType: 'consumer', protocolName: null })).errorCode).toBe(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
    expect((await sync(admin, 5, { ...base, protocolType: null, protocolName: null })).errorCode).toBe(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
    // Before the coordinator: an unknown group and an unknown member answer it too.
    expect((await sync(admin, 5, { groupId: 'sync-never-joined', generationId: 1, memberId: 'nobody', protocolType: null, protocolName: null })).errorCode).toBe(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
    // Before authorization: a requester without READ on the group learns only that.
    expect((await sync(guest, 5, { ...base, protocolType: 'consumer', protocolName: null })).errorCode).toBe(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
    expect((await sync(guest, 5, { ...base, protocolType: 'consumer', protocolName: 'range' })).errorCode).toBe(ErrorCode.GROUP_AUTHORIZATION_FAILED);
    // v4 has no such fields; the member gets its assignment.
    const v4 = await sync(admin, 4, base);
    expect(v4.errorCode).toBe(0);
    expect(v4.assignment.toString()).toBe('mine');
    const v5 = await sync(admin, 5, { ...base, protocolType: 'consumer', protocolName: 'range' });
    expect(v5).toMatchObject({ errorCode: 0, protocolType: 'consumer', protocolName: 'range' });
  });

  it("a given type or name that differs from the group's answers INCONSISTENT_GROUP_PROTOCOL, checked after the member and the generation", async () => {
    const { memberId, generationId } = await stableMember(admin, 'sync-differs');
    const base = { groupId: 'sync-differs', generationId, memberId };
    expect((await sync(admin, 5, { ...base, protocolType: 'connect', protocolName: 'range' })).errorCode).toBe(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
    expect((await sync(admin, 5, { ...base, protocolType: 'consumer', protocolName: 'roundrobin' })).errorCode).toBe(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
    expect((await sync(admin, 5, { ...base, memberId: 'someone-else', protocolType: 'connect', protocolName: 'range' })).errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
    expect((await sync(admin, 5, { ...base, generationId: generationId + 1, protocolType: 'connect', protocolName: 'range' })).errorCode).toBe(ErrorCode.ILLEGAL_GENERATION);
  });

  it('a group that has no protocol yet (first generation still joining) does not conflict with the given name: REBALANCE_IN_PROGRESS', async () => {
    // The initial rebalance delay keeps the first join open while the member's SyncGroup arrives.
    const delayed = await startTestBroker({ groupMinSessionTimeoutMs: 1000, groupInitialRebalanceDelayMs: 3000 });
    const joiner = await RawClient.connect(delayed.bootstrap);
    const other = await RawClient.connect(delayed.bootstrap);
    try {
      await joiner.request(CreateTopicsApi, 7, { topics: [{ name: 'orders', numPartitions: 1, replicationFactor: 1 }] });
      const first = await join(joiner, 'sync-first-generation');
      expect(first.errorCode).toBe(ErrorCode.MEMBER_ID_REQUIRED);
      const parked = join(joiner, 'sync-first-generation', first.memberId);
      // The group is at generation 0 with its protocol type set (consumer) and no protocol name.
      let early = await sync(other, 5, { groupId: 'sync-first-generation', generationId: 0, memberId: first.memberId, protocolType: 'consumer', protocolName: 'range' });
      for (let i = 0; early.errorCode === ErrorCode.UNKNOWN_MEMBER_ID && i < 50; i++) {
        // The parked join may not have reached the group yet.
        await new Promise((r) => setTimeout(r, 20));
        early = await sync(other, 5, { groupId: 'sync-first-generation', generationId: 0, memberId: first.memberId, protocolType: 'consumer', protocolName: 'range' });
      }
      expect(early.errorCode).toBe(ErrorCode.REBALANCE_IN_PROGRESS);
      // A given type that differs still conflicts.
      expect((await sync(other, 5, { groupId: 'sync-first-generation', generationId: 0, memberId: first.memberId, protocolType: 'connect', protocolName: 'range' })).errorCode).toBe(
        ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
      );
      const joined = await parked;
      expect(joined).toMatchObject({ errorCode: 0, generationId: 1, protocolName: 'range' });
    } finally {
      joiner.close();
      other.close();
      await delayed.destroy();
    }
  });
});

describe('DescribeTransactions', () => {
  const describeTxns = async (c: RawClient, transactionalIds: string[]) => (await c.request(DescribeTransactionsApi, 0, { transactionalIds })).transactionStates;
  const failed = (transactionalId: string, errorCode: number) => ({
    errorCode,
    transactionalId,
    transactionState: '',
    transactionTimeoutMs: 0,
    transactionStartTimeMs: 0n,
    producerId: 0n,
    producerEpoch: 0,
    topics: [],
  });

  it('an id answered with an error carries only the id and the code; the other fields keep their defaults (zero, empty)', async () => {
    const init = await admin.request(InitProducerIdApi, 4, { transactionalId: 'tx-described', transactionTimeoutMs: 45_000, producerId: -1n, producerEpoch: -1 });
    expect(init.errorCode).toBe(0);
    const states = await describeTxns(admin, ['tx-described', 'tx-unknown', '']);
    expect(states[0]).toMatchObject({
      errorCode: 0,
      transactionalId: 'tx-described',
      transactionState: 'Empty',
      transactionTimeoutMs: 45_000,
      producerId: init.producerId,
      producerEpoch: init.producerEpoch,
    });
    expect(states.slice(1)).toEqual([failed('tx-unknown', ErrorCode.TRANSACTIONAL_ID_NOT_FOUND), failed('', ErrorCode.INVALID_REQUEST)]);
    expect(await describeTxns(guest, ['tx-described', 'tx-unknown'])).toEqual([
      failed('tx-described', ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED),
      failed('tx-unknown', ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED),
    ]);
  });
});

describe('DescribeProducers', () => {
  const describeProducers = async (c: RawClient, topics: Record<string, number[]>) =>
    (await c.request(DescribeProducersApi, 0, { topics: Object.entries(topics).map(([name, partitionIndexes]) => ({ name, partitionIndexes })) })).topics.map((t) => [
      t.name,
      t.partitions.map((p) => [p.partitionIndex, p.errorCode, p.errorMessage]),
    ]);
  const long = 'x'.repeat(250);

  it("checks the topic name, then READ on the topic, then that it exists, then each partition, with Kafka's codes and messages", async () => {
    const invalid = (reason: string) => `Topic name is invalid: ${reason}`;
    expect(await describeProducers(admin, { 'bad name!': [0, 1], '..': [0], [long]: [0], 'no-such-topic': [0, 1], orders: [0, 5, -1] })).toEqual([
      [
        'bad name!',
        [
          [0, ErrorCode.INVALID_TOPIC_EXCEPTION, invalid("'bad name!' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'")],
          [1, ErrorCode.INVALID_TOPIC_EXCEPTION, invalid("'bad name!' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'")],
        ],
      ],
      ['..', [[0, ErrorCode.INVALID_TOPIC_EXCEPTION, invalid("'..' is not allowed")]]],
      [long, [[0, ErrorCode.INVALID_TOPIC_EXCEPTION, invalid(`the length of '${long}' is longer than the max allowed length 249`)]]],
      [
        'no-such-topic',
        [
          [0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'This server does not host this topic-partition.'],
          [1, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'This server does not host this topic-partition.'],
        ],
      ],
      [
        'orders',
        [
          [0, 0, null],
          [5, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, null],
          [-1, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, null],
        ],
      ],
    ]);
    // Without READ: an illegal name is still INVALID_TOPIC_EXCEPTION; a missing topic is not revealed.
    expect(await describeProducers(guest, { '': [0], orders: [0], 'no-such-topic': [0] })).toEqual([
      ['', [[0, ErrorCode.INVALID_TOPIC_EXCEPTION, invalid('the empty string is not allowed')]]],
      ['orders', [[0, ErrorCode.TOPIC_AUTHORIZATION_FAILED, 'Topic authorization failed.']]],
      ['no-such-topic', [[0, ErrorCode.TOPIC_AUTHORIZATION_FAILED, 'Topic authorization failed.']]],
    ]);
  });
});

describe('DeleteGroups', () => {
  const commitStandalone = async (groupId: string) => {
    const res = await admin.request(OffsetCommitApi, 8, {
      groupId,
      generationIdOrMemberEpoch: -1,
      memberId: '',
      groupInstanceId: null,
      topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, committedOffset: 3n, committedLeaderEpoch: -1, committedMetadata: null }] }],
    });
    expect(res.topics[0]!.partitions[0]!.errorCode).toBe(0);
  };

  it('a group named more than once is deleted once and answered once', async () => {
    await commitStandalone('dup-a');
    await commitStandalone('dup-b');
    const res = await admin.request(DeleteGroupsApi, 2, { groupsNames: ['dup-a', 'dup-missing', 'dup-a', 'dup-b', 'dup-missing'] });
    expect(res.results.map((r) => [r.groupId, r.errorCode])).toEqual([
      ['dup-a', 0],
      ['dup-missing', ErrorCode.GROUP_ID_NOT_FOUND],
      ['dup-b', 0],
    ]);
    expect(await broker.query(`SELECT group_id FROM committed_offsets WHERE group_id LIKE 'dup-%'`)).toEqual([]);
    const refused = await guest.request(DeleteGroupsApi, 0, { groupsNames: ['dup-c', 'dup-c'] });
    expect(refused.results.map((r) => [r.groupId, r.errorCode])).toEqual([['dup-c', ErrorCode.GROUP_AUTHORIZATION_FAILED]]);
  });

  it('the empty group id is looked up like any other: not found (Kafka 4 keeps it for backwards compatibility)', async () => {
    const res = await admin.request(DeleteGroupsApi, 2, { groupsNames: ['', 'dup-missing-2'] });
    expect(res.results.map((r) => [r.groupId, r.errorCode])).toEqual([
      ['', ErrorCode.GROUP_ID_NOT_FOUND],
      ['dup-missing-2', ErrorCode.GROUP_ID_NOT_FOUND],
    ]);
  });
});
