// Metadata (key 3), v0-13.
// v0: an empty topic list means all topics; v1+: null means all, empty means
// none, plus rack, controller id and internal flag. v2: cluster id. v4: allow
// auto topic creation. v5: offline replicas. v7: leader epoch. v8: authorized
// operations. v9: flexible. v10: topic ids (look-up by id). v12: null names
// for unknown ids. v13: top-level error code.
// Kafka's internal topic names are never auto-created (their state lives in
// PostgreSQL tables, see TopicManager): they answer UNKNOWN_TOPIC_OR_PARTITION
// with is_internal set, as Kafka answers an internal topic it has not created;
// except __consumer_offsets, read-only and served from the committed offsets
// (handlers/consumer-offsets.ts) by every broker, which names itself its leader:
// named, it is always described (Kafka creates it when asked for), and it is
// listed once any offset has been committed.
// A partition's leader is the broker holding its lease (coordinator/
// partition-leadership.ts), its only replica; a partition no live broker
// leads answers LEADER_NOT_AVAILABLE with leader -1, as Kafka answers an
// offline partition, naming its last leader as its offline replica.
import type { Input } from '../protocol/codec/types.js';
import { ZERO_UUID } from '../protocol/codec/types.js';
import { ErrorCode } from '../protocol/errors.js';
import { MetadataApi, type MetadataResponse } from '../protocol/messages/index.js';
import { isInternalTopic, type Topic } from '../log/topic-manager.js';
import { topicNameError } from '../log/topic-name.js';
import { AclOperation, NOT_REQUESTED, ResourceType, allowed, authorizedOperations, clusterAllowed, clusterAuthorizedOperations, mayCreateTopic, quietlyAllowed } from './authorization.js';
import { partitionLeader } from './partition-leader.js';
import { CONSUMER_OFFSETS_TOPIC, describeConsumerOffsets, namesConsumerOffsets } from './consumer-offsets.js';
import { defineHandler, type RequestContext } from './types.js';

type TopicEntry = Input<MetadataResponse['topics'][number]>;

async function describeTopic(ctx: RequestContext, topic: Topic, includeOperations: boolean): Promise<TopicEntry> {
  await ctx.broker.leadership.known(topic.topicId, topic.partitionCount);
  const partitions = [];
  for (let i = 0; i < topic.partitionCount; i++) partitions.push(partitionLeader(ctx, topic.topicId, i));
  return {
    errorCode: ErrorCode.NONE,
    name: topic.name,
    topicId: topic.topicId,
    isInternal: isInternalTopic(topic.name),
    partitions,
    topicAuthorizedOperations: includeOperations ? authorizedOperations(ctx, ResourceType.TOPIC, topic.name) : NOT_REQUESTED,
  };
}

export default defineHandler({
  codec: MetadataApi,
  minVersion: 0,
  maxVersion: 13,
  async handle(ctx, request) {
    const { broker, apiVersion } = ctx;
    const includeOperations = request.includeTopicAuthorizedOperations;
    const allTopics = request.topics === null || (apiVersion === 0 && request.topics.length === 0);
    const topics: TopicEntry[] = [];
    if (allTopics) {
      // Topics the principal may not describe are left out, as if they did not exist.
      for (const topic of await broker.topics.list()) {
        if (quietlyAllowed(ctx, AclOperation.DESCRIBE, ResourceType.TOPIC, topic.name)) topics.push(await describeTopic(ctx, topic, includeOperations));
      }
      if ((await broker.consumerOffsets.exists()) && quietlyAllowed(ctx, AclOperation.DESCRIBE, ResourceType.TOPIC, CONSUMER_OFFSETS_TOPIC)) {
        topics.push(describeConsumerOffsets(ctx, includeOperations));
      }
    } else {
      const autoCreate = apiVersion < 4 || request.allowAutoTopicCreation;
      // Kafka answers by topic id when any requested topic names one, whatever the names say (the Java
      // client sends "" beside each id when it follows a broker-side regular expression's assignment).
      const byTopicId = apiVersion >= 10 && request.topics!.some((t) => t.topicId !== ZERO_UUID);
      for (const requested of request.topics!) {
        if (byTopicId && requested.topicId === ZERO_UUID) continue;
        if (requested.name === null || byTopicId) {
          if (namesConsumerOffsets(null, requested.topicId) && allowed(ctx, AclOperation.DESCRIBE, ResourceType.TOPIC, CONSUMER_OFFSETS_TOPIC)) {
            topics.push(describeConsumerOffsets(ctx, includeOperations));
            continue;
          }
          const topic = requested.topicId !== ZERO_UUID ? await broker.topics.getByIdLoading(requested.topicId) : null;
          if (topic && !allowed(ctx, AclOperation.DESCRIBE, ResourceType.TOPIC, topic.name)) {
            // Kafka: topic ids are not sensitive, so an undescribable one is named as refused.
            topics.push({ errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, name: null, topicId: requested.topicId, partitions: [] });
            continue;
          }
          topics.push(topic ? await describeTopic(ctx, topic, includeOperations) : { errorCode: ErrorCode.UNKNOWN_TOPIC_ID, name: null, topicId: requested.topicId, partitions: [] });
          continue;
        }
        const name = requested.name;
        if (topicNameError(name)) {
          topics.push({ errorCode: ErrorCode.INVALID_TOPIC_EXCEPTION, name, partitions: [] });
          continue;
        }
        if (!allowed(ctx, AclOperation.DESCRIBE, ResourceType.TOPIC, name)) {
          topics.push({ errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, name, partitions: [] });
          continue;
        }
        if (namesConsumerOffsets(name)) {
          topics.push(describeConsumerOffsets(ctx, includeOperations));
          continue;
        }
        const existing = await broker.topics.get(name);
        // Auto-creation needs CREATE on the cluster or on the topic.
        if (!existing && autoCreate && broker.config.autoCreateTopicsEnable && !mayCreateTopic(ctx, name)) {
          topics.push({ errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, name, partitions: [] });
          continue;
        }
        const outcome = existing
          ? { errorCode: ErrorCode.NONE, topic: existing }
          : autoCreate
            ? await broker.topics.getOrCreate(name)
            : { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, topic: null };
        topics.push(outcome.topic ? await describeTopic(ctx, outcome.topic, includeOperations) : { errorCode: outcome.errorCode, name, isInternal: isInternalTopic(name), partitions: [] });
      }
    }
    return {
      throttleTimeMs: 0,
      brokers: broker.liveBrokers(ctx.listener).map((b) => ({ nodeId: b.nodeId, host: b.host, port: b.port, rack: b.rack })),
      clusterId: broker.clusterId,
      controllerId: broker.nodeId,
      topics,
      clusterAuthorizedOperations: !request.includeClusterAuthorizedOperations ? NOT_REQUESTED : clusterAllowed(ctx, AclOperation.DESCRIBE) ? clusterAuthorizedOperations(ctx) : 0,
      errorCode: ErrorCode.NONE,
    };
  },
});
