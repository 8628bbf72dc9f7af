// Idempotent producers: per partition and producer id, the epoch and the
// sequence numbers of the newest batches (Kafka keeps five), checked as
// Kafka's ProducerStateManager checks them. A retried batch that is among
// the newest five is answered with its original offset and not stored
// again; a gap in sequences is OUT_OF_ORDER_SEQUENCE_NUMBER; an older epoch
// is INVALID_PRODUCER_EPOCH.
import { ErrorCode } from '../protocol/errors.js';
import type { BatchHeader } from '../protocol/records/index.js';
import type { ProducerBatch } from '../storage/log-types.js';

export const PRODUCER_BATCHES_KEPT = 5;
const MAX_SEQUENCE = 2 ** 31 - 1;

export interface ProducerEntry {
  producerEpoch: number;
  /** When the producer last appended here (ms): its state expires producer.id.expiration.ms later. */
  lastAppendMs: number;
  /**
   * What DescribeProducers reports, as Kafka's ProducerStateEntry: the max
   * timestamp of its newest batch or transaction marker here, and the
   * coordinator epoch of its newest marker (-1 for none, or unknown).
   */
  lastTimestamp: bigint;
  coordinatorEpoch: number;
  /** Newest last, at most PRODUCER_BATCHES_KEPT. */
  batches: ProducerBatch[];
  /**
   * With no batches: the sequence at which a batch of this epoch failed here
   * without being stored, which its retry must start at (see ProducerSequences.failed).
   */
  expectedSequence?: number;
}

export type SequenceCheck = { kind: 'append' } | { kind: 'duplicate'; baseOffset: bigint } | { kind: 'error'; errorCode: number; message: string };

const nextSequence = (sequence: number) => (sequence === MAX_SEQUENCE ? 0 : sequence + 1);

export function lastSequenceOf(header: BatchHeader): number {
  return (header.baseSequence + header.lastOffsetDelta) % (MAX_SEQUENCE + 1);
}

/** Whether the entry outlived producer.id.expiration.ms: its producer then counts as unknown. */
export function isExpired(entry: ProducerEntry, now: number, expirationMs: number): boolean {
  return now - entry.lastAppendMs > expirationMs;
}

/** Checks a batch of producer `header.producerId` against the producer's entry on this partition (undefined: none known or expired). */
export function checkSequence(entry: ProducerEntry | undefined, header: BatchHeader): SequenceCheck {
  const epoch = header.producerEpoch;
  const first = header.baseSequence;
  const last = lastSequenceOf(header);
  // No state (a new producer, or one whose batches retention removed): accepted as Kafka does since KIP-360,
  // unless a batch of this epoch failed here unstored: a later one would leave a gap that the producer,
  // told of its success, takes as the earlier one's success too (librdkafka's implicit acknowledgement).
  if (!entry || entry.batches.length === 0) {
    if (entry?.expectedSequence !== undefined && epoch === entry.producerEpoch && first !== entry.expectedSequence) {
      return { kind: 'error', errorCode: ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER, message: `Out of order sequence number: found ${first}, expected ${entry.expectedSequence}` };
    }
    return { kind: 'append' };
  }
  if (epoch < entry.producerEpoch) {
    return { kind: 'error', errorCode: ErrorCode.INVALID_PRODUCER_EPOCH, message: `Epoch ${epoch} is older than the current epoch ${entry.producerEpoch}` };
  }
  if (epoch > entry.producerEpoch) {
    if (first !== 0) return { kind: 'error', errorCode: ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER, message: `Invalid sequence number for new epoch ${epoch}: ${first} (expected 0)` };
    return { kind: 'append' };
  }
  const duplicate = entry.batches.find((b) => b.producerEpoch === epoch && b.firstSequence === first && b.lastSequence === last);
  if (duplicate) return { kind: 'duplicate', baseOffset: duplicate.baseOffset };
  const expected = nextSequence(entry.batches[entry.batches.length - 1]!.lastSequence);
  if (first !== expected) {
    return { kind: 'error', errorCode: ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER, message: `Out of order sequence number: found ${first}, expected ${expected}` };
  }
  return { kind: 'append' };
}

/** The entry after a batch was appended at `baseOffset` at time `now`. */
export function recordAppend(entry: ProducerEntry | undefined, header: BatchHeader, baseOffset: bigint, now: number): ProducerEntry {
  const batches = entry && entry.producerEpoch === header.producerEpoch ? entry.batches.slice(-(PRODUCER_BATCHES_KEPT - 1)) : [];
  batches.push({ producerEpoch: header.producerEpoch, firstSequence: header.baseSequence, lastSequence: lastSequenceOf(header), baseOffset });
  return { producerEpoch: header.producerEpoch, lastAppendMs: now, lastTimestamp: header.maxTimestamp, coordinatorEpoch: entry?.coordinatorEpoch ?? -1, batches };
}
