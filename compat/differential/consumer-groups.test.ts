// Differential: the KIP-848 consumer group protocol, sent as the same raw
// ConsumerGroupHeartbeat and ConsumerGroupDescribe requests to a real Apache
// Kafka and to pgkafka: malformed requests, a first member's join, a second
// member's (revoke before assign), fencing errors, static instance ids, the
// group in ListGroups, DescribeGroups and OffsetCommit, and leaving.
import { describe, it } from 'vitest';
import { ConsumerGroupDescribeApi, ConsumerGroupHeartbeatApi, DescribeGroupsApi, ListGroupsApi, OffsetCommitApi, type ConsumerGroupHeartbeatRequest } from '../../src/protocol/messages/index.js';
import type { RawClient } from '../../test/support/raw-client.js';
import { awaitCoordinator, createTopics, expectSame, onBoth, usePair } from '../support/differential.js';

// Both compute a new target assignment on the heartbeat that bumps the epoch (assignment interval 0;
// Kafka 4.3 may otherwise compute it off its request thread), so answers compare heartbeat by heartbeat.
const pair = usePair({ kafka: { 'group.consumer.assignment.interval.ms': 0, 'group.consumer.assignor.offload.enable': false }, pgkafka: { groupConsumerAssignmentIntervalMs: 0 } });

const heartbeat = (c: RawClient, body: Partial<ConsumerGroupHeartbeatRequest> & { groupId: string; memberId: string; memberEpoch: number }, version = 1) =>
  c.request(ConsumerGroupHeartbeatApi, version, { rebalanceTimeoutMs: -1, ...body });
const join = (c: RawClient, groupId: string, memberId: string, extra: Partial<ConsumerGroupHeartbeatRequest> = {}) =>
  heartbeat(c, { groupId, memberId, memberEpoch: 0, rebalanceTimeoutMs: 30_000, subscribedTopicNames: ['cg-topic'], topicPartitions: [], ...extra });

describe('differential: KIP-848 consumer groups', () => {
  it('malformed heartbeats, a join, a second member, fencing, describe, offsets and leaving', async () => {
    const outcome = await onBoth(pair(), async (connect) => {
      const c = await connect();
      const created = await createTopics(c, [{ name: 'cg-topic', numPartitions: 4 }]);
      const topicId = created.topics[0]!.topicId;
      await awaitCoordinator(c, ['cg-one', 'cg-static']);
      const owned = (partitions: number[]) => [{ topicId, partitions }];
      const invalid = {
        noMemberId: await join(c, 'cg-one', ''),
        noRebalanceTimeout: await join(c, 'cg-one', 'member-a', { rebalanceTimeoutMs: -1 }),
        ownedOnJoin: await join(c, 'cg-one', 'member-a', { topicPartitions: null }),
        noSubscription: await join(c, 'cg-one', 'member-a', { subscribedTopicNames: null }),
        badAssignor: await join(c, 'cg-one', 'member-a', { serverAssignor: 'sticky' }),
        badEpoch: await heartbeat(c, { groupId: 'cg-one', memberId: 'member-a', memberEpoch: -3 }),
        unknownGroup: await heartbeat(c, { groupId: 'cg-none', memberId: 'member-a', memberEpoch: 3 }),
        leaveUnknownGroup: await heartbeat(c, { groupId: 'cg-none', memberId: 'member-a', memberEpoch: -1 }),
      };
      const a1 = await join(c, 'cg-one', 'member-a');
      const b1 = await join(c, 'cg-one', 'member-b');
      const aRevoke = await heartbeat(c, { groupId: 'cg-one', memberId: 'member-a', memberEpoch: a1.memberEpoch, topicPartitions: owned([0, 1, 2, 3]) });
      const bWaits = await heartbeat(c, { groupId: 'cg-one', memberId: 'member-b', memberEpoch: b1.memberEpoch, topicPartitions: owned([]) });
      const fencing = {
        ahead: await heartbeat(c, { groupId: 'cg-one', memberId: 'member-a', memberEpoch: 7, topicPartitions: owned([0, 1, 2, 3]) }),
        stranger: await heartbeat(c, { groupId: 'cg-one', memberId: 'member-x', memberEpoch: 1 }),
      };
      const kept = aRevoke.assignment?.topicPartitions[0]?.partitions ?? [];
      const aDone = await heartbeat(c, { groupId: 'cg-one', memberId: 'member-a', memberEpoch: aRevoke.memberEpoch, topicPartitions: owned(kept) });
      const bGets = await heartbeat(c, { groupId: 'cg-one', memberId: 'member-b', memberEpoch: bWaits.memberEpoch, topicPartitions: owned([]) });
      const behind = await heartbeat(c, { groupId: 'cg-one', memberId: 'member-a', memberEpoch: 0 + 1, topicPartitions: owned([0, 1, 2, 3]) });
      const described = await c.request(ConsumerGroupDescribeApi, 1, { groupIds: ['cg-one', 'cg-none'], includeAuthorizedOperations: false });
      // Kafka answers the groups of each coordinator partition together: compared by group id, members by member id.
      described.groups.sort((x, y) => x.groupId.localeCompare(y.groupId));
      for (const g of described.groups) g.members.sort((x, y) => x.memberId.localeCompare(y.memberId));
      const commit = (memberId: string, epoch: number, version: number) =>
        c.request(OffsetCommitApi, version, {
          groupId: 'cg-one',
          generationIdOrMemberEpoch: epoch,
          memberId,
          groupInstanceId: null,
          topics: [{ name: 'cg-topic', partitions: [{ partitionIndex: kept[0] ?? 0, committedOffset: 3n, committedLeaderEpoch: -1, committedMetadata: null }] }],
        });
      const offsets = {
        ok: await commit('member-a', aDone.memberEpoch, 9),
        stale: await commit('member-a', aDone.memberEpoch + 1, 9),
        stranger: await commit('member-x', aDone.memberEpoch, 9),
        oldVersion: await commit('member-a', aDone.memberEpoch, 8),
      };
      const statics = {
        first: await join(c, 'cg-static', 'static-1', { instanceId: 'instance-1' }),
        unreleased: await join(c, 'cg-static', 'static-2', { instanceId: 'instance-1' }),
        fenced: await heartbeat(c, { groupId: 'cg-static', memberId: 'static-2', memberEpoch: 1, instanceId: 'instance-1', topicPartitions: owned([]) }),
        staticLeave: await heartbeat(c, { groupId: 'cg-static', memberId: 'static-1', memberEpoch: -2, instanceId: 'instance-1' }),
        back: await join(c, 'cg-static', 'static-3', { instanceId: 'instance-1' }),
      };
      const listed = await c.request(ListGroupsApi, 5, { statesFilter: [], typesFilter: ['consumer'] });
      listed.groups.sort((x, y) => x.groupId.localeCompare(y.groupId));
      return {
        statics,
        invalid,
        a1,
        b1,
        aRevoke,
        bWaits,
        fencing,
        aDone,
        bGets,
        behind,
        described,
        offsets,
        listed,
        describeGroups: await c.request(DescribeGroupsApi, 6, { groups: ['cg-one'], includeAuthorizedOperations: false }),
        leave: await heartbeat(c, { groupId: 'cg-one', memberId: 'member-b', memberEpoch: -1 }),
        leaveAgain: await heartbeat(c, { groupId: 'cg-one', memberId: 'member-b', memberEpoch: -1 }),
        afterLeave: await c.request(ConsumerGroupDescribeApi, 1, { groupIds: ['cg-one'], includeAuthorizedOperations: false }).then((r) => ({ ...r.groups[0]!, members: r.groups[0]!.members.length })),
      };
    });
    expectSame(outcome);
  }, 120_000);
});
