/**
 * Conversions between magic 0/1 message sets and the magic 2 batches the log stores, as Kafka 3.9 makes
 * them with its default message format (3.0-IV1, magic 2):
 *
 * - Produce v0-2 (LogValidator.convertAndAssignOffsetsNonCompressed and
 *   validateMessagesAndAssignOffsetsCompressed): the message set becomes one v2 batch of its records,
 *   compressed as it came; the structural checks are Kafka's (UnifiedLog.analyzeAndValidateRecords, the
 *   deep iterator of AbstractLegacyRecordBatch). The topic's own checks (timestamps, keys of compacted
 *   topics, compression.type, LogAppendTime) are the caller's, on the batch.
 * - Fetch v0-3 (RecordsUtil.downConvert through LazyDownConversionRecords): stored batches become
 *   magic 0 (Fetch v0-1) or magic 1 (v2-3) message sets; control batches are dropped, records below the
 *   fetch offset are dropped from uncompressed batches, headers are dropped, compression is kept.
 */
import { type BatchError, LOG_OVERHEAD, MAGIC_OFFSET, MAGIC_V2, MIN_BATCH_LENGTH_ANY_MAGIC, readBatchHeaderAt, RECORD_BATCH_OVERHEAD, verifyCrc } from './batch.js';
import { CompressionError } from './compression/errors.js';
import { buildBatch, type BuildRecord, decodeRecords, recordTimestamp } from './records.js';
import { decompressWrapper, type LegacyMagic, type LegacyMessage, type LegacyRecordToWrite, readLegacyMessage, writeLegacyMessageSet } from './legacy-record.js';

/** The magic of the first entry of a buffer of records, or -1 if it is too short to say. */
export function firstMagic(records: Buffer): number {
  return records.length > MAGIC_OFFSET ? records.readInt8(MAGIC_OFFSET) : -1;
}

export type LegacyAppendOutcome =
  /** The message set as one v2 batch (CreateTime unless the producer set LogAppendTime). */
  | { error: null; batch: Buffer }
  /** No complete message: Kafka appends nothing and answers success with offset -1. */
  | { error: null; batch: null }
  /** `stage` as parseBatches says it: the buffer's framing, or one message's own fields. */
  | { error: BatchError; message: string; stage: 'framing' | 'batch' };

interface Entry {
  start: number;
  end: number;
  magic: number;
}

const framing = (message: string): LegacyAppendOutcome => ({ error: 'CORRUPT_MESSAGE', message, stage: 'framing' });
const refused = (error: BatchError, message: string): LegacyAppendOutcome => ({ error, message, stage: 'batch' });

/** Kafka's ByteBufferLogInputStream over a produced buffer: entries until a partial one, which ends the walk. */
function frameEntries(buf: Buffer): Entry[] | LegacyAppendOutcome {
  const entries: Entry[] = [];
  let pos = 0;
  while (buf.length - pos >= LOG_OVERHEAD) {
    const size = buf.readInt32BE(pos + 8);
    if (size < MIN_BATCH_LENGTH_ANY_MAGIC) return framing(`Record size ${size} is less than the minimum record overhead (${MIN_BATCH_LENGTH_ANY_MAGIC})`);
    if (buf.length - pos <= MAGIC_OFFSET) break;
    const magic = buf.readInt8(pos + MAGIC_OFFSET);
    if (magic < 0 || magic > MAGIC_V2) return framing(`Invalid magic found in record: ${magic}`);
    if (size + LOG_OVERHEAD > buf.length - pos) break;
    entries.push({ start: pos, end: pos + size + LOG_OVERHEAD, magic });
    pos += size + LOG_OVERHEAD;
  }
  return entries;
}

/**
 * A Produce v0-2 message set (its first entry of magic 0 or 1) as one v2 batch, with Kafka's checks in
 * Kafka's order: each entry's size (maxMessageBytes) and CRC; one magic throughout; a compressed entry
 * alone; a wrapper's inner messages uncompressed, of its magic, with valid CRCs and a consistent offset.
 */
export function legacyToBatch(buf: Buffer, opts: { maxMessageBytes: number; now?: bigint }): LegacyAppendOutcome {
  const framed = frameEntries(buf);
  if (!Array.isArray(framed)) return framed;
  if (framed.length === 0) return { error: null, batch: null };

  // UnifiedLog.analyzeAndValidateRecords: sizes and CRCs, entry by entry.
  const messages: (LegacyMessage | null)[] = [];
  let sourceCompression = 0;
  for (const e of framed) {
    const size = e.end - e.start;
    if (size > opts.maxMessageBytes) return refused('RECORD_TOO_LARGE', `The record batch size in the append is ${size} bytes which exceeds the maximum configured value of ${opts.maxMessageBytes}.`);
    if (e.magic === MAGIC_V2) {
      const h = readBatchHeaderAt(buf, e.start);
      if (!h || size < RECORD_BATCH_OVERHEAD || !verifyCrc(buf, h)) return refused('CORRUPT_MESSAGE', 'Record is corrupt');
      messages.push(null);
      continue;
    }
    const m = readLegacyMessage(buf, e.start, size);
    if (!m || !m.crcValid) return refused('CORRUPT_MESSAGE', `Record is corrupt (stored crc = ${buf.readUInt32BE(e.start + LOG_OVERHEAD)})`);
    if (m.compression !== 0) sourceCompression = m.compression;
    messages.push(m);
  }

  // LogValidator: one magic; a compressed message set is one wrapper.
  if (sourceCompression !== 0 && framed.length > 1) return refused('INVALID_RECORD', 'Compressed outer record has more than one batch');
  const records: BuildRecord[] = [];
  const timestamps: bigint[] = [];
  let logAppendTime = false;
  for (const [i, m] of messages.entries()) {
    if (!m || m.magic !== messages[0]!.magic) return refused('INVALID_RECORD', `Batch magic ${framed[i]!.magic} is not the same as the first batch's magic byte ${framed[0]!.magic}`);
    if (m.timestampType === 1) logAppendTime = true;
    if (m.compression === 0) {
      records.push({ key: m.key, value: m.value });
      timestamps.push(m.timestamp);
      continue;
    }
    const inner = innerMessages(m);
    if ('error' in inner) return inner;
    for (const r of inner) {
      records.push({ key: r.key, value: r.value });
      timestamps.push(m.timestampType === 1 ? m.timestamp : r.timestamp);
    }
  }

  // MemoryRecordsBuilder: the base timestamp is the first record's; the maximum is the largest.
  const baseTimestamp = timestamps[0]!;
  let maxTimestamp = timestamps[0]!;
  for (const t of timestamps) if (t > maxTimestamp) maxTimestamp = t;
  const batch = buildBatch({
    compression: sourceCompression as 0 | 1 | 2 | 3,
    timestampType: logAppendTime ? 1 : 0,
    baseTimestamp,
    maxTimestamp,
    records: records.map((r, i) => ({ ...r, offsetDelta: i, timestampDelta: timestamps[i]! - baseTimestamp })),
  });
  return { error: null, batch };
}

/** A wrapper's inner messages, as Kafka's DeepRecordsIterator and LogValidator.validateRecord check them. */
function innerMessages(wrapper: LegacyMessage): LegacyMessage[] | { error: BatchError; message: string; stage: 'batch' } {
  if (wrapper.compression > 3) return { error: 'INVALID_RECORD', message: `Invalid wrapper compressionType found in legacy deep record iterator ${wrapper.magic}`, stage: 'batch' };
  if (wrapper.value === null) return { error: 'INVALID_RECORD', message: `Found invalid compressed record set with null value (magic = ${wrapper.magic})`, stage: 'batch' };
  let data: Buffer;
  try {
    data = decompressWrapper(wrapper);
  } catch (e) {
    if (!(e instanceof CompressionError)) throw e;
    return { error: e.kafkaError === 'RECORD_TOO_LARGE' ? 'RECORD_TOO_LARGE' : 'CORRUPT_MESSAGE', message: e.message, stage: 'batch' };
  }
  const inner: LegacyMessage[] = [];
  let pos = 0;
  // DataLogInputStream: a short entry at the end ends the set.
  while (data.length - pos >= LOG_OVERHEAD) {
    const size = data.readInt32BE(pos + 8);
    if (size < MIN_BATCH_LENGTH_ANY_MAGIC) return { error: 'CORRUPT_MESSAGE', message: `Record size is less than the minimum record overhead (${MIN_BATCH_LENGTH_ANY_MAGIC})`, stage: 'batch' };
    if (size + LOG_OVERHEAD > data.length - pos) break;
    const m = readLegacyMessage(data, pos, size + LOG_OVERHEAD);
    if (!m || !m.crcValid) return { error: 'CORRUPT_MESSAGE', message: 'Record is corrupt', stage: 'batch' };
    inner.push(m);
    pos += size + LOG_OVERHEAD;
  }
  if (inner.length === 0) return { error: 'INVALID_RECORD', message: 'Found invalid compressed record set with no inner records', stage: 'batch' };
  const last = inner[inner.length - 1]!.offset;
  if (wrapper.magic === 1 && wrapper.offset !== 0n && wrapper.offset < last) {
    return {
      error: 'INVALID_RECORD',
      message: `Found invalid wrapper offset in compressed v1 message set, wrapper offset '${wrapper.offset}' is less than the last inner message offset '${last}' and it is not zero.`,
      stage: 'batch',
    };
  }
  for (const m of inner) {
    if (m.compression !== 0) return { error: 'INVALID_RECORD', message: 'Compressed outer record should not have an inner record with a compression attribute set', stage: 'batch' };
    if (m.magic !== wrapper.magic) return { error: 'INVALID_RECORD', message: `Record's magic does not match outer magic ${wrapper.magic}`, stage: 'batch' };
  }
  return inner;
}

// ───────────────────────────── down-conversion ─────────────────────────────

export type DownConversion = { error: null; records: Buffer } | { error: 'UNSUPPORTED_COMPRESSION_TYPE' };

/** One stored batch as a message set of `magic`: nothing for a control batch or when every record is below firstOffset. */
function downConvertBatch(buf: Buffer, start: number, magic: LegacyMagic, firstOffset: bigint): Buffer | 'zstd' | null {
  const h = readBatchHeaderAt(buf, start);
  if (!h || h.isControl) return null;
  if (h.compression === 4) return 'zstd';
  const decoded = decodeRecords(buf, h);
  if (decoded.error) return null;
  const records: LegacyRecordToWrite[] = [];
  for (const r of decoded.records) {
    const offset = h.baseOffset + BigInt(r.offsetDelta);
    if (h.compression === 0 && offset < firstOffset) continue;
    records.push({ offset, timestamp: recordTimestamp(h, r), key: r.key, value: r.value });
  }
  return writeLegacyMessageSet(records, { magic, compression: h.compression, logAppendTime: h.timestampType === 1 ? h.maxTimestamp : null });
}

/**
 * Stored batches (whole, back to back in `chunks`) as the message set a Fetch v0-3 answers, of exactly the
 * size Kafka's LazyDownConversionRecords promises: the larger of the bytes read and the first converted
 * batch. A conversion longer than that is cut (the client drops the partial message at the end); a shorter
 * one is padded with an entry of offset -1 whose size runs past the end, which clients drop the same way.
 * A zstd batch cannot be converted: UNSUPPORTED_COMPRESSION_TYPE when it comes first, else the end.
 */
export function downConvert(chunks: Buffer[], magic: LegacyMagic, firstOffset: bigint): DownConversion {
  const converted: Buffer[] = [];
  let readBytes = 0;
  let first = -1;
  let convertedBytes = 0;
  let stopped = false;
  for (const buf of chunks) {
    readBytes += buf.length;
    for (let pos = 0; pos + RECORD_BATCH_OVERHEAD <= buf.length && !stopped;) {
      const h = readBatchHeaderAt(buf, pos);
      if (!h) break;
      const out = downConvertBatch(buf, pos, magic, firstOffset);
      pos = h.end;
      if (out === 'zstd') {
        if (first < 0) return { error: 'UNSUPPORTED_COMPRESSION_TYPE' };
        stopped = true;
      } else if (out !== null && out.length > 0) {
        if (first < 0) first = out.length;
        converted.push(out);
        convertedBytes += out.length;
      }
    }
  }
  if (readBytes === 0) return { error: null, records: Buffer.alloc(0) };
  const size = first < 0 ? LOG_OVERHEAD : Math.max(readBytes, first);
  const all = Buffer.concat(converted, convertedBytes);
  if (all.length >= size) return { error: null, records: all.subarray(0, size) };
  // LazyDownConversionRecordsSend.buildOverflowBatch: offset -1, a size past the end, zeros.
  const overflow = Buffer.alloc(size - all.length + LOG_OVERHEAD);
  overflow.writeBigInt64BE(-1n, 0);
  overflow.writeInt32BE(Math.max(size - all.length + 1, RECORD_BATCH_OVERHEAD), 8);
  return { error: null, records: Buffer.concat([all, overflow]).subarray(0, size) };
}
