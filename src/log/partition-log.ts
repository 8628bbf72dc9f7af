import type { BatchHeader } from '../protocol/records/index.js';
import type { ProducerEntry } from './producer-state.js';

/** A produced batch: its bytes (a view into the request) and its parsed header. */
export interface IncomingBatch {
  data: Buffer;
  header: BatchHeader;
  /** A transaction marker written by the coordinator: COMMIT (true) or ABORT (false), with the coordinator epoch it carries. */
  marker?: { commit: boolean; coordinatorEpoch: number };
}

export interface AppendResult {
  baseOffset: bigint;
  logStartOffset: bigint;
  logAppendTimeMs: bigint;
}

export interface PendingAppend {
  batches: IncomingBatch[];
  bytes: number;
  resolve: (result: AppendResult) => void;
  reject: (err: Error) => void;
}

/**
 * In-memory face of one partition in this process: the cached high watermark
 * and log start offset, the queue of appends waiting for the next flush
 * (group commit), and the fetches parked until the log grows.
 */
export class PartitionLog {
  highWatermark = 0n;
  logStartOffset = 0n;
  leaderEpoch = 0;
  readonly pending: PendingAppend[] = [];
  /** Idempotent producers' state on this partition, read from the log on first use. */
  readonly producers = new Map<bigint, ProducerEntry>();
  /** Open transactions here: producer id → first offset of its transaction (the earliest is the last stable offset). */
  readonly openTxns = new Map<bigint, bigint>();
  /** Whether any aborted transaction is recorded here (read_committed fetches then look up the aborted list). */
  hasAbortedTxns = false;
  flushing = false;
  private readonly waiters = new Set<() => void>();

  constructor(
    readonly topicId: string,
    readonly partition: number,
  ) {}

  /** The last stable offset: the first offset of the earliest open transaction, or the high watermark. */
  get lastStableOffset(): bigint {
    let lso = this.highWatermark;
    for (const first of this.openTxns.values()) if (first < lso) lso = first;
    return lso;
  }

  /** Moves the high watermark forward (never back) and wakes parked fetches. */
  advance(highWatermark: bigint, logStartOffset?: bigint): void {
    if (logStartOffset !== undefined && logStartOffset > this.logStartOffset) this.logStartOffset = logStartOffset;
    if (highWatermark <= this.highWatermark) return;
    this.highWatermark = highWatermark;
    this.wake();
  }

  wake(): void {
    if (this.waiters.size === 0) return;
    const waiters = [...this.waiters];
    this.waiters.clear();
    for (const w of waiters) w();
  }

  onAppend(waiter: () => void): () => void {
    this.waiters.add(waiter);
    return () => this.waiters.delete(waiter);
  }
}
