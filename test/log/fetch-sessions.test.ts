// The fetch session cache as Kafka's FetchSessionTest exercises it: full and
// incremental contexts, epochs, forgotten partitions, what an incremental
// response leaves out, and eviction on a fake clock.
import { describe, expect, it } from 'vitest';
import { FetchSessionCache, FINAL_EPOCH, INVALID_SESSION_ID, nextEpoch, type FetchPartition, type PartitionResult } from '../../src/log/fetch-sessions.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { FakeClock } from '../support/fake-clock.js';

const ZERO = '00000000-0000-0000-0000-000000000000';
const part = (topic: string, partition: number, fetchOffset = 0n): FetchPartition => ({
  topic,
  topicId: ZERO,
  request: { partition, fetchOffset, partitionMaxBytes: 1024, currentLeaderEpoch: -1, logStartOffset: -1n, lastFetchedEpoch: -1 },
});
const result = (over: Partial<PartitionResult> = {}): PartitionResult => ({ errorCode: 0, highWatermark: 10n, logStartOffset: 0n, recordsBytes: 0, preferredReadReplica: -1, ...over });
const fetchOf = (sessionId: number, sessionEpoch: number, partitions: FetchPartition[], forgotten: { topic: string; partition: number }[] = [], apiVersion = 12) => ({
  apiVersion,
  sessionId,
  sessionEpoch,
  privileged: false,
  partitions,
  forgotten: forgotten.map((f) => ({ ...f, topicId: ZERO })),
});
const names = (ps: readonly FetchPartition[]) => ps.map((p) => `${p.topic}-${p.request.partition}`);

/** A session over `partitions`, opened by a full fetch. */
function open(cache: FetchSessionCache, partitions: FetchPartition[]): number {
  const ctx = cache.newContext(fetchOf(0, 0, partitions));
  return ctx.complete(partitions.map(() => result())).sessionId;
}

describe('fetch sessions', () => {
  it('epochs count up from 1 and wrap past the largest int to 1; FINAL stays FINAL', () => {
    expect([nextEpoch(0), nextEpoch(1), nextEpoch(0x7fffffff), nextEpoch(FINAL_EPOCH)]).toEqual([1, 2, 1, FINAL_EPOCH]);
  });

  it('a full fetch opens a session; incremental fetches read all its partitions and answer only those with news', () => {
    const cache = new FetchSessionCache({ maxEntries: 10, clock: new FakeClock() });
    const id = open(cache, [part('a', 0), part('a', 1), part('b', 0)]);
    expect(id).not.toBe(INVALID_SESSION_ID);
    expect([cache.size, cache.totalPartitions]).toEqual([1, 3]);

    const ctx = cache.newContext(fetchOf(id, 1, []));
    expect(ctx.kind).toBe('incremental');
    expect(names(ctx.partitions)).toEqual(['a-0', 'a-1', 'b-0']);
    // a-0 has records, a-1's high watermark moved, b-0 is as it was.
    const shape = ctx.complete([result({ recordsBytes: 100 }), result({ highWatermark: 11n }), result()]);
    expect(shape).toEqual({ errorCode: 0, sessionId: id, send: [true, true, false] });

    // The partition that returned records is read last next time.
    const next = cache.newContext(fetchOf(id, 2, []));
    expect(names(next.partitions)).toEqual(['a-1', 'b-0', 'a-0']);
    expect(next.complete([result({ highWatermark: 11n }), result(), result()]).send).toEqual([false, false, false]);
  });

  it('a log start change, an error and a preferred read replica are sent; after an error the partition is sent again', () => {
    const cache = new FetchSessionCache({ maxEntries: 10, clock: new FakeClock() });
    const id = open(cache, [part('a', 0), part('a', 1), part('a', 2)]);
    const ctx = cache.newContext(fetchOf(id, 1, []));
    expect(ctx.complete([result({ logStartOffset: 5n }), result({ errorCode: ErrorCode.KAFKA_STORAGE_ERROR, highWatermark: -1n }), result({ preferredReadReplica: 2 })]).send).toEqual([
      true,
      true,
      true,
    ]);
    const after = cache.newContext(fetchOf(id, 2, []));
    expect(after.complete([result({ logStartOffset: 5n }), result(), result()]).send).toEqual([false, true, false]);
  });

  it('an incremental fetch adds and updates partitions and forgets others; forgetting the last closes the session', () => {
    const cache = new FetchSessionCache({ maxEntries: 10, clock: new FakeClock() });
    const id = open(cache, [part('a', 0), part('a', 1)]);
    const ctx = cache.newContext(fetchOf(id, 1, [part('a', 1, 7n), part('c', 0)], [{ topic: 'a', partition: 0 }]));
    expect(ctx.partitions.map((p) => [p.topic, p.request.partition, p.request.fetchOffset])).toEqual([
      ['a', 1, 7n],
      ['c', 0, 0n],
    ]);
    // A partition new to the session has sent nothing yet, so it is answered.
    expect(ctx.complete([result(), result()]).send).toEqual([false, true]);
    expect(cache.totalPartitions).toBe(2);

    const last = cache.newContext(
      fetchOf(
        id,
        2,
        [],
        [
          { topic: 'a', partition: 1 },
          { topic: 'c', partition: 0 },
        ],
      ),
    );
    expect(last.kind).toBe('sessionless');
    expect(last.complete([]).sessionId).toBe(INVALID_SESSION_ID);
    expect([cache.size, cache.totalPartitions]).toEqual([0, 0]);
  });

  it('answers an unknown session, a wrong epoch and a change of topic ids with their errors and no partitions', () => {
    const cache = new FetchSessionCache({ maxEntries: 10, clock: new FakeClock() });
    const id = open(cache, [part('a', 0)]);
    const error = (req: ReturnType<typeof fetchOf>) => {
      const ctx = cache.newContext(req);
      return [ctx.kind, ctx.partitions.length, ctx.complete([]).errorCode];
    };
    expect(error(fetchOf(id + 1, 1, []))).toEqual(['error', 0, ErrorCode.FETCH_SESSION_ID_NOT_FOUND]);
    expect(error(fetchOf(id, 2, []))).toEqual(['error', 0, ErrorCode.INVALID_FETCH_SESSION_EPOCH]);
    expect(error(fetchOf(id, 1, [], [], 13))).toEqual(['error', 0, ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR]);
    // None of the errors moved the epoch.
    expect(cache.newContext(fetchOf(id, 1, [])).kind).toBe('incremental');
  });

  it('a duplicate of an incremental fetch answered after the next one began gets INVALID_FETCH_SESSION_EPOCH', () => {
    const cache = new FetchSessionCache({ maxEntries: 10, clock: new FakeClock() });
    const id = open(cache, [part('a', 0)]);
    const first = cache.newContext(fetchOf(id, 1, []));
    cache.newContext(fetchOf(id, 2, []));
    expect(first.complete([result()])).toEqual({ errorCode: ErrorCode.INVALID_FETCH_SESSION_EPOCH, sessionId: id, send: [] });
  });

  it('a full fetch naming a session closes it; with the final epoch it opens none', () => {
    const cache = new FetchSessionCache({ maxEntries: 10, clock: new FakeClock() });
    const id = open(cache, [part('a', 0)]);
    const closing = cache.newContext(fetchOf(id, FINAL_EPOCH, [part('a', 0)]));
    expect(closing.kind).toBe('sessionless');
    expect(closing.complete([result()])).toEqual({ errorCode: 0, sessionId: INVALID_SESSION_ID, send: [true] });
    expect(cache.size).toBe(0);
    const id2 = open(cache, [part('a', 0)]);
    const reopened = cache.newContext(fetchOf(id2, 0, [part('a', 0)]));
    const id3 = reopened.complete([result()]).sessionId;
    expect([cache.size, id3 === id2]).toEqual([1, false]);
    expect(cache.newContext(fetchOf(id2, 1, [])).complete([]).errorCode).toBe(ErrorCode.FETCH_SESSION_ID_NOT_FOUND);
  });

  it('with 0 slots every fetch is full and sessionless', () => {
    const cache = new FetchSessionCache({ maxEntries: 0, clock: new FakeClock() });
    expect(open(cache, [part('a', 0)])).toBe(INVALID_SESSION_ID);
  });

  it('evicts as Kafka does: a stale session first, else a smaller one at least the eviction time old, never a newer one', () => {
    const clock = new FakeClock();
    const cache = new FetchSessionCache({ maxEntries: 2, clock, evictionMs: 1000 });
    const small = open(cache, [part('a', 0)]);
    const big = open(cache, [part('a', 0), part('a', 1), part('a', 2)]);
    // Full, and both sessions are new: a third is refused.
    expect(open(cache, [part('a', 0), part('a', 1), part('a', 2), part('a', 3)])).toBe(INVALID_SESSION_ID);

    // Used again before the eviction time runs out, by then created longer ago than it: evictable, but only by a bigger session.
    clock.advance(900);
    cache.newContext(fetchOf(small, 1, [])).complete([result()]);
    clock.advance(200);
    cache.newContext(fetchOf(big, 1, [])).complete([result(), result(), result()]);
    cache.newContext(fetchOf(small, 2, [])).complete([result()]);
    expect(open(cache, [part('b', 0)])).toBe(INVALID_SESSION_ID);
    const bigger = open(cache, [part('b', 0), part('b', 1)]);
    expect(bigger).not.toBe(INVALID_SESSION_ID);
    expect(cache.evictions).toBe(1);
    expect(cache.newContext(fetchOf(small, 3, [])).kind).toBe('error');
    expect([cache.size, cache.totalPartitions]).toEqual([2, 5]);

    // Unused for longer than the eviction time: the least recently used goes, whatever its size.
    clock.advance(1001);
    cache.newContext(fetchOf(bigger, 1, [])).complete([result(), result()]);
    expect(open(cache, [part('c', 0)])).not.toBe(INVALID_SESSION_ID);
    expect(cache.newContext(fetchOf(big, 2, [])).kind).toBe('error');
    expect(cache.evictions).toBe(2);
  });
});
