// DescribeConfigs (key 32), v0-4.
// v0 (removed in Kafka 4.0): no synonyms; its IsDefault is false for every
// config, because Kafka 3.9 never set it (it fills ConfigSource, which v0
// does not carry). v1: config sources and synonyms. v2: throttle
// on quota violation (none here). v3: documentation and config types. v4:
// flexible. Topics report every topic config with its source (topic, dynamic
// broker value, dynamic cluster default, broker option, or Kafka's default);
// the broker resource "<node id>" reports the Kafka broker configs that mean
// something here with the value in force, "" the cluster-wide dynamic
// configs that are set (see log/broker-configs.ts). A group (type 32, KIP-848)
// reports every group config, set on it or from the broker's group.* configs
// (coordinator/group-configs.ts), whether or not the group exists, as Kafka.
import { ErrorCode } from '../protocol/errors.js';
import { DescribeConfigsApi } from '../protocol/messages/index.js';
import { ConfigResourceType, type DescribedConfig } from '../log/config-values.js';
import { describeTopicConfigs } from '../log/topic-configs.js';
import { topicNameError } from '../log/topic-name.js';
import { AclOperation, ResourceType, allowed, clusterAllowed } from './authorization.js';
import { defineHandler } from './types.js';

export default defineHandler({
  codec: DescribeConfigsApi,
  minVersion: 0,
  maxVersion: 4,
  async handle(ctx, request) {
    const { topics, brokerConfigs, nodeId } = ctx.broker;
    const results = [];
    for (const r of request.resources) {
      const opts = { names: r.configurationKeys, includeSynonyms: request.includeSynonyms, includeDocumentation: request.includeDocumentation };
      const answer = (errorCode: number, errorMessage: string | null, configs: DescribedConfig[] = []) => ({
        errorCode,
        errorMessage,
        resourceType: r.resourceType,
        resourceName: r.resourceName,
        configs: configs.map((c) => ({
          name: c.name,
          value: c.value,
          readOnly: c.readOnly,
          configSource: c.source,
          isSensitive: c.isSensitive,
          synonyms: c.synonyms,
          configType: c.configType,
          documentation: c.documentation,
        })),
      });
      const brokerIdError = (allowEmpty: boolean): string | null => {
        if (r.resourceName === '') return allowEmpty ? null : 'Broker id must not be empty';
        if (!/^[+-]?\d+$/.test(r.resourceName)) return `Broker id must be an integer, but it is: ${r.resourceName}`;
        if (Number(r.resourceName) !== nodeId) return `Unexpected broker id, expected ${nodeId}${allowEmpty ? ' or empty string' : ''}, but received ${r.resourceName}`;
        return null;
      };
      if (r.resourceType === ConfigResourceType.TOPIC && !allowed(ctx, AclOperation.DESCRIBE_CONFIGS, ResourceType.TOPIC, r.resourceName)) {
        results.push(answer(ErrorCode.TOPIC_AUTHORIZATION_FAILED, 'Topic authorization failed.'));
        continue;
      }
      if (r.resourceType === ConfigResourceType.GROUP && !allowed(ctx, AclOperation.DESCRIBE_CONFIGS, ResourceType.GROUP, r.resourceName)) {
        results.push(answer(ErrorCode.GROUP_AUTHORIZATION_FAILED, 'Group authorization failed.'));
        continue;
      }
      if ((r.resourceType === ConfigResourceType.BROKER || r.resourceType === ConfigResourceType.BROKER_LOGGER) && !clusterAllowed(ctx, AclOperation.DESCRIBE_CONFIGS)) {
        results.push(answer(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, 'Cluster authorization failed.'));
        continue;
      }
      switch (r.resourceType) {
        case ConfigResourceType.TOPIC: {
          const nameError = topicNameError(r.resourceName);
          if (nameError) {
            results.push(answer(ErrorCode.INVALID_TOPIC_EXCEPTION, nameError));
            break;
          }
          const topic = await topics.get(r.resourceName);
          // Kafka sends an empty message, not none, with these two answers.
          if (!topic) results.push(answer(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ''));
          else results.push(answer(ErrorCode.NONE, '', describeTopicConfigs(topic.configs, brokerConfigs, opts)));
          break;
        }
        case ConfigResourceType.BROKER: {
          const error = brokerIdError(true);
          if (error) results.push(answer(ErrorCode.INVALID_REQUEST, error));
          else results.push(answer(ErrorCode.NONE, '', brokerConfigs.describe(r.resourceName, opts)));
          break;
        }
        case ConfigResourceType.BROKER_LOGGER: {
          // pgkafka has one pino logger, set by logLevel; there are no per-logger levels to list.
          const error = brokerIdError(false);
          results.push(error ? answer(ErrorCode.INVALID_REQUEST, error) : answer(ErrorCode.NONE, null));
          break;
        }
        case ConfigResourceType.GROUP:
          if (r.resourceName === '') results.push(answer(ErrorCode.INVALID_REQUEST, 'Group name must not be empty'));
          else results.push(answer(ErrorCode.NONE, '', ctx.broker.groupConfigs.describe(r.resourceName, opts)));
          break;
        default:
          results.push(answer(ErrorCode.INVALID_REQUEST, `Unsupported resource type: ${r.resourceType}`));
      }
    }
    return { throttleTimeMs: 0, results };
  },
});
