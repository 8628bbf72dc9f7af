import { describe, expect, it } from 'vitest';
import { rangeAssignor, uniformAssignor, type AssignmentMember, type TopicPartitions } from '../../src/coordinator/consumer-assignors.js';

const member = (memberId: string, topics: string[], target: Record<string, number[]> = {}, instanceId: string | null = null): AssignmentMember => ({
  memberId,
  instanceId,
  subscribedTopicIds: new Set(topics),
  target: new Map(Object.entries(target).map(([t, ps]) => [t, new Set(ps)])),
});

const flat = (a: TopicPartitions | undefined): string[] => [...(a ?? new Map())].flatMap(([t, ps]) => [...ps].map((p) => `${t}-${p}`)).sort();

function owners(result: Map<string, TopicPartitions>): Map<string, string> {
  const owner = new Map<string, string>();
  for (const [m, a] of result) {
    for (const tp of flat(a)) {
      expect(owner.has(tp), `${tp} given twice`).toBe(false);
      owner.set(tp, m);
    }
  }
  return owner;
}

describe('uniform assignor', () => {
  it('gives every partition of a homogeneous group to exactly one member, balanced within one', () => {
    const result = uniformAssignor({ members: ['a', 'b', 'c', 'd', 'e'].map((m) => member(m, ['t'])), partitionCounts: new Map([['t', 12]]) });
    expect(owners(result).size).toBe(12);
    const sizes = [...result.values()].map((a) => flat(a).length).sort();
    expect(sizes).toEqual([2, 2, 2, 3, 3]);
  });

  it('is sticky: a joining member takes only what balance requires, the others keep the rest', () => {
    const before = uniformAssignor({ members: ['a', 'b', 'c'].map((m) => member(m, ['t'])), partitionCounts: new Map([['t', 12]]) });
    const members = ['a', 'b', 'c'].map((m) => member(m, ['t'], Object.fromEntries([...before.get(m)!].map(([t, ps]) => [t, [...ps]]))));
    const after = uniformAssignor({ members: [...members, member('d', ['t'])], partitionCounts: new Map([['t', 12]]) });
    for (const m of ['a', 'b', 'c']) {
      expect(flat(after.get(m))).toHaveLength(3);
      for (const tp of flat(after.get(m))) expect(flat(before.get(m))).toContain(tp);
    }
    expect(flat(after.get('d'))).toHaveLength(3);
    expect(owners(after).size).toBe(12);
  });

  it('balances members subscribed to different topics, each only over its own topics', () => {
    const result = uniformAssignor({
      members: [member('a', ['t1']), member('b', ['t1', 't2']), member('c', ['t2'])],
      partitionCounts: new Map([
        ['t1', 4],
        ['t2', 4],
      ]),
    });
    expect(owners(result).size).toBe(8);
    expect(flat(result.get('a')).every((tp) => tp.startsWith('t1-'))).toBe(true);
    expect(flat(result.get('c')).every((tp) => tp.startsWith('t2-'))).toBe(true);
    const sizes = [...result.values()].map((a) => flat(a).length);
    expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
  });

  it('drops partitions of a topic the members no longer subscribe to, and of partitions that no longer exist', () => {
    const result = uniformAssignor({ members: [member('a', ['t'], { t: [0, 1, 5], gone: [0] })], partitionCounts: new Map([['t', 2]]) });
    expect(flat(result.get('a'))).toEqual(['t-0', 't-1']);
  });
});

describe('range assignor', () => {
  it('gives each subscriber a contiguous range of every topic, the first ones one more, static members first', () => {
    const result = rangeAssignor({
      members: [member('m2', ['t']), member('m1', ['t']), member('s', ['t'], {}, 'instance')],
      partitionCounts: new Map([['t', 7]]),
    });
    expect(flat(result.get('s'))).toEqual(['t-0', 't-1', 't-2']);
    expect(flat(result.get('m1'))).toEqual(['t-3', 't-4']);
    expect(flat(result.get('m2'))).toEqual(['t-5', 't-6']);
  });
});
