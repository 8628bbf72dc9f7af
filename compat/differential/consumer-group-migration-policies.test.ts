// Differential: what each group.consumer.migration.policy allows, sent as the
// same raw requests to a real Apache Kafka and to pgkafka (the default,
// bidirectional, is consumer-groups.test.ts's). `downgrade`: a
// consumer-protocol member cannot upgrade a classic group (GROUP_ID_NOT_FOUND),
// a classic member may join a consumer group, and the group goes back to
// classic when its consumer-protocol member leaves. `disabled`: neither
// upgrade nor classic members in a consumer group (INCONSISTENT_GROUP_PROTOCOL).
import { describe, it } from 'vitest';
import {
  ConsumerGroupDescribeApi,
  ConsumerGroupHeartbeatApi,
  DescribeGroupsApi,
  HeartbeatApi,
  JoinGroupApi,
  LeaveGroupApi,
  ListGroupsApi,
  SyncGroupApi,
  type ConsumerGroupHeartbeatRequest,
} from '../../src/protocol/messages/index.js';
import { assignmentBytes } from '../../src/coordinator/consumer-protocol.js';
import { subscription } from '../../test/support/consumer-protocol.js';
import type { RawClient } from '../../test/support/raw-client.js';
import { awaitCoordinator, createTopics, expectSame, onBoth, usePair, type Pair } from '../support/differential.js';

const settings = (policy: string) => ({
  kafka: { 'group.consumer.assignment.interval.ms': 0, 'group.consumer.assignor.offload.enable': false, 'group.consumer.migration.policy': policy },
  pgkafka: { groupConsumerAssignmentIntervalMs: 0, groupConsumerMigrationPolicy: policy as 'downgrade' | 'disabled' },
});

const consumerJoin = (c: RawClient, groupId: string, memberId: string, extra: Partial<ConsumerGroupHeartbeatRequest> = {}) =>
  c.request(ConsumerGroupHeartbeatApi, 1, { groupId, memberId, memberEpoch: 0, rebalanceTimeoutMs: 30_000, subscribedTopicNames: ['pol-topic'], topicPartitions: [], ...extra });

const classicJoin = (c: RawClient, groupId: string, memberId: string, groupInstanceId: string | null = null) =>
  c.request(JoinGroupApi, 7, {
    groupId,
    sessionTimeoutMs: 30_000,
    rebalanceTimeoutMs: 30_000,
    memberId,
    groupInstanceId,
    protocolType: 'consumer',
    protocols: [{ name: 'range', metadata: subscription(['pol-topic']) }],
  });

const classicSync = (c: RawClient, groupId: string, memberId: string, generationId: number, assignments: { memberId: string; assignment: Buffer }[] = [], groupInstanceId: string | null = null) =>
  c.request(SyncGroupApi, 5, { groupId, generationId, memberId, groupInstanceId, protocolType: 'consumer', protocolName: 'range', assignments });

/** A classic group of one member that owns every partition. */
async function classicGroup(c: RawClient, groupId: string) {
  const asked = await classicJoin(c, groupId, '');
  const joined = await classicJoin(c, groupId, asked.memberId);
  const synced = await classicSync(c, groupId, joined.memberId, joined.generationId, [{ memberId: joined.memberId, assignment: assignmentBytes(0, [{ topic: 'pol-topic', partitions: [0, 1] }]) }]);
  return { joined, synced };
}

const listed = (c: RawClient) =>
  c.request(ListGroupsApi, 5, { statesFilter: [], typesFilter: [] }).then((r) => r.groups.filter((g) => g.groupId.startsWith('pol-')).sort((x, y) => x.groupId.localeCompare(y.groupId)));

async function prepare(pair: () => Pair, run: (c: RawClient) => Promise<unknown>) {
  const outcome = await onBoth(pair(), async (connect) => {
    const c = await connect();
    await createTopics(c, [{ name: 'pol-topic', numPartitions: 2 }]);
    await awaitCoordinator(c, ['pol-classic', 'pol-consumer']);
    return run(c);
  });
  expectSame(outcome);
}

describe('differential: group.consumer.migration.policy=downgrade', () => {
  const pair = usePair(settings('downgrade'));
  it('refuses the upgrade, lets a classic member into a consumer group, downgrades when the consumer-protocol member leaves', async () => {
    await prepare(pair, async (c) => {
      const classic = await classicGroup(c, 'pol-classic');
      const upgrade = await consumerJoin(c, 'pol-classic', 'member-u');
      const consumer = await consumerJoin(c, 'pol-consumer', 'member-c');
      const askId = await classicJoin(c, 'pol-consumer', '');
      const joined = await classicJoin(c, 'pol-consumer', askId.memberId);
      const synced = await classicSync(c, 'pol-consumer', joined.memberId, joined.generationId);
      const mixed = await listed(c);
      const left = await c.request(ConsumerGroupHeartbeatApi, 1, { groupId: 'pol-consumer', memberId: 'member-c', memberEpoch: -1, rebalanceTimeoutMs: -1 });
      const heartbeat = await c.request(HeartbeatApi, 4, { groupId: 'pol-consumer', generationId: joined.generationId, memberId: joined.memberId, groupInstanceId: null });
      return {
        classic,
        upgrade,
        consumer,
        askId,
        joined,
        synced,
        mixed,
        left,
        downgraded: await listed(c),
        heartbeat,
        described: await c.request(DescribeGroupsApi, 5, { groups: ['pol-consumer'], includeAuthorizedOperations: false }),
      };
    });
  }, 120_000);

  it('a static classic member restarting replaces its previous self; a LeaveGroup naming several classic members bumps the group epoch once', async () => {
    await prepare(pair, async (c) => {
      await awaitCoordinator(c, ['pol-mixed']);
      const epoch = () => c.request(ConsumerGroupDescribeApi, 1, { groupIds: ['pol-mixed'], includeAuthorizedOperations: false }).then((r) => r.groups[0]!.groupEpoch);
      const consumer = await consumerJoin(c, 'pol-mixed', 'member-c');
      const staticJoined = await classicJoin(c, 'pol-mixed', '', 'instance-1');
      const staticSynced = await classicSync(c, 'pol-mixed', staticJoined.memberId, staticJoined.generationId, [], 'instance-1');
      const askId = await classicJoin(c, 'pol-mixed', '');
      const dynamicJoined = await classicJoin(c, 'pol-mixed', askId.memberId);
      const dynamicSynced = await classicSync(c, 'pol-mixed', dynamicJoined.memberId, dynamicJoined.generationId);
      const before = await epoch();
      // The instance restarts: no member id, the same group.instance.id.
      const restarted = await classicJoin(c, 'pol-mixed', '', 'instance-1');
      const restartedSynced = await classicSync(c, 'pol-mixed', restarted.memberId, restarted.generationId, [], 'instance-1');
      const oldHeartbeat = await c.request(HeartbeatApi, 4, { groupId: 'pol-mixed', generationId: staticJoined.generationId, memberId: staticJoined.memberId, groupInstanceId: 'instance-1' });
      const afterRestart = await epoch();
      const left = await c.request(LeaveGroupApi, 5, {
        groupId: 'pol-mixed',
        memberId: '',
        members: [
          { memberId: '', groupInstanceId: 'instance-1', reason: null },
          { memberId: dynamicJoined.memberId, groupInstanceId: null, reason: null },
          { memberId: 'nobody', groupInstanceId: null, reason: null },
        ],
      });
      return {
        consumer,
        staticJoined,
        staticSynced,
        dynamicJoined,
        dynamicSynced,
        restarted,
        restartedSynced,
        oldHeartbeat,
        bumpedByRestart: afterRestart - before,
        left,
        bumpedByLeave: (await epoch()) - afterRestart,
      };
    });
  }, 120_000);
});

describe('differential: group.consumer.migration.policy=disabled', () => {
  const pair = usePair(settings('disabled'));
  it('refuses the upgrade and classic members in a consumer group', async () => {
    await prepare(pair, async (c) => {
      const classic = await classicGroup(c, 'pol-classic');
      const upgrade = await consumerJoin(c, 'pol-classic', 'member-u');
      const consumer = await consumerJoin(c, 'pol-consumer', 'member-c');
      return { classic, upgrade, consumer, classicIntoConsumer: await classicJoin(c, 'pol-consumer', ''), groups: await listed(c) };
    });
  }, 120_000);
});
