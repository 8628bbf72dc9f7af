// ListOffsets (key 2), v0-11.
// v0 (removed in Kafka 4.0): MaxNumOffsets, answered with OldStyleOffsets, up
// to that many offsets newest first, as Kafka 3.9's legacy look-up; a
// timestamp below -2 is UNSUPPORTED_VERSION for its partition.
// v1: one offset per partition, with its timestamp. v2: isolation level.
// v4: current leader epoch, leader epoch in the answer. v6: flexible.
// v7: max timestamp (-3). v8: earliest local (-4). v9: latest tiered (-5).
// v10: timeout. Special timestamps: -1 latest, -2 earliest.
// Answered by the partition's leader; another broker answers
// NOT_LEADER_OR_FOLLOWER, except to the debugging replica id -2 (as Kafka).
import { ErrorCode } from '../protocol/errors.js';
import { ListOffsetsApi } from '../protocol/messages/index.js';
import { AclOperation, ResourceType, allowed } from './authorization.js';
import { leadsPartition } from './partition-leader.js';
import { isConsumerOffsetsPartition, namesConsumerOffsets } from './consumer-offsets.js';
import { defineHandler } from './types.js';

const DEBUGGING_REPLICA_ID = -2;

export default defineHandler({
  codec: ListOffsetsApi,
  minVersion: 0,
  maxVersion: 11,
  async handle(ctx, request) {
    const { topics: topicManager, logs } = ctx.broker;
    const topics = await Promise.all(
      request.topics.map(async (t) => {
        const authorized = allowed(ctx, AclOperation.DESCRIBE, ResourceType.TOPIC, t.name);
        const topic = authorized ? await topicManager.get(t.name) : null;
        const partitions = await Promise.all(
          t.partitions.map(async (p) => {
            const failed = (errorCode: number) => ({ partitionIndex: p.partitionIndex, errorCode, timestamp: -1n, offset: -1n, leaderEpoch: -1 });
            if (!authorized) return failed(ErrorCode.TOPIC_AUTHORIZATION_FAILED);
            if (namesConsumerOffsets(t.name)) {
              if (!isConsumerOffsetsPartition(p.partitionIndex)) return failed(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
              const found = await ctx.broker.consumerOffsets.offsetForTimestamp(p.partitionIndex, p.timestamp);
              if (ctx.apiVersion === 0) return { ...failed(ErrorCode.NONE), oldStyleOffsets: found.offset >= 0n ? [found.offset] : [] };
              return { partitionIndex: p.partitionIndex, errorCode: found.errorCode, timestamp: found.timestamp, offset: found.offset, leaderEpoch: found.offset >= 0n ? 0 : -1 };
            }
            const log = topic && p.partitionIndex >= 0 && p.partitionIndex < topic.partitionCount ? await logs.partition(topic.topicId, p.partitionIndex) : null;
            if (!log) return failed(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
            if (request.replicaId !== DEBUGGING_REPLICA_ID && !(await leadsPartition(ctx, topic!, p.partitionIndex))) return failed(ErrorCode.NOT_LEADER_OR_FOLLOWER);
            if (p.currentLeaderEpoch >= 0 && p.currentLeaderEpoch !== log.leaderEpoch) {
              return failed(p.currentLeaderEpoch > log.leaderEpoch ? ErrorCode.UNKNOWN_LEADER_EPOCH : ErrorCode.FENCED_LEADER_EPOCH);
            }
            if (ctx.apiVersion === 0) {
              if (p.timestamp < -2n) return failed(ErrorCode.UNSUPPORTED_VERSION);
              return { ...failed(ErrorCode.NONE), oldStyleOffsets: await logs.legacyOffsetsBefore(log, p.timestamp, p.maxNumOffsets) };
            }
            // read_committed: latest is the last stable offset.
            const found = await logs.offsetForTimestamp(log, p.timestamp, request.isolationLevel);
            if (found.errorCode !== ErrorCode.NONE) return failed(found.errorCode);
            return {
              partitionIndex: p.partitionIndex,
              errorCode: ErrorCode.NONE,
              timestamp: found.timestamp,
              offset: found.offset,
              leaderEpoch: found.offset >= 0n ? log.leaderEpoch : -1,
            };
          }),
        );
        return { name: t.name, partitions };
      }),
    );
    return { throttleTimeMs: 0, topics };
  },
});
