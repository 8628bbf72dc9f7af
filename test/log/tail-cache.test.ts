import { describe, expect, it } from 'vitest';
import { CACHED_BATCH_OVERHEAD_BYTES as OVERHEAD, TailCache, type CachedBatch } from '../../src/log/tail-cache.js';

const batch = (base: number, count: number, size = 100): CachedBatch => ({
  baseOffset: BigInt(base),
  lastOffset: BigInt(base + count - 1),
  data: Buffer.alloc(size, base),
});
const ids = (buffers: Buffer[] | null) => buffers && buffers.map((b) => b[0]);

describe('TailCache', () => {
  it('answers reads inside the cached run, from the batch holding the offset', () => {
    const cache = new TailCache(10_000);
    const p = {};
    cache.append(p, [batch(0, 3), batch(3, 2)]);
    cache.append(p, [batch(5, 5)]);
    expect(ids(cache.read(p, 0n, 10n, 10_000, true))).toEqual([0, 3, 5]);
    expect(ids(cache.read(p, 4n, 10n, 10_000, true))).toEqual([3, 5]);
    expect(ids(cache.read(p, 9n, 10n, 10_000, true))).toEqual([5]);
  });

  it('declines when the run does not reach the high watermark or starts after the offset', () => {
    const cache = new TailCache(10_000);
    const p = {};
    cache.append(p, [batch(10, 5)]);
    expect(cache.read(p, 9n, 15n, 10_000, true)).toBeNull();
    expect(cache.read(p, 10n, 20n, 10_000, true)).toBeNull();
    expect(cache.read({}, 10n, 15n, 10_000, true)).toBeNull();
  });

  it('keeps to max bytes, but gives at least one batch when asked', () => {
    const cache = new TailCache(10_000);
    const p = {};
    cache.append(p, [batch(0, 1, 300), batch(1, 1, 300), batch(2, 1, 300)]);
    expect(ids(cache.read(p, 0n, 3n, 650, false))).toEqual([0, 1]);
    expect(ids(cache.read(p, 0n, 3n, 100, true))).toEqual([0]);
    expect(ids(cache.read(p, 0n, 3n, 100, false))).toEqual([]);
  });

  it('restarts the run when an append does not continue it (another broker wrote in between)', () => {
    const cache = new TailCache(10_000);
    const p = {};
    cache.append(p, [batch(0, 2)]);
    cache.append(p, [batch(5, 1)]);
    expect(cache.read(p, 0n, 6n, 10_000, true)).toBeNull();
    expect(ids(cache.read(p, 5n, 6n, 10_000, true))).toEqual([5]);
    expect(cache.size).toBe(100 + OVERHEAD);
  });

  it('evicts the oldest batches across partitions to stay within its bound', () => {
    const cache = new TailCache(3.5 * (100 + OVERHEAD));
    const a = {};
    const b = {};
    cache.append(a, [batch(0, 1)]);
    cache.append(b, [batch(0, 1)]);
    cache.append(a, [batch(1, 1)]);
    cache.append(b, [batch(1, 1)]);
    expect(cache.size).toBe(3 * (100 + OVERHEAD));
    expect(cache.read(a, 0n, 2n, 10_000, true)).toBeNull();
    expect(ids(cache.read(a, 1n, 2n, 10_000, true))).toEqual([1]);
    expect(ids(cache.read(b, 0n, 2n, 10_000, true))).toEqual([0, 1]);
  });

  it('forgets batches below a new log start, and a dropped partition entirely', () => {
    const cache = new TailCache(10_000);
    const p = {};
    cache.append(p, [batch(0, 2), batch(2, 2), batch(4, 2)]);
    cache.trimBelow(p, 3n);
    expect(ids(cache.read(p, 3n, 6n, 10_000, true))).toEqual([2, 4]);
    expect(cache.read(p, 1n, 6n, 10_000, true)).toBeNull();
    cache.drop(p);
    expect(cache.size).toBe(0);
  });

  it('does not keep dropped batches alive through its eviction queue', () => {
    const cache = new TailCache(1_000_000);
    const p = {};
    for (let i = 0; i < 5000; i++) {
      cache.append(p, [batch(i, 1, 10)]);
      if (i % 100 === 99) cache.drop(p);
    }
    expect(cache.size).toBeLessThanOrEqual(100 * (10 + OVERHEAD));
    const queue = (cache as unknown as { order: unknown[] }).order;
    expect(queue.filter((e) => e !== null).length).toBeLessThan(2 * 100 + 64 + 1);
  });

  it('does not keep evicted batches alive through its eviction queue', () => {
    const cache = new TailCache(10 * (100 + OVERHEAD));
    const p = {};
    for (let i = 0; i < 5000; i++) cache.append(p, [batch(i, 1, 100)]);
    expect(cache.size).toBe(10 * (100 + OVERHEAD));
    const held = (cache as unknown as { order: ({ batch: CachedBatch } | null)[] }).order.filter((e) => e !== null);
    // Only the ten batches still cached are referenced.
    expect(held.length).toBe(10);
  });

  it('counts what each batch costs beyond its bytes, so small batches stay within the bound', () => {
    const bound = 1_000_000;
    const cache = new TailCache(bound);
    const p = {};
    for (let i = 0; i < 20_000; i++) cache.append(p, [batch(i, 1, 170)]);
    // A bound counting bytes alone would hold 5,882 of them: about 4.5 MB with what each costs on the heap.
    const held = Math.floor(bound / (170 + OVERHEAD));
    expect(cache.size).toBe(held * (170 + OVERHEAD));
    expect(cache.read(p, BigInt(20_000 - held - 1), 20_000n, 10_000_000, true)).toBeNull();
    expect(cache.read(p, BigInt(20_000 - held), 20_000n, 10_000_000, true)).toHaveLength(held);
  });

  it('compacts its eviction queue only as often as evictions pay for the copy', () => {
    const cache = new TailCache(5000 * (10 + OVERHEAD));
    const p = {};
    const queue = () => (cache as unknown as { order: unknown[] }).order;
    let copies = 0;
    let last = queue();
    for (let i = 0; i < 50_000; i++) {
      cache.append(p, [batch(i, 1, 10)]);
      if (queue() !== last) {
        copies++;
        last = queue();
      }
    }
    // 45,000 evictions from a queue of 5,000: a copy at most every 5,000 of them.
    expect(copies).toBeLessThanOrEqual(9);
    expect(queue().length).toBeLessThanOrEqual(2 * 5000 + 1024 + 1);
  });
});
