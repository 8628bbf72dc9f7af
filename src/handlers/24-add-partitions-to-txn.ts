// AddPartitionsToTxn (key 24), v0-5.
// v1: same as v0. v2: PRODUCER_FENCED (KIP-588). v3: flexible. v4: batched
// by transaction, for brokers verifying produce requests (KIP-890), with
// verifyOnly; the request-wide error and results by transaction replace
// the v0-3 fields. v5: same as v4.
// Authorization, as Kafka: v0-3 come from producers and need WRITE on the
// transactional id (else TRANSACTIONAL_ID_AUTHORIZATION_FAILED for every
// partition) and WRITE on each topic: when a topic is refused
// (TOPIC_AUTHORIZATION_FAILED) nothing is added, unknown partitions answer
// UNKNOWN_TOPIC_OR_PARTITION and the others OPERATION_NOT_ATTEMPTED. v4+
// come from brokers (KIP-890) and need CLUSTER_ACTION on the cluster, else
// the request's error is CLUSTER_AUTHORIZATION_FAILED.
import { ErrorCode } from '../protocol/errors.js';
import { AddPartitionsToTxnApi, type AddPartitionsToTxnRequestAddPartitionsToTxnTopic } from '../protocol/messages/index.js';
import { AclOperation, ResourceType, allowed, clusterAllowed } from './authorization.js';
import { authorizedNames } from './authorized-names.js';
import { fencedForVersion } from './txn-errors.js';
import { defineHandler, type RequestContext } from './types.js';

type Topics = AddPartitionsToTxnRequestAddPartitionsToTxnTopic[];

/** One error for every partition of the request. */
const resultsOf = (topics: Topics, errorOf: (topic: string, partition: number) => number) =>
  topics.map((t) => ({ name: t.name, resultsByPartition: t.partitions.map((partitionIndex) => ({ partitionIndex, partitionErrorCode: errorOf(t.name, partitionIndex) })) }));

/** A producer's request (v0-3): the errors when it may not add these partitions, or null. */
async function refusedToProducer(ctx: RequestContext, transactionalId: string, topics: Topics) {
  if (!allowed(ctx, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, transactionalId)) return resultsOf(topics, () => ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
  const writable = authorizedNames(
    ctx,
    AclOperation.WRITE,
    ResourceType.TOPIC,
    topics.map((t) => t.name),
  );
  if (topics.every((t) => writable.has(t.name))) return null;
  const partitionCounts = new Map<string, number>();
  for (const name of writable) partitionCounts.set(name, (await ctx.broker.topics.get(name))?.partitionCount ?? 0);
  return resultsOf(topics, (topic, partition) => {
    if (!writable.has(topic)) return ErrorCode.TOPIC_AUTHORIZATION_FAILED;
    return partition >= 0 && partition < partitionCounts.get(topic)! ? ErrorCode.OPERATION_NOT_ATTEMPTED : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
  });
}

async function addPartitions(ctx: RequestContext, transactionalId: string, producerId: bigint, producerEpoch: number, topics: Topics, verifyOnly: boolean) {
  const partitions = topics.flatMap((t) => t.partitions.map((partition) => ({ topic: t.name, partition })));
  const errors = await ctx.broker.transactions.addPartitions(transactionalId, producerId, producerEpoch, partitions, verifyOnly);
  if (errors.some((e) => e !== 0)) ctx.log.info({ transactionalId, errors }, 'partitions not added to the transaction');
  let i = 0;
  return topics.map((t) => ({
    name: t.name,
    resultsByPartition: t.partitions.map((partitionIndex) => ({ partitionIndex, partitionErrorCode: fencedForVersion(errors[i++]!, ctx.apiVersion, 2) })),
  }));
}

export default defineHandler({
  codec: AddPartitionsToTxnApi,
  minVersion: 0,
  maxVersion: 5,
  async handle(ctx, request) {
    if (ctx.apiVersion <= 3) {
      const refused = await refusedToProducer(ctx, request.v3AndBelowTransactionalId, request.v3AndBelowTopics);
      if (refused) return { throttleTimeMs: 0, errorCode: 0, resultsByTransaction: [], resultsByTopicV3AndBelow: refused };
      const results = await addPartitions(ctx, request.v3AndBelowTransactionalId, request.v3AndBelowProducerId, request.v3AndBelowProducerEpoch, request.v3AndBelowTopics, false);
      return { throttleTimeMs: 0, errorCode: 0, resultsByTransaction: [], resultsByTopicV3AndBelow: results };
    }
    if (!clusterAllowed(ctx, AclOperation.CLUSTER_ACTION)) return { throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, resultsByTransaction: [], resultsByTopicV3AndBelow: [] };
    const resultsByTransaction = [];
    for (const t of request.transactions) {
      resultsByTransaction.push({ transactionalId: t.transactionalId, topicResults: await addPartitions(ctx, t.transactionalId, t.producerId, t.producerEpoch, t.topics, t.verifyOnly) });
    }
    return { throttleTimeMs: 0, errorCode: 0, resultsByTransaction, resultsByTopicV3AndBelow: [] };
  },
});
