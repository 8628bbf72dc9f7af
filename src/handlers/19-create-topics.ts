// CreateTopics (key 19), v0-7 (v0-1 removed in Kafka 4.0).
// v0: no validate_only (always creates). v1: validate_only, error messages. v4: -1 partitions or replication factor
// take the broker defaults. v5: flexible; the result reports partitions,
// replication factor and every config of the topic with its source, as
// DescribeConfigs reports them (also for validate_only). v7: topic id.
// Configs are validated as Kafka does (INVALID_CONFIG, nothing created).
// One copy of every partition lives in PostgreSQL: any valid replication
// factor is accepted and reported as 1.
import { ErrorCode } from '../protocol/errors.js';
import { CreateTopicsApi } from '../protocol/messages/index.js';
import { describeTopicConfigs } from '../log/topic-configs.js';
import { AclOperation, ResourceType, mayCreateTopic, quietlyAllowed } from './authorization.js';
import { defineHandler } from './types.js';

export default defineHandler({
  codec: CreateTopicsApi,
  minVersion: 0,
  maxVersion: 7,
  async handle(ctx, request) {
    const { topics: topicManager, liveBrokers } = ctx.broker;
    const counts = new Map<string, number>();
    for (const t of request.topics) counts.set(t.name, (counts.get(t.name) ?? 0) + 1);
    const brokerIds = new Set(liveBrokers().map((b) => b.nodeId));
    const refusedDuplicates = new Set<string>();
    const results = [];
    for (const t of request.topics) {
      const failed = (errorCode: number, errorMessage: string) => ({ name: t.name, errorCode, errorMessage, numPartitions: -1, replicationFactor: -1, configs: null });
      if (counts.get(t.name)! > 1) {
        // Kafka's results are keyed by topic name: a duplicated name is answered once.
        if (!refusedDuplicates.has(t.name)) results.push(failed(ErrorCode.INVALID_REQUEST, `Create topics request from client contains duplicate topic name ${t.name}`));
        refusedDuplicates.add(t.name);
        continue;
      }
      if (!mayCreateTopic(ctx, t.name)) {
        results.push(failed(ErrorCode.TOPIC_AUTHORIZATION_FAILED, 'Authorization failed.'));
        continue;
      }
      let numPartitions = t.numPartitions;
      let replicationFactor = t.replicationFactor;
      if (t.assignments.length > 0) {
        if (numPartitions !== -1 || replicationFactor !== -1) {
          results.push(failed(ErrorCode.INVALID_REQUEST, 'Both numPartitions or replicationFactor and replicasAssignments were set. Both cannot be used at the same time.'));
          continue;
        }
        const indexes = t.assignments.map((a) => a.partitionIndex).sort((a, b) => a - b);
        if (indexes.some((p, i) => p !== i) || t.assignments.some((a) => a.brokerIds.length === 0 || a.brokerIds.some((id) => !brokerIds.has(id)))) {
          results.push(failed(ErrorCode.INVALID_REPLICA_ASSIGNMENT, 'Replica assignments must name live brokers for partitions 0..n-1.'));
          continue;
        }
        numPartitions = t.assignments.length;
        replicationFactor = 1;
      }
      const configs: Record<string, string | null> = {};
      for (const c of t.configs) configs[c.name] = c.value;
      const outcome = await topicManager.create({ name: t.name, numPartitions, replicationFactor, configs, validateOnly: request.validateOnly });
      if (outcome.errorCode !== ErrorCode.NONE || !outcome.topic) {
        results.push(failed(outcome.errorCode, outcome.errorMessage ?? ''));
        continue;
      }
      if (!request.validateOnly) ctx.log.info({ topic: t.name, partitions: outcome.topic.partitionCount }, 'created topic');
      // The topic's configs are returned only to a principal that may describe them.
      const describable = quietlyAllowed(ctx, AclOperation.DESCRIBE_CONFIGS, ResourceType.TOPIC, t.name);
      results.push({
        name: t.name,
        topicId: outcome.topic.topicId,
        topicConfigErrorCode: describable ? ErrorCode.NONE : ErrorCode.TOPIC_AUTHORIZATION_FAILED,
        errorCode: ErrorCode.NONE,
        errorMessage: null,
        numPartitions: outcome.topic.partitionCount,
        replicationFactor: 1,
        configs: !describable
          ? []
          : describeTopicConfigs(outcome.topic.configs, ctx.broker.brokerConfigs, { names: null, includeSynonyms: false, includeDocumentation: false }).map((c) => ({
              name: c.name,
              value: c.value,
              readOnly: c.readOnly,
              configSource: c.source,
              isSensitive: c.isSensitive,
            })),
      });
    }
    return { throttleTimeMs: 0, topics: results };
  },
});
