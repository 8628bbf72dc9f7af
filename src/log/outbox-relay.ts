// The outbox relay: records sent from SQL (send(), migration 0013) wait in
// the outbox until their transaction commits; the relay appends the
// partition's committed records, in commit order, as magic-v2 batches through
// the partition's append queue (between two flushes), deleting them in the
// statement that appends them. Every broker runs one; of two relays on a
// partition, the statement's claim lets one append and the other find nothing
// (see storage/pg/outbox-store.ts).
//
// Waking it (migration 0017): a NOTIFY per sending transaction would
// serialise their commits (PostgreSQL's notification queue lock), so once a
// NOTIFY (delivered at commit only) or a sweep finds records, the relay polls
// the outbox every POLL_MS and holds the lock that tells sending transactions
// not to NOTIFY; after IDLE_AFTER_MS without records it lets go, waits for
// the transactions that saw it polling, and looks once more. A sweep at
// start-up, after a lost LISTEN connection and every SWEEP_INTERVAL_MS covers
// NOTIFYs nobody heard (a commit while every broker was down).
import type { Clock } from '../clock.js';
import type { Logger } from '../observability/logger.js';
import { LogCode } from '../observability/log-codes.js';
import { buildBatch, setLogAppendTime, parseBatches, type Compression } from '../protocol/records/index.js';
import type { Appended, BatchToAppend } from '../storage/log-types.js';
import type { OutboxPending, OutboxPolling, OutboxRecord } from '../storage/outbox-types.js';
import type { PartitionLog } from './partition-log.js';
import { batchToAppend } from './partition-writer.js';
import type { TopicConfig } from './topic-configs.js';
import type { Topic } from './topic-manager.js';

export type { OutboxPending, OutboxPolling, OutboxRecord } from '../storage/outbox-types.js';

/** The outbox's statements (OutboxStore). */
export interface OutboxStorage {
  pendingPartitions(): Promise<{ topicId: string; partition: number }[]>;
  pending(topicId: string, partition: number, maxCommits: number): Promise<OutboxPending | null>;
  appendClaimed(
    topicId: string,
    partition: number,
    claim: { firstSeq: bigint; lastSeq: bigint; commits: number },
    offsetCount: bigint,
    batches: readonly BatchToAppend[],
  ): Promise<Appended | 'claimed' | null>;
  startPolling(): Promise<OutboxPolling | null>;
}

/** What the relay needs of the log and the topics (LogManager, TopicManager). */
export interface OutboxRelayOptions {
  store: OutboxStorage;
  logs: {
    partition(topicId: string, partition: number): Promise<PartitionLog | null>;
    appendBetweenFlushes(p: PartitionLog, run: (logEnd: bigint) => Promise<{ appended: Appended; batches: readonly BatchToAppend[] } | null>): Promise<void>;
  };
  topics: { getByIdLoading(topicId: string): Promise<Topic | null>; topicConfig(topic: Topic): TopicConfig };
  clock: Clock;
  log: Logger;
}

/** Sending transactions taken in one append statement. */
const MAX_COMMITS_PER_APPEND = 256;
/** Records go into batches of at most this many bytes (a larger record alone in its batch). */
const MAX_BATCH_BYTES = 1024 * 1024;
/** The sweep for records whose NOTIFY no broker heard. */
const SWEEP_INTERVAL_MS = 10_000;
/** A partition whose relay failed (PostgreSQL away) is tried again after this long. */
const RETRY_MS = 1000;
/** While polling: how often the relay looks for committed records (the added COMMIT → log latency, half of it on average). */
const POLL_MS = 5;
/** Polling stops after this long without records (sending transactions NOTIFY again). */
const IDLE_AFTER_MS = 200;

const CODECS: Record<TopicConfig['compressionType'], Compression> = { producer: 0, uncompressed: 0, gzip: 1, snappy: 2, lz4: 3, zstd: 4 };

export class OutboxRelay {
  private readonly o: OutboxRelayOptions;
  /** Partitions being relayed; `again`: a NOTIFY came meanwhile, read once more before stopping. */
  private readonly running = new Map<string, { again: boolean; done: Promise<void> }>();
  private sweepTimer: NodeJS.Timeout | null = null;
  private stopped = false;
  /** Polling (or starting to): sending transactions do not NOTIFY meanwhile. */
  private polling: Promise<void> | null = null;

  constructor(options: OutboxRelayOptions) {
    this.o = options;
  }

  /** Relays what is pending now and sweeps every SWEEP_INTERVAL_MS from now on. */
  start(): void {
    this.sweep();
    this.sweepTimer = setInterval(() => this.sweep(), SWEEP_INTERVAL_MS);
    this.sweepTimer.unref();
  }

  /** Stops sweeping and waits for the appends under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    await this.polling;
    await Promise.all([...this.running.values()].map((r) => r.done));
  }

  /** A send's NOTIFY: `topicId:partition`. */
  notified(payload: string): void {
    const [topicId, partition] = payload.split(':');
    if (topicId && partition !== undefined && /^\d+$/.test(partition)) {
      this.relay(topicId, Number(partition));
      this.poll();
    }
  }

  /** Relays every partition with committed records pending (NOTIFYs may have been missed). */
  sweep(): void {
    if (this.stopped) return;
    this.o.store.pendingPartitions().then(
      (partitions) => {
        partitions.forEach((p) => this.relay(p.topicId, p.partition));
        if (partitions.length > 0) this.poll();
      },
      (err: Error) => this.o.log.warn({ err: err.message, code: LogCode.SQL_SEND_RELAY_FAILED }, 'outbox sweep failed'),
    );
  }

  /** Starts polling unless this relay already does (or another broker's: then its NOTIFYs stop, and that relay finds the records). */
  private poll(): void {
    if (this.polling || this.stopped) return;
    this.polling = this.pollWhileBusy().then(
      (polled) => {
        this.polling = null;
        if (polled) this.sweep(); // what committed as it stopped (those transactions did not NOTIFY)
      },
      (err: Error) => {
        this.polling = null;
        this.o.log.warn({ err: err.message, code: LogCode.SQL_SEND_RELAY_FAILED }, 'outbox polling failed; retrying');
        setTimeout(() => this.sweep(), RETRY_MS).unref();
      },
    );
  }

  /** False when another relay polls (or a sending transaction probes the lock just now, and so NOTIFYs). */
  private async pollWhileBusy(): Promise<boolean> {
    const polling = await this.o.store.startPolling();
    if (!polling) return false;
    try {
      let busyAt = this.o.clock.now();
      while (!this.stopped) {
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
        const partitions = await this.o.store.pendingPartitions();
        partitions.forEach((p) => this.relay(p.topicId, p.partition));
        if (partitions.length > 0 || this.running.size > 0) busyAt = this.o.clock.now();
        else if (this.o.clock.now() - busyAt >= IDLE_AFTER_MS) break;
      }
    } finally {
      await polling.stop();
    }
    return true;
  }

  private relay(topicId: string, partition: number): void {
    if (this.stopped) return;
    const key = `${topicId}:${partition}`;
    const running = this.running.get(key);
    if (running) {
      running.again = true;
      return;
    }
    const state = { again: false, done: Promise.resolve() };
    state.done = this.drain(topicId, partition, state).then(
      () => void this.running.delete(key),
      (err: Error) => {
        this.running.delete(key);
        this.o.log.warn({ err: err.message, code: LogCode.SQL_SEND_RELAY_FAILED, topicId, partition }, 'outbox relay failed; retrying');
        setTimeout(() => this.relay(topicId, partition), RETRY_MS).unref();
      },
    );
    this.running.set(key, state);
  }

  /** Appends the partition's pending records until none is left (and no NOTIFY came meanwhile). */
  private async drain(topicId: string, partition: number, state: { again: boolean }): Promise<void> {
    for (;;) {
      state.again = false;
      const pending = await this.o.store.pending(topicId, partition, MAX_COMMITS_PER_APPEND);
      if (!pending) {
        if (state.again && !this.stopped) continue;
        return;
      }
      const p = await this.o.logs.partition(topicId, partition);
      const topic = p ? await this.o.topics.getByIdLoading(topicId) : null;
      if (!p || !topic) return; // deleted: its outbox rows went with it
      const config = this.o.topics.topicConfig(topic);
      await this.o.logs.appendBetweenFlushes(p, async () => {
        const batches = outboxBatches(pending.records, config, p.leaderEpoch, BigInt(this.o.clock.now()));
        const offsetCount = batches.reduce((n, b) => n + BigInt(b.recordCount), 0n);
        const appended = await this.o.store.appendClaimed(topicId, partition, pending, offsetCount, batches);
        // 'claimed': another broker's relay appended them; null: the partition is gone.
        return appended === null || appended === 'claimed' ? null : { appended, batches };
      });
      if (this.stopped) return;
    }
  }
}

/**
 * The records as magic-v2 batches of at most MAX_BATCH_BYTES, as a producer
 * without idempotence writes them: no producer id, CreateTime from the send
 * call (or the append's time where the topic says LogAppendTime), compressed
 * as the topic's compression.type asks (`producer`: uncompressed, as sent).
 */
export function outboxBatches(records: readonly OutboxRecord[], config: TopicConfig, leaderEpoch: number, nowMs: bigint): BatchToAppend[] {
  const out: BatchToAppend[] = [];
  let relative = 0n;
  for (let start = 0; start < records.length;) {
    let end = start;
    let bytes = 0;
    while (end < records.length && (end === start || bytes + recordBytes(records[end]!) <= MAX_BATCH_BYTES)) bytes += recordBytes(records[end++]!);
    const chunk = records.slice(start, end);
    const baseTimestamp = chunk[0]!.timestampMs;
    const data = buildBatch({
      partitionLeaderEpoch: leaderEpoch,
      compression: CODECS[config.compressionType],
      baseTimestamp,
      records: chunk.map((r) => ({ timestampDelta: r.timestampMs - baseTimestamp, key: r.key, value: r.value, headers: r.headers })),
    });
    let header = parseBatches(data, { mode: 'log' }).batches[0]!;
    if (config.messageTimestampType === 'LogAppendTime') {
      setLogAppendTime(data, header, nowMs);
      header = parseBatches(data, { mode: 'log' }).batches[0]!;
    }
    out.push(batchToAppend(data, header, relative));
    relative += BigInt(chunk.length);
    start = end;
  }
  return out;
}

const recordBytes = (r: OutboxRecord): number => 32 + (r.key?.length ?? 0) + (r.value?.length ?? 0) + r.headers.reduce((n, h) => n + h.key.length + (h.value?.length ?? 0) + 8, 0);
