import { describe, expect, it } from 'vitest';
import { assignLeaders } from '../../src/coordinator/partition-leadership.js';

const counts = (assigned: number[]) => assigned.reduce<Record<number, number>>((c, n) => ({ ...c, [n]: (c[n] ?? 0) + 1 }), {});
const none = (n: number) => Array.from({ length: n }, () => -1);

describe('assignLeaders', () => {
  it('spreads partitions nobody leads evenly and round-robin over the live nodes', () => {
    expect(assignLeaders(none(12), [3, 1, 2])).toEqual([1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3]);
    expect(counts(assignLeaders(none(10), [1, 2, 3]))).toEqual({ 1: 4, 2: 3, 3: 3 });
  });

  it('leaves leaders their partitions when the spread is even', () => {
    const leaders = [2, 2, 2, 2, 1, 1, 1, 1, 3, 3, 3, 3];
    expect(assignLeaders(leaders, [1, 2, 3])).toEqual(leaders);
  });

  it("moves only a dead node's partitions, to the survivors", () => {
    const before = assignLeaders(none(12), [1, 2, 3]);
    const after = assignLeaders(
      before.map((l) => (l === 3 ? -1 : l)),
      [1, 2],
    );
    expect(counts(after)).toEqual({ 1: 6, 2: 6 });
    before.forEach((l, i) => l !== 3 && expect(after[i]).toBe(l));
  });

  it('gives a joining node its share only, taken from the nodes above theirs', () => {
    const two = assignLeaders(none(12), [1, 2]);
    const three = assignLeaders(two, [1, 2, 3]);
    expect(counts(three)).toEqual({ 1: 4, 2: 4, 3: 4 });
    expect(three.filter((l, i) => l !== two[i])).toEqual([3, 3, 3, 3]);
  });

  it('gives the larger shares to the nodes that lead most now, so an uneven count moves nothing more', () => {
    // 7 over 2: node 2 leads 4 already and keeps them.
    expect(assignLeaders([2, 2, 1, 2, 1, 2, 1], [1, 2])).toEqual([2, 2, 1, 2, 1, 2, 1]);
  });

  it('leaves every partition without a leader when no node is live', () => {
    expect(assignLeaders([1, -1], [])).toEqual([-1, -1]);
  });
});
