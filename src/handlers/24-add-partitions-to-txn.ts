// AddPartitionsToTxn (key 24), v0-5.
// v1: same as v0. v2: PRODUCER_FENCED (KIP-588). v3: flexible. v4: batched
// by transaction, for brokers verifying produce requests (KIP-890), with
// verifyOnly; the request-wide error and results by transaction replace
// the v0-3 fields. v5: same as v4.
import { AddPartitionsToTxnApi, type AddPartitionsToTxnRequestAddPartitionsToTxnTopic } from '../protocol/messages/index.js';
import { fencedForVersion } from './txn-errors.js';
import { defineHandler, type RequestContext } from './types.js';

async function addPartitions(
  ctx: RequestContext,
  transactionalId: string,
  producerId: bigint,
  producerEpoch: number,
  topics: AddPartitionsToTxnRequestAddPartitionsToTxnTopic[],
  verifyOnly: boolean,
) {
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
      const results = await addPartitions(ctx, request.v3AndBelowTransactionalId, request.v3AndBelowProducerId, request.v3AndBelowProducerEpoch, request.v3AndBelowTopics, false);
      return { throttleTimeMs: 0, errorCode: 0, resultsByTransaction: [], resultsByTopicV3AndBelow: results };
    }
    const resultsByTransaction = [];
    for (const t of request.transactions) {
      resultsByTransaction.push({ transactionalId: t.transactionalId, topicResults: await addPartitions(ctx, t.transactionalId, t.producerId, t.producerEpoch, t.topics, t.verifyOnly) });
    }
    return { throttleTimeMs: 0, errorCode: 0, resultsByTransaction, resultsByTopicV3AndBelow: [] };
  },
});
