// What a topic's configs ask of a batch before it is appended, as Kafka's
// LogValidator applies them: timestamps within message.timestamp.before/
// after.max.ms, keys on compacted topics, recompression to compression.type,
// and LogAppendTime stamping. Batches pass through untouched (no per-record
// work) unless a config asks for one of these.
import { ErrorCode } from '../protocol/errors.js';
import { buildBatch, decodeRecords, parseBatches, setLogAppendTime, type BatchHeader, type Compression } from '../protocol/records/index.js';
import type { IncomingBatch } from './partition-log.js';
import type { TopicConfig } from './topic-configs.js';

export type PolicyOutcome =
  | { ok: true; batch: IncomingBatch; logAppendTimeMs: bigint }
  | { ok: false; errorCode: number; message: string };

const CODECS: Record<TopicConfig['compressionType'], Compression | null> = { producer: null, uncompressed: 0, gzip: 1, snappy: 2, lz4: 3, zstd: 4 };

export function applyAppendPolicy(batch: IncomingBatch, config: TopicConfig, now: number): PolicyOutcome {
  let { data, header } = batch;
  const logAppendTime = config.messageTimestampType === 'LogAppendTime';

  if (!logAppendTime) {
    // The batch header carries the first and the largest timestamp; Kafka checks every record's.
    const earliest = BigInt(now) - BigInt(Math.min(config.messageTimestampBeforeMaxMs, Number.MAX_SAFE_INTEGER));
    const latest = BigInt(now) + BigInt(Math.min(config.messageTimestampAfterMaxMs, Number.MAX_SAFE_INTEGER));
    for (const ts of [header.baseTimestamp, header.maxTimestamp]) {
      if (ts >= 0n && (ts < earliest || ts > latest)) {
        return {
          ok: false,
          errorCode: ErrorCode.INVALID_TIMESTAMP,
          message: `Timestamp ${ts} of message is out of range. The timestamp should be within [${earliest}, ${latest}]`,
        };
      }
    }
  }

  const target = CODECS[config.compressionType];
  const recompress = target !== null && target !== header.compression;
  if (config.cleanupPolicy.compact || recompress) {
    const { records, error } = decodeRecords(data, header);
    if (error) return { ok: false, errorCode: ErrorCode[error === 'RECORD_TOO_LARGE' ? 'MESSAGE_TOO_LARGE' : error], message: 'records could not be read' };
    if (config.cleanupPolicy.compact && records.some((r) => r.key === null)) {
      return { ok: false, errorCode: ErrorCode.INVALID_RECORD, message: 'Compacted topic cannot accept message without key' };
    }
    if (recompress) {
      data = rebuild(header, records, target);
      header = parseBatches(data, { mode: 'log' }).batches[0]!;
    }
  }

  if (logAppendTime) {
    setLogAppendTime(data, header, BigInt(now));
    header = { ...header, timestampType: 1, maxTimestamp: BigInt(now) };
  }
  return { ok: true, batch: { data, header }, logAppendTimeMs: logAppendTime ? BigInt(now) : -1n };
}

function rebuild(header: BatchHeader, records: ReturnType<typeof decodeRecords>['records'], compression: Compression): Buffer {
  return buildBatch({
    compression,
    timestampType: header.timestampType,
    isTransactional: header.isTransactional,
    producerId: header.producerId,
    producerEpoch: header.producerEpoch,
    baseSequence: header.baseSequence,
    baseTimestamp: header.baseTimestamp,
    maxTimestamp: header.maxTimestamp,
    lastOffsetDelta: header.lastOffsetDelta,
    records: records.map((r) => ({ offsetDelta: r.offsetDelta, timestampDelta: r.timestampDelta, key: r.key, value: r.value, headers: r.headers })),
  });
}
