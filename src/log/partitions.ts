// The partitions this process has touched, loaded from PostgreSQL a topic at
// a time on first use, and read back (one partition, or all after missed
// notifications) when other brokers' appends made their state stale.
import type { PartitionSnapshotRow } from '../storage/log-types.js';
import type { Logger } from '../observability/logger.js';
import { PartitionLog } from './partition-log.js';
import { LogCode } from '../observability/log-codes.js';

/** What loading reads (LogStorage). */
export interface PartitionSnapshots {
  partitionSnapshots(topicId: string, partition?: number | null): Promise<PartitionSnapshotRow[]>;
}

const key = (topicId: string, partition: number) => `${topicId}:${partition}`;

export class Partitions {
  private readonly map = new Map<string, PartitionLog>();
  /** The loaded partitions of each topic. */
  private readonly byTopic = new Map<string, PartitionLog[]>();
  private readonly loading = new Map<string, Promise<void>>();
  private readonly store: PartitionSnapshots;
  private readonly log: Logger;
  /** Schedules readBack of a partition between its flushes. */
  private readonly readBackLater: (p: PartitionLog) => void;

  constructor(options: { store: PartitionSnapshots; log: Logger; readBackLater: (p: PartitionLog) => void }) {
    this.store = options.store;
    this.log = options.log;
    this.readBackLater = options.readBackLater;
  }

  /** The partition's state, loaded from PostgreSQL the first time this process touches its topic. */
  async partition(topicId: string, partition: number): Promise<PartitionLog | null> {
    const cached = this.map.get(key(topicId, partition));
    if (cached) return cached;
    let loading = this.loading.get(topicId);
    if (!loading) {
      loading = this.loadTopic(topicId).finally(() => this.loading.delete(topicId));
      this.loading.set(topicId, loading);
    }
    await loading;
    return this.map.get(key(topicId, partition)) ?? null;
  }

  /** A partition already loaded here, or undefined. */
  loaded(topicId: string, partition: number): PartitionLog | undefined {
    return this.map.get(key(topicId, partition));
  }

  all(): IterableIterator<PartitionLog> {
    return this.map.values();
  }

  private async loadTopic(topicId: string): Promise<void> {
    const versions = new Map((this.byTopic.get(topicId) ?? []).map((p) => [p, p.txnVersion]));
    const snapshots = await this.store.partitionSnapshots(topicId);
    for (const s of snapshots) {
      let p = this.map.get(key(topicId, s.partition));
      if (!p) {
        p = new PartitionLog(topicId, s.partition);
        this.map.set(key(topicId, s.partition), p);
        const ofTopic = this.byTopic.get(topicId);
        if (ofTopic) ofTopic.push(p);
        else this.byTopic.set(topicId, [p]);
      }
      // A partition whose index changed meanwhile keeps it, and is read back between its flushes.
      if (!p.applySnapshot(s, versions.get(p) ?? p.txnVersion)) this.readBackLater(p);
    }
  }

  /**
   * Reads the partition's offsets and transaction index back from PostgreSQL
   * (the caller runs it between the partition's flushes, so that none changes
   * the index meanwhile); never throws: a failure is logged, and the next
   * sign of another broker's appends reads it again.
   */
  async readBack(p: PartitionLog): Promise<void> {
    try {
      const version = p.txnVersion;
      const [s] = await this.store.partitionSnapshots(p.topicId, p.partition);
      // No row: the partition is gone (dropTopic follows). Not applied: a topic load changed the index meanwhile; read again if that left it short.
      if (s && !p.applySnapshot(s, version) && p.needsReload) this.readBackLater(p);
    } catch (err) {
      this.log.warn(
        { err: (err as Error).message, topicId: p.topicId, partition: p.partition, code: LogCode.PARTITION_READ_BACK_FAILED },
        "reading a partition's state back failed; the next announcement or append retries",
      );
    }
  }

  /** Forgets a deleted topic's partitions, returning them (parked fetches wake and see them gone). */
  dropTopic(topicId: string): PartitionLog[] {
    const dropped = this.byTopic.get(topicId) ?? [];
    this.byTopic.delete(topicId);
    for (const p of dropped) this.map.delete(key(topicId, p.partition));
    return dropped;
  }

  /** Notifications may have been missed: reloads every topic loaded here. */
  async resync(): Promise<void> {
    await Promise.all([...this.byTopic.keys()].map((t) => this.loadTopic(t)));
  }
}
