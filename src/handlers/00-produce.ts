// Produce (key 0), v0-13.
// v0-2 may carry magic 0/1 message sets (Kafka 0.8-0.10 clients): they are
// converted to one magic 2 batch before the topic's checks, as Kafka 3.9
// appends them (protocol/records/legacy-convert.ts). v1: throttle time.
// v2: log append time. Transactional batches are appended only into the producer's ongoing
// transaction, at its current epoch, on partitions added to it; from v12
// (transactions version 2, KIP-890 part 2) a partition not yet in the
// transaction is added to it by this first Produce, as Kafka's leader does.
// v3: transactional id, magic v2 batches only, exactly one batch per
// partition. v5: log start offset. v8: record errors naming the invalid
// records of a refused batch, and error message (KIP-467). v9: flexible.
// v10: current leader (tagged). v13: topic ids.
// Only the partition's leader appends a client's batches; another broker
// answers NOT_LEADER_OR_FOLLOWER naming the leader (v10+, KIP-951).
// acks=1 and acks=-1 are answered after the PostgreSQL commit; acks=0 gets no
// response at all.
import type { Input } from '../protocol/codec/types.js';
import { ZERO_UUID } from '../protocol/codec/types.js';
import { ErrorCode, errorName } from '../protocol/errors.js';
import { ProduceApi, type ProduceResponse } from '../protocol/messages/index.js';
import { firstMagic, legacyToBatch, MAGIC_V2, parseBatches, type ParseBatchesResult } from '../protocol/records/index.js';
import { applyAppendPolicy } from '../log/append-policy.js';
import { AppendError } from '../log/log-manager.js';
import type { IncomingBatch, PartitionLog } from '../log/partition-log.js';
import type { Topic } from '../log/topic-manager.js';
import { AclOperation, ResourceType, allowed, mayCreateTopic } from './authorization.js';
import { currentLeader, leaderEndpoints, leadsPartition } from './partition-leader.js';
import { addProducedPartitionsToTransaction, produceAddError } from './txn-implicit-add.js';
import { Deferred, defineHandler, type RequestContext } from './types.js';
import { CONSUMER_OFFSETS_TOPIC, CONSUMER_OFFSETS_TOPIC_ID, ConsumerOffsetsTopic } from '../coordinator/consumer-offsets-topic.js';

// A record batch's attributes are the int16 at offset 21 (after base offset, length, leader epoch, magic, CRC).
const ATTRIBUTES_END = 23;
const TRANSACTIONAL_BIT = 0x10;
const MAGIC_AT = 16; // magic 0/1 message sets have no transactional bit

type PartitionResponse = Input<ProduceResponse['responses'][number]['partitionResponses'][number]>;

const failed = (index: number, errorCode: number, errorMessage: string | null = null): PartitionResponse => ({
  index,
  errorCode,
  baseOffset: -1n,
  logAppendTimeMs: -1n,
  logStartOffset: -1n,
  errorMessage,
});

/**
 * Kafka's answer to a batch that its checks refuse, as Apache Kafka 4.3 gives it (seen side by
 * side in compat/differential): only a framing error of the buffer says why; only errors found
 * in a framed batch's own fields (Kafka's log-append checks) carry the log start offset.
 */
function refusedBatch(index: number, parsed: ParseBatchesResult, logStartOffset: bigint): PartitionResponse {
  const errorCode = parsed.error === 'RECORD_TOO_LARGE' ? ErrorCode.MESSAGE_TOO_LARGE : ErrorCode[parsed.error!];
  const framing = parsed.stage === 'framing';
  const says = (framing && errorCode === ErrorCode.CORRUPT_MESSAGE) || errorCode === ErrorCode.UNSUPPORTED_COMPRESSION_TYPE;
  const inLog = !framing && errorCode === ErrorCode.INVALID_RECORD;
  return { ...failed(index, errorCode, says ? (parsed.message ?? null) : null), logStartOffset: inLog ? logStartOffset : -1n };
}

/**
 * Kafka's answers to a transactional batch its coordinator does not expect
 * (ReplicaManager after KIP-890 verification): a fenced epoch is
 * INVALID_PRODUCER_EPOCH for every version; a partition outside the
 * transaction is INVALID_TXN_STATE, or INVALID_RECORD for clients older
 * than Produce v12 (which treat INVALID_TXN_STATE as unexpected).
 */
function produceTxnError(errorCode: number, apiVersion: number): number {
  if (errorCode === ErrorCode.PRODUCER_FENCED) return ErrorCode.INVALID_PRODUCER_EPOCH;
  if (errorCode === ErrorCode.INVALID_TXN_STATE || errorCode === ErrorCode.INVALID_PRODUCER_ID_MAPPING) return apiVersion >= 12 ? ErrorCode.INVALID_TXN_STATE : ErrorCode.INVALID_RECORD;
  return errorCode;
}

/** A partition's batches, checked and ready to be queued. */
interface PreparedPartition {
  index: number;
  topic: Topic;
  log: PartitionLog;
  batches: IncomingBatch[];
  logAppendTimeMs: bigint;
}

/** Validates one partition's records: the batches ready to queue, or the partition's answer; never throws. */
async function preparePartition(
  ctx: RequestContext,
  topic: Topic | null,
  topicError: number,
  index: number,
  records: Buffer | null,
  transactionalId: string | null,
): Promise<PreparedPartition | PartitionResponse> {
  if (!topic) return failed(index, topicError);
  if (index < 0 || index >= topic.partitionCount) return failed(index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  if (!records || records.length === 0) {
    // Kafka: "must have at least one record batch" from v3, not sent; below, an empty append that succeeds at offset -1.
    return failed(index, records && ctx.apiVersion < 3 ? ErrorCode.NONE : ErrorCode.INVALID_RECORD);
  }
  const log = await ctx.broker.logs.partition(topic.topicId, index);
  if (!log) return failed(index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  const notLeader = (): PartitionResponse => ({ ...failed(index, ErrorCode.NOT_LEADER_OR_FOLLOWER), currentLeader: currentLeader(ctx, topic.topicId, index) });
  if (!(await leadsPartition(ctx, topic, index))) return notLeader();
  const config = ctx.broker.topics.topicConfig(topic);
  // Produce v0-2: a magic 0/1 message set becomes one magic 2 batch (Kafka 3.9's LogValidator conversion).
  if (ctx.apiVersion < 3 && firstMagic(records) < MAGIC_V2) {
    const legacy = legacyToBatch(records, { maxMessageBytes: config.maxMessageBytes });
    if (legacy.error) return refusedBatch(index, { batches: [], ...legacy }, log.logStartOffset);
    if (!legacy.batch) return failed(index, ErrorCode.NONE); // no complete message: Kafka appends nothing
    records = legacy.batch;
  }
  // Kafka's checks for client appends, in Kafka's order: one magic v2 batch, size, CRC-32C, offsets and counts.
  const parsed = parseBatches(records, { mode: 'produce', produceVersion: ctx.apiVersion, maxBatchBytes: config.maxMessageBytes, verifyCrc: true });
  if (parsed.error) return refusedBatch(index, parsed, log.logStartOffset);
  const batches: IncomingBatch[] = [];
  let logAppendTimeMs = -1n;
  for (const header of parsed.batches) {
    const outcome = applyAppendPolicy({ data: records.subarray(header.start, header.end), header }, config, Date.now(), `${topic.name}-${index}`);
    if (!outcome.ok) {
      if (!outcome.recordErrors) return failed(index, outcome.errorCode, outcome.message);
      // KIP-467: the records that failed, with Kafka's message for the batch; the log start offset as Kafka reports it.
      return {
        ...failed(index, outcome.errorCode, outcome.message),
        logStartOffset: log.logStartOffset,
        recordErrors: outcome.recordErrors.map((e) => ({ batchIndex: e.batchIndex, batchIndexErrorMessage: e.message })),
      };
    }
    batches.push(outcome.batch);
    logAppendTimeMs = outcome.logAppendTimeMs;
  }
  // A transaction another broker coordinates is checked here against its stored state (KIP-890 part 1's verification);
  // one coordinated here is checked in queuePartition, with no await before the queueing. From v12 the implicit add
  // (addToTransaction) asks the coordinator itself, wherever it is, which checks the batch's producer and epoch.
  const { transactions } = ctx.broker;
  if (transactionalId !== null && ctx.apiVersion < 12 && !transactions.serves(transactionalId)) {
    for (const { header } of batches) {
      if (!header.isTransactional) continue;
      const txnError = await transactions.verifyStoredProduce(transactionalId, header.producerId, header.producerEpoch, topic.topicId, index, log.hasOpenTxn(header.producerId));
      if (txnError !== ErrorCode.NONE) return failed(index, produceTxnError(txnError, ctx.apiVersion));
    }
  }
  return { index, topic, log, batches, logAppendTimeMs };
}

const isPrepared = (p: PreparedPartition | PartitionResponse): p is PreparedPartition => 'batches' in p;
const transactionalHeader = (p: PreparedPartition) => p.batches.find((b) => b.header.isTransactional)?.header;

/**
 * Transactions version 2 (Produce v12+, Kafka's ADD_PARTITION operation): the
 * partitions of the request not yet in the producer's transaction are added
 * to it, all in one call, as Kafka's leader sends one AddPartitionsToTxn, to
 * the transaction's coordinator here or on another broker. Not yet in it:
 * for a transaction coordinated here, what the coordinator holds; for one
 * coordinated elsewhere, unless the coordinator said so for this epoch and
 * the partition's index still shows the transaction open (the marker ends
 * that). Returns the answers of the partitions that could not be added.
 */
async function addToTransaction(ctx: RequestContext, transactionalId: string, prepared: PreparedPartition[]): Promise<Map<PreparedPartition, PartitionResponse>> {
  const { transactions } = ctx.broker;
  const refused = new Map<PreparedPartition, PartitionResponse>();
  const coordinatedHere = transactions.serves(transactionalId);
  const missing = prepared.filter((p) => {
    const header = transactionalHeader(p);
    if (!header) return false;
    if (coordinatedHere) return transactions.verifyProduce(header.producerId, header.producerEpoch, p.topic.topicId, p.index) === ErrorCode.INVALID_TXN_STATE;
    return !transactions.verifiedElsewhere(transactionalId, header.producerId, header.producerEpoch, p.topic.topicId, p.index, p.log.hasOpenTxn(header.producerId));
  });
  if (missing.length === 0) return refused;
  const { producerId, producerEpoch } = transactionalHeader(missing[0]!)!;
  const errors = await addProducedPartitionsToTransaction(
    ctx,
    transactionalId,
    producerId,
    producerEpoch,
    missing.map((p) => ({ topic: p.topic.name, partition: p.index })),
  );
  missing.forEach((p, i) => {
    const errorCode = errors[i] ?? ErrorCode.UNKNOWN_SERVER_ERROR;
    if (!coordinatedHere) transactions.noteVerifiedElsewhere(transactionalId, producerId, producerEpoch, p.topic.topicId, p.index, errorCode === ErrorCode.NONE);
    if (errorCode === ErrorCode.NONE) return;
    const answer = produceAddError(errorCode);
    refused.set(p, failed(p.index, answer.errorCode, answer.errorMessage));
  });
  return refused;
}

/**
 * Queues a partition's batches for its next flush, with the response that
 * the commit will bring. Synchronous: the transaction check and the queueing
 * have no await between them, so a batch that passes precedes its
 * transaction's marker.
 */
function queuePartition(ctx: RequestContext, p: PreparedPartition, transactionalId: string | null): { committed: Promise<PartitionResponse> } | PartitionResponse {
  const { index, log, batches, logAppendTimeMs } = p;
  const coordinatedHere = transactionalId === null || ctx.broker.transactions.serves(transactionalId);
  for (const { header } of batches) {
    if (!header.isTransactional || !coordinatedHere) continue;
    const txnError = ctx.broker.transactions.verifyProduce(header.producerId, header.producerEpoch, p.topic.topicId, index);
    if (txnError !== ErrorCode.NONE) return failed(index, produceTxnError(txnError, ctx.apiVersion));
  }
  // Checked again with no await before the queueing: an append queued by a leader precedes its hand-over (which waits for the appends queued).
  if (!ctx.broker.leadership.leads(p.topic.topicId, index)) return { ...failed(index, ErrorCode.NOT_LEADER_OR_FOLLOWER), currentLeader: currentLeader(ctx, p.topic.topicId, index) };
  const committed = ctx.broker.logs.append(log, batches).then(
    (result): PartitionResponse => ({ index, errorCode: ErrorCode.NONE, baseOffset: result.baseOffset, logAppendTimeMs, logStartOffset: result.logStartOffset }),
    (err: unknown): PartitionResponse => {
      // Kafka's append errors (sequences, epochs) carry the log start offset and no message;
      // a partition gone or PostgreSQL failing neither.
      if (err instanceof AppendError) {
        const inLog = err.errorCode !== ErrorCode.UNKNOWN_TOPIC_OR_PARTITION && err.errorCode !== ErrorCode.KAFKA_STORAGE_ERROR;
        return { ...failed(index, err.errorCode), logStartOffset: inLog ? log.logStartOffset : -1n };
      }
      throw err;
    },
  );
  return { committed };
}

/** Whether any partition's first batch is transactional (attributes bit 4), as Kafka's ProduceRequest.hasTransactionalRecords. */
function hasTransactionalRecords(request: { topicData: { partitionData: { records: unknown }[] }[] }): boolean {
  return request.topicData.some((t) =>
    t.partitionData.some((p) => {
      const records = p.records as Buffer | null;
      return records !== null && records.length >= ATTRIBUTES_END && records[MAGIC_AT] === MAGIC_V2 && (records.readInt16BE(ATTRIBUTES_END - 2) & TRANSACTIONAL_BIT) !== 0;
    }),
  );
}

export default defineHandler({
  codec: ProduceApi,
  minVersion: 0,
  maxVersion: 13,
  // Still advertised from v0 under PGKAFKA_KAFKA4_VERSIONS_ONLY, as Kafka 4 does (KAFKA-18659: librdkafka looks for v0 before it will compress).
  advertisedMinVersion: 0,
  async handle(ctx, request) {
    const acks = request.acks;
    const byId = ctx.apiVersion >= 13;
    // Kafka: transactional records need WRITE on the transactional id, or the whole request is refused.
    if (hasTransactionalRecords(request) && (request.transactionalId === null || !allowed(ctx, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, request.transactionalId))) {
      if (acks === 0) return null;
      return {
        throttleTimeMs: 0,
        responses: request.topicData.map((t) => ({
          name: t.name,
          topicId: t.topicId,
          partitionResponses: t.partitionData.map((p) => failed(p.index, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)),
        })),
      };
    }
    // Topics are looked up and partitions checked one after another, then queued
    // together, so batches reach their partitions' queues in the order of this request.
    const prepared: { topicData: (typeof request.topicData)[number]; partitions: (PreparedPartition | PartitionResponse)[] }[] = [];
    for (const topicData of request.topicData) {
      let topic: Topic | null = null;
      let topicError: number = ErrorCode.NONE;
      if (acks !== 0 && acks !== 1 && acks !== -1) {
        topicError = ErrorCode.INVALID_REQUIRED_ACKS;
      } else if (byId && topicData.topicId === CONSUMER_OFFSETS_TOPIC_ID) {
        topicError = allowed(ctx, AclOperation.WRITE, ResourceType.TOPIC, CONSUMER_OFFSETS_TOPIC) ? ErrorCode.INVALID_TOPIC_EXCEPTION : ErrorCode.TOPIC_AUTHORIZATION_FAILED;
      } else if (byId) {
        topic = topicData.topicId === ZERO_UUID ? null : await ctx.broker.topics.getByIdLoading(topicData.topicId);
        if (!topic) topicError = ErrorCode.UNKNOWN_TOPIC_ID;
        else if (!allowed(ctx, AclOperation.WRITE, ResourceType.TOPIC, topic.name)) [topic, topicError] = [null, ErrorCode.TOPIC_AUTHORIZATION_FAILED];
      } else if (!allowed(ctx, AclOperation.WRITE, ResourceType.TOPIC, topicData.name)) {
        topicError = ErrorCode.TOPIC_AUTHORIZATION_FAILED;
      } else if (ConsumerOffsetsTopic.is(topicData.name)) {
        // Kafka's ReplicaManager: clients cannot append to an internal topic.
        topicError = ErrorCode.INVALID_TOPIC_EXCEPTION;
      } else {
        // Auto-creation also needs CREATE on the cluster or the topic.
        const existing = await ctx.broker.topics.get(topicData.name);
        const outcome = existing
          ? { errorCode: ErrorCode.NONE, topic: existing }
          : mayCreateTopic(ctx, topicData.name)
            ? await ctx.broker.topics.getOrCreate(topicData.name)
            : { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, topic: undefined };
        topic = outcome.topic ?? null;
        topicError = outcome.errorCode;
      }
      const partitions = [];
      for (const p of topicData.partitionData) partitions.push(await preparePartition(ctx, topic, topicError, p.index, p.records as Buffer | null, request.transactionalId));
      prepared.push({ topicData, partitions });
    }
    const refused =
      request.transactionalId !== null && ctx.apiVersion >= 12
        ? await addToTransaction(
            ctx,
            request.transactionalId,
            prepared.flatMap((t) => t.partitions.filter(isPrepared)),
          )
        : new Map<PreparedPartition, PartitionResponse>();
    const queued = prepared.map(({ topicData, partitions }) => ({
      topicData,
      partitions: partitions.map((p) => (isPrepared(p) ? (refused.get(p) ?? queuePartition(ctx, p, request.transactionalId)) : p)),
    }));
    const responses = Promise.all(
      queued.map(async ({ topicData, partitions }) => {
        const partitionResponses = await Promise.all(partitions.map((p) => ('committed' in p ? p.committed : p)));
        for (const r of partitionResponses) {
          if (r.errorCode !== ErrorCode.NONE) {
            ctx.log.info({ topic: topicData.name, partition: r.index, error: errorName(r.errorCode!), message: r.errorMessage, recordErrors: r.recordErrors }, 'produce refused');
          }
        }
        return { name: topicData.name, topicId: topicData.topicId, partitionResponses };
      }),
    );
    return new Deferred(
      responses.then((r) =>
        acks === 0
          ? null
          : {
              responses: r,
              throttleTimeMs: 0,
              nodeEndpoints: leaderEndpoints(
                ctx,
                r.flatMap((t) => t.partitionResponses.map((p) => p.currentLeader)),
              ),
            },
      ),
    );
  },
});
