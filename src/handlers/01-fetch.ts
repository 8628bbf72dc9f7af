// Fetch (key 1), v4-18.
// v4: isolation level, last stable offset, aborted transactions. read_committed
// (isolation level 1) reads stop at the last stable offset and carry the
// aborted transactions overlapping the returned batches. v5: log
// start offset. v7: fetch sessions (KIP-227) - this broker serves every
// fetch as a full, sessionless one and answers session id 0. v9: current
// leader epoch. v10: zstd. Below it, a topic whose compression.type is zstd
// answers UNSUPPORTED_COMPRESSION_TYPE (Kafka's maybeConvertFetchedData);
// zstd batches of other topics are returned as stored, as Kafka does.
// v11: rack id, preferred read replica. v12: flexible. v13: topic ids.
// The first partition that has data returns at least one whole batch even if
// it exceeds the limits (KIP-74); records are never null (KAFKA-18646).
import type { Input } from '../protocol/codec/types.js';
import { ZERO_UUID } from '../protocol/codec/types.js';
import { ErrorCode } from '../protocol/errors.js';
import { FetchApi, type FetchRequest, type FetchResponse } from '../protocol/messages/index.js';
import type { PartitionLog } from '../log/partition-log.js';
import type { Topic } from '../log/topic-manager.js';
import { AclOperation, ResourceType, allowed } from './authorization.js';
import { defineHandler, type RequestContext } from './types.js';
import { LogCode } from '../observability/log-codes.js';
import { CONSUMER_OFFSETS_TOPIC, fetchConsumerOffsets, isConsumerOffsetsPartition, namesConsumerOffsets } from './consumer-offsets.js';

type PartitionData = Input<FetchResponse['responses'][number]['partitions'][number]>;

const EMPTY = Buffer.alloc(0);

interface Target {
  topicIndex: number;
  partition: FetchRequest['topics'][number]['partitions'][number];
  topic: Topic | null;
  log: PartitionLog | null;
  errorCode: number;
  /** A partition of the read-only __consumer_offsets (no PartitionLog: read from the committed offsets). */
  consumerOffsets?: boolean;
}

function leaderEpochError(requested: number, current: number): number {
  if (requested < 0 || requested === current) return ErrorCode.NONE;
  return requested > current ? ErrorCode.UNKNOWN_LEADER_EPOCH : ErrorCode.FENCED_LEADER_EPOCH;
}

async function resolveTargets(ctx: RequestContext, request: FetchRequest): Promise<{ targets: Target[] }> {
  const byId = ctx.apiVersion >= 13;
  const targets: Target[] = [];
  for (const [topicIndex, t] of request.topics.entries()) {
    if (namesConsumerOffsets(byId ? null : t.topic, byId ? t.topicId : undefined)) {
      const readable = allowed(ctx, AclOperation.READ, ResourceType.TOPIC, CONSUMER_OFFSETS_TOPIC);
      for (const partition of t.partitions) {
        const errorCode = !readable ? ErrorCode.TOPIC_AUTHORIZATION_FAILED : isConsumerOffsetsPartition(partition.partition) ? ErrorCode.NONE : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
        targets.push({ topicIndex, partition, topic: null, log: null, errorCode, consumerOffsets: errorCode === ErrorCode.NONE });
      }
      continue;
    }
    const topic = byId ? (t.topicId === ZERO_UUID ? null : await ctx.broker.topics.getByIdLoading(t.topicId)) : await ctx.broker.topics.get(t.topic);
    // READ on the topic, checked by name before existence (so unreadable names are not revealed).
    const name = byId ? topic?.name : t.topic;
    if (name !== undefined && !allowed(ctx, AclOperation.READ, ResourceType.TOPIC, name)) {
      for (const partition of t.partitions) targets.push({ topicIndex, partition, topic: null, log: null, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED });
      continue;
    }
    for (const partition of t.partitions) {
      if (!topic) {
        targets.push({ topicIndex, partition, topic: null, log: null, errorCode: byId ? ErrorCode.UNKNOWN_TOPIC_ID : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION });
        continue;
      }
      const log = partition.partition >= 0 && partition.partition < topic.partitionCount ? await ctx.broker.logs.partition(topic.topicId, partition.partition) : null;
      const errorCode = log ? leaderEpochError(partition.currentLeaderEpoch, log.leaderEpoch) : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
      targets.push({ topicIndex, partition, topic: log ? topic : null, log, errorCode });
    }
  }
  return { targets };
}

/** One pass over every partition: reads what is there now within the byte limits. */
async function readOnce(ctx: RequestContext, request: FetchRequest, targets: Target[]): Promise<{ data: PartitionData[]; bytes: number; anyError: boolean }> {
  let remaining = ctx.apiVersion >= 3 ? request.maxBytes : 0x7fffffff;
  let bytes = 0;
  let anyError = false;
  const data: PartitionData[] = [];
  for (const target of targets) {
    const { partition, log } = target;
    const base = { partitionIndex: partition.partition, abortedTransactions: null, preferredReadReplica: -1, records: EMPTY };
    if (target.consumerOffsets) {
      const read = await fetchConsumerOffsets(ctx, partition.partition, partition.fetchOffset, Math.min(partition.partitionMaxBytes, remaining), bytes === 0);
      anyError ||= read.data.errorCode !== ErrorCode.NONE;
      bytes += read.bytes;
      remaining -= read.bytes;
      data.push(read.data);
      continue;
    }
    if (target.errorCode !== ErrorCode.NONE || !log) {
      anyError = true;
      // Kafka answers a partition it refuses before reading (unknown, unauthorized) with an empty
      // aborted-transactions list, and one whose read failed (a fenced leader epoch) with null.
      data.push({ ...base, errorCode: target.errorCode, highWatermark: -1n, lastStableOffset: -1n, logStartOffset: -1n, abortedTransactions: log ? null : [] });
      continue;
    }
    const limit = Math.min(partition.partitionMaxBytes, remaining);
    let read;
    try {
      read = await ctx.broker.logs.read(log, partition.fetchOffset, limit, bytes === 0, request.isolationLevel);
    } catch (err) {
      // PostgreSQL failed under the read: Kafka's answer for a log it cannot read, which clients retry.
      ctx.log.warn({ err: (err as Error).message, partition: partition.partition, code: LogCode.FETCH_READ_FAILED }, 'fetch read failed');
      anyError = true;
      data.push({ ...base, errorCode: ErrorCode.KAFKA_STORAGE_ERROR, highWatermark: -1n, lastStableOffset: -1n, logStartOffset: -1n });
      continue;
    }
    const errorCode = read.errorCode;
    if (errorCode !== ErrorCode.NONE) {
      anyError = true;
      // As Kafka's read error answers (OFFSET_OUT_OF_RANGE included): no watermarks.
      data.push({ ...base, errorCode, highWatermark: -1n, lastStableOffset: -1n, logStartOffset: -1n });
      continue;
    }
    bytes += read.bytes;
    remaining -= read.bytes;
    data.push({
      ...base,
      errorCode,
      highWatermark: read.highWatermark,
      lastStableOffset: read.lastStableOffset,
      logStartOffset: read.logStartOffset,
      abortedTransactions: read.abortedTransactions,
      records: read.batches.length === 0 ? EMPTY : read.batches.length === 1 ? read.batches[0]! : read.batches,
    });
  }
  return { data, bytes, anyError };
}

/**
 * Kafka's maybeConvertFetchedData: below v10, a partition of a topic whose compression.type is zstd answers
 * UNSUPPORTED_COMPRESSION_TYPE once read, whatever it holds (the read still counted toward the limits).
 */
function belowZstd(ctx: RequestContext, target: Target | undefined, data: PartitionData): PartitionData {
  if (ctx.apiVersion >= 10 || !target?.topic || ctx.broker.topics.topicConfig(target.topic).compressionType !== 'zstd') return data;
  return {
    partitionIndex: data.partitionIndex,
    errorCode: ErrorCode.UNSUPPORTED_COMPRESSION_TYPE,
    highWatermark: -1n,
    lastStableOffset: -1n,
    logStartOffset: -1n,
    abortedTransactions: null,
    preferredReadReplica: -1,
    records: EMPTY,
  };
}

export default defineHandler({
  codec: FetchApi,
  minVersion: 4,
  maxVersion: 18,
  async handle(ctx, request) {
    const respond = (errorCode: number, data: PartitionData[] = [], targets: Target[] = []) => {
      let k = 0;
      const responses = request.topics.map((t) => ({ topic: t.topic, topicId: t.topicId, partitions: t.partitions.map(() => belowZstd(ctx, targets[k], data[k++]!)) }));
      return { throttleTimeMs: 0, errorCode, sessionId: 0, responses: errorCode === ErrorCode.NONE ? responses : [] };
    };
    // Incremental fetch sessions are not kept: a client that names one is told it is gone and falls back to full fetches.
    if (ctx.apiVersion >= 7 && request.sessionId !== 0) return respond(ErrorCode.FETCH_SESSION_ID_NOT_FOUND);

    const { targets } = await resolveTargets(ctx, request);
    const deadline = Date.now() + Math.min(Math.max(request.maxWaitMs, 0), ctx.broker.config.fetchMaxWaitMsCap);
    for (;;) {
      const logs = targets.flatMap((t) => (t.log ? [t.log] : []));
      // Register for wake-ups before reading so an append that commits during the read is not missed.
      const remaining = deadline - Date.now();
      const wait = remaining > 0 && !ctx.broker.shuttingDown ? ctx.broker.logs.waitForAppend(logs, remaining) : null;
      const { data, bytes, anyError } = await readOnce(ctx, request, targets);
      // __consumer_offsets partitions have no appends to wait for: their long polls wait out max_wait_ms.
      if (!wait || bytes >= request.minBytes || anyError || (logs.length === 0 && !targets.some((t) => t.consumerOffsets))) {
        wait?.cancel();
        return respond(ErrorCode.NONE, data, targets);
      }
      await wait.done;
      if (Date.now() >= deadline || ctx.broker.shuttingDown) {
        const final = await readOnce(ctx, request, targets);
        return respond(ErrorCode.NONE, final.data, targets);
      }
    }
  },
});
