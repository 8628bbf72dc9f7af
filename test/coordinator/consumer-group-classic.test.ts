// Classic members inside a KIP-848 consumer group (a mixed group, during an
// online migration), on a fake clock: JoinGroup, SyncGroup, Heartbeat and
// LeaveGroup as Kafka's GroupMetadataManager serves them to such members.
import { beforeEach, describe, expect, it } from 'vitest';
import { ConsumerGroup, type ConsumerHeartbeatResult, type TopicImage } from '../../src/coordinator/consumer-group.js';
import { classicHeartbeat, classicJoin, classicLeave, classicSync } from '../../src/coordinator/consumer-group-classic.js';
import { assignmentOf } from '../../src/coordinator/consumer-protocol.js';
import type { JoinResult } from '../../src/coordinator/group-types.js';
import { Writer } from '../../src/protocol/codec/writer.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { writeConsumerProtocolSubscription } from '../../src/protocol/messages/index.js';
import { FakeClock } from '../support/fake-clock.js';

const T = '00000000-0000-0000-0000-00000000000a';
const REBALANCE = 30_000;

let clock: FakeClock;
let group: ConsumerGroup;

const image: TopicImage = {
  byName: (name) => (name === 'topic' ? { topicId: T, partitionCount: 6 } : null),
  nameOf: (id) => (id === T ? 'topic' : null),
};

beforeEach(() => {
  clock = new FakeClock();
  group = new ConsumerGroup({ groupId: 'g', clock, settings: { sessionTimeoutMs: 45_000, heartbeatIntervalMs: 5000, maxSize: 100, assignmentIntervalMs: 0 }, persist: async () => {} });
});

/** ConsumerProtocolSubscription v1: the topic and the partitions the member says it owns. */
function subscription(owned: number[]): Buffer {
  const w = new Writer();
  w.int16(1);
  writeConsumerProtocolSubscription(w, 1, { topics: ['topic'], userData: null, ownedPartitions: owned.length > 0 ? [{ topic: 'topic', partitions: owned }] : [] });
  return w.toBuffer();
}

const leaveRequest = {
  memberEpoch: -1,
  instanceId: null,
  rackId: null,
  rebalanceTimeoutMs: -1,
  subscribedTopicNames: null,
  subscribedTopicRegex: null,
  serverAssignor: null,
  topicPartitions: null,
  clientId: 'c',
  clientHost: '/127.0.0.1',
};

/** A consumer-protocol member as a client runs it: it owns what the last response assigned. */
class ConsumerMember {
  epoch = 0;
  owned: number[] = [];
  /** The last response was lost: the next heartbeat is a full one (what clients send after an error). */
  full = false;
  constructor(readonly memberId: string) {}
  beat(lost = false): ConsumerHeartbeatResult {
    const joining = this.epoch === 0 || this.full;
    const r = group.heartbeat(
      {
        memberId: this.memberId,
        memberEpoch: this.epoch,
        instanceId: null,
        rackId: null,
        rebalanceTimeoutMs: joining ? REBALANCE : -1,
        subscribedTopicNames: joining ? ['topic'] : null,
        subscribedTopicRegex: null,
        serverAssignor: null,
        topicPartitions: [{ topicId: T, partitions: this.owned }],
        clientId: this.memberId,
        clientHost: '/127.0.0.1',
      },
      image,
    );
    this.full = lost;
    if (lost) return r;
    if (r.errorCode === ErrorCode.NONE) {
      this.epoch = r.memberEpoch;
      if (r.assignment) this.owned = r.assignment.flatMap((tp) => tp.partitions).sort((a, b) => a - b);
    } else {
      // Fenced or unknown: the member gives up its partitions and joins again.
      this.epoch = 0;
      this.owned = [];
    }
    return r;
  }
}

/**
 * A classic member with an eager assignor (librdkafka's range, kafkajs): it
 * gives up everything before it rejoins, and owns what SyncGroup hands it.
 */
class ClassicMember {
  memberId = '';
  generation = -1;
  owned: number[] = [];
  phase: 'join' | 'sync' | 'stable' = 'join';
  constructor(readonly instanceId: string | null = null) {}
  join(): JoinResult {
    this.owned = [];
    const r = classicJoin(
      group,
      {
        groupId: 'g',
        memberId: this.memberId,
        groupInstanceId: this.instanceId,
        sessionTimeoutMs: 10_000,
        rebalanceTimeoutMs: REBALANCE,
        protocolType: 'consumer',
        protocols: [{ name: 'range', metadata: subscription(this.owned) }],
        reason: null,
        clientId: 'classic',
        clientHost: '/127.0.0.1',
        requireKnownMemberId: false,
      },
      'bidirectional',
      image,
      100,
    );
    if (r.errorCode === ErrorCode.NONE) {
      this.memberId = r.memberId;
      this.generation = r.generationId;
    }
    return r;
  }
  sync(): number {
    const r = classicSync(
      group,
      { groupId: 'g', generationId: this.generation, memberId: this.memberId, groupInstanceId: this.instanceId, protocolType: 'consumer', protocolName: 'range', assignments: [] },
      image.nameOf,
    );
    if (r.errorCode === ErrorCode.NONE) this.owned = assignmentOf(r.assignment)!.assignedPartitions.flatMap((tp) => tp.partitions);
    return r.errorCode;
  }
  heartbeat(): number {
    return classicHeartbeat(group, this.memberId, this.instanceId, this.generation);
  }
  /** One request as the client sends it next; a lost response leaves the client where it was (it retries, or rejoins). */
  step(lost: boolean): void {
    if (this.phase === 'join') {
      const r = this.join();
      if (r.errorCode === ErrorCode.NONE && !lost) this.phase = 'sync';
      return;
    }
    if (this.phase === 'sync') {
      const owned = this.owned;
      const error = this.sync();
      if (error === ErrorCode.NONE && !lost) return void (this.phase = 'stable');
      this.owned = error === ErrorCode.NONE ? owned : this.owned;
      if (error === ErrorCode.UNKNOWN_MEMBER_ID) this.memberId = '';
      this.phase = 'join';
      return;
    }
    const error = this.heartbeat();
    if (error === ErrorCode.NONE || lost) return;
    // Eager: everything is given up before rejoining.
    this.owned = [];
    if (error === ErrorCode.UNKNOWN_MEMBER_ID) this.memberId = '';
    this.phase = 'join';
  }
  /** Join and sync until SyncGroup answers. */
  joinAndSync(): void {
    for (let i = 0; i < 5; i++) {
      expect(this.join().errorCode).toBe(ErrorCode.NONE);
      if (this.sync() === ErrorCode.NONE) return;
    }
    throw new Error('the classic member never synced');
  }
}

describe('static classic members of a consumer group', () => {
  it('an instance rejoining under a new member id replaces the old member: its partitions, no new group epoch, the old id fenced', () => {
    const consumer = new ConsumerMember('c');
    consumer.beat();
    const first = new ClassicMember('instance-1');
    first.joinAndSync();
    // The consumer-protocol member gives up what the target moves to the classic one (told, then acknowledged), which rejoins for it.
    consumer.beat();
    consumer.beat();
    expect(first.heartbeat()).toBe(ErrorCode.REBALANCE_IN_PROGRESS);
    first.joinAndSync();
    expect(first.owned.length).toBe(3);
    const epoch = group.groupEpoch;

    // The instance restarts: a JoinGroup with no member id and the same group.instance.id.
    const restarted = new ClassicMember('instance-1');
    expect(restarted.join()).toMatchObject({ errorCode: ErrorCode.NONE });
    expect(restarted.memberId).not.toBe(first.memberId);
    expect(restarted.sync()).toBe(ErrorCode.NONE);
    expect(restarted.owned.sort()).toEqual(first.owned.sort());
    expect(group.groupEpoch).toBe(epoch);
    expect(group.numMembers()).toBe(2);
    expect(group.hasMember(first.memberId)).toBe(false);
    expect(first.heartbeat()).toBe(ErrorCode.FENCED_INSTANCE_ID);
    expect(restarted.heartbeat()).toBe(ErrorCode.NONE);
  });
});

describe('LeaveGroup for classic members of a consumer group', () => {
  it('several members leaving in one request bump the group epoch once', () => {
    const consumer = new ConsumerMember('c');
    consumer.beat();
    const a = new ClassicMember();
    const b = new ClassicMember();
    a.joinAndSync();
    b.joinAndSync();
    const epoch = group.groupEpoch;
    expect(
      classicLeave(
        group,
        [a, b].map((m) => ({ memberId: m.memberId, groupInstanceId: null })),
        image,
      ),
    ).toEqual([ErrorCode.NONE, ErrorCode.NONE]);
    expect(group.groupEpoch).toBe(epoch + 1);
    expect(group.numMembers()).toBe(1);
    // The remaining member gets every partition.
    consumer.beat();
    consumer.beat();
    expect(consumer.owned).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('answers each member on its own: unknown and fenced members, a member named twice', () => {
    const consumer = new ConsumerMember('c');
    consumer.beat();
    const a = new ClassicMember();
    const s = new ClassicMember('instance-1');
    a.joinAndSync();
    s.joinAndSync();
    const epoch = group.groupEpoch;
    expect(
      classicLeave(
        group,
        [
          { memberId: a.memberId, groupInstanceId: null },
          { memberId: 'nobody', groupInstanceId: null },
          { memberId: 'someone-else', groupInstanceId: 'instance-1' },
          { memberId: a.memberId, groupInstanceId: null },
        ],
        image,
      ),
    ).toEqual([ErrorCode.NONE, ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.FENCED_INSTANCE_ID, ErrorCode.NONE]);
    expect(group.groupEpoch).toBe(epoch + 1);
    expect(group.hasMember(a.memberId)).toBe(false);
    expect(group.hasMember(s.memberId)).toBe(true);
  });

  it('a consumer-protocol member named too leaves with them; the group downgrades once only classic members remain', () => {
    const downgrades: string[][] = [];
    group = new ConsumerGroup({
      groupId: 'g',
      clock,
      settings: { sessionTimeoutMs: 45_000, heartbeatIntervalMs: 5000, maxSize: 100, assignmentIntervalMs: 0 },
      persist: async () => {},
      downgrade: (_g, leaving) => (downgrades.push([...leaving].sort()), true),
    });
    const consumer = new ConsumerMember('c');
    consumer.beat();
    const a = new ClassicMember();
    const b = new ClassicMember();
    a.joinAndSync();
    b.joinAndSync();
    expect(
      classicLeave(
        group,
        [
          { memberId: a.memberId, groupInstanceId: null },
          { memberId: 'c', groupInstanceId: null },
        ],
        image,
      ),
    ).toEqual([ErrorCode.NONE, ErrorCode.NONE]);
    expect(downgrades).toEqual([[a.memberId, 'c'].sort()]);
  });

  it('a request whose members are all unknown leaves the group epoch as it is', () => {
    const consumer = new ConsumerMember('c');
    consumer.beat();
    const epoch = group.groupEpoch;
    expect(classicLeave(group, [{ memberId: 'nobody', groupInstanceId: null }], image)).toEqual([ErrorCode.UNKNOWN_MEMBER_ID]);
    expect(group.groupEpoch).toBe(epoch);
  });
});

/** A small deterministic generator (a linear congruential one), so an interleaving can be replayed from its seed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => (state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

describe('partitions moving between classic and consumer-protocol members', () => {
  it('are never owned by two members of the group at once, whatever the interleaving of joins, leaves, lost responses and expired sessions', () => {
    for (let seed = 1; seed <= 100; seed++) {
      clock = new FakeClock();
      // A new target at most once a second (pgkafka's default), so the group epoch runs ahead of the assignment epoch at times.
      group = new ConsumerGroup({ groupId: 'g', clock, settings: { sessionTimeoutMs: 6000, heartbeatIntervalMs: 500, maxSize: 100, assignmentIntervalMs: 1000 }, persist: async () => {} });
      const next = random(seed);
      const members: (ConsumerMember | ClassicMember)[] = [new ConsumerMember('c0'), new ClassicMember()];
      for (let step = 0; step < 300; step++) {
        const x = next();
        if (x < 0.03 && members.length < 5) {
          members.push(next() < 0.6 ? new ClassicMember(next() < 0.3 ? `instance-${step}` : null) : new ConsumerMember(`c${step}`));
        } else if (x < 0.05 && members.length > 2) {
          const [gone] = members.splice(Math.floor(next() * members.length), 1);
          if (gone instanceof ClassicMember) classicLeave(group, [{ memberId: gone.memberId, groupInstanceId: gone.instanceId }], image);
          else group.heartbeat({ ...leaveRequest, memberId: gone!.memberId }, image);
        } else if (x < 0.25) {
          // Now and then long enough for a session to expire.
          clock.advance(next() < 0.05 ? 7000 : Math.floor(next() * 400));
        } else {
          const m = members[Math.floor(next() * members.length)]!;
          const lost = next() < 0.05;
          if (m instanceof ClassicMember) m.step(lost);
          else m.beat(lost);
        }
        // A member the group fenced may still believe in its partitions until its next request: it is not counted.
        const owned = members.filter((m) => group.hasMember(m.memberId)).flatMap((m) => m.owned);
        if (new Set(owned).size !== owned.length) expect.fail(`seed ${seed}, step ${step}: a partition owned twice: ${JSON.stringify(members.map((m) => m.owned))}`);
      }
    }
  });
});
