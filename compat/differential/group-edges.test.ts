// Differential: the classic group protocol's edge cases, sent as the same raw
// requests to a real Apache Kafka and to pgkafka: static members (KIP-345)
// replaced by a new member id and the old one fenced, a rejoin during a
// rebalance, heartbeats with a wrong generation, a follower's SyncGroup before
// the leader's, and LeaveGroup by instance id (v3+ batch form). Member ids
// are random per broker: they are compared as labels in the order the
// members joined (m1, m2, …), so "the same member" and "a new member" still compare.
// Last, the offset APIs where a group's state or type decides the answer.
import { describe, it } from 'vitest';
import { ErrorCode } from '../../src/protocol/errors.js';
import {
  AddOffsetsToTxnApi,
  DescribeGroupsApi,
  EndTxnApi,
  HeartbeatApi,
  InitProducerIdApi,
  JoinGroupApi,
  LeaveGroupApi,
  OffsetCommitApi,
  OffsetDeleteApi,
  OffsetFetchApi,
  SyncGroupApi,
  TxnOffsetCommitApi,
  type JoinGroupResponse,
} from '../../src/protocol/messages/index.js';
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

/** What a client retries after finding the transaction coordinator again: Kafka loads its transaction state a moment after naming the coordinator. */
const RETRIED = new Set<number>([ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.NOT_COORDINATOR, ErrorCode.CONCURRENT_TRANSACTIONS]);

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

  it('offsets: a transactional commit while the group completes a rebalance, OffsetDelete by group type and subscription, unknown and empty group ids', async () => {
    const outcome = await onBoth(pair(), async (connect) => {
      const c = await connect();
      await createTopics(c, [{ name: 'ge-topic', numPartitions: 2 }]);
      await awaitCoordinator(c, ['ge-txn-group', 'ge-other-type', 'ge-undecodable', 'ge-consumer']);
      await awaitCoordinator(c, ['ge-txn'], 1);
      const offsets = [{ name: 'ge-topic', partitions: [{ partitionIndex: 0, committedOffset: 1n, committedLeaderEpoch: -1, committedMetadata: null }] }];
      const commitAt = (version: number, groupId: string, generationIdOrMemberEpoch: number, memberId = '') =>
        c
          .request(OffsetCommitApi, version, { groupId, generationIdOrMemberEpoch, memberId, groupInstanceId: null, topics: offsets })
          .then((r) => r.topics.flatMap((t) => t.partitions.map((p) => p.errorCode)));
      const deleteOffsets = (groupId: string) =>
        c
          .request(OffsetDeleteApi, 0, { groupId, topics: [{ name: 'ge-topic', partitions: [{ partitionIndex: 0 }] }] })
          .then((r) => ({ errorCode: r.errorCode, partitions: r.topics.flatMap((t) => t.partitions.map((p) => p.errorCode)) }));
      const fetchOffsets = (version: number, groupId: string) =>
        version >= 8
          ? c
              .request(OffsetFetchApi, version, { groups: [{ groupId, memberId: null, memberEpoch: -1, topics: [{ name: 'ge-topic', partitionIndexes: [0] }] }], requireStable: false })
              .then((r) => r.groups)
          : c.request(OffsetFetchApi, version, { groupId, topics: [{ name: 'ge-topic', partitionIndexes: [0] }], requireStable: false }).then((r) => ({ errorCode: r.errorCode, topics: r.topics }));
      /** A member that joins (after MEMBER_ID_REQUIRED) and, unless `sync` is false, syncs: the group is then Stable (else CompletingRebalance). */
      const member = async (groupId: string, protocolType: string, metadata: Buffer, sync = true) => {
        const join = (memberId: string) =>
          c.request(JoinGroupApi, 7, { groupId, sessionTimeoutMs: 30_000, rebalanceTimeoutMs: 30_000, memberId, groupInstanceId: null, protocolType, protocols: [{ name: 'range', metadata }] });
        const first = await join('');
        const joinedAgain = await join(first.memberId);
        const synced = sync
          ? await c
              .request(SyncGroupApi, 5, {
                groupId,
                generationId: joinedAgain.generationId,
                memberId: joinedAgain.memberId,
                groupInstanceId: null,
                protocolType,
                protocolName: 'range',
                assignments: [{ memberId: joinedAgain.memberId, assignment: Buffer.alloc(0) }],
              })
              .then((r) => r.errorCode)
          : null;
        return { memberId: joinedAgain.memberId, generationId: joinedAgain.generationId, joined: [first.errorCode, joinedAgain.errorCode], synced };
      };

      // (a) A transactional commit by a member whose group is completing a rebalance: Kafka does not check the state for it.
      const completing = await member('ge-txn-group', 'consumer', subscription(['ge-topic']), false);
      let init = await c.request(InitProducerIdApi, 4, { transactionalId: 'ge-txn', transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
      for (let i = 0; i < 300 && RETRIED.has(init.errorCode); i++) {
        await pause(100);
        init = await c.request(InitProducerIdApi, 4, { transactionalId: 'ge-txn', transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
      }
      const producer = { transactionalId: 'ge-txn', producerId: init.producerId, producerEpoch: init.producerEpoch };
      const offsetsAdded = await c.request(AddOffsetsToTxnApi, 3, { ...producer, groupId: 'ge-txn-group' }).then((r) => r.errorCode);
      const txnCommit = (generationId: number, memberId: string) =>
        c
          .request(TxnOffsetCommitApi, 3, { ...producer, groupId: 'ge-txn-group', generationId, memberId, groupInstanceId: null, topics: offsets })
          .then((r) => r.topics.flatMap((t) => t.partitions.map((p) => p.errorCode)));
      const transactional = {
        init: init.errorCode,
        offsetsAdded,
        whileCompleting: await txnCommit(completing.generationId, completing.memberId),
        wrongGeneration: await txnCommit(completing.generationId + 1, completing.memberId),
        plainWhileCompleting: await commitAt(8, 'ge-txn-group', completing.generationId, completing.memberId),
        emptyGroupId: await c
          .request(TxnOffsetCommitApi, 3, { ...producer, groupId: '', generationId: -1, memberId: '', groupInstanceId: null, topics: offsets })
          .then((r) => r.topics[0]!.partitions[0]!.errorCode),
        aborted: await c.request(EndTxnApi, 3, { ...producer, committed: false }).then((r) => r.errorCode),
      };

      // (b) A group of another protocol type with a member: Kafka refuses OffsetDelete for the group as a whole.
      const otherType = await member('ge-other-type', 'connect', Buffer.from('worker'));
      const otherTypeOffsets = {
        member: { ...otherType, memberId: undefined },
        committed: await commitAt(8, 'ge-other-type', otherType.generationId, otherType.memberId),
        deleted: await deleteOffsets('ge-other-type'),
      };

      // (c) A consumer group whose member's subscription does not decode: Kafka counts it as subscribed to every topic.
      const undecodable = await member('ge-undecodable', 'consumer', Buffer.from([0xff, 0xff, 0x01]));
      const undecodableOffsets = {
        member: { ...undecodable, memberId: undefined },
        committed: await commitAt(8, 'ge-undecodable', undecodable.generationId, undecodable.memberId),
        deleted: await deleteOffsets('ge-undecodable'),
      };
      const consumer = await member('ge-consumer', 'consumer', subscription(['ge-elsewhere']));
      const consumerOffsets = { committed: await commitAt(8, 'ge-consumer', consumer.generationId, consumer.memberId), deleted: await deleteOffsets('ge-consumer') };

      // (d) A generation for a group that does not exist: GROUP_ID_NOT_FOUND from v9, ILLEGAL_GENERATION before.
      const unknownGroup = { v8: await commitAt(8, 'ge-no-such-group', 3), v9: await commitAt(9, 'ge-no-such-group', 3), v9Simple: await commitAt(9, 'ge-no-such-simple', -1) };

      // (e) The empty group id: OffsetCommit and OffsetFetch serve it (old consumers used it), OffsetDelete refuses it.
      const emptyGroupId = {
        committed: await commitAt(8, '', -1),
        fetchedV7: await fetchOffsets(7, ''),
        fetchedV8: await fetchOffsets(8, ''),
        deleted: await deleteOffsets(''),
      };
      return { completing: { ...completing, memberId: undefined }, transactional, otherTypeOffsets, undecodableOffsets, consumerOffsets, unknownGroup, emptyGroupId };
    });
    expectSame(outcome);
  });
});
