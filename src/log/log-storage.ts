// What the log needs from storage: its rows (appends, reads, snapshots,
// timestamp look-ups), the partitions' bounds (log start moves, new
// partitions, sizes) and the producers' state kept in the log. Implemented
// by storage/pg and storage/memory, held to the same behaviour by
// test/storage/contract; they match structurally, so storage never imports
// the domain. Each module that reads or writes declares the slice it uses
// (AppendStatements, StoredReads, PartitionSnapshots, TimestampIndex,
// ProducerBatches); these are the whole of it.
import type { LogStartChange } from '../storage/log-types.js';
import type { AppendStatements } from './append-queue.js';
import type { StoredReads } from './log-reader.js';
import type { TimestampIndex } from './offset-lookup.js';
import type { PartitionSnapshots } from './partitions.js';
import type { ProducerBatches } from './producer-sequences.js';

export type { Appended, BatchToAppend, LogStartChange, PartitionSnapshotRow, StoreAppend, StoredBatch, StoredProducerBatch, TxnChanges } from '../storage/log-types.js';

/**
 * The log's rows. Offsets are assigned in the statement that stores the
 * batches (the partition's next offset moves by the flush's offset count),
 * each statement applies whole or not at all, and an append to a partition
 * that does not exist answers null.
 */
export interface LogStorage extends AppendStatements, StoredReads, PartitionSnapshots, TimestampIndex {
  /** Told of each statement whose connection was lost and how its appends were settled (for the log). */
  lostAppendObserver: ((lost: Error, settled: { topicId: string; partition: number; outcome: string }[], ms: number) => void) | null;
}

/** A partition's bounds: log start moves (retention, DeleteRecords), CreatePartitions, stored sizes. */
export interface PartitionStorage {
  /** The log start retention asks for: the first batch neither older than the cutoff nor outside the newest bytes; the high watermark if all go; null for no such partition. */
  retentionTarget(topicId: string, partition: number, cutoffTimestamp: bigint | null, retentionBytes: number | null): Promise<bigint | null>;
  /** Moves the log start forward to `target` (never back, never past the high watermark), counting what groups lost unread; null for no such partition. */
  advanceLogStart(topicId: string, topicName: string, partition: number, target: bigint, notifyPrefix: string): Promise<LogStartChange | null>;
  /** Deletes up to `limit` batches wholly below the log start; how many went. */
  deleteBelowLogStart(topicId: string, partition: number, limit: number): Promise<number>;
  /** Raises the topic's partition count from `from` to `to`; false if it changed meanwhile. */
  addPartitions(topicId: string, from: number, to: number, topicName: string): Promise<boolean>;
  /** Stored bytes per partition of the given topics (all when null), by topic id and partition. */
  partitionSizes(topicIds: readonly string[] | null): Promise<{ topicId: string; partition: number; bytes: bigint }[]>;
  /** The storage's whole size, reported as the log dir's total. */
  databaseBytes(): Promise<bigint>;
}

/** Producer ids and the producers' batches recorded in the log. */
export interface ProducerStorage extends ProducerBatches {
  allocateProducerId(): Promise<bigint>;
}
