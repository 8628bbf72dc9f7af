import { beforeEach, describe, expect, it } from 'vitest';
import { ClassicGroup, NEW_MEMBER_JOIN_TIMEOUT_MS } from '../../src/coordinator/classic-group.js';
import type { JoinRequest, JoinResult, SyncResult } from '../../src/coordinator/group-types.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { FakeClock } from '../support/fake-clock.js';

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
  // Kafka's initial delay: members that join during it push completion back by one more delay.
  clock.advance(2 * DELAY);
  const results = await Promise.all(joins.map((j) => j.joined));
  const leader = results[0]!.leader;
  const generation = results[0]!.generationId;
  const syncs = results.map((r) =>
    group.sync({
      groupId: 'g',
      generationId: generation,
      memberId: r.memberId,
      groupInstanceId: null,
      protocolType: 'consumer',
      protocolName: 'range',
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
  group = new ClassicGroup({ groupId: 'g', clock, settings: { initialRebalanceDelayMs: DELAY, maxSize: 100 }, persist: async () => void persisted++ });
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
    clock.advance(DELAY - 1);
    expect(await settled(a.joined)).toBe('pending');
    clock.advance(1);
    const ra = await a.joined;
    expect(ra.generationId).toBe(1);
    expect(ra.leader).toBe(a.memberId);
    expect(ra.protocolName).toBe('range');
    expect(ra.members.map((m) => m.memberId)).toEqual([a.memberId]);
    expect(group.state).toBe('CompletingRebalance');
  });

  it('waits one more delay when members joined during the delay, as Kafka does', async () => {
    const a = await joinNewMember({ clientId: 'a' });
    clock.advance(1000);
    const b = await joinNewMember({ clientId: 'b' });
    // The delay ends at 3 s with b added meanwhile: one more delay, to 6 s (not 3 s after b's join).
    clock.advance(2 * DELAY - 1000 - 1);
    expect(await settled(a.joined)).toBe('pending');
    clock.advance(1);
    const [ra, rb] = await Promise.all([a.joined, b.joined]);
    expect([ra.generationId, rb.generationId]).toEqual([1, 1]);
    expect(ra.leader).toBe(a.memberId);
    expect(ra.members.map((m) => m.memberId).sort()).toEqual([a.memberId, b.memberId].sort());
    expect(rb.members).toEqual([]);
  });

  it("ends the initial delay within the first member's rebalance timeout however many members keep joining", async () => {
    // Rebalance timeout 5 s: the delay (3 s) is extended once, by the 2 s left.
    const a = await joinNewMember({ clientId: 'a', rebalanceTimeoutMs: 5000 });
    const joins = [a.joined];
    for (let t = 500; t < 5000; t += 500) {
      clock.advance(500);
      joins.push((await joinNewMember({ clientId: `m${t}`, rebalanceTimeoutMs: 5000 })).joined);
    }
    expect(await settled(a.joined)).toBe('pending');
    clock.advance(500);
    const results = await Promise.all(joins);
    expect(results.every((r) => r.errorCode === 0 && r.generationId === 1)).toBe(true);
    expect(results[0]!.members).toHaveLength(10);
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
    const a = await joinNewMember({
      protocols: [
        { name: 'roundrobin', metadata: Buffer.alloc(0) },
        { name: 'range', metadata: Buffer.alloc(0) },
      ],
    });
    const b = await joinNewMember({
      protocols: [
        { name: 'range', metadata: Buffer.alloc(0) },
        { name: 'roundrobin', metadata: Buffer.alloc(0) },
      ],
    });
    const c = await joinNewMember({
      protocols: [
        { name: 'range', metadata: Buffer.alloc(0) },
        { name: 'sticky', metadata: Buffer.alloc(0) },
      ],
    });
    clock.advance(DELAY);
    clock.advance(DELAY);
    const results = await Promise.all([a.joined, b.joined, c.joined]);
    expect(results.map((r) => r.protocolName)).toEqual(['range', 'range', 'range']);
  });
});

describe('ClassicGroup sync', () => {
  it("parks followers until the leader's assignment arrives, then hands each member its own", async () => {
    const a = await joinNewMember();
    const b = await joinNewMember();
    clock.advance(2 * DELAY);
    const [ra, rb] = await Promise.all([a.joined, b.joined]);
    const follower = group.sync({ groupId: 'g', generationId: 1, memberId: rb.memberId, groupInstanceId: null, protocolType: null, protocolName: null, assignments: [] });
    expect(await settled(follower)).toBe('pending');
    const leader = await group.sync({
      groupId: 'g',
      generationId: 1,
      memberId: ra.memberId,
      groupInstanceId: null,
      protocolType: 'consumer',
      protocolName: 'range',
      assignments: [
        { memberId: ra.memberId, assignment: Buffer.from('A') },
        { memberId: rb.memberId, assignment: Buffer.from('B') },
      ],
    });
    expect(leader.assignment.toString()).toBe('A');
    expect(((await follower) as SyncResult).assignment.toString()).toBe('B');
    expect(group.state).toBe('Stable');
    expect(persisted).toBe(1);
  });

  it('answers ILLEGAL_GENERATION to a stale generation and REBALANCE_IN_PROGRESS during the join phase', async () => {
    const { ids } = await stableGroupOf(2);
    expect((await group.sync({ groupId: 'g', generationId: 0, memberId: ids[0]!, groupInstanceId: null, protocolType: null, protocolName: null, assignments: [] })).errorCode).toBe(
      ErrorCode.ILLEGAL_GENERATION,
    );
    await joinNewMember();
    expect((await group.sync({ groupId: 'g', generationId: 1, memberId: ids[0]!, groupInstanceId: null, protocolType: null, protocolName: null, assignments: [] })).errorCode).toBe(
      ErrorCode.REBALANCE_IN_PROGRESS,
    );
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
    clock.advance(2 * DELAY);
    const [ra, rb] = await Promise.all([a, b]);
    const leaderId = ra.leader;
    const assign = [
      { memberId: ra.memberId, assignment: Buffer.from('A') },
      { memberId: rb.memberId, assignment: Buffer.from('B') },
    ];
    await Promise.all(
      [ra, rb].map((r) =>
        group.sync({
          groupId: 'g',
          generationId: 1,
          memberId: r.memberId,
          groupInstanceId: r.memberId === ra.memberId ? 'instance-a' : 'instance-b',
          protocolType: null,
          protocolName: null,
          assignments: r.memberId === leaderId ? assign : [],
        }),
      ),
    );
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

/** An OffsetCommit's check of the member and generation. */
const commit = (memberId: string, generationId: number) =>
  group.validateOffsetCommit({ memberId, groupInstanceId: null, generationIdOrMemberEpoch: generationId, isTransactional: false, apiVersion: 9 });

describe('ClassicGroup offset commits', () => {
  it('accepts commits from outside the group only while it is empty', async () => {
    expect(commit('', -1)).toBe(ErrorCode.NONE);
    const { ids, generation } = await stableGroupOf(1);
    expect(commit('', -1)).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
    expect(commit(ids[0]!, generation)).toBe(ErrorCode.NONE);
    expect(commit(ids[0]!, generation + 1)).toBe(ErrorCode.ILLEGAL_GENERATION);
    expect(commit('stranger', generation)).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
  });

  it('allows commits of the old generation while the group prepares a rebalance, not after the join completes', async () => {
    const { ids, generation } = await stableGroupOf(1);
    const newcomer = await joinNewMember();
    expect(commit(ids[0]!, generation)).toBe(ErrorCode.NONE);
    void join({ memberId: ids[0]! });
    await newcomer.joined;
    expect(group.state).toBe('CompletingRebalance');
    expect(commit(ids[0]!, generation + 1)).toBe(ErrorCode.REBALANCE_IN_PROGRESS);
    // A transactional commit (TxnOffsetCommit) is not held to the group's state, as on Kafka.
    expect(group.validateOffsetCommit({ memberId: ids[0]!, groupInstanceId: null, generationIdOrMemberEpoch: generation + 1, isTransactional: true, apiVersion: 3 })).toBe(ErrorCode.NONE);
  });
});

// Session timers around the rebalance phases, as Kafka's GroupMetadataManager keeps them.
describe('ClassicGroup session timers during a rebalance', () => {
  const syncOf = (memberId: string, generationId: number) =>
    group.sync({ groupId: 'g', generationId, memberId, groupInstanceId: null, protocolType: 'consumer', protocolName: 'range', assignments: [] });

  it('restarts the session of members answered REBALANCE_IN_PROGRESS in SyncGroup when the leader dies before syncing', async () => {
    const a = await joinNewMember({ clientId: 'a' });
    const b = await joinNewMember({ clientId: 'b' });
    const c = await joinNewMember({ clientId: 'c' });
    clock.advance(2 * DELAY);
    const [ra, rb, rc] = await Promise.all([a.joined, b.joined, c.joined]);
    expect(ra!.leader).toBe(a.memberId);
    // The followers sync a moment after the join answer; the leader never does (it died).
    clock.advance(50);
    const syncB = syncOf(rb!.memberId, rb!.generationId);
    const syncC = syncOf(rc!.memberId, rc!.generationId);
    clock.advance(SESSION - 50);
    expect(group.members.has(a.memberId)).toBe(false);
    expect((await syncB).errorCode).toBe(ErrorCode.REBALANCE_IN_PROGRESS);
    expect((await syncC).errorCode).toBe(ErrorCode.REBALANCE_IN_PROGRESS);
    // The followers take a little while to rejoin: their sessions run from the answer, not from their SyncGroup.
    clock.advance(100);
    expect(group.heartbeat(rb!.memberId, null, rb!.generationId)).toBe(ErrorCode.REBALANCE_IN_PROGRESS);
    const rejoinB = join({ memberId: rb!.memberId });
    clock.advance(SESSION - 200);
    expect(group.members.has(rc!.memberId)).toBe(true);
    const rejoinC = join({ memberId: rc!.memberId });
    const [jb, jc] = await Promise.all([rejoinB, rejoinC]);
    expect([jb.errorCode, jc.errorCode]).toEqual([0, 0]);
    expect(jb.generationId).toBe(rb!.generationId + 1);
    expect(jb.members.map((m) => m.memberId).sort()).toEqual([rb!.memberId, rc!.memberId].sort());
  });

  it('restarts the session of members answered when the leader syncs', async () => {
    const a = await joinNewMember({ clientId: 'a' });
    const b = await joinNewMember({ clientId: 'b' });
    clock.advance(2 * DELAY);
    const [ra, rb] = await Promise.all([a.joined, b.joined]);
    clock.advance(50);
    const follower = syncOf(rb!.memberId, rb!.generationId);
    // The leader takes two sessions to assign, heartbeating; the follower's SyncGroup waits meanwhile.
    for (let t = 0; t < 2 * SESSION; t += SESSION / 2) {
      clock.advance(SESSION / 2);
      expect(group.heartbeat(ra!.memberId, null, ra!.generationId)).toBe(ErrorCode.NONE);
    }
    clock.advance(40);
    await group.sync({ groupId: 'g', generationId: ra!.generationId, memberId: ra!.memberId, groupInstanceId: null, protocolType: 'consumer', protocolName: 'range', assignments: [] });
    expect((await follower).errorCode).toBe(0);
    clock.advance(SESSION - 1);
    expect(group.heartbeat(rb!.memberId, null, rb!.generationId)).toBe(ErrorCode.NONE);
    expect(group.state).toBe('Stable');
  });

  it('keeps a new member waiting in JoinGroup past its session timeout (the initial delay is as long as the session)', async () => {
    const a = await joinNewMember({ clientId: 'a', sessionTimeoutMs: DELAY });
    clock.advance(DELAY);
    const ra = await a.joined;
    expect(ra.errorCode).toBe(0);
    expect(ra.generationId).toBe(1);
    expect(ra.members.map((m) => m.memberId)).toEqual([a.memberId]);
  });

  it('keeps a new member waiting while the old members take their rebalance timeout to rejoin', async () => {
    const { ids, generation } = await stableGroupOf(1);
    const newcomer = await joinNewMember({ clientId: 'new' });
    // The old member goes on heartbeating and rejoins after twice the newcomer's session timeout.
    for (let t = 0; t < 2 * SESSION; t += SESSION / 2) {
      clock.advance(SESSION / 2);
      expect(group.heartbeat(ids[0]!, null, generation)).toBe(ErrorCode.REBALANCE_IN_PROGRESS);
    }
    expect(await settled(newcomer.joined)).toBe('pending');
    const old = await join({ memberId: ids[0]! });
    const res = await newcomer.joined;
    expect([old.errorCode, res.errorCode]).toEqual([0, 0]);
    expect(old.members.map((m) => m.memberId).sort()).toEqual([ids[0], newcomer.memberId].sort());
  });

  it("drops a new member still waiting in JoinGroup after Kafka's new-member join timeout (5 minutes)", async () => {
    const { ids, generation } = await stableGroupOf(1);
    // A member that allows itself 10 minutes to rejoin.
    await join({ memberId: ids[0]!, rebalanceTimeoutMs: 600_000 }).then(() => {});
    expect(group.state).toBe('CompletingRebalance');
    const gen = generation + 1;
    await group.sync({ groupId: 'g', generationId: gen, memberId: ids[0]!, groupInstanceId: null, protocolType: 'consumer', protocolName: 'range', assignments: [] });
    const newcomer = await joinNewMember({ clientId: 'new' });
    // The old member heartbeats for 5 minutes without rejoining.
    for (let t = 0; t < NEW_MEMBER_JOIN_TIMEOUT_MS - SESSION / 2; t += SESSION / 2) {
      clock.advance(SESSION / 2);
      expect(group.heartbeat(ids[0]!, null, gen)).toBe(ErrorCode.REBALANCE_IN_PROGRESS);
    }
    clock.advance(SESSION / 2 - 1);
    expect(await settled(newcomer.joined)).toBe('pending');
    clock.advance(1);
    const res = (await settled(newcomer.joined)) as JoinResult;
    expect(res.errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
    // As Kafka answers it: no member id, so the client starts over.
    expect(res.memberId).toBe('');
    expect(group.members.has(newcomer.memberId)).toBe(false);
  });

  it('completes the join once a member id handed out but never used expires (KIP-394)', async () => {
    // The client asked twice with an empty member id and kept only the second answer.
    const discarded = await join({ clientId: 'a' });
    expect(discarded.errorCode).toBe(ErrorCode.MEMBER_ID_REQUIRED);
    const a = await joinNewMember({ clientId: 'a' });
    clock.advance(DELAY);
    const ra = await a.joined;
    await group.sync({ groupId: 'g', generationId: ra.generationId, memberId: ra.memberId, groupInstanceId: null, protocolType: 'consumer', protocolName: 'range', assignments: [] });
    expect(group.state).toBe('Stable');
    // The leader rejoins (say, its subscription changed): the only member waits for the pending id.
    const rejoin = join({ memberId: ra.memberId });
    expect(await settled(rejoin)).toBe('pending');
    clock.advance(SESSION - DELAY);
    const res = (await settled(rejoin)) as JoinResult;
    expect(res.errorCode).toBe(0);
    expect(res.generationId).toBe(ra.generationId + 1);
    // The expired id is no member.
    expect((await join({ memberId: discarded.memberId })).errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
  });
});

describe('ClassicGroup members that do not rejoin or sync', () => {
  const staticJoin = (instance: string, memberId = '') => join({ groupInstanceId: instance, clientId: instance, memberId });
  const syncOf = (memberId: string, groupInstanceId: string | null, generationId: number, assignments: { memberId: string; assignment: Buffer }[] = []) =>
    group.sync({ groupId: 'g', generationId, memberId, groupInstanceId, protocolType: 'consumer', protocolName: 'range', assignments });

  async function stableStaticGroup(): Promise<{ a: JoinResult; b: JoinResult }> {
    const pa = staticJoin('instance-a');
    const pb = staticJoin('instance-b');
    clock.advance(2 * DELAY);
    const [a, b] = await Promise.all([pa, pb]);
    await Promise.all([syncOf(b.memberId, 'instance-b', 1), syncOf(a.memberId, 'instance-a', 1)]);
    expect(group.state).toBe('Stable');
    return { a, b };
  }

  it('keeps a static member that did not rejoin in the next generation (only dynamic members are dropped)', async () => {
    const { a, b } = await stableStaticGroup();
    const rejoin = staticJoin('instance-a', a.memberId);
    // instance-b heartbeats through the rebalance but never rejoins.
    for (let t = SESSION / 2; t < REBALANCE; t += SESSION / 2) {
      clock.advance(SESSION / 2);
      expect(group.heartbeat(b.memberId, 'instance-b', 1)).toBe(ErrorCode.REBALANCE_IN_PROGRESS);
    }
    expect(await settled(rejoin)).toBe('pending');
    clock.advance(SESSION / 2);
    const res = await rejoin;
    expect(res.generationId).toBe(2);
    expect(res.members.map((m) => m.memberId).sort()).toEqual([a.memberId, b.memberId].sort());
    expect(group.heartbeat(b.memberId, 'instance-b', 1)).toBe(ErrorCode.ILLEGAL_GENERATION);
    // Its rejoin gets the generation that counted it in, without another rebalance.
    const late = await staticJoin('instance-b', b.memberId);
    expect([late.errorCode, late.generationId]).toEqual([0, 2]);
  });

  it('hands the leadership to a member that rejoined when the leader did not, and waits while nobody has', async () => {
    const { a, b } = await stableStaticGroup();
    expect(a.leader).toBe(a.memberId);
    // A dynamic member joins; instance-b rejoins, the leader instance-a does not.
    const c = await joinNewMember({ clientId: 'c' });
    const rejoinB = staticJoin('instance-b', b.memberId);
    for (let t = 0; t < REBALANCE; t += SESSION / 2) {
      clock.advance(SESSION / 2);
      group.heartbeat(a.memberId, 'instance-a', 1);
    }
    const res = await rejoinB;
    expect(res.generationId).toBe(2);
    expect(res.leader).toBe(b.memberId);
    expect(res.members.map((m) => m.memberId).sort()).toEqual([a.memberId, b.memberId, c.memberId].sort());
    expect((await c.joined).leader).toBe(b.memberId);

    // Generation 2 completes; c leaves; then a rebalance that neither static member rejoins waits for them.
    await Promise.all([syncOf(c.memberId, null, 2), syncOf(a.memberId, 'instance-a', 2), syncOf(b.memberId, 'instance-b', 2)]);
    expect(group.state).toBe('Stable');
    expect(group.leave([{ memberId: c.memberId, groupInstanceId: null }])).toEqual([ErrorCode.NONE]);
    expect(group.state).toBe('PreparingRebalance');
    for (let t = 0; t < 2 * REBALANCE; t += SESSION / 2) {
      clock.advance(SESSION / 2);
      expect(group.heartbeat(a.memberId, 'instance-a', 2)).toBe(ErrorCode.REBALANCE_IN_PROGRESS);
      expect(group.heartbeat(b.memberId, 'instance-b', 2)).toBe(ErrorCode.REBALANCE_IN_PROGRESS);
    }
    expect(group.generationId).toBe(2);
    // Once one rejoins, the next deadline ends the phase with it as leader.
    const back = staticJoin('instance-a', a.memberId);
    for (let t = 0; t < REBALANCE; t += SESSION / 2) {
      clock.advance(SESSION / 2);
      group.heartbeat(b.memberId, 'instance-b', 2);
    }
    const third = await back;
    expect([third.generationId, third.leader]).toEqual([3, a.memberId]);
  });

  it('drops a member that never sends SyncGroup after the rebalance timeout, even once the group is Stable', async () => {
    const a = await joinNewMember({ clientId: 'a' });
    const b = await joinNewMember({ clientId: 'b' });
    clock.advance(2 * DELAY);
    const [ra, rb] = await Promise.all([a.joined, b.joined]);
    await syncOf(ra.memberId, null, 1, [{ memberId: rb.memberId, assignment: Buffer.from('B') }]);
    expect(group.state).toBe('Stable');
    // b heartbeats but never syncs.
    for (let t = SESSION / 2; t < REBALANCE; t += SESSION / 2) {
      clock.advance(SESSION / 2);
      expect(group.heartbeat(rb.memberId, null, 1)).toBe(ErrorCode.NONE);
      group.heartbeat(ra.memberId, null, 1);
    }
    clock.advance(SESSION / 2);
    expect(group.heartbeat(rb.memberId, null, 1)).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
    expect(group.state).toBe('PreparingRebalance');
    expect(group.heartbeat(ra.memberId, null, 1)).toBe(ErrorCode.REBALANCE_IN_PROGRESS);
  });

  it('keeps the sync deadline off a generation whose members all synced', async () => {
    const { ids, generation } = await stableGroupOf(2);
    for (let t = 0; t < 2 * REBALANCE; t += SESSION / 2) {
      clock.advance(SESSION / 2);
      for (const id of ids) expect(group.heartbeat(id, null, generation)).toBe(ErrorCode.NONE);
    }
    expect(group.state).toBe('Stable');
  });
});
