// One partition's flushes without PostgreSQL: the producers' sequence checks
// (duplicates, gaps, producer.id.expiration.ms on a fake clock) and what a
// commit that lands past the log end this broker knew (another broker
// appended in between) does to the partition's write-side state, and how a
// transactional batch is recorded while other brokers share the log.
import { describe, expect, it } from 'vitest';
import { AppendQueue, DEFAULT_APPEND_QUEUE_BOUNDS, type AppendStatements } from '../../src/log/append-queue.js';
import { AppendError } from '../../src/log/append-error.js';
import { PartitionLog } from '../../src/log/partition-log.js';
import { PartitionWriter } from '../../src/log/partition-writer.js';
import { ProducerSequences, type ProducerBatches } from '../../src/log/producer-sequences.js';
import { TailCache } from '../../src/log/tail-cache.js';
import { createLogger } from '../../src/observability/logger.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch, readBatchHeaderAt } from '../../src/protocol/records/index.js';
import type { Appended, StoreAppend, TxnChanges } from '../../src/storage/pg/log-store.js';
import type { StoredProducerBatch } from '../../src/storage/pg/producer-store.js';
import { FakeClock } from '../support/fake-clock.js';

/** A log end per partition, moved by each statement (and by `otherBroker`, as another broker's append would). */
class MemoryStatements implements AppendStatements {
  end = 0n;
  statements = 0;
  /** The producers each statement recorded as opening a transaction. */
  opened: bigint[] = [];
  otherBroker(offsets: bigint): void {
    this.end += offsets;
  }
  append(_t: string, _p: number, offsetCount: bigint, _batches: unknown, txn: TxnChanges | null = null): Promise<Appended | null> {
    this.statements++;
    for (const t of txn?.opened ?? []) this.opened.push(t.producerId);
    const base = this.end;
    this.end += offsetCount;
    return Promise.resolve({ baseOffset: base, highWatermark: this.end, logStartOffset: 0n });
  }
  appendMany(appends: readonly StoreAppend[]): Promise<(Appended | null | Error)[]> {
    return Promise.all(appends.map((a) => this.append(a.topicId, a.partition, a.offsetCount, a.batches)));
  }
}

class StoredProducers implements ProducerBatches {
  reads = 0;
  batches: StoredProducerBatch[] = [];
  lastBatches(): Promise<StoredProducerBatch[]> {
    this.reads++;
    return Promise.resolve(this.batches);
  }
}

const EXPIRATION_MS = 60_000;

function writerFor(othersAppend = false) {
  const clock = new FakeClock();
  const statements = new MemoryStatements();
  const producers = new StoredProducers();
  const unseen: PartitionLog[] = [];
  const writer: PartitionWriter = new PartitionWriter({
    send: (append, txn) => queue.send(append, txn),
    sequences: new ProducerSequences({ store: producers, clock, producerIdExpirationMs: EXPIRATION_MS }),
    tail: new TailCache(1 << 20),
    clock,
    log: createLogger('silent'),
    onCommitted: () => {},
    onUnseenAppends: (p) => unseen.push(p),
    othersAppend: () => othersAppend,
  });
  const queue = new AppendQueue({ bounds: DEFAULT_APPEND_QUEUE_BOUNDS, statements, flush: (p, items) => writer.flush(p, items) });
  const p = new PartitionLog('t', 0);
  p.applySnapshot({ highWatermark: 0n, logStartOffset: 0n, leaderEpoch: 0, openTxns: new Map(), hasAbortedTxns: false }, p.txnVersion);
  const produce = (baseSequence: number, records = 1, producerId = 7n, isTransactional = false) => {
    const data = buildBatch({ producerId, producerEpoch: 0, baseSequence, isTransactional, records: Array.from({ length: records }, () => ({ key: null, value: Buffer.from('v') })) });
    return queue.enqueue(p, [{ data, header: readBatchHeaderAt(data, 0)! }]);
  };
  return { clock, statements, producers, unseen, p, produce };
}

const errorOf = (promise: Promise<unknown>) =>
  promise.then(
    () => ErrorCode.NONE,
    (err: AppendError) => err.errorCode,
  );

describe('partition writer', () => {
  it('answers a retry with its first offset and refuses a gap, without a statement', async () => {
    const { statements, produce } = writerFor();
    expect((await produce(0, 2)).baseOffset).toBe(0n);
    expect((await produce(0, 2)).baseOffset).toBe(0n);
    expect(await errorOf(produce(5))).toBe(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
    expect(statements.statements).toBe(1);
    expect((await produce(2)).baseOffset).toBe(2n);
  });

  it('records each transactional batch as opening its transaction while other brokers share the log (a marker of theirs may have ended the one held open here)', async () => {
    for (const others of [false, true]) {
      const { statements, produce } = writerFor(others);
      await produce(0, 1, 7n, true);
      await produce(1, 1, 7n, true);
      expect(statements.opened).toEqual(others ? [7n, 7n] : [7n]);
    }
  });

  it("forgets a producer's state producer.id.expiration.ms after its last append, on the broker's clock", async () => {
    const { clock, produce } = writerFor();
    await produce(0);
    clock.advance(EXPIRATION_MS);
    expect(await errorOf(produce(5))).toBe(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
    clock.advance(1);
    // Expired: the producer is new again, and its batch is accepted whatever its sequence (KIP-360).
    expect((await produce(5)).baseOffset).toBe(1n);
  });

  it("reads the producers' state and transaction index back once a commit shows another broker's appends", async () => {
    const { clock, statements, producers, unseen, p, produce } = writerFor();
    await produce(0);
    expect(producers.reads).toBe(1);
    expect(p.needsReload).toBe(false);
    statements.otherBroker(3n);
    expect((await produce(1)).baseOffset).toBe(4n);
    // The index does not cover offsets 1-3: the last stable offset stays below them until it is read back.
    expect(p.highWatermark).toBe(5n);
    expect(p.needsReload).toBe(true);
    expect(p.lastStableOffset).toBe(1n);
    expect(unseen).toEqual([p]);
    // The next flush reads the producer's batches from the log again: a retry is judged on what the log holds.
    producers.batches = [
      { producerEpoch: 0, firstSequence: 0, lastSequence: 0, baseOffset: 0n, maxTimestamp: clock.now() },
      { producerEpoch: 0, firstSequence: 1, lastSequence: 1, baseOffset: 4n, maxTimestamp: clock.now() },
    ];
    expect((await produce(1)).baseOffset).toBe(4n);
    expect(producers.reads).toBe(2);
    expect(statements.statements).toBe(2);
    p.applySnapshot({ highWatermark: 5n, logStartOffset: 0n, leaderEpoch: 0, openTxns: new Map(), hasAbortedTxns: false }, p.txnVersion);
    expect(p.lastStableOffset).toBe(5n);
  });
});
