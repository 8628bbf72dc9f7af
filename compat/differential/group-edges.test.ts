// Differential: the classic group protocol's edge cases, sent as the same raw
// requests to a real Apache Kafka and to pgkafka: static members (KIP-345)
// replaced by a new member id and the old one fenced, a rejoin during a
// rebalance, heartbeats with a wrong generation, a follower's SyncGroup before
// the leader's, and LeaveGroup by instance id (v3+ batch form). Member ids
// are random per broker: they are compared as labels in the order the
// members joined (m1, m2, …), so "the same member" and "a new member" still compare.
import { describe, it } from 'vitest';
import { DescribeGroupsApi, HeartbeatApi, JoinGroupApi, LeaveGroupApi, OffsetCommitApi, SyncGroupApi, type JoinGroupResponse } from '../../src/protocol/messages/index.js';
import { subscription } from '../../test/support/consumer-protocol.js';
import type { RawClient } from '../../test/support/raw-client.js';
import { awaitCoordinator, createTopics, expectSame, onBoth, usePair } from '../support/differential.js';

const pair = usePair();

/** Labels for member ids, in the order they first appear. */
function labeller() {
  const labels = new Map<string, string>();
  return (id: string) => {
    if (id === '') return '';
    if (!labels.has(id)) labels.set(id, `m${labels.size + 1}`);
    return labels.get(id)!;
  };
}

type Label = ReturnType<typeof labeller>;

const joinRaw = (c: RawClient, groupId: string, memberId: string, groupInstanceId: string | null, topics = ['ge-topic']) =>
  c.request(JoinGroupApi, 7, {
    groupId,
    sessionTimeoutMs: 10_000,
    rebalanceTimeoutMs: 10_000,
    memberId,
    groupInstanceId,
    protocolType: 'consumer',
    protocols: [{ name: 'range', metadata: subscription(topics) }],
  });

const joined = (label: Label, r: JoinGroupResponse) => ({
  errorCode: r.errorCode,
  generationId: r.generationId,
  protocolName: r.protocolName,
  skipAssignment: r.skipAssignment,
  member: label(r.memberId),
  leaderMember: label(r.leader),
  members: r.members.map((m) => ({ member: label(m.memberId), groupInstanceId: m.groupInstanceId })).sort((a, b) => a.member.localeCompare(b.member)),
});

const syncRaw = (c: RawClient, groupId: string, generationId: number, memberId: string, groupInstanceId: string | null, assignments: { memberId: string; assignment: Buffer }[] = []) =>
  c
    .request(SyncGroupApi, 5, { groupId, generationId, memberId, groupInstanceId, protocolType: 'consumer', protocolName: 'range', assignments })
    .then((r) => ({ errorCode: r.errorCode, protocolName: r.protocolName, assignment: r.assignment.toString() }));

const heartbeat = (c: RawClient, groupId: string, generationId: number, memberId: string, groupInstanceId: string | null = null) =>
  c.request(HeartbeatApi, 4, { groupId, generationId, memberId, groupInstanceId }).then((r) => r.errorCode);

const commit = (c: RawClient, groupId: string, generationId: number, memberId: string, groupInstanceId: string | null) =>
  c
    .request(OffsetCommitApi, 8, {
      groupId,
      generationIdOrMemberEpoch: generationId,
      memberId,
      groupInstanceId,
      topics: [{ name: 'ge-topic', partitions: [{ partitionIndex: 0, committedOffset: 1n, committedLeaderEpoch: -1, committedMetadata: null }] }],
    })
    .then((r) => r.topics.flatMap((t) => t.partitions.map((p) => p.errorCode)));

const described = (label: Label, c: RawClient, groupId: string) =>
  c.request(DescribeGroupsApi, 5, { groups: [groupId], includeAuthorizedOperations: false }).then((r) =>
    r.groups.map((g) => ({
      errorCode: g.errorCode,
      groupState: g.groupState,
      protocolType: g.protocolType,
      protocolData: g.protocolData,
      members: g.members.map((m) => ({ member: label(m.memberId), groupInstanceId: m.groupInstanceId, assignment: m.memberAssignment.toString() })).sort((a, b) => a.member.localeCompare(b.member)),
    })),
  );

const leave = (label: Label, c: RawClient, groupId: string, members: { memberId: string; groupInstanceId: string | null }[]) =>
  c.request(LeaveGroupApi, 4, { groupId, members }).then((r) => ({
    errorCode: r.errorCode,
    members: r.members.map((m) => ({ member: label(m.memberId), groupInstanceId: m.groupInstanceId, errorCode: m.errorCode })),
  }));

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('differential: classic group edge cases', () => {
  it('static members: join, a restart replaces the member id, the old one is fenced, leave by instance id', async () => {
    const outcome = await onBoth(pair(), async (connect) => {
      const label = labeller();
      const c = await connect();
      await createTopics(c, [{ name: 'ge-topic', numPartitions: 2 }]);
      await awaitCoordinator(c, ['ge-static']);
      // A static member gets its member id at once (no MEMBER_ID_REQUIRED round).
      const first = await joinRaw(c, 'ge-static', '', 'i-a');
      label(first.memberId);
      const firstSync = await syncRaw(c, 'ge-static', first.generationId, first.memberId, 'i-a', [{ memberId: first.memberId, assignment: Buffer.from('for-a') }]);
      const other = await connect();
      // i-b's join rebalances the group: i-a rejoins, then both sync.
      const second = joinRaw(other, 'ge-static', '', 'i-b');
      await pause(500);
      const rejoinA = await joinRaw(c, 'ge-static', first.memberId, 'i-a');
      const joinedB = await second;
      label(joinedB.memberId);
      const syncB = syncRaw(other, 'ge-static', joinedB.generationId, joinedB.memberId, 'i-b');
      const syncA = await syncRaw(c, 'ge-static', rejoinA.generationId, rejoinA.memberId, 'i-a', [
        { memberId: rejoinA.memberId, assignment: Buffer.from('a-2') },
        { memberId: joinedB.memberId, assignment: Buffer.from('b-2') },
      ]);
      const stable = await described(label, c, 'ge-static');
      // i-b restarts: it joins with no member id and the same instance id while the group is stable.
      const restarted = await joinRaw(await connect(), 'ge-static', '', 'i-b');
      label(restarted.memberId);
      const afterRestart = {
        restarted: joined(label, restarted),
        restartedSync: await syncRaw(other, 'ge-static', restarted.generationId, restarted.memberId, 'i-b'),
        oldHeartbeat: await heartbeat(other, 'ge-static', restarted.generationId, joinedB.memberId, 'i-b'),
        oldSync: await syncRaw(other, 'ge-static', restarted.generationId, joinedB.memberId, 'i-b'),
        oldCommit: await commit(other, 'ge-static', restarted.generationId, joinedB.memberId, 'i-b'),
        oldJoin: await joinRaw(other, 'ge-static', joinedB.memberId, 'i-b').then((r) => joined(label, r)),
        newHeartbeat: await heartbeat(other, 'ge-static', restarted.generationId, restarted.memberId, 'i-b'),
        wrongInstanceHeartbeat: await heartbeat(other, 'ge-static', restarted.generationId, restarted.memberId, 'i-zzz'),
        described: await described(label, c, 'ge-static'),
      };
      const leaving = {
        wrongMemberForInstance: await leave(label, c, 'ge-static', [{ memberId: joinedB.memberId, groupInstanceId: 'i-b' }]),
        unknownInstance: await leave(label, c, 'ge-static', [{ memberId: '', groupInstanceId: 'i-nobody' }]),
        byInstance: await leave(label, c, 'ge-static', [
          { memberId: '', groupInstanceId: 'i-b' },
          { memberId: rejoinA.memberId, groupInstanceId: 'i-a' },
        ]),
        described: await described(label, c, 'ge-static'),
      };
      return {
        first: joined(label, first),
        firstSync,
        rejoinA: joined(label, rejoinA),
        joinedB: joined(label, joinedB),
        syncA,
        syncB: await syncB,
        stable,
        afterRestart,
        leaving,
      };
    });
    expectSame(outcome);
  });

  it('rejoin during a rebalance, heartbeats with wrong generations, a follower syncing before the leader', async () => {
    const outcome = await onBoth(pair(), async (connect) => {
      const label = labeller();
      const a = await connect();
      const b = await connect();
      await createTopics(a, [{ name: 'ge-topic', numPartitions: 2 }]);
      await awaitCoordinator(a, ['ge-dyn']);
      const idA = (await joinRaw(a, 'ge-dyn', '', null)).memberId;
      label(idA);
      const gen1 = await joinRaw(a, 'ge-dyn', idA, null);
      const sync1 = await syncRaw(a, 'ge-dyn', gen1.generationId, idA, null, [{ memberId: idA, assignment: Buffer.from('all') }]);
      const idB = (await joinRaw(b, 'ge-dyn', '', null)).memberId;
      label(idB);
      // B's join starts a rebalance and waits for A to rejoin.
      const joinB = joinRaw(b, 'ge-dyn', idB, null);
      await pause(500);
      const during = {
        heartbeatA: await heartbeat(a, 'ge-dyn', gen1.generationId, idA),
        heartbeatWrongGeneration: await heartbeat(a, 'ge-dyn', gen1.generationId + 7, idA),
        commitA: await commit(a, 'ge-dyn', gen1.generationId, idA, null),
        described: await described(label, a, 'ge-dyn'),
      };
      const gen2A = await joinRaw(a, 'ge-dyn', idA, null);
      const gen2B = await joinB;
      const completing = {
        heartbeatB: await heartbeat(b, 'ge-dyn', gen2B.generationId, idB),
        heartbeatOldGeneration: await heartbeat(b, 'ge-dyn', gen1.generationId, idB),
        syncWrongGeneration: await syncRaw(b, 'ge-dyn', gen1.generationId, idB, null),
        described: await described(label, a, 'ge-dyn'),
      };
      // The follower's SyncGroup waits for the leader's assignment.
      const leaderIsA = gen2A.leader === idA;
      const [leader, follower, leaderId, followerId] = leaderIsA ? [a, b, idA, idB] : [b, a, idB, idA];
      const followerSync = syncRaw(follower, 'ge-dyn', gen2A.generationId, followerId, null);
      await pause(300);
      const leaderSync = await syncRaw(leader, 'ge-dyn', gen2A.generationId, leaderId, null, [
        { memberId: leaderId, assignment: Buffer.from('for-leader') },
        { memberId: followerId, assignment: Buffer.from('for-follower') },
      ]);
      const stable = {
        followerSync: await followerSync,
        leaderSync,
        heartbeatStale: await heartbeat(follower, 'ge-dyn', gen1.generationId, followerId),
        heartbeatCurrent: await heartbeat(follower, 'ge-dyn', gen2A.generationId, followerId),
        heartbeatFuture: await heartbeat(follower, 'ge-dyn', gen2A.generationId + 1, followerId),
        // A follower rejoining with unchanged metadata in a stable group gets the current generation back.
        followerRejoin: await joinRaw(follower, 'ge-dyn', followerId, null).then((r) => joined(label, r)),
        described: await described(label, a, 'ge-dyn'),
      };
      // The follower changes its subscription: a new rebalance, which the leader learns of by heartbeat.
      const changed = joinRaw(follower, 'ge-dyn', followerId, null, ['ge-topic', 'ge-other']);
      await pause(500);
      const leaderHeartbeat = await heartbeat(leader, 'ge-dyn', gen2A.generationId, leaderId);
      const gen3Leader = await joinRaw(leader, 'ge-dyn', leaderId, null);
      const gen3Follower = await changed;
      return {
        gen1: joined(label, gen1),
        sync1,
        during,
        gen2A: joined(label, gen2A),
        gen2B: joined(label, gen2B),
        completing,
        leaderIsA,
        stable,
        leaderHeartbeat,
        gen3Leader: joined(label, gen3Leader),
        gen3Follower: joined(label, gen3Follower),
        left: await leave(label, a, 'ge-dyn', [
          { memberId: idA, groupInstanceId: null },
          { memberId: idB, groupInstanceId: null },
        ]),
      };
    });
    expectSame(outcome);
  });
});
