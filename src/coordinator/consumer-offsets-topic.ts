// __consumer_offsets as Kafka presents it to consumers (Burrow, lag
// exporters, kafka-console-consumer's offsets formatter): a read-only,
// compacted, internal topic of 50 partitions whose records are the groups'
// offset commits in Kafka's binary schemas (OffsetCommitKey v1,
// OffsetCommitValue v3, or v1 for an offset with an expire timestamp, as
// Kafka writes them), and tombstones for deleted offsets. It is served from
// committed_offsets: each commit takes the next position of its group's
// partition, and a read returns the newest entry of every key from a
// position on, as Kafka's log looks after compaction. Group metadata records
// (GroupMetadataKey v2) are not written: lag tools need only the offsets.
import { ErrorCode } from '../protocol/errors.js';
import { buildBatch, RECORD_BATCH_OVERHEAD, type BuildRecord } from '../protocol/records/index.js';
import type { ConsumerOffsetsEntry, ConsumerOffsetsStore } from '../storage/pg/consumer-offsets-store.js';

export const CONSUMER_OFFSETS_TOPIC = '__consumer_offsets';
/** offsets.topic.num.partitions's default, and the group → partition mapping's modulus (the migration's consumer_offsets_partition). */
export const CONSUMER_OFFSETS_PARTITIONS = 50;
/** The topic's id in every pgkafka cluster (Kafka draws one when it creates the topic). */
export const CONSUMER_OFFSETS_TOPIC_ID = '2d6e0aa4-4c21-4a57-9d1e-5f0e6b0c0ff5';
/** Kafka's configs of the topic that a reader may look at. */
export const CONSUMER_OFFSETS_CONFIGS = { 'cleanup.policy': 'compact', 'compression.type': 'producer', 'segment.bytes': '104857600' } as const;

/** Entries read per fetch of a partition at most (a few kilobytes each at the very most). */
const READ_LIMIT = 1000;
/** A record's bytes besides its key and value, at most: length, attributes, timestamp and offset deltas, key and value lengths, header count. */
const MAX_RECORD_FRAMING = 5 + 1 + 10 + 5 + 5 + 5 + 1;

export interface ConsumerOffsetsRead {
  errorCode: number;
  highWatermark: bigint;
  logStartOffset: bigint;
  /** One magic-2 batch holding the entries, or null when there are none. */
  records: Buffer | null;
  bytes: number;
}

const OFFSET_COMMIT_KEY_VERSION = 1;

function writeString(parts: Buffer[], s: string): void {
  const bytes = Buffer.from(s, 'utf8');
  const len = Buffer.alloc(2);
  len.writeInt16BE(bytes.length);
  parts.push(len, bytes);
}

const int16 = (n: number) => {
  const b = Buffer.alloc(2);
  b.writeInt16BE(n);
  return b;
};
const int32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};
const int64 = (n: bigint) => {
  const b = Buffer.alloc(8);
  b.writeBigInt64BE(n);
  return b;
};

/** OffsetCommitKey v1: the record key, prefixed by its version, as Kafka writes it. */
export function offsetCommitKey(groupId: string, topic: string, partition: number): Buffer {
  const parts = [int16(OFFSET_COMMIT_KEY_VERSION)];
  writeString(parts, groupId);
  writeString(parts, topic);
  parts.push(int32(partition));
  return Buffer.concat(parts);
}

/** OffsetCommitValue, version-prefixed: v1 when the offset has an expire timestamp, v3 otherwise (Kafka's offsetCommitValueVersion). */
export function offsetCommitValue(e: { committedOffset: bigint; leaderEpoch: number; metadata: string | null; timestampMs: bigint; expireTimestampMs: bigint | null }): Buffer {
  const metadata: Buffer[] = [];
  writeString(metadata, e.metadata ?? '');
  if (e.expireTimestampMs !== null) return Buffer.concat([int16(1), int64(e.committedOffset), ...metadata, int64(e.timestampMs), int64(e.expireTimestampMs)]);
  return Buffer.concat([int16(3), int64(e.committedOffset), int32(e.leaderEpoch), ...metadata, int64(e.timestampMs)]);
}

function toRecord(e: ConsumerOffsetsEntry, baseOffset: bigint, baseTimestamp: bigint): BuildRecord {
  return {
    offsetDelta: Number(e.position - baseOffset),
    timestampDelta: e.timestampMs - baseTimestamp,
    key: offsetCommitKey(e.groupId, e.topic, e.partition),
    value: e.committedOffset === null ? null : offsetCommitValue({ ...e, committedOffset: e.committedOffset }),
  };
}

/** Reads of the virtual __consumer_offsets. */
export class ConsumerOffsetsTopic {
  private known = false;

  constructor(private readonly store: ConsumerOffsetsStore) {}

  static is(name: string | null | undefined): boolean {
    return name === CONSUMER_OFFSETS_TOPIC;
  }

  /** Whether the topic exists yet: from the cluster's first offset commit on, as Kafka creates it for the first group. */
  async exists(): Promise<boolean> {
    if (!this.known) this.known = await this.store.everCommitted();
    return this.known;
  }

  /** A fetch of one partition from `fetchOffset`: the entries there, in one batch cut at maxBytes (at least one entry when minOne). */
  async read(partition: number, fetchOffset: bigint, maxBytes: number, minOne: boolean): Promise<ConsumerOffsetsRead> {
    const slice = await this.store.read(partition, fetchOffset < 0n ? 0n : fetchOffset, READ_LIMIT);
    const outOfRange = { errorCode: ErrorCode.OFFSET_OUT_OF_RANGE, highWatermark: -1n, logStartOffset: -1n, records: null, bytes: 0 };
    if (fetchOffset < 0n || fetchOffset > slice.highWatermark) return outOfRange;
    const base = slice.entries[0];
    const records: BuildRecord[] = [];
    let size = RECORD_BATCH_OVERHEAD;
    for (const e of slice.entries) {
      const record = toRecord(e, base!.position, base!.timestampMs);
      const recordSize = record.key!.length + (record.value?.length ?? 0) + MAX_RECORD_FRAMING;
      if (size + recordSize > maxBytes && (records.length > 0 || !minOne)) break;
      records.push(record);
      size += recordSize;
    }
    const batch = records.length === 0 ? null : buildBatch({ baseOffset: base!.position, baseTimestamp: base!.timestampMs, records });
    return { errorCode: ErrorCode.NONE, highWatermark: slice.highWatermark, logStartOffset: 0n, records: batch, bytes: batch?.length ?? 0 };
  }
  /** ListOffsets on a partition: -2 earliest (0), -1 latest (the high watermark), -3 max timestamp as latest's entry, else the first entry at or after the timestamp. */
  async offsetForTimestamp(partition: number, timestamp: bigint): Promise<{ errorCode: number; offset: bigint; timestamp: bigint }> {
    if (timestamp === -2n || timestamp === -4n) return { errorCode: ErrorCode.NONE, offset: 0n, timestamp: -1n };
    if (timestamp === -1n) return { errorCode: ErrorCode.NONE, offset: await this.store.highWatermark(partition), timestamp: -1n };
    if (timestamp < 0n) return { errorCode: ErrorCode.NONE, offset: -1n, timestamp: -1n };
    const found = await this.store.positionForTimestamp(partition, timestamp);
    return found ? { errorCode: ErrorCode.NONE, offset: found.position, timestamp: found.timestampMs } : { errorCode: ErrorCode.NONE, offset: -1n, timestamp: -1n };
  }
}
