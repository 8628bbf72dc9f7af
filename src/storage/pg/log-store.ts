import pg from 'pg';
import { boolArray, byteaArray, byteaArrayChunks, int2Array, int4Array, int8Array } from './wire/binary-array.js';
import { copyRows } from './wire/copy-binary.js';
import { OutcomeUnknown, runAppendStatement, settleLostAppends, type LostAppend, type Settled } from './append-outcome.js';
import { AppendQuery, type BindValue } from './wire/append-query.js';
import type { Appended, BatchToAppend, PartitionSnapshotRow, StoreAppend, StoredBatch, TxnChanges } from '../log-types.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export type { Appended, BatchToAppend, PartitionSnapshotRow, StoreAppend, StoredBatch, TxnChanges } from '../log-types.js';

// One row per open transaction (or one without), in one snapshot with the offsets.
const PARTITION_SNAPSHOTS_SQL = `
SELECT p.partition, p.next_offset, p.log_start_offset, p.leader_epoch, o.producer_id, o.first_offset,
       EXISTS (SELECT 1 FROM aborted_txns a WHERE a.topic_id = p.topic_id AND a.partition = p.partition) AS has_aborted
FROM partitions p LEFT JOIN open_txns o ON o.topic_id = p.topic_id AND o.partition = p.partition
WHERE p.topic_id = $1 AND ($2::int4 IS NULL OR p.partition = $2)
ORDER BY p.partition`;

// Assigns offsets and inserts every batch of one flush in a single statement
// (one implicit transaction): the UPDATE takes the partition row's lock, so
// concurrent writers commit in offset order. The base offset is written into
// each batch's first 8 bytes, which lie outside the CRC. Other brokers hear of
// the append afterwards (AppendAnnouncer), not through a NOTIFY here: a
// notifying transaction holds a database-wide lock through its commit.
export const APPEND_SQL = `
WITH o AS (
  UPDATE partitions SET next_offset = next_offset + $3::int8
  WHERE topic_id = $1 AND partition = $2
  RETURNING next_offset - $3::int8 AS base, next_offset AS hw, log_start_offset
), b AS (
  SELECT * FROM unnest($4::int8[], $5::int4[], $6::int4[], $7::int8[], $8::int8[], $9::int8[], $10::int2[], $11::int4[], $12::bool[], $13::bool[], $14::bytea[])
    AS t(rel, last_delta, cnt, first_ts, max_ts, pid, epoch, seq, txn, ctl, data)
), ins AS (
  INSERT INTO batches (topic_id, partition, base_offset, last_offset, record_count, first_timestamp, max_timestamp,
                       producer_id, producer_epoch, base_sequence, is_transactional, is_control, size, data)
  SELECT $1, $2, o.base + b.rel, o.base + b.rel + b.last_delta, b.cnt, b.first_ts, b.max_ts,
         b.pid, b.epoch, b.seq, b.txn, b.ctl, length(b.data), overlay(b.data placing int8send(o.base + b.rel) from 1 for 8)
  FROM o, b
)
SELECT o.base, o.hw, o.log_start_offset FROM o`;

// The same append for a flush that opens or ends transactions: in the same
// statement, a producer's first transactional batch on the partition records
// the transaction's first offset in open_txns (the last stable offset is the
// earliest of them), and a COMMIT/ABORT marker removes it, an ABORT marker
// recording the aborted range for read_committed fetches.
const APPEND_TXN_SQL = APPEND_SQL.replace(
  'SELECT o.base, o.hw',
  `, opened AS (
  INSERT INTO open_txns (topic_id, partition, producer_id, first_offset)
  SELECT $1, $2, t.pid, o.base + t.rel FROM o, unnest($15::int8[], $16::int8[]) AS t(pid, rel)
  ON CONFLICT (topic_id, partition, producer_id) DO NOTHING
), ended AS (
  DELETE FROM open_txns x USING unnest($17::int8[], $18::int8[], $19::bool[]) AS e(pid, rel, is_commit)
  WHERE x.topic_id = $1 AND x.partition = $2 AND x.producer_id = e.pid AND EXISTS (SELECT 1 FROM o)
  RETURNING x.producer_id, x.first_offset, e.rel, e.is_commit
), aborted AS (
  INSERT INTO aborted_txns (topic_id, partition, producer_id, first_offset, last_offset)
  SELECT $1, $2, ended.producer_id, ended.first_offset, o.base + ended.rel FROM o, ended WHERE NOT ended.is_commit
)
SELECT o.base, o.hw`,
);

// The same append for several partitions at once, in one statement and so
// one transaction and one commit: r lists the partitions with the offsets
// each spans, and each batch names its partition by its position in r. The
// partition rows are locked in sorted order before they are updated (l), so
// that two brokers' statements, whatever plan PostgreSQL picks for each,
// never hold locks the other waits for.
const APPEND_MANY_SQL = `
WITH r AS (
  SELECT * FROM unnest($1::uuid[], $2::int4[], $3::int8[]) WITH ORDINALITY AS r(topic_id, partition, n, idx)
), l AS MATERIALIZED (
  SELECT r.idx, r.topic_id, r.partition, r.n FROM partitions p JOIN r ON p.topic_id = r.topic_id AND p.partition = r.partition
  ORDER BY r.topic_id, r.partition FOR UPDATE OF p
), o AS (
  UPDATE partitions p SET next_offset = p.next_offset + l.n
  FROM l WHERE p.topic_id = l.topic_id AND p.partition = l.partition
  RETURNING l.idx, l.topic_id, l.partition, p.next_offset - l.n AS base, p.next_offset AS hw, p.log_start_offset
), b AS (
  SELECT * FROM unnest($4::int4[], $5::int8[], $6::int4[], $7::int4[], $8::int8[], $9::int8[], $10::int8[], $11::int2[], $12::int4[], $13::bool[], $14::bool[], $15::bytea[])
    AS t(idx, rel, last_delta, cnt, first_ts, max_ts, pid, epoch, seq, txn, ctl, data)
), ins AS (
  INSERT INTO batches (topic_id, partition, base_offset, last_offset, record_count, first_timestamp, max_timestamp,
                       producer_id, producer_epoch, base_sequence, is_transactional, is_control, size, data)
  SELECT o.topic_id, o.partition, o.base + b.rel, o.base + b.rel + b.last_delta, b.cnt, b.first_ts, b.max_ts,
         b.pid, b.epoch, b.seq, b.txn, b.ctl, length(b.data), overlay(b.data placing int8send(o.base + b.rel) from 1 for 8)
  FROM o JOIN b ON b.idx = o.idx
)
SELECT o.idx, o.base, o.hw, o.log_start_offset FROM o`;

// Batches overlapping [from, hw), in offset order, cut where the running size
// passes maxBytes (the caller keeps or drops the row that crosses it). Read
// through binary COPY (no bind parameters there: every value is a number or
// a uuid produced by this process, formatted by readQuery).
const READ_SQL = `
SELECT base_offset, last_offset, data FROM (
  SELECT base_offset, last_offset, data, sum(size) OVER (ORDER BY base_offset ROWS UNBOUNDED PRECEDING) - size AS before
  FROM batches
  WHERE topic_id = $1 AND partition = $2 AND last_offset >= $3 AND base_offset < $4
    AND base_offset >= coalesce((SELECT max(base_offset) FROM batches WHERE topic_id = $1 AND partition = $2 AND base_offset <= $3), $3)
  ORDER BY base_offset
  LIMIT $6
) s WHERE before < $5`;

const APPEND = { name: 'pgkafka_append', text: APPEND_SQL };
const APPEND_TXN = { name: 'pgkafka_append_txn', text: APPEND_TXN_SQL };
const APPEND_MANY = { name: 'pgkafka_append_many', text: APPEND_MANY_SQL };

/**
 * The parameters of APPEND_SQL: the partition, the offsets the flush spans and
 * the batches as binary arrays. With `chunked`, the
 * batches' bytes are left in place as pieces of the bytea[] (for AppendQuery).
 */
export function appendParams(topicId: string, partition: number, offsetCount: bigint, batches: readonly BatchToAppend[]): unknown[];
export function appendParams(topicId: string, partition: number, offsetCount: bigint, batches: readonly BatchToAppend[], chunked: true): BindValue[];
export function appendParams(topicId: string, partition: number, offsetCount: bigint, batches: readonly BatchToAppend[], chunked = false): BindValue[] {
  return [topicId, String(partition), String(offsetCount), ...batchColumns(batches, chunked)];
}

/** The batches' columns as binary arrays (APPEND_SQL's $4–$14); with `chunked`, their bytes as pieces. */
function batchColumns(batches: readonly BatchToAppend[], chunked: boolean): BindValue[] {
  const data = batches.map((b) => b.data);
  return [
    int8Array(batches.map((b) => b.relativeOffset)),
    int4Array(batches.map((b) => b.lastOffsetDelta)),
    int4Array(batches.map((b) => b.recordCount)),
    int8Array(batches.map((b) => b.firstTimestamp)),
    int8Array(batches.map((b) => b.maxTimestamp)),
    int8Array(batches.map((b) => b.producerId)),
    int2Array(batches.map((b) => b.producerEpoch)),
    int4Array(batches.map((b) => b.baseSequence)),
    boolArray(batches.map((b) => b.isTransactional)),
    boolArray(batches.map((b) => b.isControl)),
    chunked ? byteaArrayChunks(data) : byteaArray(data),
  ];
}

/** An append of a statement that was not stored (see settleLostAppends). */
export class AppendNotStored extends Error {}

/** The log's rows: appends, reads and offset look-ups. Which appends share a statement is the caller's choice (log/append-queue.ts). */
export class LogStore {
  /** Told of each statement whose connection was lost and how its appends were settled (for the log). */
  lostAppendObserver: ((lost: Error, settled: { topicId: string; partition: number; outcome: string }[], ms: number) => void) | null = null;

  constructor(private readonly pool: pg.Pool) {}

  /**
   * Appends batches spanning `offsetCount` offsets in a statement of its own
   * (APPEND_TXN_SQL when it opens or ends transactions); null if the
   * partition does not exist.
   *
   * `logEnd` is the partition's log end as the caller last saw it (the
   * append lands at or after it). If the connection is lost before the
   * statement's answer, the outcome is settled with PostgreSQL before this
   * resolves: the real offsets if it was committed, AppendNotStored if not
   * (see append-outcome.ts). The caller must not append to the partition
   * again meanwhile.
   */
  append(topicId: string, partition: number, offsetCount: bigint, batches: readonly BatchToAppend[], txn: TxnChanges | null = null, logEnd = 0n): Promise<Appended | null> {
    const withTxn = txn !== null && (txn.opened.length > 0 || txn.ended.length > 0);
    return this.appendAlone(topicId, partition, offsetCount, batches, withTxn ? txn : null, logEnd);
  }

  /**
   * Several partitions' appends (none opening or ending a transaction, each
   * partition once) in one statement, so one transaction and one commit; each
   * one's result (null: no such partition; an error: not stored), in the order given.
   */
  async appendMany(appends: readonly StoreAppend[]): Promise<(Appended | null | AppendNotStored)[]> {
    for (const a of appends) if (!UUID.test(a.topicId)) throw new Error(`not a topic id: ${a.topicId}`);
    const rows = appends.flatMap((a, i) => a.batches.map((batch) => ({ idx: i + 1, batch })));
    const params: BindValue[] = [
      `{${appends.map((a) => a.topicId).join(',')}}`,
      int4Array(appends.map((a) => a.partition)),
      int8Array(appends.map((a) => a.offsetCount)),
      int4Array(rows.map((r) => r.idx)),
      ...batchColumns(
        rows.map((r) => r.batch),
        true,
      ),
    ];
    const query = new AppendQuery(APPEND_MANY, params);
    let result: pg.QueryResult<{ idx: bigint; base: bigint; hw: bigint; log_start_offset: bigint }>;
    try {
      result = await runAppendStatement(this.pool, query);
    } catch (err) {
      if (!(err instanceof OutcomeUnknown)) throw err;
      // One statement, one transaction: settled together, in one look-up.
      const settled = await this.settle(appends, err);
      return settled.map((s) => (s === 'absent' ? new AppendNotStored(`${err.message}; settled: not stored`) : s));
    }
    const byPosition = new Map(result.rows.map((row) => [Number(row.idx), { baseOffset: row.base, highWatermark: row.hw, logStartOffset: row.log_start_offset }]));
    return appends.map((_, i) => byPosition.get(i + 1) ?? null);
  }

  /** One partition's append in a statement of its own (APPEND_TXN_SQL when it opens or ends transactions). */
  private async appendAlone(topicId: string, partition: number, offsetCount: bigint, batches: readonly BatchToAppend[], txn: TxnChanges | null, logEnd: bigint): Promise<Appended | null> {
    const txnParams = txn
      ? [
          int8Array(txn.opened.map((t) => t.producerId)),
          int8Array(txn.opened.map((t) => t.relativeOffset)),
          int8Array(txn.ended.map((t) => t.producerId)),
          int8Array(txn.ended.map((t) => t.relativeOffset)),
          boolArray(txn.ended.map((t) => t.commit)),
        ]
      : [];
    const params = appendParams(topicId, partition, offsetCount, batches, true);
    const query = new AppendQuery(txn ? APPEND_TXN : APPEND, [...params, ...txnParams]);
    let rows: { base: bigint; hw: bigint; log_start_offset: bigint }[];
    try {
      ({ rows } = await runAppendStatement<{ base: bigint; hw: bigint; log_start_offset: bigint }>(this.pool, query));
    } catch (err) {
      if (!(err instanceof OutcomeUnknown)) throw err;
      const [settled] = await this.settle([{ topicId, partition, logEnd, batches }], err);
      if (settled === 'absent') throw new AppendNotStored(`${err.message}; settled: not stored`);
      return settled!;
    }
    const row = rows[0];
    return row ? { baseOffset: row.base, highWatermark: row.hw, logStartOffset: row.log_start_offset } : null;
  }

  private async settle(appends: readonly LostAppend[], lost: OutcomeUnknown): Promise<Settled[]> {
    const startedAt = performance.now();
    const settled = await settleLostAppends(this.pool, appends, lost);
    const outcome = (s: Settled) => (s === null ? 'no such partition' : s === 'absent' ? 'not stored' : `committed at ${s.baseOffset}`);
    this.lostAppendObserver?.(
      lost.lost,
      appends.map((a, i) => ({ topicId: a.topicId, partition: a.partition, outcome: outcome(settled[i]!) })),
      performance.now() - startedAt,
    );
    return settled;
  }

  /** Batches holding offsets in [from, highWatermark), up to about maxBytes (always the first if minOne). */
  async read(topicId: string, partition: number, from: bigint, highWatermark: bigint, maxBytes: number, minOne: boolean): Promise<StoredBatch[]> {
    if (from >= highWatermark) return [];
    if (!UUID.test(topicId)) throw new Error(`not a topic id: ${topicId}`);
    const sql = READ_SQL.replace(
      /\$(\d)/g,
      (_, n: string) =>
        [`'${topicId}'::uuid`, String(Math.trunc(partition)), `${BigInt(from)}::int8`, `${BigInt(highWatermark)}::int8`, String(Math.max(Math.trunc(maxBytes), 1)), '1000'][Number(n) - 1]!,
    );
    const rows = await copyRows(this.pool, sql);
    const out: StoredBatch[] = [];
    let total = 0;
    for (const [base, last, data] of rows) {
      if (total + data!.length > maxBytes && !(minOne && out.length === 0)) break;
      total += data!.length;
      out.push({ baseOffset: base!.readBigInt64BE(0), lastOffset: last!.readBigInt64BE(0), data: data! });
    }
    return out;
  }

  /** Aborted transactions overlapping [from, to): what a read_committed fetch of that range must drop. */
  async abortedTransactions(topicId: string, partition: number, from: bigint, to: bigint): Promise<{ producerId: bigint; firstOffset: bigint }[]> {
    const { rows } = await this.pool.query<{ producer_id: bigint; first_offset: bigint }>(
      `SELECT producer_id, first_offset FROM aborted_txns
       WHERE topic_id = $1 AND partition = $2 AND last_offset >= $3 AND first_offset < $4 ORDER BY first_offset`,
      [topicId, partition, from, to],
    );
    return rows.map((r) => ({ producerId: r.producer_id, firstOffset: r.first_offset }));
  }

  /**
   * The topic's partitions (or the one given) as one snapshot sees them:
   * offsets and transaction index together, so the open transactions are
   * exactly those below the high watermark read.
   */
  async partitionSnapshots(topicId: string, partition: number | null = null): Promise<PartitionSnapshotRow[]> {
    const { rows } = await this.pool.query<{
      partition: number;
      next_offset: bigint;
      log_start_offset: bigint;
      leader_epoch: number;
      has_aborted: boolean;
      producer_id: bigint | null;
      first_offset: bigint | null;
    }>({ name: 'pgkafka_partition_snapshots', text: PARTITION_SNAPSHOTS_SQL, values: [topicId, partition] });
    const out = new Map<number, PartitionSnapshotRow>();
    for (const r of rows) {
      let s = out.get(r.partition);
      if (!s) {
        s = { partition: r.partition, highWatermark: r.next_offset, logStartOffset: r.log_start_offset, leaderEpoch: r.leader_epoch, hasAbortedTxns: r.has_aborted, openTxns: new Map() };
        out.set(r.partition, s);
      }
      if (r.producer_id !== null && r.first_offset !== null) s.openTxns.set(r.producer_id, r.first_offset);
    }
    return [...out.values()];
  }

  /** The first batch whose max timestamp is at or after `timestamp`, at or after the log start. */
  async firstBatchWithTimestampAtLeast(topicId: string, partition: number, timestamp: bigint, logStartOffset: bigint): Promise<StoredBatch | null> {
    const { rows } = await this.pool.query<{ base_offset: bigint; last_offset: bigint; data: Buffer }>(
      `SELECT base_offset, last_offset, data FROM batches
       WHERE topic_id = $1 AND partition = $2 AND max_timestamp >= $3 AND last_offset >= $4 AND NOT is_control
       ORDER BY base_offset LIMIT 1`,
      [topicId, partition, timestamp, logStartOffset],
    );
    const r = rows[0];
    return r ? { baseOffset: r.base_offset, lastOffset: r.last_offset, data: r.data } : null;
  }

  /** The batch holding the partition's largest timestamp (the earliest such batch on ties). */
  async batchWithMaxTimestamp(topicId: string, partition: number, logStartOffset: bigint): Promise<StoredBatch | null> {
    const { rows } = await this.pool.query<{ base_offset: bigint; last_offset: bigint; data: Buffer }>(
      `SELECT base_offset, last_offset, data FROM batches
       WHERE topic_id = $1 AND partition = $2 AND last_offset >= $3 AND NOT is_control
       ORDER BY max_timestamp DESC, base_offset ASC LIMIT 1`,
      [topicId, partition, logStartOffset],
    );
    const r = rows[0];
    return r ? { baseOffset: r.base_offset, lastOffset: r.last_offset, data: r.data } : null;
  }
}
