// Transactions spoken at the wire by hand, for the integration tests: a
// transactional producer's requests, read_committed fetches and what a
// read_committed consumer keeps of them.
import { expect } from 'vitest';
import { ErrorCode } from '../../src/protocol/errors.js';
import { AddPartitionsToTxnApi, CreateTopicsApi, EndTxnApi, FetchApi, InitProducerIdApi, ListOffsetsApi, ProduceApi } from '../../src/protocol/messages/index.js';
import { buildBatch, CONTROL_TYPE_ABORT, decodeRecords, parseBatches } from '../../src/protocol/records/index.js';
import type { RawClient } from './raw-client.js';

export interface Producer {
  transactionalId: string;
  producerId: bigint;
  producerEpoch: number;
  sequence: number;
}

export async function createTopic(c: RawClient, name: string, partitions = 1) {
  await c.request(CreateTopicsApi, 7, { topics: [{ name, numPartitions: partitions, replicationFactor: 1 }] });
}

export async function init(c: RawClient, transactionalId: string, transactionTimeoutMs = 60_000, version = 4): Promise<Producer> {
  const res = await c.request(InitProducerIdApi, version, { transactionalId, transactionTimeoutMs, producerId: -1n, producerEpoch: -1 });
  expect(res.errorCode).toBe(ErrorCode.NONE);
  return { transactionalId, producerId: res.producerId, producerEpoch: res.producerEpoch, sequence: 0 };
}

export async function addPartitions(c: RawClient, p: Producer, topic: string, partitions: number[] = [0]) {
  const res = await c.request(AddPartitionsToTxnApi, 3, {
    v3AndBelowTransactionalId: p.transactionalId,
    v3AndBelowProducerId: p.producerId,
    v3AndBelowProducerEpoch: p.producerEpoch,
    v3AndBelowTopics: [{ name: topic, partitions }],
  });
  return res.resultsByTopicV3AndBelow[0]!.resultsByPartition.map((r) => r.partitionErrorCode);
}

export async function produce(c: RawClient, p: Producer, topic: string, values: string[], opts: { partition?: number; version?: number; transactional?: boolean } = {}) {
  const records = buildBatch({
    producerId: p.producerId,
    producerEpoch: p.producerEpoch,
    baseSequence: p.sequence,
    isTransactional: opts.transactional ?? true,
    records: values.map((v) => ({ key: null, value: Buffer.from(v) })),
  });
  const res = await c.request(ProduceApi, opts.version ?? 9, {
    transactionalId: p.transactionalId,
    acks: -1,
    timeoutMs: 1000,
    topicData: [{ name: topic, partitionData: [{ index: opts.partition ?? 0, records }] }],
  });
  const r = res.responses[0]!.partitionResponses[0]!;
  if (r.errorCode === ErrorCode.NONE) p.sequence += values.length;
  return r;
}

export async function plainProduce(c: RawClient, topic: string, values: string[]) {
  const records = buildBatch({ records: values.map((v) => ({ key: null, value: Buffer.from(v) })) });
  const res = await c.request(ProduceApi, 9, { acks: -1, timeoutMs: 1000, topicData: [{ name: topic, partitionData: [{ index: 0, records }] }] });
  return res.responses[0]!.partitionResponses[0]!;
}

export async function endTxn(c: RawClient, p: Producer, committed: boolean, version = 3) {
  return (await c.request(EndTxnApi, version, { transactionalId: p.transactionalId, producerId: p.producerId, producerEpoch: p.producerEpoch, committed })).errorCode;
}

/** EndTxn v5 (transactions version 2): the answer; on success the producer goes on with the epoch (and producer id) it names, from sequence 0, as the Java client does. */
export async function endTxnBumpingEpoch(c: RawClient, p: Producer, committed: boolean) {
  const res = await c.request(EndTxnApi, 5, { transactionalId: p.transactionalId, producerId: p.producerId, producerEpoch: p.producerEpoch, committed });
  if (res.errorCode === ErrorCode.NONE) Object.assign(p, { producerId: res.producerId, producerEpoch: res.producerEpoch, sequence: 0 });
  return res;
}

export async function fetch(c: RawClient, topic: string, isolationLevel: number, fetchOffset = 0n, maxWaitMs = 0) {
  const res = await c.request(FetchApi, 11, {
    replicaId: -1,
    maxWaitMs,
    minBytes: 1,
    maxBytes: 10 * 1024 * 1024,
    isolationLevel,
    sessionId: 0,
    sessionEpoch: -1,
    topics: [{ topic, partitions: [{ partition: 0, fetchOffset, partitionMaxBytes: 1024 * 1024, currentLeaderEpoch: -1 }] }],
  });
  return res.responses[0]!.partitions[0]!;
}

/**
 * What a read_committed consumer keeps, as the Java consumer filters: a producer's batches are dropped from the
 * first offset of one of its aborted transactions up to its ABORT marker; control batches are never records.
 */
export function visible(part: Awaited<ReturnType<typeof fetch>>): string[] {
  const records = part.records as Buffer | Buffer[] | null;
  const buf = Array.isArray(records) ? Buffer.concat(records) : (records ?? Buffer.alloc(0));
  const pending = [...(part.abortedTransactions ?? [])].sort((a, b) => (a.firstOffset < b.firstOffset ? -1 : a.firstOffset > b.firstOffset ? 1 : 0));
  const aborting = new Set<bigint>();
  const out: string[] = [];
  for (const h of parseBatches(buf, { mode: 'log' }).batches) {
    while (pending.length > 0 && pending[0]!.firstOffset <= h.baseOffset + BigInt(h.lastOffsetDelta)) aborting.add(pending.shift()!.producerId);
    if (h.isControl) {
      if (decodeRecords(buf, h).records[0]?.key?.readInt16BE(2) === CONTROL_TYPE_ABORT) aborting.delete(h.producerId);
      continue;
    }
    if (h.isTransactional && aborting.has(h.producerId)) continue;
    out.push(...decodeRecords(buf, h).records.map((r) => r.value!.toString()));
  }
  return out;
}

export function allValues(part: Awaited<ReturnType<typeof fetch>>): string[] {
  const records = part.records as Buffer | Buffer[] | null;
  const buf = Array.isArray(records) ? Buffer.concat(records) : (records ?? Buffer.alloc(0));
  return parseBatches(buf, { mode: 'log' })
    .batches.filter((h) => !h.isControl)
    .flatMap((h) => decodeRecords(buf, h).records.map((r) => r.value!.toString()));
}

export async function latest(c: RawClient, topic: string, isolationLevel: number) {
  const res = await c.request(ListOffsetsApi, 5, { replicaId: -1, isolationLevel, topics: [{ name: topic, partitions: [{ partitionIndex: 0, timestamp: -1n, currentLeaderEpoch: -1 }] }] });
  return res.topics[0]!.partitions[0]!.offset;
}
