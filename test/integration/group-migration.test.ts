// Mixed and migrating consumer groups at the wire, beyond what the
// differential scenarios compare with Kafka (compat/differential/consumer-group*.test.ts):
// a mixed group kept in PostgreSQL across a broker restart, the `upgrade`
// policy keeping a consumer group whose consumer-protocol member left, and
// group.coordinator.rebalance.protocols without `consumer`.
import { afterAll, describe, expect, it } from 'vitest';
import { assignmentBytes } from '../../src/coordinator/consumer-protocol.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import {
  ApiVersionsApi,
  ConsumerGroupDescribeApi,
  ConsumerGroupHeartbeatApi,
  CreateTopicsApi,
  HeartbeatApi,
  JoinGroupApi,
  ListGroupsApi,
  SyncGroupApi,
  type ConsumerGroupHeartbeatRequest,
} from '../../src/protocol/messages/index.js';
import { startTestBroker, type TestBroker } from '../support/broker.js';
import { subscription } from '../support/consumer-protocol.js';
import { RawClient } from '../support/raw-client.js';

const NOW = { groupConsumerAssignmentIntervalMs: 0, groupInitialRebalanceDelayMs: 0 };
const started: TestBroker[] = [];
const clients: RawClient[] = [];
afterAll(async () => {
  for (const c of clients) c.close();
  await Promise.all(started.map((b) => b.destroy()));
});

async function broker(options: Parameters<typeof startTestBroker>[0] = {}): Promise<{ b: TestBroker; c: RawClient }> {
  const b = await startTestBroker({ ...NOW, ...options });
  started.push(b);
  const c = await RawClient.connect(b.bootstrap);
  clients.push(c);
  return { b, c };
}

const consumerHeartbeat = (c: RawClient, body: Partial<ConsumerGroupHeartbeatRequest> & { groupId: string; memberId: string; memberEpoch: number }) =>
  c.request(ConsumerGroupHeartbeatApi, 1, { rebalanceTimeoutMs: -1, ...body });
const classicJoin = (c: RawClient, groupId: string, memberId: string) =>
  c.request(JoinGroupApi, 7, {
    groupId,
    sessionTimeoutMs: 30_000,
    rebalanceTimeoutMs: 30_000,
    memberId,
    protocolType: 'consumer',
    protocols: [{ name: 'range', metadata: subscription(['mig']) }],
  });
const classicSync = (c: RawClient, groupId: string, memberId: string, generationId: number, assignments: { memberId: string; assignment: Buffer }[] = []) =>
  c.request(SyncGroupApi, 5, { groupId, generationId, memberId, groupInstanceId: null, protocolType: 'consumer', protocolName: 'range', assignments });
const classicHeartbeat = (c: RawClient, groupId: string, memberId: string, generationId: number) => c.request(HeartbeatApi, 4, { groupId, generationId, memberId, groupInstanceId: null });

/** A classic group of one member owning both partitions of `mig`, upgraded by consumer-protocol member `c`; the classic member then rejoins. */
async function mixedGroup(c: RawClient, groupId: string) {
  const asked = await classicJoin(c, groupId, '');
  const first = await classicJoin(c, groupId, asked.memberId);
  const memberId = first.memberId;
  await classicSync(c, groupId, memberId, first.generationId, [{ memberId, assignment: assignmentBytes(0, [{ topic: 'mig', partitions: [0, 1] }]) }]);
  const upgraded = await consumerHeartbeat(c, { groupId, memberId: 'c', memberEpoch: 0, rebalanceTimeoutMs: 30_000, subscribedTopicNames: ['mig'], topicPartitions: [] });
  expect(upgraded).toMatchObject({ errorCode: ErrorCode.NONE, memberEpoch: first.generationId + 1 });
  expect((await classicHeartbeat(c, groupId, memberId, first.generationId)).errorCode).toBe(ErrorCode.REBALANCE_IN_PROGRESS);
  const rejoined = await classicJoin(c, groupId, memberId);
  expect(rejoined).toMatchObject({ errorCode: ErrorCode.NONE, generationId: upgraded.memberEpoch, leader: '', members: [] });
  const synced = await classicSync(c, groupId, memberId, rejoined.generationId);
  expect(synced.assignment).toEqual(assignmentBytes(0, [{ topic: 'mig', partitions: [0] }]));
  return { memberId, generation: rejoined.generationId, consumerEpoch: upgraded.memberEpoch };
}

describe('a mixed group', () => {
  it('keeps its classic members in PostgreSQL: after a restart they heartbeat and sync at the same generation', async () => {
    const { b, c } = await broker();
    await c.request(CreateTopicsApi, 7, { topics: [{ name: 'mig', numPartitions: 2, replicationFactor: 1 }] });
    const classic = await mixedGroup(c, 'mixed-restart');
    const { schema } = b;
    c.close();
    await b.stop();
    const { c: again } = await broker({ schema });
    expect((await classicHeartbeat(again, 'mixed-restart', classic.memberId, classic.generation)).errorCode).toBe(ErrorCode.NONE);
    expect((await classicSync(again, 'mixed-restart', classic.memberId, classic.generation)).assignment).toEqual(assignmentBytes(0, [{ topic: 'mig', partitions: [0] }]));
    const described = await again.request(ConsumerGroupDescribeApi, 1, { groupIds: ['mixed-restart'], includeAuthorizedOperations: false });
    expect(described.groups[0]!.members.map((m) => m.memberType).sort()).toEqual([0, 1]);
  });

  it('stays a consumer group under the upgrade policy when its consumer-protocol member leaves; the classic member rejoins it', async () => {
    const { c } = await broker({ groupConsumerMigrationPolicy: 'upgrade' });
    await c.request(CreateTopicsApi, 7, { topics: [{ name: 'mig', numPartitions: 2, replicationFactor: 1 }] });
    const classic = await mixedGroup(c, 'mixed-upgrade');
    expect(await consumerHeartbeat(c, { groupId: 'mixed-upgrade', memberId: 'c', memberEpoch: -1 })).toMatchObject({ errorCode: ErrorCode.NONE, memberEpoch: -1 });
    const listed = await c.request(ListGroupsApi, 5, { statesFilter: [], typesFilter: [] });
    expect(listed.groups.find((g) => g.groupId === 'mixed-upgrade')).toMatchObject({ groupType: 'consumer' });
    expect((await classicHeartbeat(c, 'mixed-upgrade', classic.memberId, classic.generation)).errorCode).toBe(ErrorCode.REBALANCE_IN_PROGRESS);
    const rejoined = await classicJoin(c, 'mixed-upgrade', classic.memberId);
    expect(rejoined.generationId).toBeGreaterThan(classic.generation);
    expect((await classicSync(c, 'mixed-upgrade', classic.memberId, rejoined.generationId)).assignment).toEqual(assignmentBytes(0, [{ topic: 'mig', partitions: [0, 1] }]));
  });
});

// Measured against Kafka 4.3.1 with group.coordinator.rebalance.protocols=classic: ApiVersions still lists
// ConsumerGroupHeartbeat and ConsumerGroupDescribe, and both answer UNSUPPORTED_VERSION with no message.
describe('group.coordinator.rebalance.protocols without consumer', () => {
  it('answers ConsumerGroupHeartbeat and ConsumerGroupDescribe UNSUPPORTED_VERSION, still serving classic groups', async () => {
    const { c } = await broker({ groupCoordinatorRebalanceProtocols: 'classic' });
    const versions = await c.request(ApiVersionsApi, 3, { clientSoftwareName: 'test', clientSoftwareVersion: '1' });
    expect(versions.apiKeys.filter((k) => k.apiKey === 68 || k.apiKey === 69)).toHaveLength(2);
    const heartbeat = await consumerHeartbeat(c, { groupId: 'p-one', memberId: 'm', memberEpoch: 0, rebalanceTimeoutMs: 30_000, subscribedTopicNames: ['mig'], topicPartitions: [] });
    expect(heartbeat).toMatchObject({ errorCode: ErrorCode.UNSUPPORTED_VERSION, errorMessage: null, memberId: null });
    const described = await c.request(ConsumerGroupDescribeApi, 1, { groupIds: ['p-one', 'p-two'], includeAuthorizedOperations: false });
    expect(described.groups.map((g) => [g.groupId, g.errorCode])).toEqual([
      ['p-one', ErrorCode.UNSUPPORTED_VERSION],
      ['p-two', ErrorCode.UNSUPPORTED_VERSION],
    ]);
    expect((await classicJoin(c, 'p-one', '')).errorCode).toBe(ErrorCode.MEMBER_ID_REQUIRED);
  });
});
