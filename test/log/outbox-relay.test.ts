// The batches the outbox relay appends for records sent from SQL: what a
// producer without idempotence would send, in the topic's compression and
// timestamp type, split at 1 MiB.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/schema.js';
import { BrokerConfigs } from '../../src/log/broker-configs.js';
import { outboxBatches, type OutboxRecord } from '../../src/log/outbox-relay.js';
import { resolveTopicConfig } from '../../src/log/topic-configs.js';
import { decodeRecords, parseBatches, recordTimestamp } from '../../src/protocol/records/index.js';

const defaults = new BrokerConfigs(loadConfig({}, {}));
const config = (explicit: Record<string, string> = {}) => resolveTopicConfig(explicit, defaults);

const rec = (i: number, timestampMs: bigint, valueBytes = 10): OutboxRecord => ({
  timestampMs,
  key: i % 2 ? Buffer.from(`key-${i}`) : null,
  value: Buffer.alloc(valueBytes, i % 256),
  headers: [{ key: 'i', value: Buffer.from(String(i)) }],
});

/** The batches back as a consumer reads them: header, and each record's offset, timestamp, key, value, headers. */
function read(batches: ReturnType<typeof outboxBatches>) {
  return batches.map((b) => {
    const {
      batches: [h],
      error,
    } = parseBatches(b.data, { mode: 'log', verifyCrc: true });
    expect(error).toBeNull();
    return {
      header: h!,
      records: decodeRecords(b.data, h!).records.map((r) => ({ offset: b.relativeOffset + BigInt(r.offsetDelta), timestamp: recordTimestamp(h!, r), key: r.key, value: r.value, headers: r.headers })),
    };
  });
}

describe("the outbox relay's batches", () => {
  it('keeps each record, its send time and its order, with no producer id, in a valid uncompressed CreateTime batch', () => {
    // Commit order need not be time order: a later commit may hold an earlier send.
    const records = [rec(0, 1_700_000_000_500n), rec(1, 1_700_000_000_100n), rec(2, 1_700_000_000_900n)];
    const batches = outboxBatches(records, config(), 3, 1_800_000_000_000n);
    expect(batches).toHaveLength(1);
    const [{ header, records: got }] = read(batches) as [ReturnType<typeof read>[number]];
    expect(header).toMatchObject({ compression: 0, timestampType: 0, producerId: -1n, producerEpoch: -1, baseSequence: -1, isTransactional: false, recordCount: 3, partitionLeaderEpoch: 3 });
    expect(header.baseTimestamp).toBe(1_700_000_000_500n);
    expect(header.maxTimestamp).toBe(1_700_000_000_900n);
    expect(batches[0]).toMatchObject({ relativeOffset: 0n, lastOffsetDelta: 2, recordCount: 3, firstTimestamp: 1_700_000_000_500n, maxTimestamp: 1_700_000_000_900n });
    expect(got.map((r) => [r.offset, r.timestamp, r.key?.toString() ?? null, r.value, r.headers])).toEqual(
      records.map((r, i) => [BigInt(i), r.timestampMs, r.key?.toString() ?? null, r.value, r.headers]),
    );
  });

  it('splits records into batches of at most 1 MiB, a larger record alone, offsets running on', () => {
    const records = [rec(0, 1n, 600_000), rec(1, 2n, 600_000), rec(2, 3n, 2_000_000), rec(3, 4n, 10), rec(4, 5n, 10)];
    const batches = outboxBatches(records, config(), 0, 0n);
    expect(batches.map((b) => [b.relativeOffset, b.recordCount])).toEqual([
      [0n, 1],
      [1n, 1],
      [2n, 1],
      [3n, 2],
    ]);
    expect(read(batches).flatMap((b) => b.records.map((r) => r.offset))).toEqual([0n, 1n, 2n, 3n, 4n]);
  });

  it("compresses as the topic's compression.type says, and stamps LogAppendTime where the topic asks for it", () => {
    const records = [rec(0, 1_700_000_000_000n), rec(1, 1_700_000_000_001n)];
    const [zstd] = read(outboxBatches(records, config({ 'compression.type': 'zstd' }), 0, 0n));
    expect(zstd!.header.compression).toBe(4);
    expect(zstd!.records.map((r) => r.value)).toEqual(records.map((r) => r.value));
    const [appendTime] = read(outboxBatches(records, config({ 'message.timestamp.type': 'LogAppendTime' }), 0, 1_800_000_000_000n));
    expect(appendTime!.header.timestampType).toBe(1);
    expect(appendTime!.records.map((r) => r.timestamp)).toEqual([1_800_000_000_000n, 1_800_000_000_000n]);
  });
});
