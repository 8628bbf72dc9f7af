// The retention cleaner: every log.retention.check.interval.ms it moves each
// partition's log start past the batches that retention.ms or
// retention.bytes no longer keep (topics whose cleanup.policy includes
// "delete"), then deletes those batches in bounded chunks. In the same pass
// the compactor cleans the partitions of topics whose cleanup.policy
// includes "compact" (after retention, so it does not rewrite what is about
// to go).
import type { Logger } from '../observability/logger.js';
import type { Compactor } from './compactor.js';
import type { LogManager } from './log-manager.js';
import type { TopicConfig } from './topic-configs.js';
import type { Topic, TopicManager } from './topic-manager.js';

export class LogCleaner {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(
    private readonly topics: TopicManager,
    private readonly logs: LogManager,
    private readonly intervalMs: number,
    private readonly log: Logger,
    private readonly compactor: Compactor | null = null,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.runOnce(), this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** One retention pass over every topic; a pass already under way is joined rather than doubled. */
  runOnce(now = Date.now()): Promise<void> {
    this.running ??= this.pass(now)
      .catch((err: Error) => this.log.warn({ err: err.message, code: 'PGKAFKA_RETENTION_FAILED' }, 'retention pass failed'))
      .finally(() => (this.running = null));
    return this.running;
  }

  private async pass(now: number): Promise<void> {
    for (const topic of await this.topics.list()) {
      const config = this.topics.topicConfig(topic);
      await this.applyRetention(topic, config, now);
      if (config.cleanupPolicy.compact && this.compactor) await this.compactor.compactTopic(topic, config, now);
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
