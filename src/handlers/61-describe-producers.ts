// DescribeProducers (key 61), v0: the producers active on each partition
// (kafka-transactions.sh describe-producers): the idempotent producers this
// broker process has seen append there since it started, and every producer
// with a transaction open there, with that transaction's first offset.
// Each topic is checked as Kafka's KafkaApis.handleDescribeProducersRequest
// does, in its order: an illegal name answers INVALID_TOPIC_EXCEPTION (before
// authorization), then READ on the topic (else TOPIC_AUTHORIZATION_FAILED),
// then an unknown topic answers UNKNOWN_TOPIC_OR_PARTITION, each for every
// partition asked for and with Kafka's message. A partition the topic does
// not have answers UNKNOWN_TOPIC_OR_PARTITION without a message
// (ReplicaManager.activeProducerState).
import { MAX_TOPIC_NAME_LENGTH, topicNameError } from '../log/topic-name.js';
import { ErrorCode } from '../protocol/errors.js';
import { DescribeProducersApi } from '../protocol/messages/index.js';
import { AclOperation, ResourceType, allowed } from './authorization.js';
import { defineHandler } from './types.js';

/** Kafka's Topic.validate reasons, worded as its InvalidTopicException. */
function invalidTopicMessage(name: string): string {
  const reason =
    name === ''
      ? 'the empty string is not allowed'
      : name === '.' || name === '..'
        ? `'${name}' is not allowed`
        : name.length > MAX_TOPIC_NAME_LENGTH
          ? `the length of '${name}' is longer than the max allowed length ${MAX_TOPIC_NAME_LENGTH}`
          : `'${name}' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'`;
  return `Topic name is invalid: ${reason}`;
}

export default defineHandler({
  codec: DescribeProducersApi,
  minVersion: 0,
  maxVersion: 0,
  async handle(ctx, request) {
    const topics = [];
    for (const t of request.topics) {
      const nameError = topicNameError(t.name) === null ? null : invalidTopicMessage(t.name);
      const refused = !nameError && !allowed(ctx, AclOperation.READ, ResourceType.TOPIC, t.name);
      const topic = nameError || refused ? null : await ctx.broker.topics.get(t.name);
      if (!topic) {
        const error = nameError
          ? { errorCode: ErrorCode.INVALID_TOPIC_EXCEPTION, errorMessage: nameError }
          : refused
            ? { errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, errorMessage: 'Topic authorization failed.' }
            : { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: 'This server does not host this topic-partition.' };
        topics.push({ name: t.name, partitions: t.partitionIndexes.map((partitionIndex) => ({ partitionIndex, ...error, activeProducers: [] })) });
        continue;
      }
      const partitions = [];
      for (const partitionIndex of t.partitionIndexes) {
        if (partitionIndex < 0 || partitionIndex >= topic.partitionCount) {
          partitions.push({ partitionIndex, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: null, activeProducers: [] });
          continue;
        }
        // A partition the topic has but whose log is not (or no longer) here: Kafka's answer for a
        // partition in the metadata that this broker does not host.
        const log = await ctx.broker.logs.partition(topic.topicId, partitionIndex);
        if (!log) {
          partitions.push({ partitionIndex, errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, errorMessage: null, activeProducers: [] });
          continue;
        }
        const activeProducers = log.producerIds().map((producerId) => {
          const entry = log.producer(producerId);
          const last = entry?.batches.at(-1);
          return {
            producerId,
            producerEpoch: entry?.producerEpoch ?? ctx.broker.transactions.byProducer(producerId)?.producerEpoch ?? -1,
            lastSequence: last?.lastSequence ?? -1,
            lastTimestamp: entry?.lastTimestamp ?? -1n,
            coordinatorEpoch: entry?.coordinatorEpoch ?? -1,
            currentTxnStartOffset: log.openTxnFirstOffset(producerId) ?? -1n,
          };
        });
        partitions.push({ partitionIndex, errorCode: ErrorCode.NONE, errorMessage: null, activeProducers });
      }
      topics.push({ name: t.name, partitions });
    }
    return { throttleTimeMs: 0, topics };
  },
});
