// The newest batches of each partition, kept in memory as they were stored,
// so consumers that keep up are served without a query. Each partition's
// cached batches form one contiguous run that ends at its high watermark;
// anything that breaks that (another broker's append, a gap) empties the
// partition's cache, and reads it cannot answer go to PostgreSQL. The total
// is bounded; the oldest batches, across partitions, go first.

/**
 * What one cached batch costs beyond its bytes: its entries here and the
 * Buffer and bigint objects on the heap. Measured: 60,000 one-record batches
 * (170 bytes each) held 34 MiB of heap besides their 10 MiB of bytes, so a
 * bound counting bytes alone let small batches take several times the memory
 * configured.
 */
export const CACHED_BATCH_OVERHEAD_BYTES = 600;

export interface CachedBatch {
  baseOffset: bigint;
  lastOffset: bigint;
  data: Buffer;
}

interface PartitionTail {
  batches: CachedBatch[];
  /** Offset after the last cached batch. */
  end: bigint;
}

export class TailCache {
  private readonly tails = new Map<object, PartitionTail>();
  /** Every cached batch in insertion order, for eviction. */
  private order: ({ owner: object; batch: CachedBatch } | null)[] = [];
  private orderHead = 0;
  private readonly live = new Set<CachedBatch>();
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  /** Bytes accounted: the batches' bytes plus CACHED_BATCH_OVERHEAD_BYTES for each. */
  get size(): number {
    return this.bytes;
  }

  /** Adds committed batches that follow each other; they must continue the cached run, else the run restarts with them. */
  append(owner: object, batches: CachedBatch[]): void {
    if (this.maxBytes <= 0 || batches.length === 0) return;
    let tail = this.tails.get(owner);
    if (!tail || tail.end !== batches[0]!.baseOffset) {
      this.drop(owner);
      tail = { batches: [], end: batches[0]!.baseOffset };
      this.tails.set(owner, tail);
    }
    for (const b of batches) {
      tail.batches.push(b);
      tail.end = b.lastOffset + 1n;
      this.order.push({ owner, batch: b });
      this.live.add(b);
      this.bytes += b.data.length + CACHED_BATCH_OVERHEAD_BYTES;
    }
    this.evict();
  }

  /**
   * Batches from the one holding `offset` up to about maxBytes (at least one
   * if minOne), or null when the cache cannot answer: offset before the cached
   * run, or the run not reaching `highWatermark`. Batches from `upTo` on
   * (the last stable offset, for read_committed) are left out.
   */
  read(owner: object, offset: bigint, highWatermark: bigint, maxBytes: number, minOne: boolean, upTo: bigint = highWatermark): Buffer[] | null {
    const tail = this.tails.get(owner);
    if (!tail || tail.end !== highWatermark || tail.batches.length === 0 || offset < tail.batches[0]!.baseOffset) return null;
    let i = tail.batches.length - 1;
    while (i > 0 && tail.batches[i]!.baseOffset > offset) i--;
    if (tail.batches[i]!.lastOffset < offset) i++;
    const out: Buffer[] = [];
    let total = 0;
    for (; i < tail.batches.length && tail.batches[i]!.baseOffset < upTo; i++) {
      const data = tail.batches[i]!.data;
      if (total + data.length > maxBytes && !(minOne && out.length === 0)) break;
      out.push(data);
      total += data.length;
    }
    return out;
  }

  /** Forgets batches wholly below the log start. */
  trimBelow(owner: object, logStartOffset: bigint): void {
    const tail = this.tails.get(owner);
    if (!tail) return;
    while (tail.batches.length > 0 && tail.batches[0]!.lastOffset < logStartOffset) this.forget(tail.batches.shift()!);
  }

  private forget(batch: CachedBatch): void {
    this.live.delete(batch);
    this.bytes -= batch.data.length + CACHED_BATCH_OVERHEAD_BYTES;
  }

  drop(owner: object): void {
    const tail = this.tails.get(owner);
    if (!tail) return;
    for (const b of tail.batches) this.forget(b);
    this.tails.delete(owner);
  }

  private evict(): void {
    while (this.bytes > this.maxBytes && this.orderHead < this.order.length) {
      const entry = this.order[this.orderHead]!;
      this.order[this.orderHead++] = null; // spent: must not keep the batch alive
      if (!entry) continue;
      const tail = this.tails.get(entry.owner);
      if (tail && tail.batches[0] === entry.batch) {
        tail.batches.shift();
        this.forget(entry.batch);
      }
    }
    // Compact the queue once it is mostly spent, or mostly batches already
    // dropped or trimmed, so neither keeps memory alive. Only then: copying
    // the queue costs its length, so each compaction is paid for by at least
    // as many evictions or drops (copying it every 1,024 evictions made a
    // cache of 100,000 small batches copy 100 entries per batch evicted).
    const queued = this.order.length - this.orderHead;
    if (this.orderHead > Math.max(1024, queued) || queued > 2 * this.live.size + 64) {
      this.order = this.order.slice(this.orderHead).filter((e) => e !== null && this.live.has(e.batch));
      this.orderHead = 0;
    }
  }
}
