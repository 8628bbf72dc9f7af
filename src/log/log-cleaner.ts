// The log cleaner, on Kafka's two cadences:
// - retention, every log.retention.check.interval.ms: moves each partition's
//   log start past the batches that retention.ms or retention.bytes no longer
//   keep (topics whose cleanup.policy includes "delete"), then deletes those
//   batches in bounded chunks;
// - compaction, every log.cleaner.backoff.ms (Kafka's cleaner threads look for
//   dirty logs that often): the compactor cleans the due partitions of topics
//   whose cleanup.policy includes "compact".
// Passes run one at a time, so compaction never rewrites batches retention is
// deleting; runOnce (tests, tools) runs retention then compaction, so it does
// not rewrite what is about to go.
import type { Clock, Timer } from '../clock.js';
import type { Logger } from '../observability/logger.js';
import type { Compactor } from './compactor.js';
import type { LogManager } from './log-manager.js';
import type { TopicConfig } from './topic-configs.js';
import type { Topic, TopicManager } from './topic-manager.js';
import { LogCode } from '../observability/log-codes.js';

type PassKind = 'retention' | 'compaction';

export interface LogCleanerOptions {
  topics: TopicManager;
  logs: LogManager;
  /** log.retention.check.interval.ms */
  retentionCheckIntervalMs: number;
  /** Null: no compaction passes. */
  compactor: Compactor | null;
  /** log.cleaner.backoff.ms */
  cleanerBackoffMs: number;
  clock: Clock;
  log: Logger;
}

export class LogCleaner {
  private readonly timers = new Map<PassKind, Timer>();
  private readonly topics: TopicManager;
  private readonly logs: LogManager;
  private readonly retentionCheckIntervalMs: number;
  private readonly log: Logger;
  private readonly compactor: Compactor | null;
  private readonly cleanerBackoffMs: number;
  private readonly clock: Clock;
  /** The passes queued or under way, in order; a timer's pass already queued is not queued twice. */
  private queue: Promise<void> = Promise.resolve();
  private readonly pending = new Set<PassKind>();

  constructor(options: LogCleanerOptions) {
    this.topics = options.topics;
    this.logs = options.logs;
    this.retentionCheckIntervalMs = options.retentionCheckIntervalMs;
    this.log = options.log;
    this.compactor = options.compactor;
    this.cleanerBackoffMs = options.cleanerBackoffMs;
    this.clock = options.clock;
  }

  start(): void {
    this.every('retention', this.retentionCheckIntervalMs);
    if (this.compactor) this.every('compaction', this.cleanerBackoffMs);
  }

  /** Schedules the pass every `ms` on the broker's clock, until stop. */
  private every(kind: PassKind, ms: number): void {
    this.timers.set(
      kind,
      this.clock.setTimeout(() => {
        void this.schedule(kind);
        this.every(kind, ms);
      }, ms),
    );
  }

  async stop(): Promise<void> {
    for (const t of this.timers.values()) t.cancel();
    this.timers.clear();
    await this.queue;
  }

  /** A retention pass and then a compaction pass over every topic, after any pass under way. */
  runOnce(now = this.clock.now()): Promise<void> {
    return this.enqueue(async () => {
      await this.retentionPass(now);
      await this.compactionPass(now);
    });
  }

  private schedule(kind: PassKind): Promise<void> {
    if (this.pending.has(kind)) return this.queue;
    this.pending.add(kind);
    return this.enqueue(async () => {
      this.pending.delete(kind);
      const now = this.clock.now();
      await (kind === 'retention' ? this.retentionPass(now) : this.compactionPass(now));
    });
  }

  private enqueue(pass: () => Promise<void>): Promise<void> {
    this.queue = this.queue.then(pass).catch((err: Error) => this.log.warn({ err: err.message, code: LogCode.RETENTION_FAILED }, 'log cleaner pass failed'));
    return this.queue;
  }

  private async retentionPass(now: number): Promise<void> {
    for (const topic of await this.topics.list()) await this.applyRetention(topic, this.topics.topicConfig(topic), now);
  }

  private async compactionPass(now: number): Promise<void> {
    if (!this.compactor) return;
    for (const topic of await this.topics.list()) {
      const config = this.topics.topicConfig(topic);
      if (config.cleanupPolicy.compact) await this.compactor.compactTopic(topic, config, now);
    }
  }

  private async applyRetention(topic: Topic, config: TopicConfig, now: number): Promise<void> {
    if (!config.cleanupPolicy.delete) return;
    const cutoff = config.retentionMs >= 0 ? BigInt(now - config.retentionMs) : null;
    const bytes = config.retentionBytes >= 0 ? config.retentionBytes : null;
    if (cutoff === null && bytes === null) return;
    for (let i = 0; i < topic.partitionCount; i++) {
      const p = await this.logs.partition(topic.topicId, i);
      if (!p || p.logStartOffset >= p.highWatermark) continue;
      const target = await this.logs.retentionTarget(p, cutoff, bytes);
      if (target !== null && target > p.logStartOffset) await this.logs.advanceLogStart(p, topic.name, target, 'retention');
    }
  }
}
