// DeleteRecords (key 21), v0-2.
// v1: throttle time. v2: flexible. Moves a partition's log start offset (its
// low watermark) forward to the given offset; -1 means the high watermark.
// An offset above the high watermark is OFFSET_OUT_OF_RANGE; one below the
// current log start changes nothing. Answered by the partition's leader;
// another broker answers NOT_LEADER_OR_FOLLOWER (the admin client routes it).
import { ErrorCode } from '../protocol/errors.js';
import { DeleteRecordsApi } from '../protocol/messages/index.js';
import { AclOperation, ResourceType, allowed } from './authorization.js';
import { leadsPartition } from './partition-leader.js';
import { defineHandler } from './types.js';

export default defineHandler({
  codec: DeleteRecordsApi,
  minVersion: 0,
  maxVersion: 2,
  async handle(ctx, request) {
    const { topics: topicManager, logs } = ctx.broker;
    const topics = [];
    for (const t of request.topics) {
      const authorized = allowed(ctx, AclOperation.DELETE, ResourceType.TOPIC, t.name);
      const topic = authorized ? await topicManager.get(t.name) : null;
      const partitions = [];
      for (const p of t.partitions) {
        const failed = (errorCode: number) => ({ partitionIndex: p.partitionIndex, lowWatermark: -1n, errorCode });
        if (!authorized) {
          partitions.push(failed(ErrorCode.TOPIC_AUTHORIZATION_FAILED));
          continue;
        }
        const log = topic && p.partitionIndex >= 0 && p.partitionIndex < topic.partitionCount ? await logs.partition(topic.topicId, p.partitionIndex) : null;
        if (!topic || !log) {
          partitions.push(failed(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION));
          continue;
        }
        if (!(await leadsPartition(ctx, topic, p.partitionIndex))) {
          partitions.push(failed(ErrorCode.NOT_LEADER_OR_FOLLOWER));
          continue;
        }
        const target = p.offset === -1n ? log.highWatermark : p.offset;
        if (target < 0n || target > log.highWatermark) {
          partitions.push(failed(ErrorCode.OFFSET_OUT_OF_RANGE));
          continue;
        }
        const change = await logs.advanceLogStart(log, topic.name, target, 'DeleteRecords');
        partitions.push(change ? { partitionIndex: p.partitionIndex, lowWatermark: change.logStartOffset, errorCode: ErrorCode.NONE } : failed(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION));
      }
      topics.push({ name: t.name, partitions });
    }
    return { throttleTimeMs: 0, topics };
  },
});
