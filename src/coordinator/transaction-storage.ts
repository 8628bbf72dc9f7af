// What the transaction coordinator needs from storage: its transactional ids'
// state, the offsets transactions carry, and new producer ids. Implemented by
// storage/pg (the broker) and storage/memory (unit tests); the contract tests
// in test/storage/contract hold both to the same behaviour. The rows are the
// storage layer's (storage/transaction-types.ts); the implementations match
// these interfaces structurally, so storage never imports the domain.
import type { CoordinatorLease } from '../storage/coordinator-lease.js';
import type { OffsetsGuard, PendingTxnOffset, StoredTransaction } from '../storage/transaction-types.js';

export type { OffsetsGuard, PendingTxnOffset, StoredTransaction, TxnPartition } from '../storage/transaction-types.js';

/**
 * Every write of a transactional id's state is made under the coordinator's
 * lease of the id's slot, at the epoch it loaded the slot with, and checked
 * in the write itself: a write whose lease is no longer held (another broker
 * took the slot, or the lease lapsed) changes nothing and throws
 * LeaseLostError.
 */
export interface TransactionStorage {
  /** Every transactional id (by id order) and the offsets staged under each. */
  loadAll(): Promise<{ transactions: StoredTransaction[]; offsets: Map<string, PendingTxnOffset[]> }>;
  /** Creates or replaces the transactional id's state. */
  save(t: StoredTransaction, lease: CoordinatorLease): Promise<void>;
  /** One transactional id's state, or null: what a broker that does not coordinate the id checks produce requests and offset commits against. */
  get(transactionalId: string): Promise<StoredTransaction | null>;
  /**
   * TxnOffsetCommit: stages the offsets under the transaction (a later commit
   * of the same partition replaces it), only while the stored transaction is
   * the producer's (id and epoch), Ongoing, with the group added; whether it
   * did. Atomic with that check: a completion stored meanwhile either comes
   * after the staging (and applies the offsets) or refuses it.
   */
  stageOffsets(guard: OffsetsGuard, offsets: readonly PendingTxnOffset[]): Promise<boolean>;
  /** The partitions of the group that have offsets staged by a transaction not yet completed (OffsetFetch's requireStable). */
  pendingOffsets(groupId: string): Promise<{ topic: string; partition: number }[]>;
  /**
   * Records the transaction's final state and, atomically with it, makes its
   * staged offsets the groups' committed offsets (commit) or drops them (abort).
   */
  complete(t: StoredTransaction, commit: boolean, lease: CoordinatorLease): Promise<void>;
  /** Forgets an idle transactional id (transactional.id.expiration.ms): only while no transaction is open. Whether it did. */
  expire(transactionalId: string, lease: CoordinatorLease): Promise<boolean>;
}

/** New producer ids, unique across every broker sharing the storage. */
export interface ProducerIdStorage {
  allocateProducerId(): Promise<bigint>;
}
