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

/** The partition as one PostgreSQL snapshot saw it: its offsets and its transaction index. */
export interface PartitionSnapshot {
  highWatermark: bigint;
  logStartOffset: bigint;
  leaderEpoch: number;
  /** Producer id → first offset of its open transaction. */
  openTxns: ReadonlyMap<bigint, bigint>;
  hasAbortedTxns: boolean;
}

/** A flush's transaction changes, by offset: first transactional batches (opened) and markers (ended). */
export interface TxnEvents {
  opened: { producerId: bigint; offset: bigint }[];
  ended: { producerId: bigint; commit: boolean }[];
}

/**
 * One partition as this process knows it: the high watermark and log start
 * offset, the transaction index (open transactions, whether any aborted) and
 * so the last stable offset, the idempotent producers' state, and the
 * fetches parked until the log grows. The state changes only through the
 * methods below (the partition's writer and loader call them); everyone else
 * reads it through the getters.
 *
 * Other brokers append to the same partition (they share the schema), so the
 * transaction index is trusted only up to `indexedUpTo`, the log end up to
 * which every append is known to this process: the last stable offset never
 * passes it, and the range beyond it is read back from PostgreSQL
 * (needsReload, applySnapshot), between two of the partition's flushes. The producers'
 * state, likewise, is dropped at the writer's next flush once another
 * broker's append is seen (takeStaleProducers).
 */
export class PartitionLog {
  private hw = 0n;
  private logStart = 0n;
  private epoch = 0;
  private readonly producerEntries = new Map<bigint, ProducerEntry>();
  private readonly openTxns = new Map<bigint, bigint>();
  private abortedTxns = false;
  /** The log end up to which the transaction index holds every transaction. */
  private indexedUpTo = 0n;
  /** Counts this process's changes to the transaction index, so a snapshot read before one of them is not applied over it. */
  private txnChanges = 0;
  private producersStale = false;
  private readonly waiters = new Set<() => void>();

  constructor(
    readonly topicId: string,
    readonly partition: number,
  ) {}

  get highWatermark(): bigint {
    return this.hw;
  }

  get logStartOffset(): bigint {
    return this.logStart;
  }

  get leaderEpoch(): number {
    return this.epoch;
  }

  /** The last stable offset: the first offset of the earliest open transaction, or the high watermark (never past what the index covers). */
  get lastStableOffset(): bigint {
    let lso = this.hw < this.indexedUpTo ? this.hw : this.indexedUpTo;
    for (const first of this.openTxns.values()) if (first < lso) lso = first;
    return lso;
  }

  /** Whether any aborted transaction is recorded here (read_committed fetches then look up the aborted list). */
  get hasAbortedTxns(): boolean {
    return this.abortedTxns;
  }

  /** Whether appends this process has not seen lie below the high watermark: the transaction index must be read back. */
  get needsReload(): boolean {
    return this.indexedUpTo < this.hw;
  }

  /** The first offset of the producer's open transaction here, or undefined. */
  openTxnFirstOffset(producerId: bigint): bigint | undefined {
    return this.openTxns.get(producerId);
  }

  hasOpenTxn(producerId: bigint): boolean {
    return this.openTxns.has(producerId);
  }

  /** The producers with state or an open transaction here (DescribeProducers). */
  producerIds(): bigint[] {
    return [...new Set([...this.producerEntries.keys(), ...this.openTxns.keys()])];
  }

  producer(producerId: bigint): ProducerEntry | undefined {
    return this.producerEntries.get(producerId);
  }

  hasProducer(producerId: bigint): boolean {
    return this.producerEntries.has(producerId);
  }

  setProducer(producerId: bigint, entry: ProducerEntry): void {
    this.producerEntries.set(producerId, entry);
  }

  forgetProducer(producerId: bigint): void {
    this.producerEntries.delete(producerId);
  }

  /** Another broker appended here: the producers' state is read from the log again, from the next flush on. */
  markProducersStale(): void {
    this.producersStale = true;
  }

  /** For the writer, between flushes: drops the producers' state if another broker appended since; true if it did. */
  takeStaleProducers(): boolean {
    if (!this.producersStale) return false;
    this.producersStale = false;
    this.producerEntries.clear();
    return true;
  }

  /** A token for applySnapshot: the transaction index as it stands before a snapshot is read. */
  get txnVersion(): number {
    return this.txnChanges;
  }

  /**
   * Applies a PostgreSQL snapshot of the partition, read after `version` was
   * taken. The offsets only move forward; the transaction index is replaced
   * only if this process changed it meanwhile — else false, and the caller
   * reads again.
   */
  applySnapshot(s: PartitionSnapshot, version: number): boolean {
    this.epoch = s.leaderEpoch;
    if (s.hasAbortedTxns) this.abortedTxns = true;
    const current = version === this.txnChanges;
    if (current) {
      this.txnChanges++; // an older snapshot read meanwhile is not applied over this one
      this.openTxns.clear();
      for (const [producerId, first] of s.openTxns) this.openTxns.set(producerId, first);
      if (s.highWatermark > this.indexedUpTo) this.indexedUpTo = s.highWatermark;
    }
    if (s.highWatermark > this.hw && this.hw > 0n) this.producersStale = true;
    this.advance(s.highWatermark, s.logStartOffset);
    if (current) this.wake(); // the last stable offset may have moved without the high watermark
    return current;
  }

  /**
   * This process appended [baseOffset, highWatermark) with these transaction
   * changes. If the append does not follow what the index covers, another
   * broker appended in between: the index is read back before the last
   * stable offset passes it (needsReload), and the producers' state too.
   */
  appended(baseOffset: bigint, highWatermark: bigint, logStartOffset: bigint, txn: TxnEvents): void {
    this.txnChanges++;
    for (const t of txn.opened) if (!this.openTxns.has(t.producerId)) this.openTxns.set(t.producerId, t.offset);
    for (const t of txn.ended) {
      if (!t.commit && this.openTxns.has(t.producerId)) this.abortedTxns = true;
      this.openTxns.delete(t.producerId);
    }
    if (baseOffset <= this.indexedUpTo) {
      if (highWatermark > this.indexedUpTo) this.indexedUpTo = highWatermark;
    } else {
      this.producersStale = true;
    }
    this.advance(highWatermark, logStartOffset);
  }

  /**
   * Another broker says the log reaches `highWatermark`: fetches may read up
   * to it at once; the last stable offset waits for the index to be read
   * back. Returns whether the announcement held appends this process had not seen.
   */
  announced(highWatermark: bigint, logStartOffset?: bigint): boolean {
    const unseen = highWatermark > this.hw;
    if (unseen) this.producersStale = true;
    this.advance(highWatermark, logStartOffset);
    return unseen;
  }

  /** Moves the high watermark and log start forward (never back) and wakes parked fetches. */
  advance(highWatermark: bigint, logStartOffset?: bigint): void {
    if (logStartOffset !== undefined && logStartOffset > this.logStart) this.logStart = logStartOffset;
    if (highWatermark <= this.hw) return;
    this.hw = highWatermark;
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
