// LogManager on the in-memory stores, no PostgreSQL: produce then fetch,
// read_committed around an open transaction, ListOffsets by time, and a
// restarted broker reading its state back from the stored log. The tail
// cache is off, so every read goes to the store.
import { describe, expect, it } from 'vitest';
import { logMarkerWriter } from '../../src/coordinator/txn-markers.js';
import { DEFAULT_APPEND_QUEUE_BOUNDS } from '../../src/log/append-queue.js';
import { EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, LogManager, MAX_TIMESTAMP, READ_COMMITTED, READ_UNCOMMITTED } from '../../src/log/log-manager.js';
import type { PartitionLog } from '../../src/log/partition-log.js';
import { TailCache } from '../../src/log/tail-cache.js';
import { createLogger } from '../../src/observability/logger.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch, decodeRecords, readBatchHeaderAt } from '../../src/protocol/records/index.js';
import { MemoryDatabase, MemoryLogStore, MemoryPartitionStore, MemoryProducerStore, MemoryTopicStore } from '../../src/storage/memory/index.js';
import { FakeClock } from '../support/fake-clock.js';

const TOPIC_ID = '7b0c2c1e-3f7a-4a8e-9d57-0c5b8f6e2a11';

function broker(db: MemoryDatabase): LogManager {
  return new LogManager({
    store: new MemoryLogStore(db),
    announcer: { announce: () => {} },
    partitionStore: new MemoryPartitionStore(db),
    producerStore: new MemoryProducerStore(db),
    tail: new TailCache(0),
    instanceId: 'memory-broker',
    appendQueue: DEFAULT_APPEND_QUEUE_BOUNDS,
    cleanerChunkBatches: 100,
    producerIdExpirationMs: 86_400_000,
    readAheadMaxBytes: 0,
    clock: db.clock,
    log: createLogger('silent'),
  });
}

async function setup() {
  const db = new MemoryDatabase(new FakeClock());
  await new MemoryTopicStore(db).create({ topicId: TOPIC_ID, name: 'orders', partitionCount: 2, configs: {} });
  const logs = broker(db);
  return { db, logs, p: (await logs.partition(TOPIC_ID, 0))! };
}

interface Produce {
  values: string[];
  producerId?: bigint;
  producerEpoch?: number;
  baseSequence?: number;
  isTransactional?: boolean;
  baseTimestamp?: bigint;
  /** Each record's timestamp delta (default: its index). */
  timestampDeltas?: bigint[];
}

const incoming = (o: Produce) => {
  const data = buildBatch({
    producerId: o.producerId ?? -1n,
    producerEpoch: o.producerEpoch ?? (o.producerId === undefined ? -1 : 0),
    baseSequence: o.baseSequence ?? -1,
    isTransactional: o.isTransactional ?? false,
    baseTimestamp: o.baseTimestamp ?? 1_000n,
    records: o.values.map((v, i) => ({ key: null, value: Buffer.from(v), timestampDelta: o.timestampDeltas?.[i] ?? BigInt(i) })),
  });
  return [{ data, header: readBatchHeaderAt(data, 0)! }];
};

/** The data records a fetch answered, as offset=value (markers as marker@offset). */
function records(batches: Buffer[]): string[] {
  return batches.flatMap((data) => {
    const header = readBatchHeaderAt(data, 0)!;
    if (header.isControl) return [`marker@${header.baseOffset}`];
    return decodeRecords(data, header).records.map((r) => `${header.baseOffset + BigInt(r.offsetDelta)}=${r.value?.toString() ?? ''}`);
  });
}

const fetch = async (logs: LogManager, p: PartitionLog, offset: bigint, isolation = READ_UNCOMMITTED) => logs.read(p, offset, 1 << 20, true, isolation);

describe('LogManager on the in-memory stores', () => {
  it('stores produced batches at consecutive offsets and fetches them back from storage', async () => {
    const { logs, p } = await setup();
    expect((await logs.append(p, incoming({ values: ['a', 'b', 'c'] }))).baseOffset).toBe(0n);
    const [second, third] = await Promise.all([logs.append(p, incoming({ values: ['d'] })), logs.append(p, incoming({ values: ['e', 'f'] }))]);
    expect([second.baseOffset, third.baseOffset]).toEqual([3n, 4n]);
    expect(p.highWatermark).toBe(6n);

    const all = await fetch(logs, p, 0n);
    expect(all.errorCode).toBe(ErrorCode.NONE);
    expect(records(all.batches)).toEqual(['0=a', '1=b', '2=c', '3=d', '4=e', '5=f']);
    // From the middle of a batch: the whole batch comes back, as Kafka answers.
    expect(records((await fetch(logs, p, 4n)).batches)).toEqual(['4=e', '5=f']);
    expect((await fetch(logs, p, 7n)).errorCode).toBe(ErrorCode.OFFSET_OUT_OF_RANGE);
    // The other partition is untouched.
    const other = (await logs.partition(TOPIC_ID, 1))!;
    expect(other.highWatermark).toBe(0n);
    expect(await logs.partition(TOPIC_ID, 2)).toBeNull();
  });

  it("answers an idempotent producer's retry with the stored offset, also after a restart reads its state from the log", async () => {
    const { db, logs, p } = await setup();
    const producerId = await logs.allocateProducerId();
    const first = { values: ['x', 'y'], producerId, baseSequence: 0 };
    expect((await logs.append(p, incoming(first))).baseOffset).toBe(0n);
    expect((await logs.append(p, incoming(first))).baseOffset).toBe(0n);

    const restarted = broker(db);
    const again = (await restarted.partition(TOPIC_ID, 0))!;
    expect(again.highWatermark).toBe(2n);
    expect((await restarted.append(again, incoming(first))).baseOffset).toBe(0n);
    expect((await restarted.append(again, incoming({ values: ['z'], producerId, baseSequence: 2 }))).baseOffset).toBe(2n);
    await expect(restarted.append(again, incoming({ values: ['gap'], producerId, baseSequence: 9 }))).rejects.toMatchObject({ errorCode: ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER });
    expect(records((await fetch(restarted, again, 0n)).batches)).toEqual(['0=x', '1=y', '2=z']);
  });

  it('holds read_committed below an open transaction and drops an aborted one', async () => {
    const { db, logs, p } = await setup();
    const txnId = await logs.allocateProducerId();
    await logs.append(p, incoming({ values: ['before'] }));
    await logs.append(p, incoming({ values: ['t1', 't2'], producerId: txnId, baseSequence: 0, isTransactional: true }));
    await logs.append(p, incoming({ values: ['after'] }));
    expect([p.highWatermark, p.lastStableOffset]).toEqual([4n, 1n]);

    expect(records((await fetch(logs, p, 0n)).batches)).toEqual(['0=before', '1=t1', '2=t2', '3=after']);
    const committed = await fetch(logs, p, 0n, READ_COMMITTED);
    expect(committed.lastStableOffset).toBe(1n);
    expect(records(committed.batches)).toEqual(['0=before']);
    expect((await logs.offsetForTimestamp(p, LATEST_TIMESTAMP, READ_COMMITTED)).offset).toBe(1n);

    // A restarted broker reads the open transaction back with the offsets.
    const restarted = broker(db);
    const again = (await restarted.partition(TOPIC_ID, 0))!;
    expect([again.highWatermark, again.lastStableOffset]).toEqual([4n, 1n]);

    await logMarkerWriter(logs).writeMarker(TOPIC_ID, 0, { producerId: txnId, producerEpoch: 0, commit: false, coordinatorEpoch: 0, timestamp: 5_000 });
    expect([p.highWatermark, p.lastStableOffset]).toEqual([5n, 5n]);
    const afterAbort = await fetch(logs, p, 0n, READ_COMMITTED);
    expect(afterAbort.abortedTransactions).toEqual([{ producerId: txnId, firstOffset: 1n }]);
    expect(records(afterAbort.batches)).toEqual(['0=before', '1=t1', '2=t2', '3=after', 'marker@4']);
    expect((await fetch(logs, p, 4n, READ_COMMITTED)).abortedTransactions).toEqual([{ producerId: txnId, firstOffset: 1n }]);

    const third = broker(db);
    const read = (await third.partition(TOPIC_ID, 0))!;
    expect(read.lastStableOffset).toBe(5n);
    expect((await fetch(third, read, 0n, READ_COMMITTED)).abortedTransactions).toEqual([{ producerId: txnId, firstOffset: 1n }]);
  });

  it('answers ListOffsets by time from the stored batches, and the earliest offset from the log start', async () => {
    const { logs, p } = await setup();
    await logs.append(p, incoming({ values: ['a', 'b'], baseTimestamp: 1_000n }));
    await logs.append(p, incoming({ values: ['c', 'd', 'e'], baseTimestamp: 3_000n }));
    await logs.append(p, incoming({ values: ['f'], baseTimestamp: 2_000n }));
    const at = async (timestamp: bigint) => {
      const r = await logs.offsetForTimestamp(p, timestamp);
      return [r.errorCode, r.offset, r.timestamp];
    };
    expect(await at(0n)).toEqual([ErrorCode.NONE, 0n, 1_000n]);
    expect(await at(1_001n)).toEqual([ErrorCode.NONE, 1n, 1_001n]);
    expect(await at(1_500n)).toEqual([ErrorCode.NONE, 2n, 3_000n]);
    expect(await at(3_002n)).toEqual([ErrorCode.NONE, 4n, 3_002n]);
    expect(await at(3_003n)).toEqual([ErrorCode.NONE, -1n, -1n]);
    expect(await at(MAX_TIMESTAMP)).toEqual([ErrorCode.NONE, 4n, 3_002n]);
    expect(await at(LATEST_TIMESTAMP)).toEqual([ErrorCode.NONE, 6n, -1n]);

    const moved = await logs.advanceLogStart(p, 'orders', 3n, 'DeleteRecords');
    expect(moved).toMatchObject({ logStartOffset: 3n, highWatermark: 6n });
    expect(await at(EARLIEST_TIMESTAMP)).toEqual([ErrorCode.NONE, 3n, -1n]);
    expect((await fetch(logs, p, 1n)).errorCode).toBe(ErrorCode.OFFSET_OUT_OF_RANGE);
    // The batch holding offset 3 is still read whole; the one wholly below is gone.
    expect(records((await fetch(logs, p, 3n)).batches)).toEqual(['2=c', '3=d', '4=e', '5=f']);
    // As Kafka's segment search: the first record at or after the time and at or after the log start.
    expect(await at(0n)).toEqual([ErrorCode.NONE, 3n, 3_001n]);
    expect(await at(3_000n)).toEqual([ErrorCode.NONE, 3n, 3_001n]);
  });

  it('answers ListOffsets by time past a batch whose only later records lie below the log start', async () => {
    const { logs, p } = await setup();
    await logs.append(p, incoming({ values: ['late', 'early'], baseTimestamp: 1_000n, timestampDeltas: [4_000n, 0n] }));
    await logs.append(p, incoming({ values: ['next'], baseTimestamp: 3_000n }));
    await logs.advanceLogStart(p, 'orders', 1n, 'DeleteRecords');
    const r = await logs.offsetForTimestamp(p, 2_000n);
    expect([r.errorCode, r.offset, r.timestamp]).toEqual([ErrorCode.NONE, 2n, 3_000n]);
  });
});
