// The log's rows as every storage implementation takes and returns them (the
// interfaces the log uses are log/log-storage.ts).

/** A batch to append, with its offset relative to the first offset the flush assigns. */
export interface BatchToAppend {
  data: Buffer;
  relativeOffset: bigint;
  lastOffsetDelta: number;
  recordCount: number;
  firstTimestamp: bigint;
  maxTimestamp: bigint;
  producerId: bigint;
  producerEpoch: number;
  baseSequence: number;
  isTransactional: boolean;
  isControl: boolean;
}

/** Transactions a flush opens (a producer's first transactional batch here) and ends (its marker), by relative offset. */
export interface TxnChanges {
  opened: { producerId: bigint; relativeOffset: bigint }[];
  ended: { producerId: bigint; relativeOffset: bigint; commit: boolean }[];
}

export interface StoredBatch {
  baseOffset: bigint;
  lastOffset: bigint;
  data: Buffer;
}

/** A partition's offsets and transaction index, read in one snapshot. */
export interface PartitionSnapshotRow {
  partition: number;
  highWatermark: bigint;
  logStartOffset: bigint;
  leaderEpoch: number;
  /** Producer id → first offset of its open transaction. */
  openTxns: Map<bigint, bigint>;
  hasAbortedTxns: boolean;
}

export interface Appended {
  baseOffset: bigint;
  highWatermark: bigint;
  logStartOffset: bigint;
}

/** One partition's append as the store takes it: batches spanning `offsetCount` offsets, and the log end the caller last saw (see LogStorage.append). */
export interface StoreAppend {
  topicId: string;
  partition: number;
  offsetCount: bigint;
  batches: readonly BatchToAppend[];
  logEnd: bigint;
}

export interface LogStartChange {
  logStartOffset: bigint;
  highWatermark: bigint;
  /** Per group whose committed offset lay below the new log start: how many records it never read. */
  deletedUnread: { groupId: string; records: bigint }[];
}

export interface ProducerBatch {
  producerEpoch: number;
  firstSequence: number;
  lastSequence: number;
  baseOffset: bigint;
}

export interface StoredProducerBatch extends ProducerBatch {
  /** The batch's newest record timestamp (ms). */
  maxTimestamp: number;
}
