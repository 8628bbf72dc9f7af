// The append queue's two levels of group commit, against a fake statement
// store: appends of a partition that arrive while its flush commits go out
// together up to produceFlushMaxBytes, a marker alone; small flushes of
// different partitions share a statement within the configured bounds,
// each partition once, and large or transactional ones go alone.
import { describe, expect, it } from 'vitest';
import { AppendQueue, DEFAULT_APPEND_QUEUE_BOUNDS, type AppendQueueBounds, type AppendStatements, type PendingAppend } from '../../src/log/append-queue.js';
import { PartitionLog, type IncomingBatch } from '../../src/log/partition-log.js';
import type { BatchHeader } from '../../src/protocol/records/index.js';
import type { Appended, StoreAppend, TxnChanges } from '../../src/storage/pg/log-store.js';

/** Statements held until the test releases them, each recorded with the partitions it holds. */
class HeldStatements implements AppendStatements {
  readonly sent: { partitions: number[]; txn: boolean; release: () => void }[] = [];
  private readonly released = new Set<number>();
  private readonly ends = new Map<number, bigint>();

  append(_topicId: string, partition: number, offsetCount: bigint, _batches: StoreAppend['batches'], txn: TxnChanges | null): Promise<Appended | null> {
    return new Promise((resolve) => this.sent.push({ partitions: [partition], txn: txn !== null, release: () => resolve(this.assign(partition, offsetCount)) }));
  }

  appendMany(appends: readonly StoreAppend[]): Promise<(Appended | null | Error)[]> {
    return new Promise((resolve) => this.sent.push({ partitions: appends.map((a) => a.partition), txn: false, release: () => resolve(appends.map((a) => this.assign(a.partition, a.offsetCount))) }));
  }

  private assign(partition: number, n: bigint): Appended {
    const base = this.ends.get(partition) ?? 0n;
    this.ends.set(partition, base + n);
    return { baseOffset: base, highWatermark: base + n, logStartOffset: 0n };
  }

  /** Releases every statement not released yet. */
  releaseAll(): void {
    this.sent.forEach((s, i) => {
      if (!this.released.has(i)) s.release();
      this.released.add(i);
    });
  }
}

const tick = () => new Promise((r) => setTimeout(r, 0));
const batch = (bytes: number, marker = false): IncomingBatch => ({
  data: Buffer.alloc(bytes),
  header: { lastOffsetDelta: 0 } as BatchHeader,
  ...(marker ? { marker: { commit: true, coordinatorEpoch: 0 } } : {}),
});

function queueOver(statements: HeldStatements, bounds: Partial<AppendQueueBounds> = {}) {
  const flushes: { partition: number; appends: number }[] = [];
  const queue: AppendQueue = new AppendQueue({
    bounds: { ...DEFAULT_APPEND_QUEUE_BOUNDS, ...bounds },
    statements,
    flush: async (p: PartitionLog, items: PendingAppend[]) => {
      flushes.push({ partition: p.partition, appends: items.length });
      const batches = items.flatMap((i) => i.batches).map((b) => ({ data: b.data, relativeOffset: 0n })) as unknown as StoreAppend['batches'];
      const txn = items.some((i) => i.batches.some((b) => b.marker)) ? { opened: [], ended: [{ producerId: 1n, relativeOffset: 0n, commit: true }] } : null;
      const appended = await queue.send({ topicId: 't', partition: p.partition, offsetCount: BigInt(items.length), batches, logEnd: 0n }, txn);
      items.forEach((item, i) => item.resolve({ baseOffset: appended!.baseOffset + BigInt(i), logStartOffset: 0n, logAppendTimeMs: -1n }));
    },
  });
  return { queue, flushes };
}

describe('append queue', () => {
  it("coalesces a partition's appends that wait behind its flush, up to the flush bound, a marker alone", async () => {
    const statements = new HeldStatements();
    const { queue, flushes } = queueOver(statements, { flushMaxBytes: 300 });
    const p = new PartitionLog('t', 0);
    const results = [
      queue.enqueue(p, [batch(100)]),
      queue.enqueue(p, [batch(100)]),
      queue.enqueue(p, [batch(100)]),
      queue.enqueue(p, [batch(100)]),
      queue.enqueue(p, [batch(10, true)]),
      queue.enqueue(p, [batch(10)]),
    ];
    for (let i = 0; i < 10; i++) {
      await tick();
      statements.releaseAll();
    }
    expect((await Promise.all(results)).map((r) => r.baseOffset)).toEqual([0n, 1n, 2n, 3n, 4n, 5n]);
    // The first alone (nothing waited behind it yet), then up to 300 bytes before the marker, the marker alone, what follows.
    expect(flushes.map((f) => f.appends)).toEqual([1, 3, 1, 1]);
    expect(queue.isFlushing(p)).toBe(false);
  });

  it('shares statements between partitions within the byte and in-flight bounds, each partition once', async () => {
    const statements = new HeldStatements();
    const { queue } = queueOver(statements, { sharedStatementsInFlight: 1, sharedStatementMaxBytes: 2048, sharedAppendMaxBytes: 1024 });
    const parts = [0, 1, 2, 3].map((i) => new PartitionLog('t', i));
    const done = [queue.enqueue(parts[0]!, [batch(1000)])];
    await tick();
    // One statement in flight: the next ones wait for it and go out together, as far as 2048 bytes reach.
    done.push(queue.enqueue(parts[1]!, [batch(1000)]), queue.enqueue(parts[2]!, [batch(1000)]), queue.enqueue(parts[3]!, [batch(1000)]));
    await tick();
    expect(statements.sent.map((s) => s.partitions)).toEqual([[0]]);
    statements.sent[0]!.release();
    await tick();
    expect(statements.sent.map((s) => s.partitions)).toEqual([[0], [1, 2]]);
    statements.sent[1]!.release();
    await tick();
    expect(statements.sent.map((s) => s.partitions)).toEqual([[0], [1, 2], [3]]);
    statements.sent[2]!.release();
    await Promise.all(done);
  });

  it('sends large flushes and flushes that end a transaction in statements of their own, at once', async () => {
    const statements = new HeldStatements();
    const { queue } = queueOver(statements, { sharedStatementsInFlight: 1, sharedAppendMaxBytes: 500 });
    const [a, b, c] = [0, 1, 2].map((i) => new PartitionLog('t', i));
    const done = [queue.enqueue(a!, [batch(100)]), queue.enqueue(b!, [batch(600)]), queue.enqueue(c!, [batch(10, true)])];
    await tick();
    expect(statements.sent.map((s) => [s.partitions, s.txn])).toEqual([
      [[0], false],
      [[1], false],
      [[2], true],
    ]);
    statements.releaseAll();
    await Promise.all(done);
  });

  it('runs work queued between flushes after the flush under way and before the flushes waiting', async () => {
    const statements = new HeldStatements();
    const { queue, flushes } = queueOver(statements);
    const p = new PartitionLog('t', 0);
    const order: string[] = [];
    const first = queue.enqueue(p, [batch(10)]).then(() => order.push('first'));
    const second = queue.enqueue(p, [batch(10)]).then(() => order.push('second'));
    queue.between(p, async () => {
      order.push(`between, ${flushes.length} flush started`);
    });
    await tick();
    statements.releaseAll();
    await first;
    await tick();
    statements.releaseAll();
    await second;
    expect(order).toEqual(['first', 'between, 1 flush started', 'second']);
  });
});
