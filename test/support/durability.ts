// What the durability tests check after their disruptions: every record of a
// topic's partition 0 read back through a broker, and the acknowledged
// records compared with it (lost by offset, lost by value, stored twice).
import { expect } from 'vitest';
import { FetchApi, ProduceApi } from '../../src/protocol/messages/index.js';
import { buildBatch, decodeRecords, parseBatches } from '../../src/protocol/records/index.js';
import { RawClient } from './raw-client.js';

export interface StoredRecord {
  offset: bigint;
  value: string;
}

/** Every record of the topic's partition 0, in offset order. */
export async function readLog(bootstrap: string, topic: string): Promise<StoredRecord[]> {
  const client = await RawClient.connect(bootstrap);
  const out: StoredRecord[] = [];
  try {
    let offset = 0n;
    for (;;) {
      const res = await client.request(FetchApi, 11, {
        replicaId: -1,
        maxWaitMs: 0,
        minBytes: 1,
        maxBytes: 1 << 24,
        sessionEpoch: -1,
        topics: [{ topic, partitions: [{ partition: 0, fetchOffset: offset, partitionMaxBytes: 1 << 24 }] }],
      });
      const p = res.responses[0]!.partitions[0]!;
      expect(p.errorCode).toBe(0);
      const buf = p.records as Buffer;
      if (buf.length === 0) return out;
      for (const h of parseBatches(buf, { mode: 'log' }).batches) {
        for (const r of decodeRecords(buf, h).records) out.push({ offset: h.baseOffset + BigInt(r.offsetDelta), value: r.value!.toString() });
        offset = h.baseOffset + BigInt(h.lastOffsetDelta) + 1n;
      }
    }
  } finally {
    client.close();
  }
}

/**
 * Acknowledged records missing from the log: by offset (acknowledged with
 * one) and by value (acknowledged as duplicates, offset unknown); and values
 * stored more than once.
 */
export function compareWithLog(stored: readonly StoredRecord[], acknowledged: ReadonlyMap<bigint, string>, ackedValues: ReadonlySet<string>) {
  const byOffset = new Map(stored.map((r) => [r.offset, r.value]));
  const lost = [...acknowledged].filter(([offset, value]) => byOffset.get(offset) !== value);
  const storedValues = new Set(stored.map((r) => r.value));
  const lostValues = [...ackedValues].filter((v) => !storedValues.has(v));
  const occurrences = new Map<string, number>();
  for (const r of stored) occurrences.set(r.value, (occurrences.get(r.value) ?? 0) + 1);
  const duplicates = [...occurrences].filter(([, n]) => n > 1);
  return { lost, lostValues, duplicates };
}

/** One record from an idempotent producer at `sequence`, acks=all, to partition 0; the partition's answer. */
export async function produceIdempotent(client: RawClient, topic: string, producerId: bigint, producerEpoch: number, sequence: number, value: string) {
  const res = await client.request(ProduceApi, 9, {
    acks: -1,
    timeoutMs: 5000,
    topicData: [{ name: topic, partitionData: [{ index: 0, records: buildBatch({ producerId, producerEpoch, baseSequence: sequence, records: [{ key: null, value: Buffer.from(value) }] }) }] }],
  });
  return res.responses[0]!.partitionResponses[0]!;
}
