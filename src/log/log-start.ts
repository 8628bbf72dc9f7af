// Moves of a partition's log start (retention, DeleteRecords): reads below it
// answer OFFSET_OUT_OF_RANGE at once; the batches below it are deleted in
// bounded chunks afterwards, in the background.
import type { Logger } from '../observability/logger.js';
import type { LogStartChange } from '../storage/log-types.js';
import type { PartitionStorage } from './log-storage.js';
import type { PartitionLog } from './partition-log.js';
import { LogCode } from '../observability/log-codes.js';

export interface LogStartOptions {
  store: Pick<PartitionStorage, 'advanceLogStart' | 'deleteBelowLogStart'>;
  /** Batches deleted per statement. */
  chunkBatches: number;
  /** The NOTIFY payload prefix that announces the move to other brokers. */
  payloadPrefix: (p: PartitionLog) => string;
  /** The partition's cached batches below the new log start are forgotten. */
  forgetBelow: (p: PartitionLog, offset: bigint, moved: boolean) => void;
  log: Logger;
}

export class LogStartMover {
  private readonly o: LogStartOptions;
  private readonly deleting = new Set<PartitionLog>();

  constructor(options: LogStartOptions) {
    this.o = options;
  }

  /** Moves the log start forward to `target`; returns the change, or null for a missing partition. */
  async advance(p: PartitionLog, topicName: string, target: bigint, reason: string): Promise<LogStartChange | null> {
    const change = await this.o.store.advanceLogStart(p.topicId, topicName, p.partition, target, this.o.payloadPrefix(p));
    if (!change) return null;
    const moved = change.logStartOffset > p.logStartOffset;
    p.advance(change.highWatermark, change.logStartOffset);
    this.o.forgetBelow(p, change.logStartOffset, moved);
    if (moved) {
      this.o.log.info({ topic: topicName, partition: p.partition, logStartOffset: change.logStartOffset, reason }, 'log start offset advanced');
      for (const lost of change.deletedUnread) {
        this.o.log.warn(
          { topic: topicName, partition: p.partition, group: lost.groupId, records: lost.records, reason, code: LogCode.DELETED_UNREAD },
          'records deleted before the group consumed them',
        );
      }
      void this.deleteBelowLogStart(p, topicName);
    }
    return change;
  }

  /** Deletes the batches below the log start in bounded chunks; one pass per partition at a time. */
  private async deleteBelowLogStart(p: PartitionLog, topicName: string): Promise<void> {
    if (this.deleting.has(p)) return;
    this.deleting.add(p);
    try {
      let deleted = 0;
      for (;;) {
        const n = await this.o.store.deleteBelowLogStart(p.topicId, p.partition, this.o.chunkBatches);
        deleted += n;
        if (n < this.o.chunkBatches) break;
      }
      if (deleted > 0) this.o.log.debug({ topic: topicName, partition: p.partition, batches: deleted }, 'deleted batches below the log start');
    } catch (err) {
      this.o.log.warn({ err: (err as Error).message, topic: topicName, partition: p.partition, code: LogCode.CLEANER_DELETE_FAILED }, 'deleting old batches failed; the next pass retries');
    } finally {
      this.deleting.delete(p);
    }
  }
}
