// Read-ahead for consumers catching up from PostgreSQL. A Fetch that read
// from the database and stopped at its byte limit, with committed batches
// still behind it, starts the read of the next range at once, in the
// background: the consumer's next Fetch (which asks for exactly that offset
// if it keeps reading) finds the batches already read, so the query runs
// while the previous response travels and the client decodes it. One read
// per partition at a time; their bytes are bounded in total, and a read
// nobody asks for within a few seconds is dropped.
import { systemClock, type Clock, type Timer } from '../clock.js';
import type { StoredBatch } from '../storage/log-types.js';

interface Slot {
  from: bigint;
  reserved: number;
  batches: Promise<StoredBatch[] | null>;
  timer: Timer;
}

export class ReadAhead {
  private readonly slots = new Map<object, Slot>();
  private reserved = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly ttlMs = 5_000,
    private readonly clock: Clock = systemClock,
  ) {}

  /** Bytes reserved by reads in flight or waiting to be taken. */
  get size(): number {
    return this.reserved;
  }

  /**
   * Starts reading `bytes` (at most) from `from` in the background, unless
   * the budget is spent or the partition already has a read waiting.
   */
  start(owner: object, from: bigint, bytes: number, read: () => Promise<StoredBatch[]>): void {
    if (this.slots.has(owner) || this.reserved + bytes > this.maxBytes) return;
    const timer = this.clock.setTimeout(() => this.drop(owner), this.ttlMs);
    // A failed read is not reported here: the Fetch that would have used it reads again itself.
    const batches = read().catch(() => null);
    this.slots.set(owner, { from, reserved: bytes, batches, timer });
    this.reserved += bytes;
  }

  /** The read that starts at `offset`, taken out of the cache; null if there is none. */
  take(owner: object, offset: bigint): Promise<StoredBatch[] | null> | null {
    const slot = this.slots.get(owner);
    if (!slot) return null;
    this.drop(owner);
    return slot.from === offset ? slot.batches : null;
  }

  /** Forgets the partition's read (its batches changed, or the partition is gone). */
  drop(owner: object): void {
    const slot = this.slots.get(owner);
    if (!slot) return;
    slot.timer.cancel();
    this.slots.delete(owner);
    this.reserved -= slot.reserved;
  }
}
