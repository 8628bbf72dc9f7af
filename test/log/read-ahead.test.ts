import { afterEach, describe, expect, it, vi } from 'vitest';
import { ReadAhead } from '../../src/log/read-ahead.js';
import type { StoredBatch } from '../../src/storage/pg/log-store.js';

const batch = (base: number, size = 100): StoredBatch => ({ baseOffset: BigInt(base), lastOffset: BigInt(base), data: Buffer.alloc(size) });

afterEach(() => {
  vi.useRealTimers();
});

describe('ReadAhead', () => {
  it('hands the read to the fetch that asks for its first offset, once', async () => {
    const ahead = new ReadAhead(1000);
    const p = {};
    ahead.start(p, 5n, 100, async () => [batch(5)]);
    expect(ahead.size).toBe(100);
    const taken = ahead.take(p, 5n);
    expect(await taken).toEqual([batch(5)]);
    expect(ahead.take(p, 5n)).toBeNull();
    expect(ahead.size).toBe(0);
  });

  it('drops a read that another offset asks for', () => {
    const ahead = new ReadAhead(1000);
    const p = {};
    ahead.start(p, 5n, 100, async () => [batch(5)]);
    expect(ahead.take(p, 7n)).toBeNull();
    expect(ahead.take(p, 5n)).toBeNull();
    expect(ahead.size).toBe(0);
  });

  it('starts no read beyond its byte budget, and one per partition at a time', () => {
    const ahead = new ReadAhead(250);
    const read = vi.fn(async () => [batch(0)]);
    const p = {};
    ahead.start(p, 0n, 100, read);
    ahead.start(p, 1n, 100, read);
    ahead.start({}, 0n, 100, read);
    ahead.start({}, 0n, 100, read);
    expect(read).toHaveBeenCalledTimes(2);
    expect(ahead.size).toBe(200);
  });

  it('turns a failed read into null, for the fetch to read again itself', async () => {
    const ahead = new ReadAhead(1000);
    const p = {};
    ahead.start(p, 0n, 100, () => Promise.reject(new Error('database down')));
    expect(await ahead.take(p, 0n)).toBeNull();
  });

  it('forgets a read nobody takes, and a dropped partition', () => {
    vi.useFakeTimers();
    const ahead = new ReadAhead(1000, 1000);
    const p = {};
    const q = {};
    ahead.start(p, 0n, 100, async () => [batch(0)]);
    ahead.start(q, 0n, 100, async () => [batch(0)]);
    ahead.drop(q);
    expect(ahead.size).toBe(100);
    vi.advanceTimersByTime(1001);
    expect(ahead.size).toBe(0);
    expect(ahead.take(p, 0n)).toBeNull();
  });
});
