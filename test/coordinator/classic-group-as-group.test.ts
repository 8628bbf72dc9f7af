// A classic group seen through the Group interface, as the coordinator,
// DescribeGroups, ListGroups, OffsetDelete and DeleteGroups see it.
import { beforeEach, describe, expect, it } from 'vitest';
import { ClassicGroup } from '../../src/coordinator/classic-group.js';
import type { Group } from '../../src/coordinator/group.js';
import type { JoinRequest, JoinResult } from '../../src/coordinator/group-types.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { subscription } from '../support/consumer-protocol.js';
import { FakeClock } from '../support/fake-clock.js';

const DELAY = 3_000;
let clock: FakeClock;
let group: ClassicGroup;
let stored: Group[];

const newGroup = () => new ClassicGroup({ groupId: 'g', clock, settings: { initialRebalanceDelayMs: DELAY, maxSize: 100 }, persist: async (g) => void stored.push(g) });

const joinRequest = (over: Partial<JoinRequest>): JoinRequest => ({
  groupId: 'g',
  memberId: '',
  groupInstanceId: null,
  sessionTimeoutMs: 10_000,
  rebalanceTimeoutMs: 30_000,
  protocolType: 'consumer',
  protocols: [{ name: 'range', metadata: subscription(['orders']) }],
  reason: null,
  clientId: 'client',
  clientHost: '/127.0.0.1',
  requireKnownMemberId: false,
  ...over,
});

/** Members join with these subscriptions (or other protocol metadata) and the group completes its join phase. */
async function joined(...members: Partial<JoinRequest>[]): Promise<JoinResult[]> {
  const joins = members.map((m, i) => group.join(joinRequest({ clientId: `c${i}`, ...m })));
  // Members that join during the initial delay extend it once.
  clock.advance(2 * DELAY);
  return Promise.all(joins);
}

async function stable(...members: Partial<JoinRequest>[]): Promise<JoinResult[]> {
  const results = await joined(...members);
  const leader = results[0]!.leader;
  const assignments = results.map((r, i) => ({ memberId: r.memberId, assignment: Buffer.from(`assignment-${i}`) }));
  await Promise.all(
    results.map((r) =>
      group.sync({
        groupId: 'g',
        generationId: r.generationId,
        memberId: r.memberId,
        groupInstanceId: null,
        protocolType: group.protocolType,
        protocolName: 'range',
        assignments: r.memberId === leader ? assignments : [],
      }),
    ),
  );
  expect(group.stateAsString()).toBe('Stable');
  return results;
}

beforeEach(() => {
  clock = new FakeClock();
  stored = [];
  group = newGroup();
});

describe('a classic group as a Group', () => {
  it('names its type and state as ListGroups lists them', async () => {
    expect(group.type).toBe('classic');
    expect(group.asListedGroup()).toEqual({ groupId: 'g', protocolType: '', groupState: 'Empty', groupType: 'classic' });
    expect(group.isEmpty()).toBe(true);
    await joined({});
    expect(group.asListedGroup()).toEqual({ groupId: 'g', protocolType: 'consumer', groupState: 'CompletingRebalance', groupType: 'classic' });
    expect(group.isInStates(new Set(['completingrebalance', 'stable']))).toBe(true);
    expect(group.isInStates(new Set(['stable']))).toBe(false);
    expect([group.isEmpty(), group.numMembers()]).toEqual([false, 1]);
  });

  it('describes members without metadata or assignment until the group is Stable', async () => {
    const [a] = await joined({ clientId: 'a' });
    expect(group.describe()).toMatchObject({ errorCode: ErrorCode.NONE, groupState: 'CompletingRebalance', protocolType: 'consumer', protocolData: '' });
    expect(group.describe().members).toEqual([
      { memberId: a!.memberId, groupInstanceId: null, clientId: 'a', clientHost: '/127.0.0.1', memberMetadata: Buffer.alloc(0), memberAssignment: Buffer.alloc(0) },
    ]);
    void group.sync({
      groupId: 'g',
      generationId: 1,
      memberId: a!.memberId,
      groupInstanceId: null,
      protocolType: 'consumer',
      protocolName: 'range',
      assignments: [{ memberId: a!.memberId, assignment: Buffer.from('mine') }],
    });
    await new Promise((r) => setImmediate(r));
    expect(group.describe()).toMatchObject({ groupState: 'Stable', protocolData: 'range' });
    expect(group.describe().members[0]).toMatchObject({ memberMetadata: subscription(['orders']), memberAssignment: Buffer.from('mine') });
  });

  it('is subscribed to the topics its consumer members name, and to none while Empty', async () => {
    expect(group.isSubscribedToTopic('orders')).toBe(false);
    await stable({ protocols: [{ name: 'range', metadata: subscription(['orders', 'payments']) }] }, { protocols: [{ name: 'range', metadata: subscription(['audit']) }] });
    expect(['orders', 'payments', 'audit', 'other'].map((t) => group.isSubscribedToTopic(t))).toEqual([true, true, true, false]);
  });

  it('reads no subscription from members of another protocol type, and every topic from a consumer group with undecodable metadata', async () => {
    await stable({ protocolType: 'connect', protocols: [{ name: 'range', metadata: subscription(['orders']) }] });
    expect(group.isSubscribedToTopic('orders')).toBe(false);
    // Another protocol type: OffsetDelete is refused for the whole group while it has members, as Kafka does.
    expect(group.validateOffsetDelete()).toBe(ErrorCode.NON_EMPTY_GROUP);
    group = newGroup();
    // As Kafka: the group's subscriptions are unknown, so it counts as subscribed to every topic.
    await stable({ protocols: [{ name: 'range', metadata: Buffer.from([0, 0, 0, 0, 0, 9]) }] }, { protocols: [{ name: 'range', metadata: subscription(['audit']) }] });
    expect([group.isSubscribedToTopic('audit'), group.isSubscribedToTopic('orders')]).toEqual([true, true]);
    expect(group.validateOffsetDelete()).toBe(ErrorCode.NONE);
    group = newGroup();
    // Kafka reads every subscription as its version 0 prefix: what a later version adds, even garbage, is ignored.
    await stable({ protocols: [{ name: 'range', metadata: Buffer.concat([Buffer.from([0, 3]), subscription(['audit']).subarray(2, 2 + 4 + 2 + 5), Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff])]) }] });
    expect([group.isSubscribedToTopic('audit'), group.isSubscribedToTopic('orders')]).toEqual([true, false]);
  });

  it('may be deleted only while Empty, and is gone once dead', async () => {
    await joined({});
    expect(group.validateDeleteGroup()).toBe(ErrorCode.NON_EMPTY_GROUP);
    group = newGroup();
    expect(group.validateDeleteGroup()).toBe(ErrorCode.NONE);
    group.markDead();
    expect([group.isDead(), group.validateDeleteGroup(), group.validateOffsetDelete(), group.validateOffsetFetch(null, -1)]).toEqual([
      true,
      ErrorCode.GROUP_ID_NOT_FOUND,
      ErrorCode.GROUP_ID_NOT_FOUND,
      ErrorCode.GROUP_ID_NOT_FOUND,
    ]);
  });

  it('accepts a transactional commit that names neither member nor generation in any state, an OffsetCommit only while Empty', async () => {
    const outside = { memberId: '', groupInstanceId: null, generationIdOrMemberEpoch: -1, apiVersion: 3 };
    await joined({});
    expect(group.validateOffsetCommit({ ...outside, isTransactional: true })).toBe(ErrorCode.NONE);
    expect(group.validateOffsetCommit({ ...outside, isTransactional: false })).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
  });

  it('is stored as the Stable group it becomes, and restored from that with the same generation and assignments', async () => {
    const results = await stable({ clientId: 'a' }, { clientId: 'b' });
    const snapshot = (stored.at(-1) as ClassicGroup).toStored();
    expect(snapshot).toMatchObject({ type: 'classic', groupId: 'g', generation: 1, state: 'Stable', protocolType: 'consumer', protocolName: 'range', leaderId: results[0]!.leader });
    expect(snapshot.members.map((m) => m.assignment.toString())).toEqual(['assignment-0', 'assignment-1']);

    const restored = newGroup();
    restored.restore(snapshot);
    expect(restored.toStored()).toEqual({ ...snapshot, stateSince: expect.any(Date) });
    expect(restored.describe()).toEqual(group.describe());
    expect(restored.heartbeat(results[1]!.memberId, null, 1)).toBe(ErrorCode.NONE);
  });

  it('counts as rebalancing while it assigns partitions and for a while after', async () => {
    expect(group.isRebalancing(clock.now() - 1)).toBe(false);
    await joined({});
    expect(group.isRebalancing(clock.now())).toBe(true);
    group = newGroup();
    await stable({});
    expect(group.isRebalancing(clock.now() - 1)).toBe(true);
    expect(group.isRebalancing(clock.now())).toBe(false);
  });
});
