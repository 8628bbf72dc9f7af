// The transaction coordinator's rows as every storage implementation keeps
// them (the interfaces the coordinator uses are in coordinator/transaction-storage.ts).

/** A transaction partition as the coordinator records it. */
export interface TxnPartition {
  topicId: string;
  topic: string;
  partition: number;
}

/** One transactional id's coordinator state (Kafka's TransactionMetadata). */
export interface StoredTransaction {
  transactionalId: string;
  producerId: bigint;
  producerEpoch: number;
  lastProducerEpoch: number;
  timeoutMs: number;
  state: string;
  startTime: Date | null;
  partitions: TxnPartition[];
  groups: string[];
  /** When the row last changed (as loaded; writes set it to the storage's now). */
  updatedAt?: Date;
}

/** An offset committed inside a transaction, visible only once it commits. */
export interface PendingTxnOffset {
  groupId: string;
  topic: string;
  partition: number;
  committedOffset: bigint;
  leaderEpoch: number;
  metadata: string | null;
}

/** The transaction a TxnOffsetCommit stages its offsets under: staged only while it is this producer's, Ongoing, with the group added. */
export interface OffsetsGuard {
  transactionalId: string;
  producerId: bigint;
  producerEpoch: number;
  groupId: string;
}
