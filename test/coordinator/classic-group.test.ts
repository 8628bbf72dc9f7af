import { beforeEach, describe, expect, it } from 'vitest';
import { ClassicGroup } from '../../src/coordinator/classic-group.js';
import type { JoinRequest, JoinResult, SyncResult } from '../../src/coordinator/group-types.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { FakeClock } from './fake-clock.js';

const SESSION = 10_000;
const REBALANCE = 30_000;
const DELAY = 3_000;

let clock: FakeClock;
let group: ClassicGroup;
let persisted: number;

const join = (over: Partial<JoinRequest> = {}): Promise<JoinResult> =>
  group.join({
    groupId: 'g',
    memberId: '',
    groupInstanceId: null,
    sessionTimeoutMs: SESSION,
    rebalanceTimeoutMs: REBALANCE,
    protocolType: 'consumer',
    protocols: [{ name: 'range', metadata: Buffer.from('m') }],
    reason: null,
    clientId: 'client',
    clientHost: '/127.0.0.1',
    requireKnownMemberId: true,
    ...over,
  });

/** Settles promise callbacks queued by synchronous group events. */
const tick = () => new Promise((r) => setImmediate(r));

async function settled<T>(p: Promise<T>): Promise<T | 'pending'> {
  const marker = Symbol();
  const result = await Promise.race([p, tick().then(() => marker)]);
  return result === marker ? 'pending' : (result as T);
}

/** A member that has been given its id and is parked in the join phase. */
async function joinNewMember(over: Partial<JoinRequest> = {}): Promise<{ memberId: string; joined: Promise<JoinResult> }> {
  const first = await join(over);
  expect(first.errorCode).toBe(ErrorCode.MEMBER_ID_REQUIRED);
  return { memberId: first.memberId, joined: join({ ...over, memberId: first.memberId }) };
}

async function stableGroupOf(n: number): Promise<{ ids: string[]; leader: string; generation: number }> {
  const joins = [];
  for (let i = 0; i < n; i++) joins.push(await joinNewMember({ clientId: `c${i}` }));
  clock.advance(DELAY);
  const results = await Promise.all(joins.map((j) => j.joined));
  const leader = results[0]!.leader;
  const generation = results[0]!.generationId;
  const syncs = results.map((r) =>
    group.sync({
      groupId: 'g', generationId: generation, memberId: r.memberId, groupInstanceId: null, protocolType: 'consumer', protocolName: 'range',
      assignments: r.memberId === leader ? results.map((x, i) => ({ memberId: x.memberId, assignment: Buffer.from(`a${i}`) })) : [],
    }),
  );
  const synced = await Promise.all(syncs);
  expect(synced.every((s) => s.errorCode === 0)).toBe(true);
  expect(group.state).toBe('Stable');
  return { ids: results.map((r) => r.memberId), leader, generation };
}

beforeEach(() => {
  clock = new FakeClock();
  persisted = 0;
  group = new ClassicGroup('g', clock, { initialRebalanceDelayMs: DELAY, maxSize: 100 }, async () => void persisted++);
});

describe('ClassicGroup join', () => {
  it('gives a new dynamic member an id first (MEMBER_ID_REQUIRED, KIP-394)', async () => {
    const res = await join();
    expect(res.errorCode).toBe(ErrorCode.MEMBER_ID_REQUIRED);
    expect(res.memberId).toMatch(/^client-/);
    expect(group.members.size).toBe(0);
  });

  it('waits group.initial.rebalance.delay.ms, then starts generation 1 with a leader that sees every member', async () => {
    const a = await joinNewMember({ clientId: 'a' });
    clock.advance(1000);
    const b = await joinNewMember({ clientId: 'b' });
    expect(await settled(a.joined)).toBe('pending');
    clock.advance(DELAY - 1);
    expect(await settled(a.joined)).toBe('pending');
    clock.advance(1);
    const [ra, rb] = await Promise.all([a.joined, b.joined]);
    expect(ra.generationId).toBe(1);
    expect(rb.generationId).toBe(1);
    expect(ra.leader).toBe(a.memberId);
    expect(ra.protocolName).toBe('range');
    expect(ra.members.map((m) => m.memberId).sort()).toEqual([a.memberId, b.memberId].sort());
    expect(rb.members).toEqual([]);
    expect(group.state).toBe('CompletingRebalance');
  });

  it('refuses a member whose protocols share nothing with the group (INCONSISTENT_GROUP_PROTOCOL)', async () => {
    await stableGroupOf(1);
    const res = await join({ protocols: [{ name: 'other', metadata: Buffer.alloc(0) }] });
    expect(res.errorCode).toBe(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
    const wrongType = await join({ protocolType: 'connect' });
    expect(wrongType.errorCode).toBe(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
  });

  it('answers UNKNOWN_MEMBER_ID to an id it never gave out', async () => {
    await stableGroupOf(1);
    expect((await join({ memberId: 'made-up' })).errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
  });

  it('chooses the protocol most members prefer among those all support', async () => {
    const a = await joinNewMember({ protocols: [{ name: 'roundrobin', metadata: Buffer.alloc(0) }, { name: 'range', metadata: Buffer.alloc(0) }] });
    const b = await joinNewMember({ protocols: [{ name: 'range', metadata: Buffer.alloc(0) }, { name: 'roundrobin', metadata: Buffer.alloc(0) }] });
    const c = await joinNewMember({ protocols: [{ name: 'range', metadata: Buffer.alloc(0) }, { name: 'sticky', metadata: Buffer.alloc(0) }] });
    clock.advance(DELAY);
    const results = await Promise.all([a.joined, b.joined, c.joined]);
    expect(results.map((r) => r.protocolName)).toEqual(['range', 'range', 'range']);
  });
});

describe('ClassicGroup sync', () => {
  it("parks followers until the leader's assignment arrives, then hands each member its own", async () => {
    const a = await joinNewMember();
    const b = await joinNewMember();
    clock.advance(DELAY);
    const [ra, rb] = await Promise.all([a.joined, b.joined]);
    const follower = group.sync({ groupId: 'g', generationId: 1, memberId: rb.memberId, groupInstanceId: null, protocolType: null, protocolName: null, assignments: [] });
    expect(await settled(follower)).toBe('pending');
    const leader = await group.sync({
      groupId: 'g', generationId: 1, memberId: ra.memberId, groupInstanceId: null, protocolType: 'consumer', protocolName: 'range',
      assignments: [{ memberId: ra.memberId, assignment: Buffer.from('A') }, { memberId: rb.memberId, assignment: Buffer.from('B') }],
    });
    expect(leader.assignment.toString()).toBe('A');
    expect(((await follower) as SyncResult).assignment.toString()).toBe('B');
    expect(group.state).toBe('Stable');
    expect(persisted).toBe(1);
  });

  it('answers ILLEGAL_GENERATION to a stale generation and REBALANCE_IN_PROGRESS during the join phase', async () => {
    const { ids } = await stableGroupOf(2);
    expect((await group.sync({ groupId: 'g', generationId: 0, memberId: ids[0]!, groupInstanceId: null, protocolType: null, protocolName: null, assignments: [] })).errorCode).toBe(ErrorCode.ILLEGAL_GENERATION);
    await joinNewMember();
    expect((await group.sync({ groupId: 'g', generationId: 1, memberId: ids[0]!, groupInstanceId: null, protocolType: null, protocolName: null, assignments: [] })).errorCode).toBe(ErrorCode.REBALANCE_IN_PROGRESS);
  });
});

describe('ClassicGroup heartbeats and membership', () => {
  it('tells members to rejoin (REBALANCE_IN_PROGRESS) when a new member arrives', async () => {
    const { ids, generation } = await stableGroupOf(2);
    expect(group.heartbeat(ids[1]!, null, generation)).toBe(ErrorCode.NONE);
    await joinNewMember();
    expect(group.heartbeat(ids[1]!, null, generation)).toBe(ErrorCode.REBALANCE_IN_PROGRESS);
    expect(group.heartbeat(ids[1]!, null, generation - 1)).toBe(ErrorCode.ILLEGAL_GENERATION);
    expect(group.heartbeat('nobody', null, generation)).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
  });

  it('expires a member that stops heartbeating and rebalances the rest', async () => {
    const { ids, generation } = await stableGroupOf(2);
    clock.advance(SESSION - 100);
    expect(group.heartbeat(ids[0]!, null, generation)).toBe(ErrorCode.NONE);
    clock.advance(200);
    expect(group.members.has(ids[1]!)).toBe(false);
    expect(group.state).toBe('PreparingRebalance');
    const rejoin = join({ memberId: ids[0]! });
    const res = await rejoin;
    expect(res.generationId).toBe(generation + 1);
    expect(res.members.map((m) => m.memberId)).toEqual([ids[0]]);
  });

  it('drops members that do not rejoin within the rebalance timeout (max.poll.interval.ms)', async () => {
    const { ids, generation } = await stableGroupOf(2);
    await joinNewMember();
    const stays = join({ memberId: ids[0]! });
    // ids[1] keeps heartbeating but never rejoins, as a consumer stuck in processing does.
    for (let t = 0; t < REBALANCE; t += SESSION / 2) {
      clock.advance(SESSION / 2);
      if (group.members.has(ids[1]!)) group.heartbeat(ids[1]!, null, generation);
    }
    const res = await stays;
    expect(res.errorCode).toBe(0);
    expect(group.members.has(ids[1]!)).toBe(false);
    expect(res.members.map((m) => m.memberId)).not.toContain(ids[1]);
  });

  it('rebalances when a member leaves and becomes Empty when the last one does', async () => {
    const { ids } = await stableGroupOf(2);
    expect(group.leave([{ memberId: ids[1]!, groupInstanceId: null }])).toEqual([ErrorCode.NONE]);
    expect(group.state).toBe('PreparingRebalance');
    expect(group.leave([{ memberId: 'ghost', groupInstanceId: null }])).toEqual([ErrorCode.UNKNOWN_MEMBER_ID]);
    expect(group.leave([{ memberId: ids[0]!, groupInstanceId: null }])).toEqual([ErrorCode.NONE]);
    expect(group.state).toBe('Empty');
  });
});

describe('ClassicGroup static membership', () => {
  it('lets a restarted static member take its old place without a rebalance, and fences the old id', async () => {
    const a = join({ groupInstanceId: 'instance-a', clientId: 'a' });
    const b = join({ groupInstanceId: 'instance-b', clientId: 'b' });
    clock.advance(DELAY);
    const [ra, rb] = await Promise.all([a, b]);
    const leaderId = ra.leader;
    const assign = [{ memberId: ra.memberId, assignment: Buffer.from('A') }, { memberId: rb.memberId, assignment: Buffer.from('B') }];
    await Promise.all([ra, rb].map((r) => group.sync({ groupId: 'g', generationId: 1, memberId: r.memberId, groupInstanceId: r.memberId === ra.memberId ? 'instance-a' : 'instance-b', protocolType: null, protocolName: null, assignments: r.memberId === leaderId ? assign : [] })));
    expect(group.state).toBe('Stable');

    // instance-b restarts: a fresh join with an empty member id and the same instance id.
    const restarted = await join({ groupInstanceId: 'instance-b', clientId: 'b' });
    expect(restarted.errorCode).toBe(0);
    expect(restarted.generationId).toBe(1);
    expect(restarted.memberId).not.toBe(rb.memberId);
    expect(group.state).toBe('Stable');
    expect(group.heartbeat(ra.memberId, 'instance-a', 1)).toBe(ErrorCode.NONE);
    const synced = await group.sync({ groupId: 'g', generationId: 1, memberId: restarted.memberId, groupInstanceId: 'instance-b', protocolType: null, protocolName: null, assignments: [] });
    expect(synced.assignment.toString()).toBe('B');
    expect(group.heartbeat(rb.memberId, 'instance-b', 1)).toBe(ErrorCode.FENCED_INSTANCE_ID);
  });
});

describe('ClassicGroup offset commits', () => {
  it('accepts commits from outside the group only while it is empty', async () => {
    expect(group.validateOffsetCommit('', null, -1)).toBe(ErrorCode.NONE);
    const { ids, generation } = await stableGroupOf(1);
    expect(group.validateOffsetCommit('', null, -1)).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
    expect(group.validateOffsetCommit(ids[0]!, null, generation)).toBe(ErrorCode.NONE);
    expect(group.validateOffsetCommit(ids[0]!, null, generation + 1)).toBe(ErrorCode.ILLEGAL_GENERATION);
    expect(group.validateOffsetCommit('stranger', null, generation)).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
  });

  it('allows commits of the old generation while the group prepares a rebalance, not after the join completes', async () => {
    const { ids, generation } = await stableGroupOf(1);
    const newcomer = await joinNewMember();
    expect(group.validateOffsetCommit(ids[0]!, null, generation)).toBe(ErrorCode.NONE);
    void join({ memberId: ids[0]! });
    await newcomer.joined;
    expect(group.state).toBe('CompletingRebalance');
    expect(group.validateOffsetCommit(ids[0]!, null, generation + 1)).toBe(ErrorCode.REBALANCE_IN_PROGRESS);
  });
});
