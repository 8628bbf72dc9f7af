/**
 * Record batch (message format v2, magic 2) header access and produce-input validation.
 *
 * Nothing here looks at individual records: parseBatches / verifyCrc cost O(number of batches)
 * plus one native CRC-32C pass, so they are cheap enough for the produce path.
 */
import { crc32c } from './crc32c.js';
import { type Compression, isCompression } from './compression.js';

// Header field offsets (from the start of the batch)
export const BASE_OFFSET_OFFSET = 0;
export const BATCH_LENGTH_OFFSET = 8;
export const PARTITION_LEADER_EPOCH_OFFSET = 12;
export const MAGIC_OFFSET = 16;
export const CRC_OFFSET = 17;
export const ATTRIBUTES_OFFSET = 21;
export const LAST_OFFSET_DELTA_OFFSET = 23;
export const BASE_TIMESTAMP_OFFSET = 27;
export const MAX_TIMESTAMP_OFFSET = 35;
export const PRODUCER_ID_OFFSET = 43;
export const PRODUCER_EPOCH_OFFSET = 51;
export const BASE_SEQUENCE_OFFSET = 53;
export const RECORDS_COUNT_OFFSET = 57;
export const RECORDS_OFFSET = 61;

/** baseOffset + batchLength: the bytes not counted by batchLength. */
export const LOG_OVERHEAD = 12;
/** Size of a v2 batch header = smallest valid v2 batch. */
export const RECORD_BATCH_OVERHEAD = RECORDS_OFFSET;
/** Smallest batchLength any magic accepts (Kafka's LegacyRecord.RECORD_OVERHEAD_V0). */
export const MIN_BATCH_LENGTH_ANY_MAGIC = 14;
/** Bytes up to and including magic. */
export const HEADER_SIZE_UP_TO_MAGIC = MAGIC_OFFSET + 1;

export const MAGIC_V2 = 2;

export const ATTR_COMPRESSION_MASK = 0x07;
export const ATTR_TIMESTAMP_TYPE = 0x08;
export const ATTR_TRANSACTIONAL = 0x10;
export const ATTR_CONTROL = 0x20;
export const ATTR_DELETE_HORIZON = 0x40;

export const NO_PRODUCER_ID = -1n;
export const NO_PARTITION_LEADER_EPOCH = -1;
export const NO_SEQUENCE = -1;
export const NO_TIMESTAMP = -1n;

/** Smallest encoding of one record: length, attributes, timestampDelta, offsetDelta, keyLen, valueLen, headerCount. */
export const MIN_RECORD_SIZE = 7;

export interface BatchHeader {
  /** offset of the batch within the parsed buffer */
  start: number;
  /** exclusive end within the parsed buffer (start + batchLength + 12) */
  end: number;
  baseOffset: bigint;
  batchLength: number;
  partitionLeaderEpoch: number;
  magic: number;
  /** stored CRC-32C, unsigned */
  crc: number;
  attributes: number;
  /** attributes & 7. Values 5..7 are rejected by parseBatches; readBatchHeaderAt passes them through unchanged. */
  compression: Compression;
  timestampType: 0 | 1;
  isTransactional: boolean;
  isControl: boolean;
  lastOffsetDelta: number;
  baseTimestamp: bigint;
  maxTimestamp: bigint;
  producerId: bigint;
  producerEpoch: number;
  baseSequence: number;
  recordCount: number;
}

/** Kafka error names a batch can be refused with (the broker maps these to protocol error codes). */
export type BatchError =
  | 'CORRUPT_MESSAGE' // 2
  | 'RECORD_TOO_LARGE' // 10
  | 'UNSUPPORTED_FOR_MESSAGE_FORMAT' // 43 (not produced by this module today; kept for callers' mapping)
  | 'UNSUPPORTED_COMPRESSION_TYPE' // 76
  | 'INVALID_RECORD'; // 87

export interface ParseBatchesOptions {
  /**
   * 'produce' (default): input of a Produce request from a client. Applies Kafka's checks for client appends
   * (ProduceRequest.validateRecords, UnifiedLog.analyzeAndValidateRecords, LogValidator.validateBatch):
   * exactly one batch, magic 2, baseOffset 0, recordCount > 0, lastOffsetDelta == recordCount - 1,
   * no control batch, baseSequence >= 0 when a producer id is set.
   * 'log': batches written by the broker itself (stored, compacted, control). Structure only: any number of
   * batches, offset gaps allowed (lastOffsetDelta >= recordCount - 1), empty batches allowed.
   */
  mode?: 'produce' | 'log';
  /** Produce request version; zstd needs v7+ (UNSUPPORTED_COMPRESSION_TYPE otherwise). Unchecked when absent. */
  produceVersion?: number;
  /** Topic/broker message.max.bytes: a larger batch → RECORD_TOO_LARGE. Unchecked when absent. */
  maxBatchBytes?: number;
  /** Also verify each batch's CRC (same as calling verifyCrc), in Kafka's check order. Default false. */
  verifyCrc?: boolean;
  /** Stop silently at a trailing partial batch instead of failing (e.g. fetch responses cut at max bytes). Default false. */
  allowTrailingPartial?: boolean;
}

export interface ParseBatchesResult {
  /** Batches parsed before any error (all of them when error is null). */
  batches: BatchHeader[];
  error: BatchError | null;
  message?: string;
  /** With allowTrailingPartial: number of bytes of the trailing partial batch that were skipped. */
  partialBytes?: number;
  /**
   * Which walk found the error: the framing of the buffer (Kafka's request-level
   * checks) or one framed batch's own fields (Kafka's checks in the log append).
   */
  stage?: 'framing' | 'batch';
}

/** Decode the header of a batch known to be at least RECORD_BATCH_OVERHEAD bytes and to fit in buf. */
function decodeHeader(buf: Buffer, pos: number, batchLength: number): BatchHeader {
  const attributes = buf.readInt16BE(pos + ATTRIBUTES_OFFSET);
  return {
    start: pos,
    end: pos + batchLength + LOG_OVERHEAD,
    baseOffset: buf.readBigInt64BE(pos + BASE_OFFSET_OFFSET),
    batchLength,
    partitionLeaderEpoch: buf.readInt32BE(pos + PARTITION_LEADER_EPOCH_OFFSET),
    magic: buf.readInt8(pos + MAGIC_OFFSET),
    crc: buf.readUInt32BE(pos + CRC_OFFSET),
    attributes,
    compression: (attributes & ATTR_COMPRESSION_MASK) as Compression,
    timestampType: attributes & ATTR_TIMESTAMP_TYPE ? 1 : 0,
    isTransactional: (attributes & ATTR_TRANSACTIONAL) !== 0,
    isControl: (attributes & ATTR_CONTROL) !== 0,
    lastOffsetDelta: buf.readInt32BE(pos + LAST_OFFSET_DELTA_OFFSET),
    baseTimestamp: buf.readBigInt64BE(pos + BASE_TIMESTAMP_OFFSET),
    maxTimestamp: buf.readBigInt64BE(pos + MAX_TIMESTAMP_OFFSET),
    producerId: buf.readBigInt64BE(pos + PRODUCER_ID_OFFSET),
    producerEpoch: buf.readInt16BE(pos + PRODUCER_EPOCH_OFFSET),
    baseSequence: buf.readInt32BE(pos + BASE_SEQUENCE_OFFSET),
    recordCount: buf.readInt32BE(pos + RECORDS_COUNT_OFFSET),
  };
}

/**
 * Read the v2 batch header at `offset`. Returns null unless a complete v2 batch (header and the
 * batchLength it declares) lies within buf. Does not verify the CRC.
 */
export function readBatchHeaderAt(buf: Buffer, offset: number): BatchHeader | null {
  if (!Number.isInteger(offset) || offset < 0 || buf.length - offset < RECORD_BATCH_OVERHEAD) return null;
  const batchLength = buf.readInt32BE(offset + BATCH_LENGTH_OFFSET);
  if (batchLength < RECORD_BATCH_OVERHEAD - LOG_OVERHEAD) return null;
  if (batchLength + LOG_OVERHEAD > buf.length - offset) return null;
  if (buf[offset + MAGIC_OFFSET] !== MAGIC_V2) return null;
  return decodeHeader(buf, offset, batchLength);
}

/** Offset of the last record: baseOffset + lastOffsetDelta. */
export function batchLastOffset(h: BatchHeader): bigint {
  return h.baseOffset + BigInt(h.lastOffsetDelta);
}

/** Total size in bytes (batchLength + 12). */
export function batchSize(h: BatchHeader): number {
  return h.end - h.start;
}

function fail(batches: BatchHeader[], error: BatchError, message: string): ParseBatchesResult {
  return { batches, error, message, stage: 'framing' };
}

function failBatch(batches: BatchHeader[], error: BatchError, message: string): ParseBatchesResult {
  return { batches, error, message, stage: 'batch' };
}

/**
 * Walk back-to-back record batches in `buf` (bounds-checked, never throws) and validate them.
 * See {@link ParseBatchesOptions} for the two modes. Errors are the ones Apache Kafka 4.x answers
 * for the same input (see the report in the module's README notes / tests for the mapping).
 */
export function parseBatches(buf: Buffer, opts: ParseBatchesOptions = {}): ParseBatchesResult {
  const produce = (opts.mode ?? 'produce') === 'produce';
  const batches: BatchHeader[] = [];
  const len = buf.length;
  let pos = 0;

  // Pass 1: framing, as Kafka's ByteBufferLogInputStream walks it. A partial batch at the end
  // ends the walk of a produced buffer, as Kafka's iterator ends there: no batch at all is then
  // INVALID_RECORD, and bytes after a complete batch are dropped (UnifiedLog.trimInvalidBytes).
  walk: while (pos < len) {
    const remaining = len - pos;
    if (remaining < LOG_OVERHEAD) {
      if (produce) break walk;
      if (opts.allowTrailingPartial) return { batches, error: null, partialBytes: remaining };
      return fail(batches, 'CORRUPT_MESSAGE', `truncated batch header at byte ${pos}: ${remaining} bytes left`);
    }
    const batchLength = buf.readInt32BE(pos + BATCH_LENGTH_OFFSET);
    if (batchLength < MIN_BATCH_LENGTH_ANY_MAGIC) {
      return fail(batches, 'CORRUPT_MESSAGE', `batch at byte ${pos}: size ${batchLength} is less than the minimum record overhead (${MIN_BATCH_LENGTH_ANY_MAGIC})`);
    }
    if (remaining < HEADER_SIZE_UP_TO_MAGIC) {
      if (produce) break walk;
      if (opts.allowTrailingPartial) return { batches, error: null, partialBytes: remaining };
      return fail(batches, 'CORRUPT_MESSAGE', `truncated batch header at byte ${pos}: ${remaining} bytes left`);
    }
    const magic = buf.readInt8(pos + MAGIC_OFFSET);
    if (magic < 0 || magic > MAGIC_V2) {
      return fail(batches, 'CORRUPT_MESSAGE', `batch at byte ${pos}: invalid magic ${magic}`);
    }
    const size = batchLength + LOG_OVERHEAD;
    if (size > remaining) {
      if (produce) break walk;
      if (opts.allowTrailingPartial) return { batches, error: null, partialBytes: remaining };
      return fail(batches, 'CORRUPT_MESSAGE', `truncated batch at byte ${pos}: declares ${size} bytes, only ${remaining} present`);
    }
    if (magic !== MAGIC_V2) {
      // Produce v3+ must carry magic 2 (ProduceRequest.validateRecords → InvalidRecordException).
      return fail(batches, produce ? 'INVALID_RECORD' : 'CORRUPT_MESSAGE', `batch at byte ${pos}: magic ${magic}; only record batches with magic version 2 are supported`);
    }
    if (size < RECORD_BATCH_OVERHEAD) {
      return fail(batches, 'CORRUPT_MESSAGE', `batch at byte ${pos}: size ${size} is smaller than the minimum allowed overhead ${RECORD_BATCH_OVERHEAD}`);
    }
    if (produce && batches.length === 1) {
      return fail(batches, 'INVALID_RECORD', 'produce requests may contain exactly one record batch per partition');
    }
    batches.push(decodeHeader(buf, pos, batchLength));
    pos += size;
  }

  if (produce && batches.length === 0) {
    return fail(batches, 'INVALID_RECORD', 'produce requests must have at least one record batch per partition');
  }

  // Pass 2: per-batch checks, in Kafka's order.
  for (let i = 0; i < batches.length; i++) {
    const h = batches[i]!;
    const where = batches.length > 1 ? `batch ${i}: ` : '';
    if (produce && opts.produceVersion !== undefined && opts.produceVersion < 7 && h.compression === 4) {
      return failBatch(batches, 'UNSUPPORTED_COMPRESSION_TYPE', `produce requests with version ${opts.produceVersion} are not allowed to use ZStandard compression`);
    }
    if (produce && h.baseOffset !== 0n) {
      return failBatch(batches, 'INVALID_RECORD', `${where}the baseOffset of the record batch should be 0, but it is ${h.baseOffset}`);
    }
    if (opts.maxBatchBytes !== undefined && h.end - h.start > opts.maxBatchBytes) {
      return failBatch(batches, 'RECORD_TOO_LARGE', `${where}the record batch size is ${h.end - h.start} bytes which exceeds the maximum configured value of ${opts.maxBatchBytes}`);
    }
    if (opts.verifyCrc && !verifyCrc(buf, h)) {
      return failBatch(batches, 'CORRUPT_MESSAGE', `${where}record is corrupt (stored crc = ${h.crc}, computed crc = ${crc32c(buf, h.start + ATTRIBUTES_OFFSET, h.end)})`);
    }
    if (!isCompression(h.attributes & ATTR_COMPRESSION_MASK)) {
      return failBatch(batches, 'UNSUPPORTED_COMPRESSION_TYPE', `${where}unknown compression type id ${h.attributes & ATTR_COMPRESSION_MASK}`);
    }
    const recordsBytes = h.end - h.start - RECORDS_OFFSET;
    if (produce) {
      if (h.lastOffsetDelta < 0) {
        return failBatch(batches, 'INVALID_RECORD', `${where}batch has an invalid offset range: lastOffsetDelta ${h.lastOffsetDelta}`);
      }
      if (h.recordCount <= 0) {
        return failBatch(batches, 'INVALID_RECORD', `${where}invalid reported count for record batch: ${h.recordCount}`);
      }
      if (h.lastOffsetDelta + 1 !== h.recordCount) {
        return failBatch(batches, 'INVALID_RECORD', `${where}inconsistent batch offset range [0, ${h.lastOffsetDelta}] and count of records ${h.recordCount}`);
      }
      if (h.isControl) {
        return failBatch(batches, 'INVALID_RECORD', `${where}clients are not allowed to write control records`);
      }
      if (h.producerId >= 0n && h.baseSequence < 0) {
        return failBatch(batches, 'INVALID_RECORD', `${where}invalid sequence number ${h.baseSequence} with producerId ${h.producerId}`);
      }
    } else {
      if (h.recordCount < 0) {
        return failBatch(batches, 'CORRUPT_MESSAGE', `${where}invalid record count ${h.recordCount}`);
      }
      if (h.lastOffsetDelta < 0 || (h.recordCount > 0 && h.lastOffsetDelta < h.recordCount - 1)) {
        return failBatch(batches, 'CORRUPT_MESSAGE', `${where}lastOffsetDelta ${h.lastOffsetDelta} too small for ${h.recordCount} records`);
      }
    }
    // Uncompressed: every record takes at least MIN_RECORD_SIZE bytes, so an absurd count is caught here
    // without touching the records (Kafka reports the same input as INVALID_RECORD when iterating).
    if (h.compression === 0 && h.recordCount > recordsBytes / MIN_RECORD_SIZE) {
      return failBatch(batches, produce ? 'INVALID_RECORD' : 'CORRUPT_MESSAGE', `${where}record count ${h.recordCount} cannot fit in ${recordsBytes} bytes of records`);
    }
  }

  return { batches, error: null };
}

/** CRC-32C over attributes..end compared with the stored CRC. */
export function verifyCrc(buf: Buffer, h: BatchHeader): boolean {
  if (h.start < 0 || h.end > buf.length || h.end - h.start < RECORD_BATCH_OVERHEAD) return false;
  return crc32c(buf, h.start + ATTRIBUTES_OFFSET, h.end) === buf.readUInt32BE(h.start + CRC_OFFSET);
}

/** Recompute and store the CRC (after editing CRC-covered fields). */
export function updateCrc(buf: Buffer, h: BatchHeader): void {
  const crc = crc32c(buf, h.start + ATTRIBUTES_OFFSET, h.end);
  buf.writeUInt32BE(crc, h.start + CRC_OFFSET);
  h.crc = crc;
}

/** Assign the batch's base offset in place. baseOffset is outside the CRC: no re-checksum needed. */
export function setBaseOffset(buf: Buffer, h: BatchHeader, baseOffset: bigint): void {
  buf.writeBigInt64BE(baseOffset, h.start + BASE_OFFSET_OFFSET);
  h.baseOffset = baseOffset;
}

/** Stamp the partition leader epoch in place (outside the CRC). */
export function setPartitionLeaderEpoch(buf: Buffer, h: BatchHeader, epoch: number): void {
  buf.writeInt32BE(epoch, h.start + PARTITION_LEADER_EPOCH_OFFSET);
  h.partitionLeaderEpoch = epoch;
}

/**
 * Kafka's DefaultRecordBatch.setMaxTimestamp: set the timestamp type bit and maxTimestamp, then recompute the
 * CRC (both are CRC-covered). No-op when both already have these values.
 */
export function setMaxTimestamp(buf: Buffer, h: BatchHeader, timestampType: 0 | 1, maxTimestamp: bigint): void {
  const attrs = buf.readInt16BE(h.start + ATTRIBUTES_OFFSET);
  const current = buf.readBigInt64BE(h.start + MAX_TIMESTAMP_OFFSET);
  const currentType = attrs & ATTR_TIMESTAMP_TYPE ? 1 : 0;
  if (currentType === timestampType && current === maxTimestamp) return;
  const newAttrs = timestampType === 1 ? attrs | ATTR_TIMESTAMP_TYPE : attrs & ~ATTR_TIMESTAMP_TYPE;
  buf.writeInt16BE(newAttrs, h.start + ATTRIBUTES_OFFSET);
  buf.writeBigInt64BE(maxTimestamp, h.start + MAX_TIMESTAMP_OFFSET);
  h.attributes = newAttrs;
  h.timestampType = timestampType;
  h.maxTimestamp = maxTimestamp;
  updateCrc(buf, h);
}

/**
 * LogAppendTime: mark the batch's timestamps as broker-assigned and set maxTimestamp to `timestamp`
 * (consumers then read every record's timestamp as maxTimestamp). Recomputes the CRC.
 */
export function setLogAppendTime(buf: Buffer, h: BatchHeader, timestamp: bigint): void {
  setMaxTimestamp(buf, h, 1, timestamp);
}
