import { describe, expect, it } from 'vitest';
import { assignLeaders } from '../../src/coordinator/partition-leadership.js';

const counts = (assigned: number[]) => assigned.reduce<Record<number, number>>((c, n) => ({ ...c, [n]: (c[n] ?? 0) + 1 }), {});
const none = (n: number) => Array.from({ length: n }, () => -1);
/** One topic's partitions with these leaders. */
const topic = (leaders: number[], topicId = 't') => leaders.map((leader) => ({ topicId, leader }));

describe('assignLeaders', () => {
  it('spreads partitions nobody leads evenly and round-robin over the live nodes', () => {
    expect(assignLeaders(topic(none(12)), [3, 1, 2])).toEqual([1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3]);
    expect(counts(assignLeaders(topic(none(10)), [1, 2, 3]))).toEqual({ 1: 4, 2: 3, 3: 3 });
  });

  it('leaves leaders their partitions when the spread is even', () => {
    const leaders = [2, 2, 2, 2, 1, 1, 1, 1, 3, 3, 3, 3];
    expect(assignLeaders(topic(leaders), [1, 2, 3])).toEqual(leaders);
  });

  it("moves only a dead node's partitions, to the survivors", () => {
    const before = assignLeaders(topic(none(12)), [1, 2, 3]);
    const after = assignLeaders(topic(before.map((l) => (l === 3 ? -1 : l))), [1, 2]);
    expect(counts(after)).toEqual({ 1: 6, 2: 6 });
    before.forEach((l, i) => l !== 3 && expect(after[i]).toBe(l));
  });

  it('gives a joining node its share only, taken from the nodes above theirs', () => {
    const two = assignLeaders(topic(none(12)), [1, 2]);
    const three = assignLeaders(topic(two), [1, 2, 3]);
    expect(counts(three)).toEqual({ 1: 4, 2: 4, 3: 4 });
    expect(three.filter((l, i) => l !== two[i])).toEqual([3, 3, 3, 3]);
  });

  it('gives the larger shares to the nodes that lead most now, so an uneven count moves nothing more', () => {
    // 7 over 2: node 2 leads 4 already and keeps them.
    expect(assignLeaders(topic([2, 2, 1, 2, 1, 2, 1]), [1, 2])).toEqual([2, 2, 1, 2, 1, 2, 1]);
  });

  it('spreads every topic evenly, and all of them together', () => {
    const three = [...topic(none(12), 'a'), ...topic(none(12), 'b'), ...topic(none(12), 'c')];
    const assigned = assignLeaders(three, [1, 2, 3]);
    for (let t = 0; t < 3; t++) expect(counts(assigned.slice(t * 12, t * 12 + 12))).toEqual({ 1: 4, 2: 4, 3: 4 });
    const single = ['a', 'b', 'c', 'd', 'e', 'f'].flatMap((t) => topic([-1], t));
    expect(counts(assignLeaders(single, [1, 2, 3]))).toEqual({ 1: 2, 2: 2, 3: 2 });
    // 2 partitions per topic over 3 nodes: each topic on two nodes, 4 each overall.
    const pairs = ['a', 'b', 'c', 'd', 'e', 'f'].flatMap((t) => topic([-1, -1], t));
    expect(counts(assignLeaders(pairs, [1, 2, 3]))).toEqual({ 1: 4, 2: 4, 3: 4 });
  });

  it('is stable: what it assigns, it assigns again', () => {
    const mixed = [...topic(none(7), 'a'), ...topic(none(1), 'b'), ...topic(none(5), 'c'), ...topic(none(2), 'd')];
    const once = assignLeaders(mixed, [1, 2, 3]);
    const again = assignLeaders(
      mixed.map((p, i) => ({ ...p, leader: once[i]! })),
      [1, 2, 3],
    );
    expect(again).toEqual(once);
  });

  it('leaves every partition without a leader when no node is live', () => {
    expect(assignLeaders(topic([1, -1]), [])).toEqual([-1, -1]);
  });
});
