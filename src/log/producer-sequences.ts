// Idempotent producers' sequence checks for one flush of a partition, with
// the producers' state read from the log on first use (and again after
// another broker appended, see PartitionLog.takeStaleProducers), expired
// after producer.id.expiration.ms on the broker's clock.
import type { Clock } from '../clock.js';
import { ErrorCode } from '../protocol/errors.js';
import type { BatchHeader } from '../protocol/records/index.js';
import type { StoredProducerBatch } from '../storage/log-types.js';
import type { PendingAppend } from './append-queue.js';
import { AppendError } from './append-error.js';
import type { PartitionLog } from './partition-log.js';
import { checkSequence, isExpired, PRODUCER_BATCHES_KEPT, recordAppend, type ProducerEntry, type SequenceCheck } from './producer-state.js';

/** What the checks read from the log (ProducerStorage). */
export interface ProducerBatches {
  lastBatches(topicId: string, partition: number, producerId: bigint, limit: number): Promise<StoredProducerBatch[]>;
}

/** A batch whose producer state the commit will advance. */
export interface SequencedBatch {
  item: PendingAppend;
  header: BatchHeader;
}

const sequenced = (header: BatchHeader) => header.producerId >= 0n && !header.isControl;

export class ProducerSequences {
  private readonly store: ProducerBatches;
  private readonly clock: Clock;
  private readonly expirationMs: number;

  constructor(options: { store: ProducerBatches; clock: Clock; producerIdExpirationMs: number }) {
    this.store = options.store;
    this.clock = options.clock;
    this.expirationMs = options.producerIdExpirationMs;
  }

  /** Whether any batch of the flush carries a producer sequence (else there is nothing to check). */
  static needsCheck(items: readonly PendingAppend[]): boolean {
    return items.some((item) => item.batches.some(({ header }) => sequenced(header)));
  }

  /**
   * The checks, in queue order: duplicates are answered with their original
   * offset, refusals with their error; the rest are returned to be appended,
   * with the batches whose producer state the commit will advance.
   */
  async check(p: PartitionLog, items: PendingAppend[]): Promise<{ items: PendingAppend[]; sequenced: SequencedBatch[] }> {
    const unknown = new Set<bigint>();
    for (const item of items) for (const { header } of item.batches) if (sequenced(header) && !p.hasProducer(header.producerId)) unknown.add(header.producerId);
    for (const producerId of unknown) {
      const stored = await this.store.lastBatches(p.topicId, p.partition, producerId, PRODUCER_BATCHES_KEPT);
      const batches = stored.map(({ maxTimestamp: _, ...b }) => b);
      // After a restart the newest stored batch's timestamp stands in for the last append time.
      const lastTimestamp = stored.at(-1)?.maxTimestamp;
      p.setProducer(producerId, { producerEpoch: batches.at(-1)?.producerEpoch ?? -1, lastAppendMs: lastTimestamp ?? 0, lastTimestamp: BigInt(lastTimestamp ?? -1), coordinatorEpoch: -1, batches });
    }
    const now = this.clock.now();
    const working = new Map<bigint, ProducerEntry | undefined>();
    const accepted: PendingAppend[] = [];
    const advanced: SequencedBatch[] = [];
    for (const item of items) {
      let outcome: SequenceCheck = { kind: 'append' };
      const pending: SequencedBatch[] = [];
      for (const { header } of item.batches) {
        // Markers are the coordinator's own batches, outside the producer's sequence.
        if (!sequenced(header)) continue;
        let entry = working.has(header.producerId) ? working.get(header.producerId) : p.producer(header.producerId);
        if (entry && isExpired(entry, now, this.expirationMs)) {
          // producer.id.expiration.ms passed since its last append: the producer starts afresh, as on Kafka.
          p.forgetProducer(header.producerId);
          entry = undefined;
        }
        outcome = checkSequence(entry, header);
        if (outcome.kind !== 'append') break;
        working.set(header.producerId, recordAppend(entry, header, -1n, now));
        pending.push({ item, header });
      }
      if (outcome.kind === 'error') {
        item.reject(new AppendError(outcome.errorCode, outcome.message));
      } else if (outcome.kind === 'duplicate') {
        // A retry of a batch still in this flush has no offset yet: Kafka's DUPLICATE_SEQUENCE_NUMBER, which clients take as success.
        if (outcome.baseOffset < 0n) item.reject(new AppendError(ErrorCode.DUPLICATE_SEQUENCE_NUMBER, 'duplicate of a batch being appended'));
        else item.resolve({ baseOffset: outcome.baseOffset, logStartOffset: p.logStartOffset, logAppendTimeMs: -1n });
      } else {
        accepted.push(item);
        advanced.push(...pending);
      }
    }
    return { items: accepted, sequenced: advanced };
  }

  /** The flush committed: each sequenced batch at its offset; markers update their producer's timestamp and coordinator epoch. */
  committed(p: PartitionLog, batches: readonly SequencedBatch[], offsetOf: (item: PendingAppend) => bigint, items: readonly PendingAppend[]): void {
    const now = this.clock.now();
    for (const s of batches) p.setProducer(s.header.producerId, recordAppend(p.producer(s.header.producerId), s.header, offsetOf(s.item), now));
    for (const { header, marker } of items.flatMap((item) => item.batches)) {
      const entry = marker && p.producer(header.producerId);
      if (entry) p.setProducer(header.producerId, { ...entry, lastTimestamp: header.maxTimestamp, coordinatorEpoch: marker.coordinatorEpoch });
    }
  }

  /**
   * The flush failed, its batches not stored. A producer with no batches
   * here must send the first of them again before anything later (see
   * checkSequence). When it is not known whether they were stored (the
   * store could not settle a lost connection's outcome, or the sequence
   * check could not read the log), the producers' states are read back from
   * the log before their retries are checked, and a retry of a stored batch
   * is recognised as a duplicate.
   */
  failed(p: PartitionLog, items: readonly PendingAppend[], outcomeUnknown: boolean): void {
    const now = this.clock.now();
    const marked = new Set<bigint>();
    for (const item of items) {
      for (const { header } of item.batches) {
        if (!sequenced(header)) continue;
        const entry = p.producer(header.producerId);
        if (outcomeUnknown) p.forgetProducer(header.producerId);
        else if ((!entry || entry.batches.length === 0) && !marked.has(header.producerId)) {
          p.setProducer(header.producerId, {
            producerEpoch: header.producerEpoch,
            lastAppendMs: now,
            lastTimestamp: entry?.lastTimestamp ?? -1n,
            coordinatorEpoch: entry?.coordinatorEpoch ?? -1,
            batches: [],
            expectedSequence: header.baseSequence,
          });
        }
        marked.add(header.producerId);
      }
    }
  }
}
