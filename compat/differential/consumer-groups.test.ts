// Differential: the KIP-848 consumer group protocol, sent as the same raw
// ConsumerGroupHeartbeat and ConsumerGroupDescribe requests to a real Apache
// Kafka and to pgkafka: malformed requests, a first member's join, a second
// member's (revoke before assign), fencing errors, static instance ids, the
// group in ListGroups, DescribeGroups and OffsetCommit, and leaving; a
// group migrating online between the protocols (the default
// group.consumer.migration.policy, bidirectional): a classic group upgraded as
// a consumer-protocol member joins, its classic member rejoining, syncing and
// committing inside the consumer group, and the downgrade when the
// consumer-protocol member leaves; regular-expression subscriptions (an
// invalid pattern, resolution off the heartbeat, a topic created later picked
// up); and group configs (config resource type GROUP: describe, alter,
// validation, used by the group).
import { describe, it } from 'vitest';
import {
  AlterConfigsApi,
  ConsumerGroupDescribeApi,
  ConsumerGroupHeartbeatApi,
  DescribeConfigsApi,
  DescribeGroupsApi,
  HeartbeatApi,
  IncrementalAlterConfigsApi,
  JoinGroupApi,
  ListGroupsApi,
  MetadataApi,
  OffsetCommitApi,
  OffsetFetchApi,
  SyncGroupApi,
  type ConsumerGroupHeartbeatRequest,
} from '../../src/protocol/messages/index.js';
import { assignmentBytes } from '../../src/coordinator/consumer-protocol.js';
import { subscription } from '../../test/support/consumer-protocol.js';
import type { RawClient } from '../../test/support/raw-client.js';
import { awaitCoordinator, createTopics, expectSame, onBoth, usePair } from '../support/differential.js';
import { setTimeout as sleep } from 'node:timers/promises';

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

  it('a classic group upgraded by a consumer-protocol member, its classic member inside the consumer group, and the downgrade', async () => {
    const outcome = await onBoth(pair(), async (connect) => {
      const c = await connect();
      const created = await createTopics(c, [{ name: 'mig-topic', numPartitions: 4 }]);
      const topicId = created.topics[0]!.topicId;
      await awaitCoordinator(c, ['mig-one', 'mig-connect']);
      const classicJoin = (groupId: string, memberId: string, protocolType = 'consumer', name = 'range') =>
        c.request(JoinGroupApi, 7, {
          groupId,
          sessionTimeoutMs: 30_000,
          rebalanceTimeoutMs: 30_000,
          memberId,
          groupInstanceId: null,
          protocolType,
          protocols: [{ name, metadata: subscription(['mig-topic']) }],
        });
      const classicSync = (memberId: string, generationId: number, assignments: { memberId: string; assignment: Buffer }[] = [], name = 'range') =>
        c.request(SyncGroupApi, 5, { groupId: 'mig-one', generationId, memberId, groupInstanceId: null, protocolType: 'consumer', protocolName: name, assignments });
      const classicHeartbeat = (memberId: string, generationId: number) => c.request(HeartbeatApi, 4, { groupId: 'mig-one', generationId, memberId, groupInstanceId: null });
      const commit = (memberId: string, generation: number, version = 8) =>
        c.request(OffsetCommitApi, version, {
          groupId: 'mig-one',
          generationIdOrMemberEpoch: generation,
          memberId,
          groupInstanceId: null,
          topics: [{ name: 'mig-topic', partitions: [{ partitionIndex: 0, committedOffset: 11n, committedLeaderEpoch: -1, committedMetadata: null }] }],
        });
      const listed = () =>
        c.request(ListGroupsApi, 5, { statesFilter: [], typesFilter: [] }).then((r) => r.groups.filter((g) => g.groupId.startsWith('mig-')).sort((x, y) => x.groupId.localeCompare(y.groupId)));
      const describeConsumer = () =>
        c.request(ConsumerGroupDescribeApi, 1, { groupIds: ['mig-one'], includeAuthorizedOperations: false }).then((r) => {
          for (const g of r.groups) g.members.sort((x, y) => x.memberType - y.memberType);
          return r;
        });

      // A classic group of one member, owning every partition, with a committed offset.
      const askId = await classicJoin('mig-one', '');
      const a1 = await classicJoin('mig-one', askId.memberId);
      const a = a1.memberId;
      const all = assignmentBytes(0, [{ topic: 'mig-topic', partitions: [0, 1, 2, 3] }]);
      const aSynced = await classicSync(a, a1.generationId, [{ memberId: a, assignment: all }]);
      const aCommitted = await commit(a, a1.generationId);

      // A group of another protocol type cannot be upgraded.
      const connectJoin = await classicJoin('mig-connect', '', 'connect', 'v1');
      const connectJoined = await classicJoin('mig-connect', connectJoin.memberId, 'connect', 'v1');
      const notConsumerProtocol = await join(c, 'mig-connect', 'member-z', { subscribedTopicNames: ['mig-topic'] });

      // A consumer-protocol member joins: the group is upgraded; the classic member must rejoin.
      const c1 = await join(c, 'mig-one', 'member-c', { subscribedTopicNames: ['mig-topic'] });
      const afterUpgrade = { listed: await listed(), described: await describeConsumer() };
      const aHeartbeat = await classicHeartbeat(a, a1.generationId);
      const aStaleSync = await classicSync(a, a1.generationId);
      const aWrongName = await classicJoin('mig-one', a, 'consumer', 'roundrobin');
      const a2 = await classicJoin('mig-one', a);
      const aSynced2 = await classicSync(a, a2.generationId);
      const aHeartbeat2 = await classicHeartbeat(a, a2.generationId);
      const aCommit2 = { ok: await commit(a, a2.generationId), ahead: await commit(a, a2.generationId + 1), v9: await commit(a, a2.generationId, 9) };
      const aFetch = await c.request(OffsetFetchApi, 9, {
        groups: [{ groupId: 'mig-one', memberId: a, memberEpoch: a2.generationId + 1, topics: [{ name: 'mig-topic', partitionIndexes: [0] }] }],
        requireStable: false,
      });
      const c2 = await heartbeat(c, { groupId: 'mig-one', memberId: 'member-c', memberEpoch: c1.memberEpoch, topicPartitions: [] });
      const mixed = { listed: await listed(), described: await describeConsumer(), describeGroups: await c.request(DescribeGroupsApi, 5, { groups: ['mig-one'], includeAuthorizedOperations: false }) };

      // The consumer-protocol member leaves: the group is a classic group again, rebalancing.
      const owned = c2.assignment?.topicPartitions.find((tp) => tp.topicId === topicId)?.partitions ?? [];
      const cLeft = await heartbeat(c, { groupId: 'mig-one', memberId: 'member-c', memberEpoch: -1, topicPartitions: [{ topicId, partitions: owned }] });
      const afterDowngrade = { listed: await listed(), describeGroups: await c.request(DescribeGroupsApi, 5, { groups: ['mig-one'], includeAuthorizedOperations: false }) };
      const aHeartbeat3 = await classicHeartbeat(a, a2.generationId);
      const a3 = await classicJoin('mig-one', a);
      const aSynced3 = await classicSync(a, a3.generationId, [{ memberId: a, assignment: all }]);
      return {
        askId,
        a1,
        aSynced,
        aCommitted,
        connectJoined,
        notConsumerProtocol,
        c1,
        afterUpgrade,
        aHeartbeat,
        aStaleSync,
        aWrongName,
        a2,
        aSynced2,
        aHeartbeat2,
        aCommit2,
        aFetch,
        c2,
        mixed,
        cLeft,
        afterDowngrade,
        aHeartbeat3,
        a3,
        aSynced3,
        end: { listed: await listed(), fetched: await c.request(OffsetFetchApi, 7, { groupId: 'mig-one', topics: null, requireStable: false }) },
      };
    });
    expectSame(outcome);
  }, 120_000);

  it('regular-expression subscriptions: an invalid pattern, no topics until resolved, then the matching ones, and a topic created later', async () => {
    const outcome = await onBoth(pair(), async (connect) => {
      const c = await connect();
      const created = await createTopics(c, [
        { name: 'rx-one', numPartitions: 2 },
        { name: 'rx-other', numPartitions: 1 },
      ]);
      const names = new Map(created.topics.map((t) => [t.topicId, t.name]));
      await awaitCoordinator(c, ['cg-regex', 'cg-regex-bad']);
      // As the Java client subscribes with a Pattern: no names, the pattern.
      const regexJoin = (groupId: string, memberId: string, regex: string) => join(c, groupId, memberId, { subscribedTopicNames: null, subscribedTopicRegex: regex });
      const bad = await regexJoin('cg-regex-bad', 'rx-bad', 'rx-(');
      const first = await regexJoin('cg-regex', 'rx-member', 'rx-(one|two)');
      let epoch = first.memberEpoch;
      let owned: { topicId: string; partitions: number[] }[] = [];
      const byName = (a: { topicPartitions: { topicId: string; partitions: number[] }[] } | null) =>
        a && Object.fromEntries(a.topicPartitions.map((tp) => [names.get(tp.topicId) ?? 'unknown', [...tp.partitions].sort()]));
      /** Heartbeats as a member does (every 500 ms) until the assignment names the topics; the last answer, topics by name. */
      const beatUntil = async (topics: string[]) => {
        const deadline = Date.now() + 40_000;
        for (;;) {
          const r = await heartbeat(c, { groupId: 'cg-regex', memberId: 'rx-member', memberEpoch: epoch, topicPartitions: owned });
          epoch = r.memberEpoch;
          if (r.assignment) owned = r.assignment.topicPartitions;
          const assigned = Object.keys(byName({ topicPartitions: owned }) ?? {}).sort();
          if (JSON.stringify(assigned) === JSON.stringify(topics) || Date.now() > deadline) return { ...r, assignment: byName(r.assignment) };
          await sleep(500);
        }
      };
      const resolved = await beatUntil(['rx-one']);
      for (const t of (await createTopics(c, [{ name: 'rx-two', numPartitions: 1 }])).topics) names.set(t.topicId, t.name);
      const later = await beatUntil(['rx-one', 'rx-two']);
      const described = await c.request(ConsumerGroupDescribeApi, 1, { groupIds: ['cg-regex'], includeAuthorizedOperations: false });
      // How the Java client learns the names of the topics a broker-side pattern assigned it: by id, each with an empty name.
      const idsOnly = await c.request(MetadataApi, 12, {
        topics: [...names.keys()]
          .sort((x, y) => names.get(x)!.localeCompare(names.get(y)!))
          .concat(['00000000-0000-0000-0000-00000000abcd'])
          .map((topicId) => ({ topicId, name: '' })),
        allowAutoTopicCreation: false,
        includeTopicAuthorizedOperations: false,
      });
      const member = described.groups[0]!.members[0]!;
      return {
        bad: { ...bad, message: bad.errorMessage },
        first: { ...first, assignment: byName(first.assignment) },
        resolved,
        later,
        metadataByTopicId: idsOnly.topics.map((t) => ({ name: t.name, errorCode: t.errorCode, partitions: t.partitions.length })).sort((x, y) => (x.name ?? '~').localeCompare(y.name ?? '~')),
        described: { ...described.groups[0]!, members: [{ ...member, assignment: byName(member.assignment), targetAssignment: byName(member.targetAssignment) }] },
      };
    });
    expectSame(outcome);
  }, 120_000);

  it('group configs: DescribeConfigs, IncrementalAlterConfigs and AlterConfigs on a GROUP resource, their checks, and the group using them', async () => {
    const GROUP = 32;
    const outcome = await onBoth(pair(), async (connect) => {
      const c = await connect();
      await createTopics(c, [{ name: 'conf-topic', numPartitions: 1 }]);
      await awaitCoordinator(c, ['cg-conf']);
      const describe = async (groupId: string, keys: string[] | null = null, version = 4) => {
        const r = await c.request(DescribeConfigsApi, version, {
          resources: [{ resourceType: GROUP, resourceName: groupId, configurationKeys: keys }],
          includeSynonyms: true,
          includeDocumentation: false,
        });
        return r.results.map((x) => ({ ...x, message: x.errorMessage, configs: [...x.configs].sort((a, b) => a.name.localeCompare(b.name)) }));
      };
      const incremental = async (groupId: string, configs: { name: string; configOperation: number; value: string | null }[], validateOnly = false) =>
        (await c.request(IncrementalAlterConfigsApi, 1, { resources: [{ resourceType: GROUP, resourceName: groupId, configs }], validateOnly })).responses.map((x) => ({
          ...x,
          message: x.errorMessage,
        }));
      const set = (name: string, value: string | null) => ({ name, configOperation: 0, value });
      const before = await describe('cg-conf');
      const refused = {
        belowMin: await incremental('cg-conf', [set('consumer.session.timeout.ms', '30000')]),
        aboveMax: await incremental('cg-conf', [set('consumer.heartbeat.interval.ms', '20000')]),
        unknown: await incremental('cg-conf', [set('consumer.foo', '1')]),
        notANumber: await incremental('cg-conf', [set('consumer.session.timeout.ms', 'abc')]),
        emptyGroup: await incremental('', [set('consumer.session.timeout.ms', '50000')]),
        append: await incremental('cg-conf', [{ name: 'consumer.session.timeout.ms', configOperation: 2, value: '50000' }]),
        validateOnly: await incremental('cg-conf', [set('consumer.session.timeout.ms', '50000')], true),
      };
      const altered = await incremental('cg-conf', [set('consumer.session.timeout.ms', '50000'), set('consumer.heartbeat.interval.ms', '6000')]);
      const after = await describe('cg-conf');
      const one = await describe('cg-conf', ['consumer.heartbeat.interval.ms'], 1);
      const member = await join(c, 'cg-conf', 'conf-member', { subscribedTopicNames: ['conf-topic'] });
      const deleted = await incremental('cg-conf', [{ name: 'consumer.heartbeat.interval.ms', configOperation: 1, value: null }]);
      const legacy = (
        await c.request(AlterConfigsApi, 2, { resources: [{ resourceType: GROUP, resourceName: 'cg-conf', configs: [{ name: 'consumer.assignment.interval.ms', value: '0' }] }], validateOnly: false })
      ).responses;
      const afterLegacy = await describe('cg-conf', ['consumer.session.timeout.ms', 'consumer.heartbeat.interval.ms', 'consumer.assignment.interval.ms']);
      const unknownGroup = await describe('cg-never-seen', ['consumer.session.timeout.ms']);
      return {
        before,
        refused,
        altered,
        after,
        one,
        member: { epoch: member.memberEpoch, heartbeatIntervalMs: member.heartbeatIntervalMs },
        deleted,
        legacy,
        afterLegacy,
        unknownGroup,
        empty: await describe(''),
      };
    });
    expectSame(outcome);
  }, 120_000);
});
