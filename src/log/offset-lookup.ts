// ListOffsets: the offset for a timestamp, or for one of Kafka's special
// timestamps (-1 latest, -2 earliest, -3 max timestamp, -4 earliest local,
// -5 latest tiered).
import { ErrorCode } from '../protocol/errors.js';
import { decodeRecords, readBatchHeaderAt } from '../protocol/records/index.js';
import type { StoredBatch } from '../storage/log-types.js';
import { READ_COMMITTED, READ_UNCOMMITTED } from './log-reader.js';
import type { PartitionLog } from './partition-log.js';

export interface OffsetLookup {
  errorCode: number;
  offset: bigint;
  timestamp: bigint;
}

export const EARLIEST_TIMESTAMP = -2n;
export const LATEST_TIMESTAMP = -1n;
export const MAX_TIMESTAMP = -3n;
export const EARLIEST_LOCAL_TIMESTAMP = -4n;
export const LATEST_TIERED_TIMESTAMP = -5n;

/** The batches the look-ups read (LogStorage). */
export interface TimestampIndex {
  firstBatchWithTimestampAtLeast(topicId: string, partition: number, timestamp: bigint, logStartOffset: bigint): Promise<StoredBatch | null>;
  batchWithMaxTimestamp(topicId: string, partition: number, logStartOffset: bigint): Promise<StoredBatch | null>;
}

export async function offsetForTimestamp(store: TimestampIndex, p: PartitionLog, timestamp: bigint, isolationLevel = READ_UNCOMMITTED): Promise<OffsetLookup> {
  const none = ErrorCode.NONE;
  const notFound = { errorCode: none, offset: -1n, timestamp: -1n };
  if (timestamp === LATEST_TIMESTAMP) {
    return { errorCode: none, offset: isolationLevel === READ_COMMITTED ? p.lastStableOffset : p.highWatermark, timestamp: -1n };
  }
  if (timestamp === EARLIEST_TIMESTAMP || timestamp === EARLIEST_LOCAL_TIMESTAMP) return { errorCode: none, offset: p.logStartOffset, timestamp: -1n };
  // No tiered storage here: nothing is tiered, as Kafka answers when remote storage is disabled.
  if (timestamp === LATEST_TIERED_TIMESTAMP) return notFound;
  if (timestamp === MAX_TIMESTAMP) {
    const batch = await store.batchWithMaxTimestamp(p.topicId, p.partition, p.logStartOffset);
    if (!batch) return notFound;
    return findInBatch(batch.data, batch.baseOffset, (ts, _offset, best) => best === null || ts > best) ?? notFound;
  }
  if (timestamp < 0n) return { errorCode: ErrorCode.INVALID_REQUEST, offset: -1n, timestamp: -1n };
  // As Kafka searches its segments: the first record at or after the time and at or after the log
  // start; a batch whose later records all lie below the log start passes the search on to the next.
  const logStartOffset = p.logStartOffset;
  for (let from = logStartOffset; ;) {
    const batch = await store.firstBatchWithTimestampAtLeast(p.topicId, p.partition, timestamp, from);
    if (!batch) return notFound;
    const found = findInBatch(batch.data, batch.baseOffset, (ts, offset, best) => best === null && ts >= timestamp && offset >= logStartOffset);
    if (found) return found;
    from = batch.lastOffset + 1n;
  }
}

/** Scans a stored batch's records; `better(ts, offset, best)` says whether a record should replace the current pick. */
function findInBatch(data: Buffer, baseOffset: bigint, better: (ts: bigint, offset: bigint, best: bigint | null) => boolean): OffsetLookup | null {
  const header = readBatchHeaderAt(data, 0);
  if (!header) return null;
  const { records, error } = header.timestampType === 1 ? { records: null, error: null } : decodeRecords(data, header);
  if (error) return null;
  let best: OffsetLookup | null = null;
  if (records === null) {
    // LogAppendTime: every record carries the batch's max timestamp.
    for (let offset = baseOffset; offset <= baseOffset + BigInt(header.lastOffsetDelta) && best === null; offset++) {
      if (better(header.maxTimestamp, offset, null)) best = { errorCode: ErrorCode.NONE, offset, timestamp: header.maxTimestamp };
    }
    return best;
  }
  for (const r of records) {
    const ts = header.baseTimestamp + r.timestampDelta;
    const offset = baseOffset + BigInt(r.offsetDelta);
    if (better(ts, offset, best?.timestamp ?? null)) best = { errorCode: ErrorCode.NONE, offset, timestamp: ts };
  }
  return best;
}

/**
 * ListOffsets v0 (removed in Kafka 4.0): up to maxNumOffsets offsets, newest
 * first, as Kafka 3.9's legacyFetchOffsetsBefore answered from its segment
 * list. Kafka listed each segment's base offset with the segment file's last
 * modification time, plus the log end offset with the current time when the
 * last segment held data; here the partition is one segment whose last
 * modification is its newest record's timestamp, and its end is the high
 * watermark (what Kafka capped a consumer's answer at). -1 starts from the
 * end, -2 from the start, any other timestamp from the newest entry not
 * after it.
 */
export async function legacyOffsetsBefore(store: TimestampIndex, p: PartitionLog, timestamp: bigint, maxNumOffsets: number, nowMs: bigint): Promise<bigint[]> {
  const end = p.highWatermark;
  const hasData = end > p.logStartOffset;
  const newest = hasData ? await offsetForTimestamp(store, p, MAX_TIMESTAMP) : null;
  const lastModified = newest !== null && newest.timestamp >= 0n ? newest.timestamp : nowMs;
  const entries: { offset: bigint; time: bigint }[] = [{ offset: p.logStartOffset, time: lastModified }];
  if (hasData) entries.push({ offset: end, time: nowMs });
  let start: number;
  if (timestamp === LATEST_TIMESTAMP) start = entries.length - 1;
  else if (timestamp === EARLIEST_TIMESTAMP) start = 0;
  else {
    start = entries.length - 1;
    while (start >= 0 && entries[start]!.time > timestamp) start--;
  }
  const out: bigint[] = [];
  for (let i = start; i >= 0 && out.length < maxNumOffsets; i--) out.push(entries[i]!.offset);
  return out;
}
