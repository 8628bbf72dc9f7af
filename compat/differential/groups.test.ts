// Differential: the classic group protocol and committed offsets, sent as the
// same raw requests to a real Apache Kafka and to pgkafka: a member's whole
// life (KIP-394 member id, join, sync, heartbeat, commit, describe, leave)
// and the refusals around it.
import { describe, it } from 'vitest';
import { DescribeGroupsApi, HeartbeatApi, JoinGroupApi, LeaveGroupApi, ListGroupsApi, OffsetCommitApi, OffsetFetchApi, SyncGroupApi } from '../../src/protocol/messages/index.js';
import { subscription } from '../../test/support/consumer-protocol.js';
import type { RawClient } from '../../test/support/raw-client.js';
import { awaitCoordinator, createTopics, expectSame, onBoth, usePair } from '../support/differential.js';

const pair = usePair();

const join = (c: RawClient, groupId: string, memberId: string, opts: { sessionTimeoutMs?: number; topics?: string[]; version?: number } = {}) =>
  c.request(JoinGroupApi, opts.version ?? 7, {
    groupId,
    sessionTimeoutMs: opts.sessionTimeoutMs ?? 10_000,
    rebalanceTimeoutMs: 10_000,
    memberId,
    groupInstanceId: null,
    protocolType: 'consumer',
    protocols: [{ name: 'range', metadata: subscription(opts.topics ?? ['g-topic']) }],
  });

const sync = (c: RawClient, groupId: string, generationId: number, memberId: string, assignments: { memberId: string; assignment: Buffer }[] = []) =>
  c.request(SyncGroupApi, 5, { groupId, generationId, memberId, groupInstanceId: null, protocolType: 'consumer', protocolName: 'range', assignments });

const heartbeat = (c: RawClient, groupId: string, generationId: number, memberId: string) => c.request(HeartbeatApi, 4, { groupId, generationId, memberId, groupInstanceId: null });

const commit = (c: RawClient, groupId: string, generationId: number, memberId: string, offsets: { topic: string; partition: number; offset: bigint; metadata?: string | null }[]) =>
  c.request(OffsetCommitApi, 8, {
    groupId,
    generationIdOrMemberEpoch: generationId,
    memberId,
    groupInstanceId: null,
    topics: [...new Set(offsets.map((o) => o.topic))].map((name) => ({
      name,
      partitions: offsets.filter((o) => o.topic === name).map((o) => ({ partitionIndex: o.partition, committedOffset: o.offset, committedLeaderEpoch: -1, committedMetadata: o.metadata ?? null })),
    })),
  });

const fetchOffsets = (c: RawClient, groupId: string, topics: { name: string; partitionIndexes: number[] }[] | null) => c.request(OffsetFetchApi, 7, { groupId, topics, requireStable: false });

// Kafka answers the groups of each of its coordinator partitions together: compared by group id.
const describeGroups = (c: RawClient, groups: string[]) =>
  c.request(DescribeGroupsApi, 5, { groups, includeAuthorizedOperations: false }).then((r) => r.groups.sort((a, b) => a.groupId.localeCompare(b.groupId)));

describe('differential: classic groups', () => {
  it('one member: KIP-394 member id, join, sync, heartbeat, commit, fetch, describe, leave', async () => {
    const outcome = await onBoth(pair(), async (connect) => {
      const c = await connect();
      await createTopics(c, [{ name: 'g-topic', numPartitions: 2 }]);
      await awaitCoordinator(c, ['g-one', 'g-never']);
      const first = await join(c, 'g-one', '');
      const joined = await join(c, 'g-one', first.memberId);
      const me = joined.memberId;
      const synced = await sync(c, 'g-one', joined.generationId, me, [{ memberId: me, assignment: Buffer.from('assigned') }]);
      return {
        first,
        joined,
        synced,
        heartbeat: await heartbeat(c, 'g-one', joined.generationId, me),
        staleHeartbeat: await heartbeat(c, 'g-one', joined.generationId - 1, me),
        strangerHeartbeat: await heartbeat(c, 'g-one', joined.generationId, 'stranger'),
        committed: await commit(c, 'g-one', joined.generationId, me, [
          { topic: 'g-topic', partition: 0, offset: 5n, metadata: 'meta' },
          { topic: 'g-topic', partition: 1, offset: 7n },
        ]),
        staleCommit: await commit(c, 'g-one', joined.generationId + 1, me, [{ topic: 'g-topic', partition: 0, offset: 6n }]),
        strangerCommit: await commit(c, 'g-one', joined.generationId, 'stranger', [{ topic: 'g-topic', partition: 0, offset: 6n }]),
        unknownTopicCommit: await commit(c, 'g-one', joined.generationId, me, [{ topic: 'g-none', partition: 0, offset: 1n }]),
        fetched: await fetchOffsets(c, 'g-one', [{ name: 'g-topic', partitionIndexes: [0, 1, 2] }]),
        fetchedAll: await fetchOffsets(c, 'g-one', null),
        described: await describeGroups(c, ['g-one', 'g-never']),
        left: await c.request(LeaveGroupApi, 4, {
          groupId: 'g-one',
          members: [
            { memberId: me, groupInstanceId: null },
            { memberId: 'stranger', groupInstanceId: null },
          ],
        }),
        afterLeave: await describeGroups(c, ['g-one']),
      };
    });
    expectSame(outcome);
  });

  it('refusals: invalid group ids, session timeouts, protocol mismatch, unknown members and generations', async () => {
    const outcome = await onBoth(pair(), async (connect) => {
      const c = await connect();
      const a = await connect();
      await awaitCoordinator(c, ['g-refuse', 'g-short', 'g-long', 'g-nobody', 'g-simple']);
      const first = await join(a, 'g-refuse', '');
      const joined = await join(a, 'g-refuse', first.memberId);
      await sync(a, 'g-refuse', joined.generationId, joined.memberId, [{ memberId: joined.memberId, assignment: Buffer.alloc(0) }]);
      return {
        emptyGroupId: await join(c, '', ''),
        sessionTooShort: await join(c, 'g-short', '', { sessionTimeoutMs: 10 }),
        sessionTooLong: await join(c, 'g-long', '', { sessionTimeoutMs: 3_600_000 }),
        unknownMemberJoin: await join(c, 'g-refuse', 'stranger'),
        otherProtocolType: await c.request(JoinGroupApi, 7, {
          groupId: 'g-refuse',
          sessionTimeoutMs: 10_000,
          rebalanceTimeoutMs: 10_000,
          memberId: '',
          groupInstanceId: null,
          protocolType: 'connect',
          protocols: [{ name: 'default', metadata: Buffer.alloc(0) }],
        }),
        syncUnknownGroup: await sync(c, 'g-nobody', 1, 'stranger'),
        syncWrongGeneration: await sync(c, 'g-refuse', joined.generationId + 5, joined.memberId),
        heartbeatUnknownGroup: await heartbeat(c, 'g-nobody', 1, 'stranger'),
        leaveUnknownGroup: await c.request(LeaveGroupApi, 4, { groupId: 'g-nobody', members: [{ memberId: 'stranger', groupInstanceId: null }] }),
        simpleCommitToActiveGroup: await commit(c, 'g-refuse', -1, '', [{ topic: 'g-topic', partition: 0, offset: 1n }]),
        simpleCommitToNewGroup: await commit(c, 'g-simple', -1, '', [{ topic: 'g-topic', partition: 0, offset: 3n }]),
        simpleFetch: await fetchOffsets(c, 'g-simple', [{ name: 'g-topic', partitionIndexes: [0] }]),
        nulMetadata: await commit(c, 'g-simple', -1, '', [
          { topic: 'g-topic', partition: 0, offset: 4n, metadata: 'Hello\0world!' },
          { topic: 'g-topic', partition: 1, offset: 2n, metadata: 'trailing\0' },
        ]),
        nulMetadataBack: await fetchOffsets(c, 'g-simple', [{ name: 'g-topic', partitionIndexes: [0, 1] }]),
        tooLongMetadata: await commit(c, 'g-simple', -1, '', [{ topic: 'g-topic', partition: 0, offset: 5n, metadata: 'm'.repeat(4097) }]),
        described: await describeGroups(c, ['g-refuse', 'g-simple', '']),
        listed: await c.request(ListGroupsApi, 4, { statesFilter: ['Stable', 'Empty'] }).then((r) => ({ errorCode: r.errorCode, groups: r.groups.sort((x, y) => x.groupId.localeCompare(y.groupId)) })),
      };
    });
    expectSame(outcome);
  });
});
