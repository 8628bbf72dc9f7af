// The KIP-848 consumer group's state machine on a fake clock: epochs,
// reconciliation (revoke before assign), fencing, timeouts, static members,
// offsets checks, and its stored form.
import { beforeEach, describe, expect, it } from 'vitest';
import { ConsumerGroup, type ConsumerHeartbeat, type ConsumerHeartbeatResult, type TopicImage } from '../../src/coordinator/consumer-group.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { FakeClock } from '../support/fake-clock.js';

const T = '00000000-0000-0000-0000-00000000000a';
const SESSION = 45_000;
const REBALANCE = 30_000;

let clock: FakeClock;
let group: ConsumerGroup;
let partitions: number;
let persisted: number;

const image: TopicImage = {
  byName: (name) => (name === 'topic' ? { topicId: T, partitionCount: partitions } : null),
  nameOf: (id) => (id === T ? 'topic' : null),
};

const newGroup = (maxSize = 100, assignmentIntervalMs = 0) =>
  new ConsumerGroup({ groupId: 'g', clock, settings: { sessionTimeoutMs: SESSION, heartbeatIntervalMs: 5000, maxSize, assignmentIntervalMs }, persist: async () => void persisted++ });

beforeEach(() => {
  clock = new FakeClock();
  partitions = 6;
  persisted = 0;
  group = newGroup();
});

const hb = (req: Partial<ConsumerHeartbeat> & { memberId: string; memberEpoch: number }): ConsumerHeartbeatResult =>
  group.heartbeat(
    {
      instanceId: null,
      rackId: null,
      rebalanceTimeoutMs: -1,
      subscribedTopicNames: null,
      subscribedTopicRegex: null,
      serverAssignor: null,
      topicPartitions: null,
      clientId: 'client',
      clientHost: '/127.0.0.1',
      ...req,
    },
    image,
  );

/** A member as a client runs it: it owns what the last response assigned (having revoked the rest). */
class Member {
  epoch = 0;
  owned: number[] = [];
  constructor(
    readonly memberId: string,
    readonly instanceId: string | null = null,
  ) {}
  join(extra: Partial<ConsumerHeartbeat> = {}): ConsumerHeartbeatResult {
    const r = hb({ memberId: this.memberId, memberEpoch: 0, instanceId: this.instanceId, rebalanceTimeoutMs: REBALANCE, subscribedTopicNames: ['topic'], topicPartitions: [], ...extra });
    this.apply(r);
    return r;
  }
  beat(): ConsumerHeartbeatResult {
    const r = hb({ memberId: this.memberId, memberEpoch: this.epoch, instanceId: this.instanceId, topicPartitions: [{ topicId: T, partitions: this.owned }] });
    this.apply(r);
    return r;
  }
  private apply(r: ConsumerHeartbeatResult): void {
    if (r.errorCode !== ErrorCode.NONE) return;
    this.epoch = r.memberEpoch;
    if (r.assignment) this.owned = r.assignment.flatMap((tp) => tp.partitions).sort((a, b) => a - b);
  }
}

/** Every partition owned by at most one member, as the members themselves see it. */
function expectNoDoubleOwnership(members: Member[]): void {
  const seen = new Set<number>();
  for (const m of members) {
    for (const p of m.owned) {
      expect(seen.has(p), `partition ${p} owned twice`).toBe(false);
      seen.add(p);
    }
  }
}

describe('ConsumerGroupHeartbeat', () => {
  it('a first member joins: group epoch 1, the whole target at once, the heartbeat interval', () => {
    const a = new Member('a');
    const r = a.join();
    expect(r).toMatchObject({ errorCode: ErrorCode.NONE, memberId: 'a', memberEpoch: 1, heartbeatIntervalMs: 5000 });
    expect(a.owned).toEqual([0, 1, 2, 3, 4, 5]);
    expect(group.stateAsString()).toBe('Stable');
    expect(group.asListedGroup()).toEqual({ groupId: 'g', protocolType: 'consumer', groupState: 'Stable', groupType: 'consumer' });
  });

  it('a second member gets its partitions only after the first revoked them; nobody owns a partition twice', () => {
    const a = new Member('a');
    const b = new Member('b');
    a.join();
    b.join();
    expect(group.groupEpoch).toBe(2);
    // b is at epoch 2 with nothing yet: its target partitions are still a's.
    expect(b.epoch).toBe(2);
    expect(b.owned).toEqual([]);
    expect(group.stateAsString()).toBe('Reconciling');
    // a is asked to revoke three partitions and stays at epoch 1 until it has.
    const revoke = a.beat();
    expect(revoke.memberEpoch).toBe(1);
    expect(a.owned).toHaveLength(3);
    expectNoDoubleOwnership([a, b]);
    expect(b.beat().assignment).toBeNull();
    // a reports only what it kept: it moves to epoch 2, and b can now be given the rest.
    a.beat();
    expect(a.epoch).toBe(2);
    b.beat();
    expect(b.owned).toHaveLength(3);
    expectNoDoubleOwnership([a, b]);
    expect(new Set([...a.owned, ...b.owned]).size).toBe(6);
    expect(group.stateAsString()).toBe('Stable');
  });

  it('members joining one at a time keep every partition owned once, and the members that keep theirs keep their epoch moving', () => {
    const members: Member[] = [];
    for (let i = 0; i < 6; i++) {
      members.push(new Member(`m${i}`));
      members.at(-1)!.join();
      for (let round = 0; round < 4; round++) {
        for (const m of members) {
          m.beat();
          expectNoDoubleOwnership(members);
        }
      }
    }
    expect(members.map((m) => m.owned.length)).toEqual([1, 1, 1, 1, 1, 1]);
    expect(group.stateAsString()).toBe('Stable');
  });

  it('fences a member with an epoch ahead of or behind its own, accepts the previous epoch with a subset (a lost response)', () => {
    const a = new Member('a');
    a.join();
    expect(hb({ memberId: 'a', memberEpoch: 5, topicPartitions: [] }).errorCode).toBe(ErrorCode.FENCED_MEMBER_EPOCH);
    const b = new Member('b');
    b.join();
    a.beat(); // revoking
    a.beat(); // epoch 2
    expect(a.epoch).toBe(2);
    expect(hb({ memberId: 'a', memberEpoch: 1, topicPartitions: [{ topicId: T, partitions: a.owned }] }).errorCode).toBe(ErrorCode.NONE);
    expect(hb({ memberId: 'a', memberEpoch: 1, topicPartitions: [{ topicId: T, partitions: [0, 1, 2, 3, 4, 5] }] }).errorCode).toBe(ErrorCode.FENCED_MEMBER_EPOCH);
    expect(hb({ memberId: 'nobody', memberEpoch: 3, topicPartitions: [] })).toMatchObject({ errorCode: ErrorCode.UNKNOWN_MEMBER_ID, errorMessage: 'Member nobody is not a member of group g.' });
  });

  it('a member that stops heartbeating is fenced after the session timeout; its partitions go to the others', () => {
    const a = new Member('a');
    const b = new Member('b');
    a.join();
    b.join();
    a.beat();
    a.beat();
    b.beat();
    const epoch = group.groupEpoch;
    // b keeps heartbeating; a falls silent.
    for (let t = 0; t < SESSION; t += 5000) {
      clock.advance(5000);
      b.beat();
    }
    expect(group.hasMember('a')).toBe(false);
    expect(group.groupEpoch).toBe(epoch + 1);
    b.beat();
    expect(b.owned).toEqual([0, 1, 2, 3, 4, 5]);
    expect(persisted).toBeGreaterThan(0);
  });

  it('the member that joined second, once it stops heartbeating, is fenced after the session timeout too', () => {
    const a = new Member('a');
    const b = new Member('b');
    a.join();
    b.join();
    a.beat();
    b.beat();
    a.beat();
    b.beat();
    expect(b.owned.length).toBeGreaterThan(0);
    // a keeps heartbeating; b falls silent.
    for (let t = 0; t < SESSION; t += 5000) {
      clock.advance(5000);
      a.beat();
    }
    expect(group.hasMember('b')).toBe(false);
    a.beat();
    a.beat();
    expect(a.owned).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('a member that does not revoke within its rebalance timeout is fenced, and the partitions are released', () => {
    const a = new Member('a');
    const b = new Member('b');
    a.join();
    b.join();
    a.beat(); // asked to revoke
    // a heartbeats but keeps reporting every partition.
    for (let t = 0; t < REBALANCE; t += 5000) {
      clock.advance(5000);
      hb({ memberId: 'a', memberEpoch: 1, topicPartitions: [{ topicId: T, partitions: [0, 1, 2, 3, 4, 5] }] });
      b.beat();
    }
    expect(group.hasMember('a')).toBe(false);
    b.beat();
    expect(b.owned).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('leave (-1) removes the member at once and bumps the group epoch; a group emptied so is Empty', () => {
    const a = new Member('a');
    a.join();
    expect(hb({ memberId: 'a', memberEpoch: -1 })).toMatchObject({ errorCode: ErrorCode.NONE, memberId: 'a', memberEpoch: -1 });
    expect(group.groupEpoch).toBe(2);
    expect(group.stateAsString()).toBe('Empty');
    expect(group.validateDeleteGroup()).toBe(ErrorCode.NONE);
  });

  it('a static member that leaves with -2 and comes back under a new member id gets its partitions back, with no epoch change for the others', () => {
    const a = new Member('a', 'instance-a');
    const b = new Member('b');
    a.join();
    b.join();
    a.beat();
    a.beat();
    b.beat();
    const owned = a.owned;
    const epoch = group.groupEpoch;
    expect(hb({ memberId: 'a', memberEpoch: -2, instanceId: 'instance-a' })).toMatchObject({ errorCode: ErrorCode.NONE, memberEpoch: -2 });
    // Its partitions are not handed to b meanwhile.
    b.beat();
    expect(b.owned).toHaveLength(3);
    const restarted = new Member('a2', 'instance-a');
    const r = restarted.join();
    expect(r.errorCode).toBe(ErrorCode.NONE);
    expect(restarted.owned).toEqual(owned);
    expect(restarted.epoch).toBe(epoch);
    expect(group.groupEpoch).toBe(epoch);
    expect(b.beat().memberEpoch).toBe(epoch);
  });

  it('a second instance with a static id still in use is UNRELEASED_INSTANCE_ID; a stale one is FENCED_INSTANCE_ID', () => {
    new Member('a', 'instance-a').join();
    expect(new Member('other', 'instance-a').join().errorCode).toBe(ErrorCode.UNRELEASED_INSTANCE_ID);
    expect(hb({ memberId: 'other', memberEpoch: 1, instanceId: 'instance-a', topicPartitions: [] }).errorCode).toBe(ErrorCode.FENCED_INSTANCE_ID);
  });

  it('a full group refuses a new member with GROUP_MAX_SIZE_REACHED but keeps serving its members', () => {
    group = newGroup(1);
    const a = new Member('a');
    a.join();
    expect(new Member('b').join()).toMatchObject({ errorCode: ErrorCode.GROUP_MAX_SIZE_REACHED, errorMessage: 'The consumer group has reached its maximum capacity of 1 members.' });
    expect(a.beat().errorCode).toBe(ErrorCode.NONE);
  });

  it('more partitions (CreatePartitions) bump the group epoch and are assigned', () => {
    const a = new Member('a');
    a.join();
    partitions = 8;
    const r = a.beat();
    expect(r.memberEpoch).toBe(2);
    expect(a.owned).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });

  it('group.consumer.assignment.interval.ms: a new target at most once per interval; the group is Assigning meanwhile', () => {
    group = newGroup(100, 1000);
    const a = new Member('a');
    const b = new Member('b');
    a.join();
    expect(a.owned).toEqual([0, 1, 2, 3, 4, 5]);
    b.join();
    expect(group.stateAsString()).toBe('Assigning');
    expect(b.epoch).toBe(1);
    a.beat();
    expect(a.owned).toHaveLength(6);
    clock.advance(1000);
    a.beat(); // the interval has passed: the new target, and a revokes
    expect(group.assignmentEpoch).toBe(group.groupEpoch);
    expect(a.owned).toHaveLength(3);
  });

  it('the range assignor when the members ask for it', () => {
    const a = new Member('a');
    const b = new Member('b');
    a.join({ serverAssignor: 'range' });
    b.join({ serverAssignor: 'range' });
    for (let i = 0; i < 3; i++) [a, b].forEach((m) => m.beat());
    expect(a.owned).toEqual([0, 1, 2]);
    expect(b.owned).toEqual([3, 4, 5]);
  });
});

describe('offsets of a consumer group', () => {
  it('checks the member and its epoch as Kafka: STALE_MEMBER_EPOCH, UNKNOWN_MEMBER_ID, OffsetCommit v9+', () => {
    const a = new Member('a');
    a.join();
    const commit = (memberId: string, epoch: number, apiVersion = 9) =>
      group.validateOffsetCommit({ memberId, groupInstanceId: null, generationIdOrMemberEpoch: epoch, isTransactional: false, apiVersion });
    expect(commit('a', 1)).toBe(ErrorCode.NONE);
    expect(commit('a', 2)).toBe(ErrorCode.STALE_MEMBER_EPOCH);
    expect(commit('x', 1)).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
    expect(commit('a', 1, 8)).toBe(ErrorCode.UNSUPPORTED_VERSION);
    expect(commit('', -1)).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
    expect(group.validateOffsetFetch('a', 1)).toBe(ErrorCode.NONE);
    expect(group.validateOffsetFetch('a', 0)).toBe(ErrorCode.STALE_MEMBER_EPOCH);
    expect(group.validateOffsetFetch('x', 1)).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
    expect(group.validateOffsetFetch(null, -1)).toBe(ErrorCode.NONE);
    expect(group.validateDeleteGroup()).toBe(ErrorCode.NON_EMPTY_GROUP);
    expect(group.isSubscribedToTopic('topic')).toBe(true);
    // An older epoch may commit a partition it has held since that epoch.
    const b = new Member('b');
    b.join();
    a.beat();
    a.beat();
    expect(a.epoch).toBe(2);
    const committer = { memberId: 'a', groupInstanceId: null, generationIdOrMemberEpoch: 1, isTransactional: false, apiVersion: 9 };
    expect(group.validateOffsetCommit(committer)).toBe(ErrorCode.NONE);
    expect(group.validateOffsetCommitPartition(committer, T, a.owned[0]!)).toBe(ErrorCode.NONE);
    expect(group.validateOffsetCommitPartition(committer, T, b.owned[0] ?? [0, 1, 2, 3, 4, 5].find((p) => !a.owned.includes(p))!)).toBe(ErrorCode.STALE_MEMBER_EPOCH);
  });

  it('is not a classic group for DescribeGroups', () => {
    expect(group.describe()).toMatchObject({ errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: 'Group g is not a classic group.', groupState: 'Dead' });
  });
});

describe('the stored consumer group', () => {
  it('restores epochs, assignments and targets; members go on heartbeating with no new epoch', () => {
    const a = new Member('a');
    const b = new Member('b');
    a.join();
    b.join();
    a.beat();
    const snapshot = group.toStored();
    const restored = newGroup();
    restored.restore(JSON.parse(JSON.stringify({ ...snapshot, stateSince: undefined })) as typeof snapshot);
    // Times are stored on the wall clock and restored on this one: compared apart.
    expect({ ...restored.toStored(), stateSince: null, assignmentTimestamp: 0 }).toEqual({ ...snapshot, stateSince: null, assignmentTimestamp: 0 });
    group = restored;
    // a, mid-revocation, completes it against the restored group.
    a.beat();
    b.beat();
    expect(a.epoch).toBe(2);
    expect(b.owned).toHaveLength(3);
    expectNoDoubleOwnership([a, b]);
    // Restored members' sessions run again.
    clock.advance(SESSION);
    expect(restored.stateAsString()).toBe('Empty');
  });
});
