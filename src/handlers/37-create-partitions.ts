// CreatePartitions (key 37), v0-3.
// v1: same as v0. v2: flexible. v3: same as v2. Partitions can only be
// added: a count at or below the current one is INVALID_PARTITIONS. New
// partitions start empty and appear in Metadata at once.
import { ErrorCode } from '../protocol/errors.js';
import { CreatePartitionsApi } from '../protocol/messages/index.js';
import { AclOperation, ResourceType, allowed } from './authorization.js';
import { defineHandler } from './types.js';

const MAX_PARTITIONS = 100_000;

export default defineHandler({
  codec: CreatePartitionsApi,
  minVersion: 0,
  maxVersion: 3,
  async handle(ctx, request) {
    const { topics: topicManager, logs, liveBrokers } = ctx.broker;
    const counts = new Map<string, number>();
    for (const t of request.topics) counts.set(t.name, (counts.get(t.name) ?? 0) + 1);
    const brokerIds = new Set(liveBrokers().map((b) => b.nodeId));
    const results = [];
    for (const t of request.topics) {
      const result = (errorCode: number, errorMessage: string | null = null) => ({ name: t.name, errorCode, errorMessage });
      if (counts.get(t.name)! > 1) {
        results.push(result(ErrorCode.INVALID_REQUEST, 'Duplicate topic in request.'));
        continue;
      }
      if (!allowed(ctx, AclOperation.ALTER, ResourceType.TOPIC, t.name)) {
        results.push(result(ErrorCode.TOPIC_AUTHORIZATION_FAILED, null)); // Kafka's controller sends no message here
        continue;
      }
      const topic = await topicManager.get(t.name);
      if (!topic) {
        results.push(result(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, null)); // Kafka's controller answers an unknown topic without a message
        continue;
      }
      if (t.count < topic.partitionCount) {
        results.push(result(ErrorCode.INVALID_PARTITIONS, `Topic currently has ${topic.partitionCount} partitions, which is higher than the requested ${t.count}.`));
        continue;
      }
      if (t.count === topic.partitionCount) {
        results.push(result(ErrorCode.INVALID_PARTITIONS, `Topic already has ${topic.partitionCount} partitions.`));
        continue;
      }
      if (t.count > MAX_PARTITIONS) {
        results.push(result(ErrorCode.INVALID_PARTITIONS, `Topics may have at most ${MAX_PARTITIONS} partitions here.`));
        continue;
      }
      const added = t.count - topic.partitionCount;
      if (t.assignments !== null && (t.assignments.length !== added || t.assignments.some((a) => a.brokerIds.length === 0 || a.brokerIds.some((id) => !brokerIds.has(id))))) {
        results.push(result(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `Increasing the number of partitions by ${added} needs ${added} assignments of live brokers.`));
        continue;
      }
      if (!request.validateOnly) {
        const ok = await logs.addPartitions(topic.topicId, topic.name, topic.partitionCount, t.count);
        topicManager.invalidate(topic.name);
        if (!ok) {
          results.push(result(ErrorCode.INVALID_PARTITIONS, 'The partition count changed concurrently; retry.'));
          continue;
        }
        ctx.log.info({ topic: t.name, partitions: t.count }, 'added partitions');
      }
      results.push(result(ErrorCode.NONE));
    }
    return { throttleTimeMs: 0, results };
  },
});
