// Log compaction (cleanup.policy=compact), as Kafka's log cleaner does it,
// over batches stored one per PostgreSQL row.
//
// Per partition, a pass runs when the dirty ratio (bytes above the cleaner
// checkpoint ÷ all bytes of the cleanable range) reaches
// min.cleanable.dirty.ratio, when the oldest dirty batch is older than
// max.compaction.lag.ms, or when a kept tombstone's delete horizon has passed.
// The cleanable range ends at the newest batch (Kafka's active segment, never
// compacted), at the first dirty batch younger than min.compaction.lag.ms, and
// at the high watermark.
//
// 1. Map: key → latest offset over [checkpoint, high watermark), read in
//    chunks. Below the checkpoint every key already appears once (an earlier
//    pass kept only the latest), so records there need no map entry: they are
//    superseded exactly when the map holds a later offset for their key.
// 2. Rewrite [log start, range end) chunk by chunk, each chunk one statement
//    (one transaction): a batch keeps the records that are the latest for
//    their key, its base offset, last offset delta, producer fields,
//    timestamp type and codec; a batch left empty is deleted.
// 3. Checkpoint = range end.
//
// The newest batch of each producer id is never deleted: left without
// records it stays as an empty batch (as Kafka keeps it), since an
// idempotent producer's sequence state is read back from its newest batches.
//
// Tombstones follow KIP-534: the first pass that keeps a tombstone stamps
// its batch with a delete horizon (now + delete.retention.ms, in the base
// timestamp, attribute bit 6, record deltas relative to it so record
// timestamps do not change); a later pass at or after the horizon drops it.
// The clock is therefore the cleaner's, not the producer's: a tombstone sent
// with an old CreateTime still survives delete.retention.ms after the
// cleaner first saw it. Control and transactional batches are left as they
// are; their records supersede nothing (an aborted record must not), and a
// tombstone whose key appears in an earlier transactional batch is kept.
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { Logger } from '../observability/logger.js';
import { ATTR_DELETE_HORIZON, ATTRIBUTES_OFFSET, CRC_OFFSET, buildBatch, decodeRecords, readBatchHeaderAt, updateCrc, type BatchHeader, type KafkaRecord } from '../protocol/records/index.js';
import type { BatchRewrite, CleanerState, CompactionStore } from '../storage/pg/compaction-store.js';
import type { LogManager } from './log-manager.js';
import type { PartitionLog } from './partition-log.js';
import type { TopicConfig } from './topic-configs.js';
import type { Topic } from './topic-manager.js';
import { LogCode } from '../observability/log-codes.js';

/** Longest synchronous stretch of decoding/encoding before the cleaner yields to produce and fetch. */
const SLICE_MS = 4;

/**
 * Key → offset of its latest record. Keys are held as latin1 strings (one
 * byte per character, a one-byte V8 string) and offsets as numbers (exact up
 * to 2^53).
 */
export class LatestOffsets {
  private readonly map = new Map<string, number>();

  get size(): number {
    return this.map.size;
  }

  note(key: Buffer, offset: number): void {
    const k = key.toString('latin1');
    const prev = this.map.get(k);
    if (prev === undefined || offset > prev) this.map.set(k, offset);
  }

  get(key: Buffer): number | undefined {
    return this.map.get(key.toString('latin1'));
  }
}

export interface RecordSelection {
  kept: KafkaRecord[];
  removed: number;
  /** Kept records with a null value. */
  tombstones: number;
}

/**
 * Which records of a batch survive: the latest record of each key (by the
 * map; a key the map lacks has no later record), minus tombstones whose delete
 * horizon has passed (unless `pinned` holds their key) and keyless records
 * (Kafka's cleaner drops those too).
 */
export function selectRecords(baseOffset: number, records: readonly KafkaRecord[], latest: LatestOffsets, opts: { horizonPassed: boolean; pinned?: ReadonlySet<string> }): RecordSelection {
  const kept: KafkaRecord[] = [];
  let tombstones = 0;
  for (const r of records) {
    if (r.key === null) continue;
    const newest = latest.get(r.key);
    if (newest !== undefined && newest > baseOffset + r.offsetDelta) continue;
    if (r.value === null) {
      if (opts.horizonPassed && !opts.pinned?.has(r.key.toString('latin1'))) continue;
      tombstones++;
    }
    kept.push(r);
  }
  return { kept, removed: records.length - kept.length, tombstones };
}

export type CleanedBatch =
  | { action: 'keep'; removed: 0; tombstoneHorizon: number | null; skipped?: string }
  | { action: 'delete'; removed: number; tombstoneHorizon: null }
  | { action: 'rewrite'; removed: number; tombstoneHorizon: number | null; data: Buffer; recordCount: number; firstTimestamp: bigint; maxTimestamp: bigint };

/** Decodes a stored batch's records; null for control/transactional batches and batches that cannot be read. */
function readable(data: Buffer): { header: BatchHeader; records: KafkaRecord[] } | { skipped: string } {
  const header = readBatchHeaderAt(data, 0);
  if (!header) return { skipped: 'unreadable batch header' };
  if (header.isControl) return { skipped: 'control batch' };
  if (header.isTransactional) return { skipped: 'transactional batch' };
  const { records, error, message } = decodeRecords(data, header);
  if (error) return { skipped: `${error}: ${message ?? ''}` };
  return { header, records };
}

export interface CleanOptions {
  now: number;
  deleteRetentionMs: number;
  /** Keys of earlier transactional records: their tombstones stay. */
  pinned?: ReadonlySet<string>;
  /**
   * The batch is its producer's newest in the partition: left without
   * records it stays as an empty batch (Kafka does the same), because the
   * producer's sequence state is read back from it.
   */
  keepEmpty?: boolean;
}

/** Compacts one stored batch against the map (see the file comment for the rules). */
export function cleanBatch(data: Buffer, latest: LatestOffsets, opts: CleanOptions): CleanedBatch {
  const { now, deleteRetentionMs, pinned } = opts;
  const read = readable(data);
  if ('skipped' in read) return { action: 'keep', removed: 0, tombstoneHorizon: null, skipped: read.skipped };
  const { header: h, records } = read;
  const horizon = h.attributes & ATTR_DELETE_HORIZON ? Number(h.baseTimestamp) : null;
  const { kept, removed, tombstones } = selectRecords(Number(h.baseOffset), records, latest, { horizonPassed: horizon !== null && now >= horizon, pinned });
  if (kept.length === 0 && opts.keepEmpty) {
    if (records.length === 0) return { action: 'keep', removed: 0, tombstoneHorizon: null };
    const empty = buildBatch({
      baseOffset: h.baseOffset,
      partitionLeaderEpoch: h.partitionLeaderEpoch,
      timestampType: h.timestampType,
      producerId: h.producerId,
      producerEpoch: h.producerEpoch,
      baseSequence: h.baseSequence,
      baseTimestamp: h.baseTimestamp,
      maxTimestamp: h.maxTimestamp,
      lastOffsetDelta: h.lastOffsetDelta,
      records: [],
    });
    // No record, no timestamp: the row's timestamp columns say so (-1), so time look-ups pass it by.
    return { action: 'rewrite', removed, tombstoneHorizon: null, data: empty, recordCount: 0, firstTimestamp: -1n, maxTimestamp: -1n };
  }
  if (kept.length === 0) return { action: 'delete', removed, tombstoneHorizon: null };
  const newHorizon = tombstones > 0 ? (horizon ?? now + deleteRetentionMs) : null;
  if (removed === 0 && (tombstones === 0 || horizon !== null)) return { action: 'keep', removed: 0, tombstoneHorizon: newHorizon };

  // Record timestamps as stored (base + delta); with LogAppendTime consumers read the batch's max timestamp instead.
  const stamps = kept.map((r) => h.baseTimestamp + r.timestampDelta);
  const first = stamps[0]!;
  const base = newHorizon !== null ? BigInt(newHorizon) : first;
  let max = first;
  for (const ts of stamps) if (ts > max) max = ts;
  const maxTimestamp = h.timestampType === 1 ? h.maxTimestamp : max;
  const out = buildBatch({
    baseOffset: h.baseOffset,
    partitionLeaderEpoch: h.partitionLeaderEpoch,
    compression: h.compression,
    timestampType: h.timestampType,
    producerId: h.producerId,
    producerEpoch: h.producerEpoch,
    baseSequence: h.baseSequence,
    baseTimestamp: base,
    maxTimestamp,
    lastOffsetDelta: h.lastOffsetDelta,
    records: kept.map((r, i) => ({ offsetDelta: r.offsetDelta, timestampDelta: stamps[i]! - base, key: r.key, value: r.value, headers: r.headers, attributes: r.attributes })),
  });
  if (newHorizon !== null) {
    out.writeInt16BE(out.readInt16BE(ATTRIBUTES_OFFSET) | ATTR_DELETE_HORIZON, ATTRIBUTES_OFFSET);
    const header = readBatchHeaderAt(out, 0)!;
    updateCrc(out, header);
  }
  return { action: 'rewrite', removed, tombstoneHorizon: newHorizon, data: out, recordCount: kept.length, firstTimestamp: first, maxTimestamp };
}

export type CleaningReason = 'dirty-ratio' | 'max-compaction-lag' | 'tombstones-due';

/** Whether a partition is due for compaction now, and why (null: not due). */
export function cleaningDue(state: CleanerState, config: Pick<TopicConfig, 'minCleanableDirtyRatio' | 'maxCompactionLagMs'>, now: number): CleaningReason | null {
  if (state.rangeEnd <= state.logStartOffset || state.totalBytes === 0) return null;
  if (state.dirtyBytes > 0 && state.dirtyBytes / state.totalBytes >= config.minCleanableDirtyRatio) return 'dirty-ratio';
  if (state.dirtyBytes > 0 && state.firstDirtyTimestamp !== null && state.firstDirtyTimestamp < now - config.maxCompactionLagMs) return 'max-compaction-lag';
  if (state.tombstonesDueAt !== null && state.tombstonesDueAt <= now) return 'tombstones-due';
  return null;
}

export interface CleanStats {
  topic: string;
  partition: number;
  reason: CleaningReason;
  /** Offsets below this one are now compacted (the new checkpoint). */
  cleanedOffset: bigint;
  /** Distinct keys in the offset map. */
  keys: number;
  batchesRewritten: number;
  batchesDeleted: number;
  recordsRemoved: number;
  bytesBefore: number;
  bytesAfter: number;
  durationMs: number;
}

export class Compactor {
  constructor(
    private readonly store: CompactionStore,
    private readonly logs: LogManager,
    private readonly chunkBatches: number,
    private readonly log: Logger,
  ) {}

  /** Compacts each due partition of the topic; a failing partition is logged and left for the next pass. */
  async compactTopic(topic: Topic, config: TopicConfig, now: number): Promise<CleanStats[]> {
    const done: CleanStats[] = [];
    for (let i = 0; i < topic.partitionCount; i++) {
      try {
        const stats = await this.compactPartition(topic, i, config, now);
        if (stats) done.push(stats);
      } catch (err) {
        this.log.warn({ err: (err as Error).message, topic: topic.name, partition: i, code: LogCode.COMPACTION_FAILED }, 'compaction failed; the next pass retries');
      }
    }
    return done;
  }

  async compactPartition(topic: Topic, partition: number, config: TopicConfig, now: number): Promise<CleanStats | null> {
    const p = await this.logs.partition(topic.topicId, partition);
    if (!p) return null;
    const state = await this.store.cleanerState(topic.topicId, partition, BigInt(now) - BigInt(config.minCompactionLagMs));
    if (!state) return null;
    const reason = cleaningDue(state, config, now);
    if (!reason) return null;
    const started = performance.now();
    const latest = await this.buildMap(p, state.dirtyStart, state.highWatermark);
    const stats = await this.rewrite(p, state, latest, config.deleteRetentionMs, now);
    await this.store.saveCheckpoint(p.topicId, partition, state.rangeEnd, stats.tombstonesDueAt);
    const result: CleanStats = {
      topic: topic.name,
      partition,
      reason,
      cleanedOffset: state.rangeEnd,
      keys: latest.size,
      batchesRewritten: stats.rewritten,
      batchesDeleted: stats.deleted,
      recordsRemoved: stats.removed,
      bytesBefore: stats.bytesBefore,
      bytesAfter: stats.bytesAfter,
      durationMs: Math.round(performance.now() - started),
    };
    this.log.info({ ...result, cleanedOffset: String(result.cleanedOffset) }, 'compacted partition');
    return result;
  }

  /** Key → latest offset over [from, to), a chunk of batches at a time. */
  private async buildMap(p: PartitionLog, from: bigint, to: bigint): Promise<LatestOffsets> {
    const latest = new LatestOffsets();
    let slice = performance.now();
    for (let at = from; at < to;) {
      const chunk = await this.store.readBatches(p.topicId, p.partition, at, to, this.chunkBatches);
      if (chunk.length === 0) break;
      for (const b of chunk) {
        const read = readable(b.data);
        if ('skipped' in read) continue;
        const base = Number(read.header.baseOffset);
        for (const r of read.records) if (r.key !== null) latest.note(r.key, base + r.offsetDelta);
        if (performance.now() - slice > SLICE_MS) {
          await yieldToLoop();
          slice = performance.now();
        }
      }
      at = chunk[chunk.length - 1]!.lastOffset + 1n;
    }
    return latest;
  }

  /** Rewrites [log start, range end) chunk by chunk; each chunk is one transaction. */
  private async rewrite(p: PartitionLog, state: CleanerState, latest: LatestOffsets, deleteRetentionMs: number, now: number) {
    const pinned = new Set<string>();
    const producers = await this.store.producersNewestBatch(p.topicId, p.partition);
    const stats = { rewritten: 0, deleted: 0, removed: 0, bytesBefore: 0, bytesAfter: 0, tombstonesDueAt: null as number | null };
    let slice = performance.now();
    for (let at = state.logStartOffset; at < state.rangeEnd;) {
      const chunk = await this.store.readBatches(p.topicId, p.partition, at, state.rangeEnd, this.chunkBatches);
      if (chunk.length === 0) break;
      const changes: BatchRewrite[] = [];
      let removed = 0;
      for (const b of chunk) {
        const header = readBatchHeaderAt(b.data, 0);
        if (header?.isTransactional && !header.isControl) {
          for (const r of decodeRecords(b.data, header).records) if (r.key !== null) pinned.add(r.key.toString('latin1'));
        }
        const keepEmpty = header !== null && header.producerId >= 0n && producers.get(header.producerId) === b.baseOffset;
        const cleaned = cleanBatch(b.data, latest, { now, deleteRetentionMs, pinned, keepEmpty });
        stats.bytesBefore += b.data.length;
        if (cleaned.tombstoneHorizon !== null) stats.tombstonesDueAt = Math.min(stats.tombstonesDueAt ?? Infinity, cleaned.tombstoneHorizon);
        const expectedCrc = b.data.readInt32BE(CRC_OFFSET);
        if (cleaned.action === 'keep') {
          stats.bytesAfter += b.data.length;
          if (cleaned.skipped && !cleaned.skipped.endsWith('batch')) {
            this.log.warn({ topicId: p.topicId, partition: p.partition, baseOffset: String(b.baseOffset), why: cleaned.skipped, code: LogCode.COMPACTION_SKIPPED_BATCH }, 'batch left uncompacted');
          }
        } else if (cleaned.action === 'delete') {
          changes.push({ baseOffset: b.baseOffset, expectedCrc, data: null, recordCount: 0, firstTimestamp: 0n, maxTimestamp: 0n });
          removed += cleaned.removed;
        } else {
          changes.push({ baseOffset: b.baseOffset, expectedCrc, data: cleaned.data, recordCount: cleaned.recordCount, firstTimestamp: cleaned.firstTimestamp, maxTimestamp: cleaned.maxTimestamp });
          stats.bytesAfter += cleaned.data.length;
          removed += cleaned.removed;
        }
        if (performance.now() - slice > SLICE_MS) {
          await yieldToLoop();
          slice = performance.now();
        }
      }
      const end = chunk[chunk.length - 1]!.lastOffset + 1n;
      if (changes.length > 0) {
        const applied = await this.store.rewrite(p.topicId, p.partition, changes);
        stats.rewritten += applied.updated;
        stats.deleted += applied.deleted;
        // Rows changed meanwhile (another broker's cleaner, retention) were skipped: count only what was applied.
        if (applied.updated + applied.deleted === changes.length) stats.removed += removed;
        // This process's tail cache may hold the old bytes of these batches: reads below `end` now go to PostgreSQL.
        this.logs.forgetCachedBelow(p, end);
      }
      at = end;
    }
    return stats;
  }
}
