// DescribeProducers (key 61), v0: the producers active on each partition
// (kafka-transactions.sh describe-producers): the idempotent producers this
// broker process has seen append there since it started, and every producer
// with a transaction open there, with that transaction's first offset.
// Authorization, as Kafka: READ on the topic, else every partition asked for
// answers TOPIC_AUTHORIZATION_FAILED.
import { ErrorCode } from '../protocol/errors.js';
import { DescribeProducersApi } from '../protocol/messages/index.js';
import { AclOperation, ResourceType, allowed } from './authorization.js';
import { defineHandler } from './types.js';

export default defineHandler({
  codec: DescribeProducersApi,
  minVersion: 0,
  maxVersion: 0,
  async handle(ctx, request) {
    const topics = [];
    for (const t of request.topics) {
      if (!allowed(ctx, AclOperation.READ, ResourceType.TOPIC, t.name)) {
        const refused = (partitionIndex: number) => ({ partitionIndex, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, errorMessage: 'Topic authorization failed.', activeProducers: [] });
        topics.push({ name: t.name, partitions: t.partitionIndexes.map(refused) });
        continue;
      }
      const topic = await ctx.broker.topics.get(t.name);
      const partitions = [];
      for (const partitionIndex of t.partitionIndexes) {
        const log = topic && partitionIndex >= 0 && partitionIndex < topic.partitionCount ? await ctx.broker.logs.partition(topic.topicId, partitionIndex) : null;
        if (!log) {
          partitions.push({ partitionIndex, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: null, activeProducers: [] });
          continue;
        }
        const ids = new Set([...log.producers.keys(), ...log.openTxns.keys()]);
        const activeProducers = [...ids].map((producerId) => {
          const entry = log.producers.get(producerId);
          const last = entry?.batches.at(-1);
          return {
            producerId,
            producerEpoch: entry?.producerEpoch ?? ctx.broker.transactions.byProducer(producerId)?.producerEpoch ?? -1,
            lastSequence: last?.lastSequence ?? -1,
            lastTimestamp: -1n,
            coordinatorEpoch: log.openTxns.has(producerId) ? 0 : -1,
            currentTxnStartOffset: log.openTxns.get(producerId) ?? -1n,
          };
        });
        partitions.push({ partitionIndex, errorCode: ErrorCode.NONE, errorMessage: null, activeProducers });
      }
      topics.push({ name: t.name, partitions });
    }
    return { throttleTimeMs: 0, topics };
  },
});
