// Produce (key 0), v3-13, advertised from v0 (KAFKA-18659: librdkafka looks
// for v0 before it will compress; v0-2 requests are still refused).
// Transactional batches are appended only into the producer's ongoing
// transaction, at its current epoch, on partitions added to it.
// v3: transactional id, magic v2 batches only, exactly one batch per
// partition. v5: log start offset. v8: record errors naming the invalid
// records of a refused batch, and error message (KIP-467). v9: flexible.
// v10: current leader (tagged). v13: topic ids.
// acks=1 and acks=-1 are answered after the PostgreSQL commit; acks=0 gets no
// response at all.
import type { Input } from '../protocol/codec/types.js';
import { ZERO_UUID } from '../protocol/codec/types.js';
import { ErrorCode, errorName } from '../protocol/errors.js';
import { ProduceApi, type ProduceResponse } from '../protocol/messages/index.js';
import { parseBatches, type ParseBatchesResult } from '../protocol/records/index.js';
import { applyAppendPolicy } from '../log/append-policy.js';
import { AppendError } from '../log/log-manager.js';
import type { IncomingBatch } from '../log/partition-log.js';
import type { Topic } from '../log/topic-manager.js';
import { AclOperation, ResourceType, allowed, mayCreateTopic } from './authorization.js';
import { Deferred, defineHandler, type RequestContext } from './types.js';
import { CONSUMER_OFFSETS_TOPIC, CONSUMER_OFFSETS_TOPIC_ID, ConsumerOffsetsTopic } from '../coordinator/consumer-offsets-topic.js';

// A record batch's attributes are the int16 at offset 21 (after base offset, length, leader epoch, magic, CRC).
const ATTRIBUTES_END = 23;
const TRANSACTIONAL_BIT = 0x10;

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

/**
 * Validates one partition's records and queues them for the partition's next
 * flush. Resolves once they are queued, with the response that the commit
 * will bring; never throws.
 */
async function producePartition(
  ctx: RequestContext,
  topic: Topic | null,
  topicError: number,
  index: number,
  records: Buffer | null,
  transactionalId: string | null,
): Promise<{ committed: Promise<PartitionResponse> } | PartitionResponse> {
  if (!topic) return failed(index, topicError);
  if (index < 0 || index >= topic.partitionCount) return failed(index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  if (!records || records.length === 0) {
    return failed(index, ErrorCode.INVALID_RECORD); // Kafka: "must have at least one record batch", not sent
  }
  const log = await ctx.broker.logs.partition(topic.topicId, index);
  if (!log) return failed(index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  // Kafka's checks for client appends, in Kafka's order: one magic v2 batch, size, CRC-32C, offsets and counts.
  const config = ctx.broker.topics.topicConfig(topic);
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
  // Checked right before the batches are queued (no await between when the transaction is coordinated here): a batch that passes precedes its transaction's marker.
  // A transaction another broker coordinates is checked against its stored state (KIP-890 part 1's verification).
  const { transactions } = ctx.broker;
  for (const { header } of batches) {
    if (!header.isTransactional) continue;
    const txnError =
      transactionalId !== null && !transactions.serves(transactionalId)
        ? await transactions.verifyStoredProduce(transactionalId, header.producerId, header.producerEpoch, topic.topicId, index, log.hasOpenTxn(header.producerId))
        : transactions.verifyProduce(header.producerId, header.producerEpoch, topic.topicId, index);
    if (txnError !== ErrorCode.NONE) return failed(index, produceTxnError(txnError, ctx.apiVersion));
  }
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
      return records !== null && records.length >= ATTRIBUTES_END && (records.readInt16BE(ATTRIBUTES_END - 2) & TRANSACTIONAL_BIT) !== 0;
    }),
  );
}

export default defineHandler({
  codec: ProduceApi,
  minVersion: 3,
  maxVersion: 13,
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
    // Topics are looked up and partitions queued one after another, so batches
    // reach their partitions' queues in the order of this request.
    const queued = [];
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
      for (const p of topicData.partitionData) partitions.push(await producePartition(ctx, topic, topicError, p.index, p.records as Buffer | null, request.transactionalId));
      queued.push({ topicData, partitions });
    }
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
    return new Deferred(responses.then((r) => (acks === 0 ? null : { responses: r, throttleTimeMs: 0 })));
  },
});
