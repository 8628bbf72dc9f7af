// The consumer protocol's bytes inside a classic group's JoinGroup
// (protocol type "consumer"): what the coordinator reads from them.
import { Reader } from '../protocol/codec/reader.js';
import { Writer } from '../protocol/codec/writer.js';
import {
  readConsumerProtocolAssignment,
  readConsumerProtocolSubscription,
  writeConsumerProtocolAssignment,
  type ConsumerProtocolAssignment,
  type ConsumerProtocolSubscription,
} from '../protocol/messages/index.js';

export const CONSUMER_PROTOCOL_TYPE = 'consumer';

/**
 * The topics a member's subscription names, or null when the bytes do not
 * decode. Read as Kafka's coordinator reads them: whatever the version, as
 * its version 0 prefix (topics and user data), which every later version
 * begins with; what follows is not read.
 */
export function subscribedTopicsOf(metadata: Buffer): string[] | null {
  if (metadata.length < 2) return null;
  const r = new Reader(metadata, 2);
  const subscription = readConsumerProtocolSubscription(r, 0);
  return r.error ? null : subscription.topics;
}

/** A member's ConsumerProtocolSubscription, read whole (any version the bytes name; later ones as the last Kafka knows), or null when it does not decode. */
export function subscriptionOf(metadata: Buffer): ConsumerProtocolSubscription | null {
  return readVersioned(metadata, readConsumerProtocolSubscription, 3);
}

/** A ConsumerProtocolAssignment's bytes; empty bytes are no partitions (a member not yet assigned), null when they do not decode. */
export function assignmentOf(bytes: Buffer): ConsumerProtocolAssignment | null {
  if (bytes.length === 0) return { assignedPartitions: [], userData: null };
  return readVersioned(bytes, readConsumerProtocolAssignment, 3);
}

/** The version a member's metadata names (what its assignment is written in, as Kafka's deserializeVersion), or null. */
export function protocolVersionOf(metadata: Buffer): number | null {
  return metadata.length < 2 ? null : metadata.readInt16BE(0);
}

/** The member's partitions as ConsumerProtocolAssignment bytes, in the version its subscription used (at most the last Kafka knows). */
export function assignmentBytes(version: number, partitions: { topic: string; partitions: number[] }[]): Buffer {
  const v = Math.max(0, Math.min(version, 3));
  const w = new Writer();
  w.int16(v);
  writeConsumerProtocolAssignment(w, v, { assignedPartitions: partitions, userData: null });
  return w.toBuffer();
}

function readVersioned<T>(bytes: Buffer, read: (r: Reader, version: number) => T, highest: number): T | null {
  if (bytes.length < 2) return null;
  const version = bytes.readInt16BE(0);
  if (version < 0) return null;
  const r = new Reader(bytes, 2);
  const value = read(r, Math.min(version, highest));
  return r.error ? null : value;
}
