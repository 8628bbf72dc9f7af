// Regular-expression subscriptions of a KIP-848 consumer group on a fake
// clock: RE2/J validation, resolution against topic names and ACLs, when the
// group's patterns are resolved again, and the group epoch and assignment
// following a resolution, stored and restored.
import { beforeEach, describe, expect, it } from 'vitest';
import { ConsumerGroup, type ConsumerHeartbeat, type ConsumerHeartbeatResult, type TopicImage } from '../../src/coordinator/consumer-group.js';
import { regexError, resolveRegularExpressions, REGEX_BATCH_REFRESH_MIN_INTERVAL_MS } from '../../src/coordinator/consumer-group-regex.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { FakeClock } from '../support/fake-clock.js';

// Shorter than the session timeout, so the member lives through it without heartbeating.
const REFRESH_INTERVAL = 30_000;
const topics = new Map<string, { topicId: string; partitionCount: number }>();
const image: TopicImage = {
  byName: (name) => topics.get(name) ?? null,
  nameOf: (id) => [...topics].find(([, t]) => t.topicId === id)?.[0] ?? null,
};
const idOf = (name: string) => topics.get(name)!.topicId;
const all = (names: string[]) => new Set(names);

let clock: FakeClock;
let group: ConsumerGroup;
let version: number;

beforeEach(() => {
  clock = new FakeClock();
  clock.advance(1_000_000);
  topics.clear();
  topics.set('orders-eu', { topicId: '00000000-0000-0000-0000-0000000000e1', partitionCount: 2 });
  topics.set('orders-us', { topicId: '00000000-0000-0000-0000-0000000000e2', partitionCount: 2 });
  topics.set('payments', { topicId: '00000000-0000-0000-0000-0000000000e3', partitionCount: 2 });
  version = 1;
  group = new ConsumerGroup({ groupId: 'g', clock, settings: { sessionTimeoutMs: 45_000, heartbeatIntervalMs: 5000, maxSize: 100, assignmentIntervalMs: 0 }, persist: async () => {} });
  group.groupEpoch = 1;
  group.assignmentEpoch = 1;
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
      clientId: 'c',
      clientHost: '/127.0.0.1',
      ...req,
    },
    image,
  );
const join = (memberId: string, regex: string) => hb({ memberId, memberEpoch: 0, rebalanceTimeoutMs: 30_000, subscribedTopicNames: [], subscribedTopicRegex: regex, topicPartitions: [] });

/** What the coordinator does when the group's patterns are due: resolves them (all topics describable unless told) and applies the result. */
function resolveIfDue(describable: (names: string[]) => Set<string> = all): boolean {
  const due = group.regexes.due(group.subscribedRegularExpressions(), clock.now(), version, REFRESH_INTERVAL);
  if (!due) return false;
  group.applyResolvedRegularExpressions(resolveRegularExpressions(due, [...topics.keys()], describable, version, clock.now()), image);
  return true;
}

const assigned = (r: ConsumerHeartbeatResult) => new Map((r.assignment ?? []).map((tp) => [image.nameOf(tp.topicId), tp.partitions]));

describe('RE2/J patterns', () => {
  it('refuses what RE2/J refuses, with its description, and accepts its syntax', () => {
    expect(regexError('orders-(eu|us)')).toBeNull();
    expect(regexError('\\Qa.b\\E')).toBeNull();
    expect(regexError('(?i)ORDERS.*')).toBeNull();
    expect(regexError('a(b')).toBe('SubscribedTopicRegex `a(b` is not a valid regular expression: missing closing ).');
    // Backreferences and lookarounds: Java's regex has them, RE2/J does not.
    expect(regexError('(a)\\1')).toMatch(/is not a valid regular expression: invalid escape sequence\.$/);
    expect(regexError('a(?=b)')).toMatch(/is not a valid regular expression/);
  });

  it('resolves a whole-name match, less the topics the member may not describe', () => {
    const r = resolveRegularExpressions(['orders-.*', 'pay', 'bad('], [...topics.keys()], (names) => new Set(names.filter((n) => n !== 'orders-us')), 3, 42);
    expect(Object.fromEntries([...r].map(([k, v]) => [k, [...v.topics]]))).toEqual({ 'orders-.*': ['orders-eu'], pay: [], 'bad(': [] });
    expect(r.get('pay')).toMatchObject({ version: 3, timestamp: 42 });
  });
});

describe('a consumer group subscribed by regular expression', () => {
  it('INVALID_REGULAR_EXPRESSION for a pattern new to the group; the member is not added', () => {
    const r = join('a', 'orders-(');
    expect(r).toMatchObject({ errorCode: ErrorCode.INVALID_REGULAR_EXPRESSION, errorMessage: 'SubscribedTopicRegex `orders-(` is not a valid regular expression: missing closing ).' });
    expect(group.numMembers()).toBe(0);
  });

  it('a first member gets nothing until its pattern is resolved; then the epoch is bumped and it is assigned the matching topics', () => {
    const first = join('a', 'orders-.*');
    expect(first).toMatchObject({ errorCode: ErrorCode.NONE, memberEpoch: 1 });
    expect(first.assignment).toEqual([]);
    expect(resolveIfDue()).toBe(true);
    expect(group.groupEpoch).toBe(2);
    const next = hb({ memberId: 'a', memberEpoch: 1, topicPartitions: [] });
    expect(next.memberEpoch).toBe(2);
    expect(assigned(next)).toEqual(
      new Map([
        ['orders-eu', [0, 1]],
        ['orders-us', [0, 1]],
      ]),
    );
    expect(group.isSubscribedToTopic('orders-eu')).toBe(true);
    expect(group.isSubscribedToTopic('payments')).toBe(false);
  });

  it('a topic created later is picked up at the first heartbeat 10 s after the last resolution; nothing changes when no topic did', () => {
    join('a', 'orders-.*');
    resolveIfDue();
    hb({ memberId: 'a', memberEpoch: 1, topicPartitions: [] });
    topics.set('orders-asia', { topicId: '00000000-0000-0000-0000-0000000000e4', partitionCount: 1 });
    version++;
    // Within 10 s of the last resolution, nothing is resolved.
    clock.advance(REGEX_BATCH_REFRESH_MIN_INTERVAL_MS);
    expect(resolveIfDue()).toBe(false);
    clock.advance(1);
    expect(resolveIfDue()).toBe(true);
    expect(group.groupEpoch).toBe(3);
    const r = hb({
      memberId: 'a',
      memberEpoch: 2,
      topicPartitions: [
        { topicId: idOf('orders-eu'), partitions: [0, 1] },
        { topicId: idOf('orders-us'), partitions: [0, 1] },
      ],
    });
    expect(r.memberEpoch).toBe(3);
    expect(assigned(r).get('orders-asia')).toEqual([0]);
    // Topics unchanged since: not resolved again until group.consumer.regex.refresh.interval.ms.
    clock.advance(REGEX_BATCH_REFRESH_MIN_INTERVAL_MS + 1);
    expect(resolveIfDue()).toBe(false);
    clock.advance(REFRESH_INTERVAL);
    expect(resolveIfDue()).toBe(true);
    expect(group.groupEpoch).toBe(3);
  });

  it('a second member with a pattern already resolved rebalances at once; the resolution goes with the last subscriber', () => {
    join('a', 'orders-.*');
    resolveIfDue();
    hb({ memberId: 'a', memberEpoch: 1, topicPartitions: [] });
    const b = join('b', 'orders-.*');
    expect(group.groupEpoch).toBe(3);
    expect(b.memberEpoch).toBe(3);
    hb({ memberId: 'a', memberEpoch: -1 });
    expect(group.regexes.resolved.has('orders-.*')).toBe(true);
    hb({ memberId: 'b', memberEpoch: -1 });
    expect(group.regexes.resolved.size).toBe(0);
  });

  it('topics the member may not describe are left out of its assignment', () => {
    join('a', '.*');
    resolveIfDue((names) => new Set(names.filter((n) => n !== 'payments')));
    const r = hb({ memberId: 'a', memberEpoch: 1, topicPartitions: [] });
    expect([...assigned(r).keys()].sort()).toEqual(['orders-eu', 'orders-us']);
  });

  it('is stored with its resolved patterns; a restored group assigns them without resolving again, and resolves once topics may have changed', () => {
    join('a', 'orders-.*');
    resolveIfDue();
    hb({ memberId: 'a', memberEpoch: 1, topicPartitions: [] });
    const snapshot = group.toStored();
    expect(snapshot.resolvedRegularExpressions['orders-.*']!.topics).toEqual(['orders-eu', 'orders-us']);
    const restored = new ConsumerGroup({ groupId: 'g', clock, settings: { sessionTimeoutMs: 45_000, heartbeatIntervalMs: 5000, maxSize: 100, assignmentIntervalMs: 0 }, persist: async () => {} });
    restored.restore(JSON.parse(JSON.stringify(snapshot)) as typeof snapshot);
    group = restored;
    expect(group.subscribedTopicNames()).toEqual(new Set(['orders-eu', 'orders-us']));
    const r = hb({
      memberId: 'a',
      memberEpoch: 2,
      topicPartitions: [
        { topicId: idOf('orders-eu'), partitions: [0, 1] },
        { topicId: idOf('orders-us'), partitions: [0, 1] },
      ],
    });
    expect(r).toMatchObject({ errorCode: ErrorCode.NONE, memberEpoch: 2 });
    expect(resolveIfDue()).toBe(false);
    clock.advance(REGEX_BATCH_REFRESH_MIN_INTERVAL_MS + 1);
    expect(resolveIfDue()).toBe(true);
    expect(group.groupEpoch).toBe(2);
  });
});
