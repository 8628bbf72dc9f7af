// Fetch (key 1), v0-18.
// v0-3 read magic 0 (v0-1) or magic 1 (v2-3) message sets: the stored batches
// down-converted as Kafka 3.9 does (protocol/records/legacy-convert.ts),
// refused with UNSUPPORTED_VERSION where message.downconversion.enable is
// false. v1: throttle time. v3: response max bytes.
// v4: isolation level, last stable offset, aborted transactions. read_committed
// (isolation level 1) reads stop at the last stable offset and carry the
// aborted transactions overlapping the returned batches. v5: log
// start offset. v7: incremental fetch sessions (KIP-227, kept by
// FetchSessionCache): an incremental fetch reads every partition of its
// session and answers only those with something new. v9: current
// leader epoch. v10: zstd. Below it, a topic whose compression.type is zstd
// answers UNSUPPORTED_COMPRESSION_TYPE (Kafka's maybeConvertFetchedData);
// zstd batches of other topics are returned as stored, as Kafka does.
// v11: rack id, preferred read replica. v12: flexible. v13: topic ids.
// The first partition that has data returns at least one whole batch even if
// it exceeds the limits (KIP-74); records are never null (KAFKA-18646).
// Only the partition's leader serves it; another broker answers
// NOT_LEADER_OR_FOLLOWER naming the leader (v12+, endpoints v16+: KIP-951).
import type { Input } from '../protocol/codec/types.js';
import { ZERO_UUID } from '../protocol/codec/types.js';
import { ErrorCode } from '../protocol/errors.js';
import { FetchApi, type FetchRequest, type FetchResponse } from '../protocol/messages/index.js';
import { downConvert } from '../protocol/records/index.js';
import type { FetchContext, FetchPartition, PartitionResult } from '../log/fetch-sessions.js';
import type { PartitionLog } from '../log/partition-log.js';
import { READ_COMMITTED } from '../log/log-manager.js';
import type { Topic } from '../log/topic-manager.js';
import { AclOperation, ResourceType, allowed } from './authorization.js';
import { currentLeader, leaderEndpoints, leadsPartition, type CurrentLeader } from './partition-leader.js';
import { defineHandler, type RequestContext } from './types.js';
import { LogCode } from '../observability/log-codes.js';
import { CONSUMER_OFFSETS_TOPIC, fetchConsumerOffsets, isConsumerOffsetsPartition, namesConsumerOffsets } from './consumer-offsets.js';

type PartitionData = Input<FetchResponse['responses'][number]['partitions'][number]>;

const EMPTY = Buffer.alloc(0);

interface Target {
  fetch: FetchPartition;
  partition: FetchPartition['request'];
  topic: Topic | null;
  log: PartitionLog | null;
  errorCode: number;
  /** The partition's leader, when this broker is not it. */
  currentLeader?: CurrentLeader;
  /** A partition of the read-only __consumer_offsets (no PartitionLog: read from the committed offsets). */
  consumerOffsets?: boolean;
}

function leaderEpochError(requested: number, current: number): number {
  if (requested < 0 || requested === current) return ErrorCode.NONE;
  return requested > current ? ErrorCode.UNKNOWN_LEADER_EPOCH : ErrorCode.FENCED_LEADER_EPOCH;
}

/** The request's partitions, in its order, for the session cache. */
function requestedPartitions(request: FetchRequest): FetchPartition[] {
  return request.topics.flatMap((t) => t.partitions.map((request) => ({ topic: t.topic, topicId: t.topicId, request })));
}

async function resolveTargets(ctx: RequestContext, partitions: readonly FetchPartition[]): Promise<Target[]> {
  const byId = ctx.apiVersion >= 13;
  const topics = new Map<string, { topic: Topic | null; readable: boolean }>();
  const targets: Target[] = [];
  for (const fetch of partitions) {
    const partition = fetch.request;
    if (namesConsumerOffsets(byId ? null : fetch.topic, byId ? fetch.topicId : undefined)) {
      const readable = allowed(ctx, AclOperation.READ, ResourceType.TOPIC, CONSUMER_OFFSETS_TOPIC);
      const errorCode = !readable ? ErrorCode.TOPIC_AUTHORIZATION_FAILED : isConsumerOffsetsPartition(partition.partition) ? ErrorCode.NONE : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
      targets.push({ fetch, partition, topic: null, log: null, errorCode, consumerOffsets: errorCode === ErrorCode.NONE });
      continue;
    }
    const ref = byId ? fetch.topicId : fetch.topic;
    let resolved = topics.get(ref);
    if (!resolved) {
      const topic = byId ? (fetch.topicId === ZERO_UUID ? null : await ctx.broker.topics.getByIdLoading(fetch.topicId)) : await ctx.broker.topics.get(fetch.topic);
      // READ on the topic, checked by name before existence (so unreadable names are not revealed).
      const name = byId ? topic?.name : fetch.topic;
      resolved = { topic, readable: name === undefined || allowed(ctx, AclOperation.READ, ResourceType.TOPIC, name) };
      topics.set(ref, resolved);
    }
    const { topic } = resolved;
    if (!resolved.readable) {
      targets.push({ fetch, partition, topic: null, log: null, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED });
      continue;
    }
    if (!topic) {
      targets.push({ fetch, partition, topic: null, log: null, errorCode: byId ? ErrorCode.UNKNOWN_TOPIC_ID : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION });
      continue;
    }
    const log = partition.partition >= 0 && partition.partition < topic.partitionCount ? await ctx.broker.logs.partition(topic.topicId, partition.partition) : null;
    if (log && !(await leadsPartition(ctx, topic, partition.partition))) {
      targets.push({ fetch, partition, topic: null, log: null, errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, currentLeader: currentLeader(ctx, topic.topicId, partition.partition) });
      continue;
    }
    const errorCode = log ? leaderEpochError(partition.currentLeaderEpoch, log.leaderEpoch) : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
    // KIP-951: a fenced epoch is answered with the current leader too.
    const leader = errorCode === ErrorCode.FENCED_LEADER_EPOCH ? { currentLeader: currentLeader(ctx, topic.topicId, partition.partition) } : {};
    targets.push({ fetch, partition, topic: log ? topic : null, log, errorCode, ...leader });
  }
  return targets;
}

/** read_committed: each partition's last stable offset caught up with markers other brokers wrote before the request came (LogManager.catchUpLastStableOffset). */
async function catchUpLastStableOffsets(ctx: RequestContext, targets: readonly Target[]): Promise<void> {
  const waits: Promise<void>[] = [];
  for (const t of targets) {
    const wait = t.log && t.errorCode === ErrorCode.NONE ? ctx.broker.logs.catchUpLastStableOffset(t.log) : undefined;
    if (wait) waits.push(wait);
  }
  if (waits.length > 0) await Promise.all(waits);
}

/** One pass over every partition: reads what is there now within the byte limits. */
async function readOnce(ctx: RequestContext, request: FetchRequest, targets: readonly Target[]): Promise<{ data: PartitionData[]; bytes: number; anyError: boolean }> {
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
      const leader = target.currentLeader ? { currentLeader: target.currentLeader } : {};
      data.push({ ...base, errorCode: target.errorCode, highWatermark: -1n, lastStableOffset: -1n, logStartOffset: -1n, abortedTransactions: log || target.currentLeader ? null : [], ...leader });
      continue;
    }
    const limit = Math.min(partition.partitionMaxBytes, remaining);
    let read;
    try {
      // Awaited only when PostgreSQL is read: a session's idle partitions are answered at once.
      const pending = ctx.broker.logs.read(log, partition.fetchOffset, limit, bytes === 0, request.isolationLevel);
      read = pending instanceof Promise ? await pending : pending;
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
      partitionIndex: partition.partition,
      errorCode,
      preferredReadReplica: -1,
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

/**
 * Kafka 3.9's maybeConvertFetchedData below v4: the records read (limits counted on their stored size)
 * down-converted to the message format of the request's version, for partitions of a known topic.
 */
function downConverted(ctx: RequestContext, target: Target | undefined, data: PartitionData): PartitionData {
  if (ctx.apiVersion > 3 || !target?.topic || data.errorCode === ErrorCode.UNSUPPORTED_COMPRESSION_TYPE) return data;
  const refuse = (errorCode: number): PartitionData => ({ ...data, errorCode, highWatermark: -1n, lastStableOffset: -1n, logStartOffset: -1n, abortedTransactions: null, records: EMPTY });
  if (!ctx.broker.topics.topicConfig(target.topic).messageDownconversionEnable) return refuse(ErrorCode.UNSUPPORTED_VERSION);
  if (data.errorCode !== ErrorCode.NONE) return data;
  const read = data.records as Buffer | Buffer[];
  const conversion = downConvert(Array.isArray(read) ? read : [read], ctx.apiVersion <= 1 ? 0 : 1, target.partition.fetchOffset);
  return conversion.error ? refuse(ErrorCode.UNSUPPORTED_COMPRESSION_TYPE) : { ...data, records: conversion.records };
}

/** What the session cache weighs of a partition's answer. */
function partitionResult(data: PartitionData): PartitionResult {
  const records = data.records;
  const recordsBytes = !records ? 0 : Array.isArray(records) ? records.reduce((n, b) => n + b.length, 0) : records.length;
  return {
    errorCode: data.errorCode ?? ErrorCode.NONE,
    highWatermark: data.highWatermark ?? -1n,
    logStartOffset: data.logStartOffset ?? -1n,
    recordsBytes,
    preferredReadReplica: data.preferredReadReplica ?? -1,
  };
}

/** The response: the partitions the session context keeps, grouped by topic in the order read (as Kafka's FetchResponse.of). */
function respond(ctx: RequestContext, context: FetchContext, targets: readonly Target[], data: readonly PartitionData[]) {
  const { errorCode, sessionId, send } = context.complete(data.map(partitionResult));
  const responses: { topic: string; topicId: string; partitions: PartitionData[] }[] = [];
  for (const [i, target] of targets.entries()) {
    if (!send[i]) continue;
    const { topic, topicId } = target.fetch;
    let last = responses.at(-1);
    if (!last || last.topic !== topic || last.topicId !== topicId) responses.push((last = { topic, topicId, partitions: [] }));
    last.partitions.push(downConverted(ctx, target, belowZstd(ctx, target, data[i]!)));
  }
  // KIP-951: the endpoints of the leaders named in partitions answered NOT_LEADER_OR_FOLLOWER or FENCED_LEADER_EPOCH.
  const nodeEndpoints = leaderEndpoints(
    ctx,
    targets.filter((_, i) => send[i]).map((t) => t.currentLeader),
  );
  return { throttleTimeMs: 0, errorCode, sessionId, responses, nodeEndpoints };
}

export default defineHandler({
  codec: FetchApi,
  minVersion: 0,
  maxVersion: 18,
  async handle(ctx, request) {
    const context = ctx.broker.fetchSessions.newContext({
      apiVersion: ctx.apiVersion,
      sessionId: request.sessionId,
      sessionEpoch: request.sessionEpoch,
      privileged: false,
      partitions: requestedPartitions(request),
      forgotten: request.forgottenTopicsData.flatMap((t) => t.partitions.map((partition) => ({ topic: t.topic, topicId: t.topicId, partition }))),
    });
    const targets = await resolveTargets(ctx, context.partitions);
    if (request.isolationLevel === READ_COMMITTED) await catchUpLastStableOffsets(ctx, targets);
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
        return respond(ctx, context, targets, data);
      }
      await wait.done;
      if (Date.now() >= deadline || ctx.broker.shuttingDown) {
        const final = await readOnce(ctx, request, targets);
        return respond(ctx, context, targets, final.data);
      }
    }
  },
});
