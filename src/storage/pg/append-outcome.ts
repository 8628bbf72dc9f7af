// When the connection to PostgreSQL is lost while an append statement runs
// or commits, the statement may or may not have been committed. Answering
// the producer with an error would be wrong if it was: the producer may
// then send the batches again in a way no sequence check can recognise (a
// new epoch from sequence 0), and they would be stored twice. So the
// outcome is settled first, with PostgreSQL, before anyone is answered:
// 1. the backend that ran the statement is ended (pg_terminate_backend,
//    waiting for it to exit), so its transaction is over for good, committed
//    or rolled back, and cannot commit after we looked. After a failover
//    (DATABASE_URL with several hosts) the backend lived on the old primary,
//    which the broker no longer reaches: its commit counts only if it reached
//    the new primary before promotion, and nothing arrives there afterwards
//    (the old primary must be fenced, as every failover does);
// 2. any transaction still holding the partitions' rows is waited for. With
//    a synchronous standby this also keeps an unreplicated commit from being
//    acknowledged: a backend ended while it waited for the standby leaves its
//    commit visible on the primary only (PostgreSQL warns "canceling wait for
//    synchronous replication"), but this row-locking statement writes WAL after
//    it, and its own commit waits for the standby to have both;
// 3. the batches are looked for from the log end the broker knew before the
//    statement: each must be stored byte for byte as sent (apart from the base
//    offset and partition leader epoch, which the broker rewrites), at the
//    offsets the statement would have given them. All of them there means
//    committed, at that base offset; none means not stored.
// None of this runs on the hot path: a statement that answers costs nothing more.
import pg from 'pg';
import { serverOf } from './hosts.js';
import { byteaArray, int4Array, int8Array } from './wire/binary-array.js';

/** The batch header bytes from the magic byte through the record count: everything the broker leaves as sent (CRC included). */
const HEAD_FROM = 16;
const HEAD_TO = 61;

/** How long the outcome is sought (PostgreSQL may be restarting) before the append is answered as failed anyway. */
const SETTLE_MS = 30_000;
/** How long a terminated backend may take to exit before the settling starts over. */
const BACKEND_EXIT_MS = 10_000;

/** A statement whose connection was lost before its answer arrived: it may have been committed. */
export class OutcomeUnknown extends Error {
  constructor(
    /** The PostgreSQL backend that ran it (null if unknown). */
    readonly backendPid: number | null,
    /** The server (host:port) it ran on. */
    readonly server: string,
    readonly lost: Error,
  ) {
    super(`connection lost during an append, outcome unknown: ${lost.message}`);
  }
}

/** A lost statement whose outcome could not be settled in time: its appends may be stored or not. */
export class OutcomeUnsettled extends Error {}

/** What one append of a lost statement needs for the look-up: where it went and what it held. */
export interface LostAppend {
  topicId: string;
  partition: number;
  /** The partition's log end as the broker knew it before the statement: the append cannot lie below it. */
  logEnd: bigint;
  batches: readonly { data: Buffer; relativeOffset: bigint }[];
}

/** A settled append: committed at baseOffset, the partition's state now; null: the partition no longer exists; 'absent': not stored. */
export type Settled = { baseOffset: bigint; highWatermark: bigint; logStartOffset: bigint } | null | 'absent';

/**
 * Runs a statement on a pooled connection. A failure before it was sent
 * (no connection) or reported by PostgreSQL as an ERROR (the statement's
 * transaction rolled back) is rethrown as it is; any other failure (the
 * connection lost, the backend terminated) is an OutcomeUnknown.
 */
export async function runAppendStatement<R extends pg.QueryResultRow>(pool: pg.Pool, query: unknown): Promise<pg.QueryResult<R>> {
  const client = await pool.connect();
  return new Promise((resolve, reject) => {
    const pid = (client as unknown as { processID: number | null }).processID ?? null;
    (client as unknown as { query(q: unknown, cb: (err: Error | null, res: pg.QueryResult<R>) => void): void }).query(query, (err, res) => {
      const definite = err instanceof pg.DatabaseError && err.severity === 'ERROR';
      client.release(err && !definite ? err : undefined);
      if (!err) resolve(res);
      else reject(definite ? err : new OutcomeUnknown(pid, serverOf(client), err));
    });
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Settles each append of a lost statement (see the top of this file), retrying while PostgreSQL is unreachable; throws if it cannot. */
export async function settleLostAppends(pool: pg.Pool, appends: readonly LostAppend[], lost: OutcomeUnknown): Promise<Settled[]> {
  const deadline = Date.now() + SETTLE_MS;
  for (let attempt = 0; ; attempt++) {
    try {
      return await settle(pool, appends, lost);
    } catch (err) {
      if (pool.ending || Date.now() >= deadline) {
        throw new OutcomeUnsettled(`${lost.message}; settling it failed: ${(err as Error).message}`);
      }
      await sleep(Math.min(25 * 2 ** attempt, 500));
    }
  }
}

async function settle(pool: pg.Pool, appends: readonly LostAppend[], lost: OutcomeUnknown): Promise<Settled[]> {
  const client = await pool.connect();
  let broken: Error | undefined;
  const backendPid = lost.backendPid;
  try {
    // A pid names a backend of one server only: on another (a promoted standby) it may be someone else's.
    if (backendPid !== null && serverOf(client) === lost.server) {
      // Only a backend of this role and database, never this one (a pid may be reused once its backend is gone).
      const ours = 'pid = $1 AND pid <> pg_backend_pid() AND usename = current_user AND datname = current_database()';
      // Polled here rather than with pg_terminate_backend's own wait, which looks only every 100 ms.
      await client.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE ${ours}`, [backendPid]);
      for (let waited = 0; (await client.query(`SELECT 1 FROM pg_stat_activity WHERE ${ours}`, [backendPid])).rows.length > 0; waited += 5) {
        if (waited >= BACKEND_EXIT_MS) throw new Error(`backend ${backendPid} has not exited yet`);
        await sleep(5);
      }
    }
    const where = [`{${appends.map((a) => a.topicId).join(',')}}`, int4Array(appends.map((a) => a.partition)), int8Array(appends.map((a) => a.logEnd))];
    // A row lock in share mode waits for any transaction that still holds the row; the look-up below then runs with a fresh snapshot.
    const { rows: states } = await client.query<{ idx: string; next_offset: bigint; log_start_offset: bigint }>(
      `SELECT r.idx, p.next_offset, p.log_start_offset
       FROM partitions p JOIN unnest($1::uuid[], $2::int4[], $3::int8[]) WITH ORDINALITY AS r(topic_id, partition, log_end, idx)
         ON p.topic_id = r.topic_id AND p.partition = r.partition
       ORDER BY p.topic_id, p.partition FOR SHARE OF p`,
      where,
    );
    const wanted = appends.flatMap((a, i) => a.batches.map((b) => ({ idx: i + 1, rel: b.relativeOffset, data: b.data })));
    const { rows: found } = await client.query<{ idx: string; rel: bigint; base_offset: bigint }>(
      `SELECT w.idx, w.rel, b.base_offset
       FROM unnest($1::uuid[], $2::int4[], $3::int8[]) WITH ORDINALITY AS r(topic_id, partition, log_end, idx)
       JOIN unnest($4::int4[], $5::int8[], $6::int4[], $7::bytea[]) AS w(idx, rel, size, head) ON w.idx = r.idx
       JOIN batches b ON b.topic_id = r.topic_id AND b.partition = r.partition AND b.base_offset >= r.log_end + w.rel
         AND b.size = w.size AND substring(b.data from ${HEAD_FROM + 1} for ${HEAD_TO - HEAD_FROM}) = w.head`,
      [
        ...where,
        int4Array(wanted.map((w) => w.idx)),
        int8Array(wanted.map((w) => w.rel)),
        int4Array(wanted.map((w) => w.data.length)),
        byteaArray(wanted.map((w) => w.data.subarray(HEAD_FROM, HEAD_TO))),
      ],
    );
    return appends.map((a, i) => {
      const state = states.find((s) => Number(s.idx) === i + 1);
      if (!state) return null;
      const mine = found.filter((f) => Number(f.idx) === i + 1);
      // Committed at `base` if every batch lies where the statement put it (the newest such place, should
      // an identical earlier append of a producer without sequences lie there too).
      const at = new Set(mine.map((f) => `${f.rel}@${f.base_offset}`));
      const base = mine
        .filter((f) => f.rel === a.batches[0]!.relativeOffset)
        .map((f) => f.base_offset - f.rel)
        .sort((x, y) => (x < y ? 1 : x > y ? -1 : 0))
        .find((b) => a.batches.every((batch) => at.has(`${batch.relativeOffset}@${b + batch.relativeOffset}`)));
      return base === undefined ? 'absent' : { baseOffset: base, highWatermark: state.next_offset, logStartOffset: state.log_start_offset };
    });
  } catch (err) {
    broken = err as Error;
    throw err;
  } finally {
    client.release(broken);
  }
}
