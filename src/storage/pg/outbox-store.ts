// The outbox of records sent from SQL (migration 0013, docs/sql.md): what is
// pending per partition, in commit order, and the relay's append, which
// deletes what it appends in the same statement and so the same transaction.
import type pg from 'pg';
import { APPEND_SQL, appendParams } from './log-store.js';
import type { BatchToAppend } from '../log-types.js';
import type { OutboxAppended, OutboxPending, OutboxPolling } from '../outbox-types.js';

export type { OutboxAppended, OutboxPending, OutboxPolling, OutboxRecord } from '../outbox-types.js';

// The first `$3` commits of the partition, and their records.
const PENDING_SQL = `
WITH c AS (
  SELECT commit_seq, xact FROM outbox_commits WHERE topic_id = $1 AND partition = $2 ORDER BY commit_seq LIMIT $3
)
SELECT c.commit_seq, o.timestamp_ms, o.key, o.value, o.header_keys, o.header_values
FROM c JOIN outbox o ON o.xact = c.xact AND o.topic_id = $1 AND o.partition = $2
ORDER BY c.commit_seq, o.id`;

// APPEND_SQL, only if this statement claims every commit in [$15, $16] ($17
// of them): it locks them first, in commit order, so of two relays (two
// brokers) the second waits, then finds them gone and appends nothing. The
// claimed commits and their records are deleted in the statement that
// appends them: a record reaches the log once, whatever crashes when.
const APPEND_CLAIMED_SQL = APPEND_SQL.replace(
  'WITH o AS (',
  `WITH l AS MATERIALIZED (
  SELECT commit_seq, xact FROM outbox_commits
  WHERE topic_id = $1 AND partition = $2 AND commit_seq BETWEEN $15::int8 AND $16::int8
  ORDER BY commit_seq FOR UPDATE
), claim AS MATERIALIZED (
  SELECT count(*) = $17::int8 AS ok FROM l
), gone AS (
  DELETE FROM outbox_commits c USING l, claim WHERE claim.ok AND c.topic_id = $1 AND c.partition = $2 AND c.commit_seq = l.commit_seq
), sent AS (
  DELETE FROM outbox x USING l, claim WHERE claim.ok AND x.xact = l.xact AND x.topic_id = $1 AND x.partition = $2
), o AS (`,
)
  .replace('WHERE topic_id = $1 AND partition = $2\n  RETURNING', 'WHERE topic_id = $1 AND partition = $2 AND (SELECT ok FROM claim)\n  RETURNING')
  .replace('SELECT o.base, o.hw, o.log_start_offset FROM o', 'SELECT claim.ok, o.base, o.hw, o.log_start_offset FROM claim LEFT JOIN o ON true');

if (!APPEND_CLAIMED_SQL.includes('(SELECT ok FROM claim)') || !APPEND_CLAIMED_SQL.includes('claim LEFT JOIN o')) throw new Error('APPEND_SQL changed: the outbox append no longer fits it');

export class OutboxStore {
  constructor(private readonly pool: pg.Pool) {}

  /** The partitions with committed records not yet in the log. */
  async pendingPartitions(): Promise<{ topicId: string; partition: number }[]> {
    const { rows } = await this.pool.query<{ topic_id: string; partition: number }>('SELECT DISTINCT topic_id, partition FROM outbox_commits');
    return rows.map((r) => ({ topicId: r.topic_id, partition: r.partition }));
  }

  /** Up to `maxCommits` of the partition's first committed sending transactions; null when none is pending. */
  async pending(topicId: string, partition: number, maxCommits: number): Promise<OutboxPending | null> {
    const { rows } = await this.pool.query<{
      commit_seq: bigint;
      timestamp_ms: bigint;
      key: Buffer | null;
      value: Buffer | null;
      header_keys: string[];
      header_values: (Buffer | null)[];
    }>({ name: 'pgkafka_outbox_pending', text: PENDING_SQL, values: [topicId, partition, maxCommits] });
    if (rows.length === 0) return null;
    let commits = 0;
    let previous: bigint | null = null;
    const records = rows.map((r) => {
      if (r.commit_seq !== previous) commits++;
      previous = r.commit_seq;
      return { timestampMs: r.timestamp_ms, key: r.key, value: r.value, headers: r.header_keys.map((key, i) => ({ key, value: r.header_values[i] ?? null })) };
    });
    return { firstSeq: rows[0]!.commit_seq, lastSeq: rows[rows.length - 1]!.commit_seq, commits, records };
  }

  /**
   * Appends the batches (spanning `offsetCount` offsets) if this statement
   * claims the commits [firstSeq, lastSeq], deleting them and their records
   * in the same transaction.
   */
  async appendClaimed(
    topicId: string,
    partition: number,
    claim: { firstSeq: bigint; lastSeq: bigint; commits: number },
    offsetCount: bigint,
    batches: readonly BatchToAppend[],
  ): Promise<OutboxAppended> {
    const params = [...appendParams(topicId, partition, offsetCount, batches), String(claim.firstSeq), String(claim.lastSeq), String(claim.commits)];
    const { rows } = await this.pool.query<{ ok: boolean; base: bigint | null; hw: bigint | null; log_start_offset: bigint | null }>({
      name: 'pgkafka_outbox_append',
      text: APPEND_CLAIMED_SQL,
      values: params,
    });
    const row = rows[0]!;
    if (!row.ok) return 'claimed';
    if (row.base === null || row.hw === null || row.log_start_offset === null) return null;
    return { baseOffset: row.base, highWatermark: row.hw, logStartOffset: row.log_start_offset };
  }

  /**
   * Takes the lock that says a relay is polling the outbox (migration 0017):
   * while it is held, sending transactions do not NOTIFY. Null when another
   * relay holds it, or a sending transaction is probing it just now. The lock
   * is a session's, so it goes with the connection if the broker dies.
   */
  async startPolling(): Promise<OutboxPolling | null> {
    const client = await this.pool.connect();
    let ok: boolean;
    try {
      ok = (await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock(hashtext(current_schema()), 1) AS ok')).rows[0]!.ok;
    } catch (err) {
      client.release(err as Error);
      throw err;
    }
    if (!ok) {
      client.release();
      return null;
    }
    return {
      // Then waits until every sending transaction that saw the lock held has committed (or rolled back): after this, a look at the outbox sees their records.
      stop: async () => {
        try {
          await client.query('SELECT pg_advisory_unlock(hashtext(current_schema()), 1)');
          await client.query('SELECT pg_advisory_lock(hashtext(current_schema()), 2)');
          await client.query('SELECT pg_advisory_unlock(hashtext(current_schema()), 2)');
          client.release();
        } catch (err) {
          client.release(err as Error); // the connection, and its locks, go
          throw err;
        }
      },
    };
  }
}
