// Small appends of different partitions that are ready while earlier ones
// commit share one statement (one transaction, one commit): every partition
// still gets its own contiguous offsets, a failure fails every append of the
// statement and stores none of them, and a partition that is gone is told
// so without failing the others.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreateTopicsApi, ProduceApi } from '../../src/protocol/messages/index.js';
import { buildBatch } from '../../src/protocol/records/index.js';
import { AppendQueue, DEFAULT_APPEND_QUEUE_BOUNDS } from '../../src/log/append-queue.js';
import { LogStore, type Appended, type BatchToAppend } from '../../src/storage/pg/log-store.js';
import { createPool } from '../../src/storage/pg/pool.js';
import { startTestBroker, type TestBroker } from '../support/broker.js';
import { RawClient } from '../support/raw-client.js';

let broker: TestBroker;
let client: RawClient;
let pool: pg.Pool;

beforeAll(async () => {
  broker = await startTestBroker();
  client = await RawClient.connect(broker.bootstrap);
  pool = createPool({ connectionString: broker.databaseUrl, schema: broker.schema, max: 4 });
});
afterAll(async () => {
  client?.close();
  await pool?.end();
  await broker?.destroy();
});

async function createTopic(name: string, partitions: number): Promise<string> {
  const res = await client.request(CreateTopicsApi, 7, { topics: [{ name, numPartitions: partitions, replicationFactor: 1 }], timeoutMs: 1000 });
  expect(res.topics[0]!.errorCode).toBe(0);
  const [{ topic_id }] = await broker.query<{ topic_id: string }>('SELECT topic_id FROM topics WHERE name = $1', [name]);
  return topic_id;
}

function batchOf(value: string, records = 1): BatchToAppend {
  const data = buildBatch({ records: Array.from({ length: records }, (_, i) => ({ key: null, value: Buffer.from(`${value}-${i}`) })) });
  const ts = BigInt(Date.now());
  return {
    data,
    relativeOffset: 0n,
    lastOffsetDelta: records - 1,
    recordCount: records,
    firstTimestamp: ts,
    maxTimestamp: ts,
    producerId: -1n,
    producerEpoch: -1,
    baseSequence: -1,
    isTransactional: false,
    isControl: false,
  };
}

/** The append queue's statement level over a store of its own (no partition flushes: each append is one flush). */
function sharedAppends(p: pg.Pool) {
  const queue = new AppendQueue({ bounds: DEFAULT_APPEND_QUEUE_BOUNDS, statements: new LogStore(p), flush: () => Promise.resolve() });
  return {
    append: (topicId: string, partition: number, offsetCount: bigint, batches: BatchToAppend[]) => queue.send({ topicId, partition, offsetCount, batches, logEnd: 0n }, null),
  };
}
type SharedAppends = ReturnType<typeof sharedAppends>;

/** One append per partition, all issued at once: the first two go alone, the rest wait and share one statement. */
function appendToEach(store: SharedAppends, topicId: string, partitions: number, records = 1): Promise<PromiseSettledResult<Appended | null>[]> {
  return Promise.allSettled(Array.from({ length: partitions }, (_, p) => store.append(topicId, p, BigInt(records), [batchOf(`p${p}`, records)])));
}

describe('appends of several partitions in one statement', () => {
  it('gives each partition its own offsets, written into its batches, in one transaction', async () => {
    const topicId = await createTopic('shared-offsets', 8);
    const store = sharedAppends(pool);
    // Each partition already holds a batch, so their offsets differ from the start.
    for (let p = 0; p < 8; p++) for (let i = 0; i <= p; i++) await store.append(topicId, p, 2n, [batchOf(`before-${p}-${i}`, 2)]);
    const results = await appendToEach(store, topicId, 8, 3);
    for (let p = 0; p < 8; p++) {
      const r = results[p]!;
      expect(r.status).toBe('fulfilled');
      const appended = (r as PromiseFulfilledResult<Appended | null>).value!;
      expect(appended.baseOffset).toBe(BigInt(2 * (p + 1)));
      expect(appended.highWatermark).toBe(BigInt(2 * (p + 1) + 3));
    }
    const rows = await broker.query<{ partition: number; base_offset: string; last_offset: string; head: string; tx: string }>(
      `SELECT partition, base_offset::text, last_offset::text, encode(substring(data from 1 for 8), 'hex') AS head, xmin::text AS tx
       FROM batches WHERE topic_id = $1 AND base_offset = 2 * (partition + 1) ORDER BY partition`,
      [topicId],
    );
    expect(rows.map((r) => [r.partition, r.base_offset, r.last_offset])).toEqual(Array.from({ length: 8 }, (_, p) => [p, String(2 * (p + 1)), String(2 * (p + 1) + 2)]));
    // The base offset lies in each batch's first 8 bytes.
    for (const r of rows) expect(BigInt(`0x${r.head}`)).toBe(BigInt(r.base_offset));
    // Two went alone; the six that waited were committed together.
    const transactions = new Set(rows.map((r) => r.tx));
    expect(transactions.size).toBe(3);
    expect(new Set(rows.slice(2).map((r) => r.tx)).size).toBe(1);
  });

  it('fails every append of a statement that fails, and stores none of them', async () => {
    const topicId = await createTopic('shared-failure', 8);
    const store = sharedAppends(pool);
    // A row already at partition 5's next offset: its insert breaks the primary key, and with it the statement it shares.
    await broker.query(
      `INSERT INTO batches (topic_id, partition, base_offset, last_offset, record_count, first_timestamp, max_timestamp,
                            producer_id, producer_epoch, base_sequence, is_transactional, is_control, size, data)
       VALUES ($1, 5, 0, 0, 1, 0, 0, -1, -1, -1, false, false, 1, '\\x00')`,
      [topicId],
    );
    const results = await appendToEach(store, topicId, 8);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'rejected', 'rejected', 'rejected', 'rejected', 'rejected']);
    const offsets = await broker.query<{ partition: number; next_offset: string }>('SELECT partition, next_offset::text FROM partitions WHERE topic_id = $1 ORDER BY partition', [topicId]);
    expect(offsets.map((o) => o.next_offset)).toEqual(['1', '1', '0', '0', '0', '0', '0', '0']);
    const rows = await broker.query<{ partition: number }>('SELECT partition FROM batches WHERE topic_id = $1 ORDER BY partition', [topicId]);
    expect(rows.map((r) => r.partition)).toEqual([0, 1, 5]);
    // The same appends, once the obstacle is gone, go through.
    await broker.query('DELETE FROM batches WHERE topic_id = $1 AND partition = 5', [topicId]);
    const retried = await Promise.all([2, 3, 4, 5, 6, 7].map((p) => store.append(topicId, p, 1n, [batchOf(`p${p}`)])));
    expect(retried.map((r) => r!.baseOffset)).toEqual([0n, 0n, 0n, 0n, 0n, 0n]);
  });

  it('answers null for a partition that no longer exists, and appends the others of its statement', async () => {
    const topicId = await createTopic('shared-missing', 8);
    const store = sharedAppends(pool);
    await broker.query('DELETE FROM partitions WHERE topic_id = $1 AND partition = 6', [topicId]);
    const results = await appendToEach(store, topicId, 8);
    const values = results.map((r) => (r as PromiseFulfilledResult<Appended | null>).value);
    expect(values.map((v) => v?.baseOffset ?? null)).toEqual([0n, 0n, 0n, 0n, 0n, 0n, null, 0n]);
    const rows = await broker.query<{ partition: number }>('SELECT partition FROM batches WHERE topic_id = $1 ORDER BY partition', [topicId]);
    expect(rows.map((r) => r.partition)).toEqual([0, 1, 2, 3, 4, 5, 7]);
  });

  it('keeps every partition contiguous and in order under concurrent producers, with commits shared', async () => {
    const partitions = 12;
    const perPartition = 40;
    const topicId = await createTopic('shared-produce', partitions);
    const clients = await Promise.all(Array.from({ length: partitions }, () => RawClient.connect(broker.bootstrap)));
    try {
      await Promise.all(
        clients.map(async (c, p) => {
          for (let i = 0; i < perPartition; i++) {
            const records = buildBatch({ records: [{ key: null, value: Buffer.from(`${p}:${i}`) }] });
            const res = await c.request(ProduceApi, 9, { acks: -1, timeoutMs: 5000, topicData: [{ name: 'shared-produce', partitionData: [{ index: p, records }] }] });
            const r = res.responses[0]!.partitionResponses[0]!;
            expect(r.errorCode).toBe(0);
            expect(r.baseOffset).toBe(BigInt(i));
          }
        }),
      );
    } finally {
      for (const c of clients) c.close();
    }
    const rows = await broker.query<{ partition: number; base_offset: string; tx: string }>(
      'SELECT partition, base_offset::text, xmin::text AS tx FROM batches b WHERE topic_id = $1 ORDER BY b.partition, b.base_offset',
      [topicId],
    );
    for (let p = 0; p < partitions; p++) {
      expect(rows.filter((r) => r.partition === p).map((r) => Number(r.base_offset))).toEqual(Array.from({ length: perPartition }, (_, i) => i));
    }
    // Appends of different partitions shared transactions.
    const partitionsPerTransaction = new Map<string, Set<number>>();
    for (const r of rows) partitionsPerTransaction.set(r.tx, (partitionsPerTransaction.get(r.tx) ?? new Set()).add(r.partition));
    expect(Math.max(...[...partitionsPerTransaction.values()].map((s) => s.size))).toBeGreaterThan(1);
  });

  it('sends no statement for a partition while another statement holding it is in flight', async () => {
    const topicId = await createTopic('shared-in-flight', 2);
    const store = sharedAppends(pool);
    // Another transaction holds partition 0's row: the first append's statement waits on it.
    const holder = new pg.Client({ connectionString: broker.databaseUrl, options: `-c search_path=${broker.schema}` });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM partitions WHERE topic_id = $1 AND partition = 0 FOR UPDATE', [topicId]);
      const first = store.append(topicId, 0, 1n, [batchOf('first')]);
      const second = store.append(topicId, 0, 1n, [batchOf('second')]);
      const other = await store.append(topicId, 1, 1n, [batchOf('other')]);
      expect(other!.baseOffset).toBe(0n);
      // Two statements of one partition in flight at once could commit in either order.
      const waiting = await holder.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ILIKE '%partitions%'",
      );
      expect(waiting.rows[0]!.n).toBe(1);
      await holder.query('COMMIT');
      expect([(await first)!.baseOffset, (await second)!.baseOffset]).toEqual([0n, 1n]);
    } finally {
      await holder.end();
    }
  });

  it('puts two appends of one partition in different statements, in the order they came', async () => {
    const topicId = await createTopic('shared-same-partition', 4);
    const store = sharedAppends(pool);
    const results = await Promise.all([
      store.append(topicId, 0, 1n, [batchOf('zero')]),
      store.append(topicId, 1, 1n, [batchOf('one')]),
      // These three wait together: the second append of partition 2 must follow the first, in a statement of its own.
      store.append(topicId, 2, 2n, [batchOf('first', 2)]),
      store.append(topicId, 2, 3n, [batchOf('second', 3)]),
      store.append(topicId, 3, 1n, [batchOf('three')]),
    ]);
    expect(results.map((r) => r!.baseOffset)).toEqual([0n, 0n, 0n, 2n, 0n]);
    expect(results[3]!.highWatermark).toBe(5n);
    const rows = await broker.query<{ partition: number; base_offset: string; tx: string }>(
      'SELECT partition, base_offset::text, xmin::text AS tx FROM batches b WHERE topic_id = $1 ORDER BY b.partition, b.base_offset',
      [topicId],
    );
    const two = rows.filter((r) => r.partition === 2);
    expect(two.map((r) => r.base_offset)).toEqual(['0', '2']);
    expect(two[0]!.tx).not.toBe(two[1]!.tx);
    expect(rows.find((r) => r.partition === 3)!.tx).toBe(two[0]!.tx);
  });

  it('lets two brokers share statements over the same partitions without deadlocking, whatever order they were given', async () => {
    const topicId = await createTopic('shared-two-brokers', 14);
    // The plan PostgreSQL picks when it has many partitions to look up: an index look-up per listed partition,
    // in the order listed (here forced, so the test does not depend on the table's size and statistics).
    const pools = [0, 1].map(() => createPool({ connectionString: broker.databaseUrl, schema: broker.schema, max: 4 }));
    for (const p of pools) p.on('connect', (c) => void c.query('SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_seqscan = off'));
    // Row locks held from outside: partitions 12 and 13 keep each broker's two statements in flight busy, so the
    // appends to 0–11 that follow wait and go out together; partition 6 then stops both shared statements midway.
    const lockers = [new pg.Client({ connectionString: broker.databaseUrl }), new pg.Client({ connectionString: broker.databaseUrl })];
    try {
      for (const [locker, held] of [
        [lockers[0]!, [12, 13]],
        [lockers[1]!, [6]],
      ] as const) {
        await locker.connect();
        await locker.query('BEGIN');
        await locker.query(`SELECT 1 FROM ${broker.schema}.partitions WHERE topic_id = $1 AND partition = ANY($2) FOR UPDATE`, [topicId, held]);
      }
      const stores = pools.map((p) => sharedAppends(p));
      const appended = stores.map((store, s) => {
        const first = [12, 13].map((p) => store.append(topicId, p, 1n, [batchOf(`${s}-${p}`)]));
        // One broker is handed the partitions upwards, the other downwards.
        const order = Array.from({ length: 12 }, (_, p) => (s === 0 ? p : 11 - p));
        return Promise.allSettled([...first, ...order.map((p) => store.append(topicId, p, 1n, [batchOf(`${s}-${p}`)]))]);
      });
      await lockers[0]!.query('COMMIT');
      // Both shared statements are under way and waiting on a row lock (taken in opposite orders, they would hold each other's).
      for (let i = 0; ; i++) {
        const [{ waiting }] = await broker.query<{ waiting: number }>("SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%WITH ORDINALITY%'");
        if (waiting === 2) break;
        if (i > 200) throw new Error(`shared statements waiting on a lock: ${waiting}`);
        await new Promise((r) => setTimeout(r, 25));
      }
      await lockers[1]!.query('COMMIT');
      const results = (await Promise.all(appended)).flat();
      expect(results.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason))).toEqual([]);
    } finally {
      for (const locker of lockers) await locker.end();
      for (const p of pools) await p.end();
    }
    const rows = await broker.query<{ partition: number; n: number }>('SELECT partition, count(*)::int AS n FROM batches WHERE topic_id = $1 GROUP BY partition ORDER BY partition', [topicId]);
    expect(rows.map((r) => [r.partition, r.n])).toEqual(Array.from({ length: 14 }, (_, p) => [p, 2]));
  }, 30_000);
});
