// What the transaction coordinator needs from storage: its transactional ids'
// state, the offsets transactions carry, and new producer ids. Implemented by
// storage/pg (the broker) and storage/memory (unit tests); the contract tests
// in test/storage/contract hold both to the same behaviour. The rows are the
// storage layer's (storage/transaction-types.ts); the implementations match
// these interfaces structurally, so storage never imports the domain.
import type { PendingTxnOffset, StoredTransaction } from '../storage/transaction-types.js';

export type { PendingTxnOffset, StoredTransaction, TxnPartition } from '../storage/transaction-types.js';

export interface TransactionStorage {
  /** Every transactional id (by id order) and the offsets staged under each. */
  loadAll(): Promise<{ transactions: StoredTransaction[]; offsets: Map<string, PendingTxnOffset[]> }>;
  /** Creates or replaces the transactional id's state. */
  save(t: StoredTransaction): Promise<void>;
  /** TxnOffsetCommit: stages the offsets under the transaction (a later commit of the same partition replaces it). */
  stageOffsets(transactionalId: string, offsets: readonly PendingTxnOffset[]): Promise<void>;
  /**
   * Records the transaction's final state and, atomically with it, makes its
   * staged offsets the groups' committed offsets (commit) or drops them (abort).
   */
  complete(t: StoredTransaction, commit: boolean): Promise<void>;
  /** Forgets an idle transactional id (transactional.id.expiration.ms): only while no transaction is open. Whether it did. */
  expire(transactionalId: string): Promise<boolean>;
}

/** New producer ids, unique across every broker sharing the storage. */
export interface ProducerIdStorage {
  allocateProducerId(): Promise<bigint>;
}
