// DescribeTopicPartitions (key 75), v0 (KIP-966): topic and partition
// metadata with a partition limit and a cursor for paging through large
// topics, as newer admin clients use instead of Metadata.
import { ErrorCode } from '../protocol/errors.js';
import { DescribeTopicPartitionsApi } from '../protocol/messages/index.js';
import type { Topic } from '../log/topic-manager.js';
import { AclOperation, ResourceType, allowed, authorizedOperations, quietlyAllowed } from './authorization.js';
import { partitionLeader } from './partition-leader.js';
import { defineHandler } from './types.js';

export default defineHandler({
  codec: DescribeTopicPartitionsApi,
  minVersion: 0,
  maxVersion: 0,
  async handle(ctx, request) {
    const { topics: topicManager } = ctx.broker;
    // Listing all: topics the principal may not describe are left out; named ones are refused.
    const listAll = request.topics.length === 0;
    const requested: (Topic | string)[] = listAll
      ? (await topicManager.list()).filter((t) => quietlyAllowed(ctx, AclOperation.DESCRIBE, ResourceType.TOPIC, t.name))
      : await Promise.all(request.topics.map(async (t) => (await topicManager.get(t.name)) ?? t.name));
    requested.sort((a, b) => {
      const [x, y] = [typeof a === 'string' ? a : a.name, typeof b === 'string' ? b : b.name];
      return x < y ? -1 : x > y ? 1 : 0;
    });
    const cursor = request.cursor;
    // Kafka caps the limit at max.request.partition.size.limit (2000).
    let budget = Math.min(Math.max(1, request.responsePartitionLimit), 2000);
    const topics = [];
    let nextCursor: { topicName: string; partitionIndex: number } | null = null;
    for (const t of requested) {
      const name = typeof t === 'string' ? t : t.name;
      if (cursor && name < cursor.topicName) continue;
      if (!listAll && !allowed(ctx, AclOperation.DESCRIBE, ResourceType.TOPIC, name)) {
        topics.push({ errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, name, partitions: [] });
        continue;
      }
      if (typeof t === 'string') {
        topics.push({ errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, name, partitions: [] });
        continue;
      }
      if (budget === 0) {
        nextCursor = { topicName: name, partitionIndex: 0 };
        break;
      }
      const first = cursor && name === cursor.topicName ? Math.max(0, cursor.partitionIndex) : 0;
      const partitions = [];
      for (let i = first; i < t.partitionCount; i++) {
        if (budget === 0) {
          nextCursor = { topicName: name, partitionIndex: i };
          break;
        }
        if (i === first) await ctx.broker.leadership.known(t.topicId, t.partitionCount);
        // Kafka always lists the ELR fields (empty on one replica); the Java admin client reads them without a null check.
        partitions.push({ ...partitionLeader(ctx, t.topicId, i), eligibleLeaderReplicas: [], lastKnownElr: [] });
        budget--;
      }
      topics.push({ errorCode: ErrorCode.NONE, name, topicId: t.topicId, isInternal: false, partitions, topicAuthorizedOperations: authorizedOperations(ctx, ResourceType.TOPIC, name) });
      if (nextCursor) break;
    }
    return { throttleTimeMs: 0, topics, nextCursor };
  },
});
