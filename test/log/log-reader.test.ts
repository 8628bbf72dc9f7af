// The reader's choices without PostgreSQL: the tail cache when it reaches the
// high watermark, the store otherwise (another broker's appends are not in
// the cache), a read-ahead taken by the next read, and read_committed
// stopping at the last stable offset, which waits for the transaction index
// to cover another broker's appends.
import { describe, expect, it } from 'vitest';
import { LogReader, READ_COMMITTED, READ_UNCOMMITTED, type StoredReads } from '../../src/log/log-reader.js';
import { PartitionLog } from '../../src/log/partition-log.js';
import { ReadAhead } from '../../src/log/read-ahead.js';
import { TailCache } from '../../src/log/tail-cache.js';
import type { StoredBatch } from '../../src/storage/pg/log-store.js';
import { FakeClock } from '../support/fake-clock.js';

/** A one-offset batch at `offset`, its base offset written in as stored. */
function stored(offset: bigint): StoredBatch {
  const data = Buffer.alloc(70);
  data.writeBigInt64BE(offset, 0);
  return { baseOffset: offset, lastOffset: offset, data };
}

class Store implements StoredReads {
  reads: [bigint, bigint][] = [];
  constructor(public end: bigint) {}
  read(_t: string, _p: number, from: bigint, upTo: bigint, maxBytes: number): Promise<StoredBatch[]> {
    this.reads.push([from, upTo]);
    const out: StoredBatch[] = [];
    for (let o = from; o < upTo && o < this.end && (out.length + 1) * 70 <= maxBytes; o++) out.push(stored(o));
    return Promise.resolve(out);
  }
  abortedTransactions(): Promise<{ producerId: bigint; firstOffset: bigint }[]> {
    return Promise.resolve([]);
  }
}

function setup(end: bigint) {
  const store = new Store(end);
  const tail = new TailCache(1 << 20);
  const reader = new LogReader({ store, tail, readAhead: new ReadAhead(1 << 20, 5_000, new FakeClock()) });
  const p = new PartitionLog('t', 0);
  p.applySnapshot({ highWatermark: end, logStartOffset: 0n, leaderEpoch: 0, openTxns: new Map(), hasAbortedTxns: false }, p.txnVersion);
  return { store, tail, reader, p };
}

const offsets = (batches: Buffer[]) => batches.map((b) => b.readBigInt64BE(0));

describe('log reader', () => {
  it('serves a read from the tail cache when its run reaches the high watermark', async () => {
    const { store, tail, reader, p } = setup(3n);
    tail.append(
      p,
      [0n, 1n, 2n].map((o) => stored(o)),
    );
    expect(offsets((await reader.read(p, 1n, 1 << 20, true)).batches)).toEqual([1n, 2n]);
    expect(store.reads).toEqual([]);
  });

  it("reads from the store once another broker's append moved the high watermark past the cached run", async () => {
    const { store, tail, reader, p } = setup(3n);
    tail.append(
      p,
      [0n, 1n, 2n].map((o) => stored(o)),
    );
    p.announced(4n);
    store.end = 4n;
    expect(offsets((await reader.read(p, 2n, 1 << 20, true)).batches)).toEqual([2n, 3n]);
    expect(store.reads).toEqual([[2n, 4n]]);
  });

  it('starts the next range behind a read cut short by its byte limit, and the next read takes it', async () => {
    const { store, reader, p } = setup(6n);
    expect(offsets((await reader.read(p, 0n, 140, true)).batches)).toEqual([0n, 1n]);
    expect(store.reads).toEqual([
      [0n, 6n],
      [2n, 6n],
    ]);
    expect(offsets((await reader.read(p, 2n, 140, true)).batches)).toEqual([2n, 3n]);
    // The read ahead answered it; this read started the one after.
    expect(store.reads).toEqual([
      [0n, 6n],
      [2n, 6n],
      [4n, 6n],
    ]);
  });

  it('stops read_committed at the last stable offset, held where the transaction index ends', async () => {
    const { reader, p } = setup(2n);
    p.announced(5n);
    const committed = await reader.read(p, 0n, 1 << 20, true, READ_COMMITTED);
    expect(committed).toMatchObject({ highWatermark: 5n, lastStableOffset: 2n });
    expect(offsets(committed.batches)).toEqual([0n, 1n]);
    expect((await reader.read(p, 2n, 1 << 20, true, READ_COMMITTED)).batches).toEqual([]);
    expect((await reader.read(p, 0n, 1 << 20, true, READ_UNCOMMITTED)).lastStableOffset).toBe(2n);
  });
});
