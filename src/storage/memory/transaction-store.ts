import { LeaseLostError, type CoordinatorLease } from '../coordinator-lease.js';
import type { OffsetsGuard, PendingTxnOffset, StoredTransaction } from '../transaction-types.js';
import { compareText, key, text, utf8RoundTrip, type MemoryDatabase } from './database.js';

const IDLE_STATES = new Set(['Empty', 'CompleteCommit', 'CompleteAbort']);

const copyTxn = (t: StoredTransaction): StoredTransaction => ({
  ...t,
  partitions: t.partitions.map((p) => ({ ...p })),
  groups: [...t.groups],
  startTime: t.startTime ? new Date(t.startTime.getTime()) : null,
  ...(t.updatedAt ? { updatedAt: new Date(t.updatedAt.getTime()) } : {}),
});

/** The transaction coordinator's state in memory (tables transactions and txn_offsets). */
export class MemoryTransactionStore {
  constructor(private readonly db: MemoryDatabase) {}

  async loadAll(): Promise<{ transactions: StoredTransaction[]; offsets: Map<string, PendingTxnOffset[]> }> {
    const transactions = [...this.db.transactions.values()].sort((a, b) => compareText(a.transactionalId, b.transactionalId)).map(copyTxn);
    const offsets = new Map<string, PendingTxnOffset[]>();
    for (const [id, staged] of this.db.txnOffsets)
      if (staged.size > 0)
        offsets.set(
          id,
          [...staged.values()].map((o) => ({ ...o })),
        );
    return { transactions, offsets };
  }

  async save(t: StoredTransaction, lease: CoordinatorLease): Promise<void> {
    this.fence(lease);
    this.write(t);
  }

  async get(transactionalId: string): Promise<StoredTransaction | null> {
    const t = this.db.transactions.get(transactionalId);
    return t ? copyTxn(t) : null;
  }

  async stageOffsets(guard: OffsetsGuard, offsets: readonly PendingTxnOffset[]): Promise<boolean> {
    if (offsets.length === 0) return false;
    text(guard.transactionalId);
    const rows = offsets.map((o) => ({ ...o, groupId: text(o.groupId), topic: text(o.topic), metadata: utf8RoundTrip(o.metadata) }));
    const t = this.db.transactions.get(guard.transactionalId);
    if (!t || t.producerId !== guard.producerId || t.producerEpoch !== guard.producerEpoch || t.state !== 'Ongoing' || !t.groups.includes(guard.groupId)) return false;
    const staged = this.db.txnOffsets.get(guard.transactionalId) ?? new Map<string, PendingTxnOffset>();
    for (const o of rows) staged.set(key(o.groupId, o.topic, o.partition), o);
    this.db.txnOffsets.set(guard.transactionalId, staged);
    return true;
  }

  async pendingOffsets(groupId: string): Promise<{ topic: string; partition: number }[]> {
    const out = new Map<string, { topic: string; partition: number }>();
    for (const staged of this.db.txnOffsets.values()) for (const o of staged.values()) if (o.groupId === groupId) out.set(key(o.topic, o.partition), { topic: o.topic, partition: o.partition });
    return [...out.values()];
  }

  async complete(t: StoredTransaction, commit: boolean, lease: CoordinatorLease): Promise<void> {
    this.fence(lease);
    const staged = this.db.txnOffsets.get(t.transactionalId);
    const committed = new Date(this.db.clock.now());
    this.write(t); // validates before anything changes: all or nothing, as one PostgreSQL transaction
    if (commit && staged) {
      for (const o of staged.values()) this.db.committedOffsets.set(key(o.groupId, o.topic, o.partition), { ...o, commitTimestamp: committed });
    }
    this.db.txnOffsets.delete(t.transactionalId);
  }

  async expire(transactionalId: string, lease: CoordinatorLease): Promise<boolean> {
    this.fence(lease);
    const t = this.db.transactions.get(transactionalId);
    if (!t || !IDLE_STATES.has(t.state)) return false;
    this.db.transactions.delete(transactionalId);
    return true;
  }

  /** As the statements' lease check: nothing is written under a lease that is not held. */
  private fence(lease: CoordinatorLease): void {
    if (!this.db.leaseHeld(lease)) throw new LeaseLostError(lease.slot);
  }

  private write(t: StoredTransaction): void {
    text(t.transactionalId);
    text(t.state);
    for (const g of t.groups) text(g);
    const { updatedAt: _ignored, ...rest } = copyTxn(t);
    this.db.transactions.set(t.transactionalId, { ...rest, updatedAt: new Date(this.db.clock.now()) });
  }
}

/** The producer_ids sequence in memory. */
export class MemoryProducerIds {
  constructor(private readonly db: MemoryDatabase) {}

  async allocateProducerId(): Promise<bigint> {
    return this.db.nextProducerId++;
  }
}
