import type pg from 'pg';
import type { CoordinatorLease } from '../coordinator-lease.js';
import { leaseHeldSql, leaseLost, leaseParams } from './coordinator-store.js';
import { metadataBytes, metadataString } from './group-store.js';
import { inTransaction } from './pool.js';
import type { OffsetsGuard, PendingTxnOffset, StoredTransaction, TxnPartition } from '../transaction-types.js';

export type { OffsetsGuard, PendingTxnOffset, StoredTransaction, TxnPartition } from '../transaction-types.js';

interface TransactionRow {
  transactional_id: string;
  producer_id: bigint;
  producer_epoch: number;
  last_producer_epoch: number;
  timeout_ms: number;
  state: string;
  start_time: Date | null;
  partitions: TxnPartition[];
  groups: string[];
  updated_at: Date;
}

/** transactions_upsert, fenced: parameters $10-$12 are the coordinator's lease (leaseParams); no row is written when the lease is not held. */
const SAVE_SQL = `
INSERT INTO transactions (transactional_id, producer_id, producer_epoch, last_producer_epoch, timeout_ms, state, start_time, partitions, groups, updated_at)
SELECT $1::text, $2::int8, $3::int2, $4::int2, $5::int4, $6::text, $7::timestamptz, $8::jsonb, $9::text[], now()
WHERE ${leaseHeldSql('$10', '$11', '$12', 'FOR SHARE')}
ON CONFLICT (transactional_id) DO UPDATE SET producer_id = $2, producer_epoch = $3, last_producer_epoch = $4, timeout_ms = $5,
  state = $6, start_time = $7, partitions = $8, groups = $9, updated_at = now()`;

const fromRow = (r: TransactionRow): StoredTransaction => ({
  transactionalId: r.transactional_id,
  producerId: r.producer_id,
  producerEpoch: r.producer_epoch,
  lastProducerEpoch: r.last_producer_epoch,
  timeoutMs: r.timeout_ms,
  state: r.state,
  startTime: r.start_time,
  partitions: r.partitions,
  groups: r.groups,
  updatedAt: r.updated_at,
});

const saveParams = (t: StoredTransaction) => [t.transactionalId, t.producerId, t.producerEpoch, t.lastProducerEpoch, t.timeoutMs, t.state, t.startTime, JSON.stringify(t.partitions), t.groups];

/** The transaction coordinator's state and the offsets transactions carry. */
export class TransactionStore {
  constructor(private readonly pool: pg.Pool) {}

  async loadAll(): Promise<{ transactions: StoredTransaction[]; offsets: Map<string, PendingTxnOffset[]> }> {
    const [txns, offsets] = await Promise.all([
      this.pool.query<TransactionRow>('SELECT * FROM transactions ORDER BY transactional_id'),
      this.pool.query<{ transactional_id: string; group_id: string; topic: string; partition: number; committed_offset: bigint; leader_epoch: number; metadata: Buffer | null }>(
        'SELECT * FROM txn_offsets',
      ),
    ]);
    const byTxn = new Map<string, PendingTxnOffset[]>();
    for (const r of offsets.rows) {
      const list = byTxn.get(r.transactional_id) ?? [];
      list.push({ groupId: r.group_id, topic: r.topic, partition: r.partition, committedOffset: r.committed_offset, leaderEpoch: r.leader_epoch, metadata: metadataString(r.metadata) });
      byTxn.set(r.transactional_id, list);
    }
    return {
      transactions: txns.rows.map(fromRow),
      offsets: byTxn,
    };
  }

  /**
   * transactions_delete_idle: forgets an idle transactional id
   * (transactional.id.expiration.ms), only while no transaction is open and
   * the coordinator still holds `lease`.
   */
  async expire(transactionalId: string, lease: CoordinatorLease): Promise<boolean> {
    const { rows } = await this.pool.query<{ held: boolean; deleted: boolean }>(
      `WITH lease AS (SELECT ${leaseHeldSql('$2', '$3', '$4', 'FOR SHARE')} AS held),
         d AS (DELETE FROM transactions WHERE transactional_id = $1 AND state IN ('Empty', 'CompleteCommit', 'CompleteAbort') AND (SELECT held FROM lease) RETURNING 1)
       SELECT held, EXISTS (SELECT 1 FROM d) AS deleted FROM lease`,
      [transactionalId, ...leaseParams(lease)],
    );
    if (!rows[0]!.held) throw leaseLost(lease);
    return rows[0]!.deleted;
  }

  /**
   * Creates or replaces the transactional id's state, only while `lease` is
   * still the coordinator's: a coordinator that lost the id's slot cannot
   * overwrite what the slot's new holder stores.
   */
  async save(t: StoredTransaction, lease: CoordinatorLease): Promise<void> {
    const { rowCount } = await this.pool.query(SAVE_SQL, [...saveParams(t), ...leaseParams(lease)]);
    if (rowCount === 0) throw leaseLost(lease);
  }

  /** transactions_select: one transactional id's state. */
  async get(transactionalId: string): Promise<StoredTransaction | null> {
    const { rows } = await this.pool.query<TransactionRow>('SELECT * FROM transactions WHERE transactional_id = $1', [transactionalId]);
    return rows[0] ? fromRow(rows[0]) : null;
  }

  /**
   * txn_offsets_stage: stages the offsets while the transaction is the
   * producer's, Ongoing, with the group added. The transaction's row is held
   * (FOR SHARE) until the staging commits, so a PrepareCommit stored by its
   * coordinator, on whichever broker, waits for it and then applies it.
   */
  async stageOffsets(guard: OffsetsGuard, offsets: readonly PendingTxnOffset[]): Promise<boolean> {
    if (offsets.length === 0) return false;
    const { rowCount } = await this.pool.query(
      `WITH txn AS (
         SELECT transactional_id FROM transactions
         WHERE transactional_id = $1 AND producer_id = $8 AND producer_epoch = $9 AND state = 'Ongoing' AND $10 = ANY(groups)
         FOR SHARE
       )
       INSERT INTO txn_offsets (transactional_id, group_id, topic, partition, committed_offset, leader_epoch, metadata)
       SELECT txn.transactional_id, g, t, p, o, e, m FROM txn, unnest($2::text[], $3::text[], $4::int4[], $5::int8[], $6::int4[], $7::bytea[]) AS u(g, t, p, o, e, m)
       ON CONFLICT (transactional_id, group_id, topic, partition) DO UPDATE SET committed_offset = excluded.committed_offset,
         leader_epoch = excluded.leader_epoch, metadata = excluded.metadata`,
      [
        guard.transactionalId,
        offsets.map((o) => o.groupId),
        offsets.map((o) => o.topic),
        offsets.map((o) => o.partition),
        offsets.map((o) => o.committedOffset.toString()),
        offsets.map((o) => o.leaderEpoch),
        offsets.map((o) => metadataBytes(o.metadata)),
        guard.producerId,
        guard.producerEpoch,
        guard.groupId,
      ],
    );
    return (rowCount ?? 0) > 0;
  }

  /** txn_offsets_select_group: the group's partitions with offsets staged by a transaction not yet completed. */
  async pendingOffsets(groupId: string): Promise<{ topic: string; partition: number }[]> {
    const { rows } = await this.pool.query<{ topic: string; partition: number }>('SELECT DISTINCT topic, partition FROM txn_offsets WHERE group_id = $1', [groupId]);
    return rows;
  }

  /**
   * Completes a transaction's offsets and records its final state, in one
   * PostgreSQL transaction, only while `lease` is still the coordinator's
   * (checked first, the slot's row then held until the commit): on commit
   * the staged offsets become the groups' committed offsets; on abort they
   * are dropped.
   */
  async complete(t: StoredTransaction, commit: boolean, lease: CoordinatorLease): Promise<void> {
    await inTransaction(this.pool, async (client) => {
      const { rows } = await client.query<{ held: boolean }>(`SELECT ${leaseHeldSql('$1', '$2', '$3', 'FOR SHARE')} AS held`, leaseParams(lease));
      if (!rows[0]!.held) throw leaseLost(lease);
      if (commit) {
        await client.query(
          `INSERT INTO committed_offsets (group_id, topic, partition, committed_offset, leader_epoch, metadata, commit_timestamp)
           SELECT group_id, topic, partition, committed_offset, leader_epoch, metadata, now() FROM txn_offsets WHERE transactional_id = $1
           ON CONFLICT (group_id, topic, partition) DO UPDATE SET committed_offset = excluded.committed_offset,
             leader_epoch = excluded.leader_epoch, metadata = excluded.metadata, commit_timestamp = excluded.commit_timestamp,
             expire_timestamp = NULL`,
          [t.transactionalId],
        );
      }
      await client.query('DELETE FROM txn_offsets WHERE transactional_id = $1', [t.transactionalId]);
      await client.query(SAVE_SQL, [...saveParams(t), ...leaseParams(lease)]);
    });
  }
}
