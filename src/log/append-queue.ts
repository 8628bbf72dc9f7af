// Group commit, both levels in one place. Level one, per partition: the
// appends that arrive while the partition's previous flush commits wait and
// go out together as its next flush (up to produceFlushMaxBytes), one flush
// per partition at a time, so offsets follow arrival order. Level two, across
// partitions: small flushes of different partitions that are ready while
// earlier statements commit share one statement (one transaction, one WAL
// flush, one round trip instead of one each: a commit costs PostgreSQL far
// more CPU than the rows of a small batch). Larger flushes, and flushes that
// open or end transactions, go alone, so PostgreSQL works on them in
// parallel backends.
import type { Appended, StoreAppend, TxnChanges } from '../storage/log-types.js';
import type { AppendResult, IncomingBatch, PartitionLog } from './partition-log.js';

/** The queue's bounds (configuration; see config/schema.ts). */
export interface AppendQueueBounds {
  /** Most bytes of appends in one flush of one partition. */
  flushMaxBytes: number;
  /** Flushes up to this many bytes may share a statement with other partitions' flushes. */
  sharedAppendMaxBytes: number;
  /** Most bytes of flushes in one shared statement. */
  sharedStatementMaxBytes: number;
  /** Shared statements in flight at once; flushes that become ready meanwhile wait and go together in the next. */
  sharedStatementsInFlight: number;
}

/** Today's values (the configuration defaults). */
export const DEFAULT_APPEND_QUEUE_BOUNDS: AppendQueueBounds = {
  flushMaxBytes: 16 * 1024 * 1024,
  sharedAppendMaxBytes: 64 * 1024,
  sharedStatementMaxBytes: 1024 * 1024,
  sharedStatementsInFlight: 2,
};

/** The statements the queue sends (LogStorage). */
export interface AppendStatements {
  append(topicId: string, partition: number, offsetCount: bigint, batches: StoreAppend['batches'], txn: TxnChanges | null, logEnd: bigint): Promise<Appended | null>;
  /** Each append's result in the order given: its offsets, null for no such partition, or an Error when not stored. */
  appendMany(appends: readonly StoreAppend[]): Promise<(Appended | null | Error)[]>;
}

export interface PendingAppend {
  batches: IncomingBatch[];
  bytes: number;
  resolve: (result: AppendResult) => void;
  reject: (err: Error) => void;
}

/** Work that must not run beside the partition's flushes (reading its state back), run between two of them. */
interface Between {
  run: () => Promise<void>;
}

type Queued = PendingAppend | Between;
const isBetween = (q: Queued): q is Between => 'run' in q;

/** Runs one flush of a partition: checks, the statement (through AppendQueue.send) and the answers to every append in it. */
export type Flush = (p: PartitionLog, items: PendingAppend[]) => Promise<void>;

interface Waiting extends StoreAppend {
  bytes: number;
  resolve: (appended: Appended | null) => void;
  reject: (err: unknown) => void;
}

const partitionKey = (a: { topicId: string; partition: number }) => `${a.topicId}:${a.partition}`;

export class AppendQueue {
  private readonly bounds: AppendQueueBounds;
  private readonly statements: AppendStatements;
  private readonly flush: Flush;
  private readonly pending = new Map<PartitionLog, Queued[]>();
  /** Small flushes waiting for a shared statement. */
  private readonly waiting: Waiting[] = [];
  private sharedInFlight = 0;
  /** The partitions that the shared statements in flight append to. */
  private readonly partitionsInFlight = new Set<string>();

  constructor(options: { bounds: AppendQueueBounds; statements: AppendStatements; flush: Flush }) {
    this.bounds = options.bounds;
    this.statements = options.statements;
    this.flush = options.flush;
  }

  /** Queues the batches for the partition's next flush; resolves with the flush's outcome for them. */
  enqueue(p: PartitionLog, batches: IncomingBatch[]): Promise<AppendResult> {
    let bytes = 0;
    for (const b of batches) bytes += b.data.length;
    return new Promise((resolve, reject) => this.push(p, { batches, bytes, resolve, reject }, false));
  }

  /**
   * Runs `run` once the partition's flush under way (if any) is over, before
   * any flush still waiting, and starts the next flush only after it; `run`
   * must not throw.
   */
  between(p: PartitionLog, run: () => Promise<void>): void {
    this.push(p, { run }, true);
  }

  /** Runs `run` once every append queued for the partition so far has been flushed; `run` must not throw. */
  afterQueued(p: PartitionLog, run: () => Promise<void>): void {
    this.push(p, { run }, false);
  }

  private push(p: PartitionLog, item: Queued, first: boolean): void {
    const queue = this.pending.get(p);
    if (queue) {
      if (first) queue.unshift(item);
      else queue.push(item);
      return;
    }
    this.pending.set(p, [item]);
    void this.drain(p);
  }

  /** Whether a flush of the partition is queued or under way. */
  isFlushing(p: PartitionLog): boolean {
    return this.pending.has(p);
  }

  /** Flushes the partition's queue, one flush at a time, until it is empty. */
  private async drain(p: PartitionLog): Promise<void> {
    const queue = this.pending.get(p)!;
    try {
      while (queue.length > 0) {
        const head = queue[0]!;
        if (isBetween(head)) {
          queue.shift();
          await head.run();
        } else {
          await this.flush(p, this.takeFlush(queue));
        }
      }
    } finally {
      this.pending.delete(p);
    }
  }

  /**
   * The next flush: queued appends up to the byte bound. A transaction
   * marker is flushed on its own, so a flush never holds both a producer's
   * marker and its batches of another transaction.
   */
  private takeFlush(queue: Queued[]): PendingAppend[] {
    const isMarker = (item: PendingAppend) => item.batches.some((b) => b.marker !== undefined);
    const appendAt = (i: number) => (i < queue.length && !isBetween(queue[i]!) ? (queue[i] as PendingAppend) : null);
    if (isMarker(appendAt(0)!)) return queue.splice(0, 1) as PendingAppend[];
    let bytes = 0;
    let n = 0;
    for (let next = appendAt(0); next && (n === 0 || bytes + next.bytes <= this.bounds.flushMaxBytes) && !isMarker(next); next = appendAt(++n)) bytes += next.bytes;
    return queue.splice(0, n) as PendingAppend[];
  }

  /**
   * Sends one flush's statement; null if the partition does not exist. A
   * small flush that opens or ends no transaction may share a statement with
   * other partitions' flushes; a statement holds each partition once.
   */
  send(append: StoreAppend, txn: TxnChanges | null): Promise<Appended | null> {
    const withTxn = txn !== null && (txn.opened.length > 0 || txn.ended.length > 0);
    let bytes = 0;
    for (const b of append.batches) bytes += b.data.length;
    if (withTxn || bytes > this.bounds.sharedAppendMaxBytes) {
      return this.statements.append(append.topicId, append.partition, append.offsetCount, append.batches, withTxn ? txn : null, append.logEnd);
    }
    return new Promise((resolve, reject) => {
      this.waiting.push({ ...append, bytes, resolve, reject });
      this.sendShared();
    });
  }

  private sendShared(): void {
    while (this.sharedInFlight < this.bounds.sharedStatementsInFlight && this.waiting.length > 0) {
      // In arrival order, up to the byte bound, each partition once, and none
      // that a statement in flight holds (two statements in flight commit in
      // either order): an append left for a later statement holds back the
      // later ones of its partition.
      const taken: Waiting[] = [];
      const left: Waiting[] = [];
      const seen = new Set<string>();
      let bytes = 0;
      for (const a of this.waiting) {
        const key = partitionKey(a);
        if (seen.has(key) || this.partitionsInFlight.has(key) || (taken.length > 0 && bytes + a.bytes > this.bounds.sharedStatementMaxBytes)) left.push(a);
        else {
          taken.push(a);
          bytes += a.bytes;
        }
        seen.add(key);
      }
      if (taken.length === 0) return;
      this.waiting.splice(0, this.waiting.length, ...left);
      this.sharedInFlight++;
      const keys = taken.map(partitionKey);
      for (const k of keys) this.partitionsInFlight.add(k);
      const done = () => {
        this.sharedInFlight--;
        for (const k of keys) this.partitionsInFlight.delete(k);
      };
      const one = taken[0]!;
      const sent: Promise<(Appended | null | Error)[]> =
        taken.length === 1 ? this.statements.append(one.topicId, one.partition, one.offsetCount, one.batches, null, one.logEnd).then((appended) => [appended]) : this.statements.appendMany(taken);
      // Counted out before the callers hear, so appends they make in reply see the statement gone.
      void sent.then(
        (results) => {
          done();
          taken.forEach((a, i) => {
            const result = results[i]!;
            if (result instanceof Error) a.reject(result);
            else a.resolve(result);
          });
          this.sendShared();
        },
        (err: unknown) => {
          done();
          taken.forEach((a) => a.reject(err));
          this.sendShared();
        },
      );
    }
  }
}
