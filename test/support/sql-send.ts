// What the tests of producing from SQL share: an application's transaction on
// its own connection, and reading a partition back over the Kafka protocol
// with each record's offset, timestamp, key, value and headers.
import type pg from 'pg';
import { FetchApi } from '../../src/protocol/messages/index.js';
import { decodeRecords, parseBatches, recordTimestamp, type RecordHeader } from '../../src/protocol/records/index.js';
import type { RawClient } from './raw-client.js';

export interface FetchedRecord {
  offset: bigint;
  timestamp: bigint;
  timestampType: number;
  key: Buffer | null;
  value: Buffer | null;
  headers: RecordHeader[];
}

/** Runs `fn` in a transaction of its own on a connection of the pool: COMMIT if it resolves, ROLLBACK if it throws. */
export async function inTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}

/** One Fetch (v11, read_committed) of the partition from `from`, waiting up to maxWaitMs for a first byte. */
export async function fetchRecords(client: RawClient, topic: string, partition: number, from = 0n, maxWaitMs = 0): Promise<{ highWatermark: bigint; errorCode: number; records: FetchedRecord[] }> {
  const res = await client.request(FetchApi, 11, {
    replicaId: -1,
    maxWaitMs,
    minBytes: 1,
    maxBytes: 64 * 1024 * 1024,
    isolationLevel: 1,
    sessionId: 0,
    sessionEpoch: -1,
    topics: [{ topic, partitions: [{ partition, fetchOffset: from, partitionMaxBytes: 64 * 1024 * 1024, currentLeaderEpoch: -1 }] }],
  });
  const p = res.responses[0]!.partitions[0]!;
  const buf = Array.isArray(p.records) ? Buffer.concat(p.records) : (p.records ?? Buffer.alloc(0));
  const { batches } = parseBatches(buf, { mode: 'log' });
  const records = batches.flatMap((h) =>
    decodeRecords(buf, h).records.map((r) => ({
      offset: h.baseOffset + BigInt(r.offsetDelta),
      timestamp: recordTimestamp(h, r),
      timestampType: h.timestampType,
      key: r.key && Buffer.from(r.key),
      value: r.value && Buffer.from(r.value),
      headers: r.headers.map((x) => ({ key: x.key, value: x.value && Buffer.from(x.value) })),
    })),
  );
  return { highWatermark: p.highWatermark, errorCode: p.errorCode, records: records.filter((r) => r.offset >= from) };
}

/** Reads the partition from `from` until it holds at least `count` records or `timeoutMs` pass; every record read. */
export async function awaitRecords(client: RawClient, topic: string, partition: number, count: number, timeoutMs = 15_000, from = 0n): Promise<FetchedRecord[]> {
  const deadline = Date.now() + timeoutMs;
  const out: FetchedRecord[] = [];
  let next = from;
  while (out.length < count && Date.now() < deadline) {
    const { records } = await fetchRecords(client, topic, partition, next, Math.min(500, Math.max(0, deadline - Date.now())));
    out.push(...records);
    if (records.length > 0) next = records[records.length - 1]!.offset + 1n;
  }
  return out;
}
