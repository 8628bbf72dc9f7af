// The partitions this process has touched, loaded from PostgreSQL a topic at
// a time on first use, and read back (one partition, or all after missed
// notifications) when other brokers' appends made their state stale.
import type { PartitionSnapshotRow } from '../storage/pg/log-store.js';
import type { Logger } from '../observability/logger.js';
import { PartitionLog } from './partition-log.js';

/** What loading reads (LogStore). */
export interface PartitionSnapshots {
  partitionSnapshots(topicId: string, partition?: number | null): Promise<PartitionSnapshotRow[]>;
}

const key = (topicId: string, partition: number) => `${topicId}:${partition}`;

/** Snapshots read back because this process changed the transaction index meanwhile are read again, at most this many times in a row. */
const RELOAD_ATTEMPTS = 5;

export class Partitions {
  private readonly map = new Map<string, PartitionLog>();
  private readonly loading = new Map<string, Promise<void>>();
  /** Partitions being read back, and whether another read-back was asked for meanwhile. */
  private readonly reloading = new Map<PartitionLog, { again: boolean }>();
  private readonly store: PartitionSnapshots;
  private readonly log: Logger;

  constructor(options: { store: PartitionSnapshots; log: Logger }) {
    this.store = options.store;
    this.log = options.log;
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
    const versions = new Map([...this.map.values()].filter((p) => p.topicId === topicId).map((p) => [p, p.txnVersion]));
    const snapshots = await this.store.partitionSnapshots(topicId);
    for (const s of snapshots) {
      let p = this.map.get(key(topicId, s.partition));
      if (!p) {
        p = new PartitionLog(topicId, s.partition);
        this.map.set(key(topicId, s.partition), p);
      }
      // A partition whose index changed meanwhile keeps it, and is read back on its own.
      if (!p.applySnapshot(s, versions.get(p) ?? p.txnVersion)) this.reload(p);
    }
  }

  /**
   * Reads the partition's offsets and transaction index back from
   * PostgreSQL, in the background: one read per partition at a time, and
   * one more if asked again meanwhile.
   */
  reload(p: PartitionLog): void {
    const running = this.reloading.get(p);
    if (running) {
      running.again = true;
      return;
    }
    const state = { again: false };
    this.reloading.set(p, state);
    void (async () => {
      try {
        for (let attempt = 0; attempt < RELOAD_ATTEMPTS; attempt++) {
          state.again = false;
          const version = p.txnVersion;
          const [s] = await this.store.partitionSnapshots(p.topicId, p.partition);
          if (!s) return; // deleted: dropTopic follows
          if (p.applySnapshot(s, version) && !state.again) return;
        }
      } catch (err) {
        this.log.warn({ err: (err as Error).message, topicId: p.topicId, partition: p.partition, code: 'PGKAFKA_PARTITION_RELOAD_FAILED' }, 'reading a partition back failed; its next announcement retries');
      } finally {
        this.reloading.delete(p);
      }
    })();
  }

  /** Forgets a deleted topic's partitions, returning them (parked fetches wake and see them gone). */
  dropTopic(topicId: string): PartitionLog[] {
    const dropped: PartitionLog[] = [];
    for (const [k, p] of this.map) {
      if (p.topicId !== topicId) continue;
      this.map.delete(k);
      dropped.push(p);
    }
    return dropped;
  }

  /** Notifications may have been missed: reloads every topic loaded here. */
  async resync(): Promise<void> {
    const topics = new Set([...this.map.values()].map((p) => p.topicId));
    await Promise.all([...topics].map((t) => this.loadTopic(t)));
  }
}
