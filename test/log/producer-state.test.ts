import { describe, expect, it } from 'vitest';
import { checkSequence, isExpired, recordAppend, type ProducerEntry } from '../../src/log/producer-state.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import type { BatchHeader } from '../../src/protocol/records/index.js';

const header = (epoch: number, baseSequence: number, records = 1): BatchHeader =>
  ({ producerId: 7n, producerEpoch: epoch, baseSequence, lastOffsetDelta: records - 1, recordCount: records }) as BatchHeader;

function entryAfter(...batches: [number, number, number, bigint][]): ProducerEntry {
  let entry: ProducerEntry | undefined;
  for (const [epoch, seq, n, offset] of batches) entry = recordAppend(entry, header(epoch, seq, n), offset, 1000);
  return entry!;
}

describe('idempotent producer sequence checks', () => {
  it('accepts the next sequence and any first batch of a producer it does not know', () => {
    expect(checkSequence(undefined, header(0, 42))).toEqual({ kind: 'append' });
    const entry = entryAfter([0, 0, 3, 100n]);
    expect(checkSequence(entry, header(0, 3))).toEqual({ kind: 'append' });
  });

  it('answers a retried batch among the newest five with its original offset', () => {
    const entry = entryAfter([0, 0, 2, 10n], [0, 2, 2, 12n], [0, 4, 1, 14n]);
    expect(checkSequence(entry, header(0, 2, 2))).toEqual({ kind: 'duplicate', baseOffset: 12n });
  });

  it('forgets batches older than the newest five', () => {
    const entry = entryAfter([0, 0, 1, 0n], [0, 1, 1, 1n], [0, 2, 1, 2n], [0, 3, 1, 3n], [0, 4, 1, 4n], [0, 5, 1, 5n]);
    expect(entry.batches).toHaveLength(5);
    expect(checkSequence(entry, header(0, 0)).kind).toBe('error');
  });

  it('wants the sequence of a first batch that failed unstored before any later one of its epoch', () => {
    const failed: ProducerEntry = { producerEpoch: 0, lastAppendMs: 1000, lastTimestamp: -1n, coordinatorEpoch: -1, batches: [], expectedSequence: 4 };
    expect(checkSequence(failed, header(0, 6))).toMatchObject({ kind: 'error', errorCode: ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER });
    expect(checkSequence(failed, header(0, 4))).toEqual({ kind: 'append' });
    expect(checkSequence(failed, header(1, 0))).toEqual({ kind: 'append' });
    expect(recordAppend(failed, header(0, 4), 0n, 2000)).toMatchObject({
      producerEpoch: 0,
      lastAppendMs: 2000,
      coordinatorEpoch: -1,
      batches: [{ producerEpoch: 0, firstSequence: 4, lastSequence: 4, baseOffset: 0n }],
    });
    expect(recordAppend(failed, header(0, 4), 0n, 2000)).not.toHaveProperty('expectedSequence');
  });

  it('refuses a gap with OUT_OF_ORDER_SEQUENCE_NUMBER', () => {
    const entry = entryAfter([0, 0, 3, 100n]);
    expect(checkSequence(entry, header(0, 5))).toMatchObject({ kind: 'error', errorCode: ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER });
  });

  it('refuses an older epoch with INVALID_PRODUCER_EPOCH and wants sequence 0 from a newer one', () => {
    const entry = entryAfter([3, 0, 1, 0n]);
    expect(checkSequence(entry, header(2, 1))).toMatchObject({ kind: 'error', errorCode: ErrorCode.INVALID_PRODUCER_EPOCH });
    expect(checkSequence(entry, header(4, 7))).toMatchObject({ kind: 'error', errorCode: ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER });
    expect(checkSequence(entry, header(4, 0))).toEqual({ kind: 'append' });
    expect(recordAppend(entry, header(4, 0), 9n, 1000).batches).toEqual([{ producerEpoch: 4, firstSequence: 0, lastSequence: 0, baseOffset: 9n }]);
  });

  it('wraps sequences after 2^31 - 1', () => {
    const entry = entryAfter([0, 2 ** 31 - 2, 1, 0n]);
    expect(checkSequence(entry, header(0, 2 ** 31 - 1))).toEqual({ kind: 'append' });
    const wrapped = recordAppend(entry, header(0, 2 ** 31 - 1), 1n, 1000);
    expect(checkSequence(wrapped, header(0, 0))).toEqual({ kind: 'append' });
  });

  it('expires a producer producer.id.expiration.ms after its last append', () => {
    const entry = entryAfter([0, 0, 1, 0n]);
    expect(isExpired(entry, 1000 + 60_000, 60_000)).toBe(false);
    expect(isExpired(entry, 1000 + 60_001, 60_000)).toBe(true);
  });
});
