// What a topic's configs and Kafka's LogValidator ask of a produced batch
// before it is appended: every record's timestamp within
// message.timestamp.before/after.max.ms, keys on compacted topics, the batch's
// max timestamp recomputed from its records, recompression to
// compression.type, and LogAppendTime stamping. Offending records are named
// (KIP-467) and the whole batch is refused.
//
// Kafka reads every record of every batch. Here the records are read only
// when the header cannot vouch for them: a max timestamp below the base one
// (Sarama before 1.45 writes -1) or, for a single record, other than it; a
// header timestamp out of bounds; a bounded message.timestamp.before.max.ms
// and several records (one may precede the base timestamp); a LogAppendTime
// flag from the producer; a compacted topic; recompression. Otherwise the
// batch passes untouched, with no per-record work: a max timestamp that is
// plausible but not the records' true maximum is kept as sent.
import { ErrorCode } from '../protocol/errors.js';
import {
  buildBatch,
  decodeRecords,
  NO_TIMESTAMP,
  parseBatches,
  recordTimestamp,
  scanRecords,
  setLogAppendTime,
  setMaxTimestamp,
  type BatchError,
  type BatchHeader,
  type Compression,
  type KafkaRecord,
  type RecordVisitor,
} from '../protocol/records/index.js';
import type { IncomingBatch } from './partition-log.js';
import type { TopicConfig } from './topic-configs.js';

/** A refused record: its index in the batch and why (ProduceResponse's record_errors). */
export interface RecordError {
  batchIndex: number;
  message: string;
}

export type PolicyOutcome =
  | { ok: true; batch: IncomingBatch; logAppendTimeMs: bigint }
  /** recordErrors: the batch was refused for these records, and `message` is Kafka's error_message for it. */
  | { ok: false; errorCode: number; message: string; recordErrors?: RecordError[] };

const CODECS: Record<TopicConfig['compressionType'], Compression | null> = { producer: null, uncompressed: 0, gzip: 1, snappy: 2, lz4: 3, zstd: 4 };

const LONG_MAX = (1n << 63n) - 1n;
/** A config long held as a JS number (Long.MAX_VALUE rounds up to 2^63). */
const long = (ms: number): bigint => (ms >= 2 ** 63 ? LONG_MAX : BigInt(Math.trunc(ms)));

export function applyAppendPolicy(batch: IncomingBatch, config: TopicConfig, now: number, topicPartition: string): PolicyOutcome {
  let { data, header } = batch;
  const createTime = config.messageTimestampType === 'CreateTime';
  const nowMs = BigInt(now);
  const before = long(config.messageTimestampBeforeMaxMs);
  const after = long(config.messageTimestampAfterMaxMs);
  const outOfRange = (ts: bigint) => ts !== NO_TIMESTAMP && (nowMs - ts > before || ts - nowMs > after);
  const target = CODECS[config.compressionType];
  const recompress = target !== null && target !== header.compression;
  const compacted = config.cleanupPolicy.compact;
  const producerAppendTime = header.timestampType === 1;

  // When the header cannot vouch for the records (see above).
  const readRecords =
    compacted ||
    recompress ||
    (producerAppendTime && (!createTime || header.maxTimestamp === NO_TIMESTAMP || outOfRange(header.maxTimestamp))) ||
    (createTime &&
      !producerAppendTime &&
      (header.maxTimestamp < header.baseTimestamp ||
        (header.recordCount === 1 && header.maxTimestamp !== header.baseTimestamp) ||
        outOfRange(header.baseTimestamp) ||
        outOfRange(header.maxTimestamp) ||
        (before < LONG_MAX && header.recordCount > 1)));

  let maxTimestamp = header.maxTimestamp;
  let decoded: KafkaRecord[] = [];
  if (readRecords) {
    // Kafka's messages print a record as its iterator read it: a PartialDefaultRecord when a compressed batch stays as sent.
    const partial = header.compression !== 0 && !recompress;
    const errors: (RecordError & { errorCode: number })[] = [];
    let max = NO_TIMESTAMP;
    const visit: RecordVisitor = (batchIndex, offsetDelta, timestamp, keySize, valueSize) => {
      if (timestamp > max) max = timestamp;
      const offset = header.baseOffset + BigInt(offsetDelta);
      // Kafka's validateRecord: the key first, then the timestamp.
      if (compacted && keySize < 0) {
        errors.push({ errorCode: ErrorCode.INVALID_RECORD, batchIndex, message: `Compacted topic cannot accept message without key in topic partition ${topicPartition}` });
      } else if (createTime && timestamp !== NO_TIMESTAMP) {
        if (outOfRange(timestamp)) {
          const range = `[${BigInt.asIntN(64, nowMs - before)}, ${BigInt.asIntN(64, nowMs + after)}]`;
          errors.push({
            errorCode: ErrorCode.INVALID_TIMESTAMP,
            batchIndex,
            message: `Timestamp ${timestamp} of message with offset ${offset} is out of range. The timestamp should be within ${range}`,
          });
        }
      } else if (producerAppendTime) {
        const record = partial
          ? `PartialDefaultRecord(offset=${offset}, timestamp=${timestamp}, key=${keySize} bytes, value=${valueSize} bytes)`
          : `DefaultRecord(offset=${offset}, timestamp=${timestamp}, key=${Math.max(0, keySize)} bytes, value=${Math.max(0, valueSize)} bytes)`;
        errors.push({ errorCode: ErrorCode.INVALID_TIMESTAMP, batchIndex, message: `Invalid timestamp type in message ${record}. Producer should not set timestamp type to LogAppendTime.` });
      }
    };
    let read: { error: BatchError | null; message?: string };
    if (recompress) {
      const result = decodeRecords(data, header);
      decoded = result.records;
      if (!result.error) decoded.forEach((r, i) => visit(i, r.offsetDelta, recordTimestamp(header, r), r.key?.length ?? -1, r.value?.length ?? -1));
      read = result;
    } else {
      read = scanRecords(data, header, visit);
    }
    if (read.error) {
      return { ok: false, errorCode: ErrorCode[read.error === 'RECORD_TOO_LARGE' ? 'MESSAGE_TOO_LARGE' : read.error], message: read.message ?? 'records could not be read' };
    }
    if (errors.length > 0) return refuse(errors);
    maxTimestamp = max;
  }

  if (recompress) {
    data = rebuild(header, decoded, target, createTime ? maxTimestamp : nowMs);
    header = parseBatches(data, { mode: 'log' }).batches[0]!;
  }
  if (!createTime) setLogAppendTime(data, header, nowMs);
  else if (readRecords || producerAppendTime) setMaxTimestamp(data, header, 0, maxTimestamp); // recomputes the CRC if it changes anything
  return { ok: true, batch: { data, header }, logAppendTimeMs: createTime ? -1n : nowMs };
}

/** Kafka's processRecordErrors: INVALID_TIMESTAMP if any record's timestamp is the cause, else INVALID_RECORD listing the first three. */
function refuse(errors: (RecordError & { errorCode: number })[]): PolicyOutcome {
  const recordErrors = errors.map(({ batchIndex, message }) => ({ batchIndex, message }));
  if (errors.some((e) => e.errorCode === ErrorCode.INVALID_TIMESTAMP)) {
    return { ok: false, errorCode: ErrorCode.INVALID_TIMESTAMP, message: 'One or more records have been rejected due to invalid timestamp', recordErrors };
  }
  const shown = recordErrors.slice(0, 3).map((e) => `RecordError(batchIndex=${e.batchIndex}, message='${e.message}')`);
  return {
    ok: false,
    errorCode: ErrorCode.INVALID_RECORD,
    message: `One or more records have been rejected due to ${errors.length} record errors in total, and only showing the first three errors at most: [${shown.join(', ')}]`,
    recordErrors,
  };
}

/** The records rewritten in `compression`, as Kafka's MemoryRecordsBuilder: the base timestamp is the first record's. */
function rebuild(header: BatchHeader, records: KafkaRecord[], compression: Compression, maxTimestamp: bigint): Buffer {
  const timestamps = records.map((r) => recordTimestamp(header, r));
  const baseTimestamp = timestamps[0] ?? header.baseTimestamp;
  return buildBatch({
    compression,
    timestampType: 0,
    isTransactional: header.isTransactional,
    producerId: header.producerId,
    producerEpoch: header.producerEpoch,
    baseSequence: header.baseSequence,
    baseTimestamp,
    maxTimestamp,
    lastOffsetDelta: header.lastOffsetDelta,
    records: records.map((r, i) => ({ offsetDelta: r.offsetDelta, timestampDelta: timestamps[i]! - baseTimestamp, key: r.key, value: r.value, headers: r.headers })),
  });
}
