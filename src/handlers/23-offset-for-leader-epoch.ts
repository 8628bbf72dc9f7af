// OffsetForLeaderEpoch (key 23), v0-4 (Kafka 4 serves from v2).
// v0: no leader epoch in the answer. v1: the epoch of the end offset.
// v2: throttle time. v3: replica id (-1 for consumers). v4: flexible.
// Consumers ask it after a leader change or when they resume from a
// committed offset with its leader epoch (KIP-320), to detect truncation.
// Answered by the partition's leader; another broker answers
// NOT_LEADER_OR_FOLLOWER. The leader epoch grows when another broker takes
// the partition's leadership, but a log is never truncated here (one copy,
// in PostgreSQL), and the epochs' start offsets are not kept: the answer is
// Kafka's (LeaderEpochFileCache.endOffsetFor) for the current epoch asked,
// the log end offset (the high watermark: nothing is appended beyond it);
// for an older one, that epoch ending at the high watermark, an upper bound
// that never reports the truncation a consumer checks for (KIP-320) and
// that cannot have happened; for a newer one or -1, epoch -1 and offset -1.
// A current_leader_epoch other than the partition's is FENCED_LEADER_EPOCH
// (older) or UNKNOWN_LEADER_EPOCH (newer), as for Fetch.
// Authorization, as Kafka: CLUSTER_ACTION on the cluster, or DESCRIBE on each
// topic, else its partitions answer TOPIC_AUTHORIZATION_FAILED (listed after
// the authorized topics, as Kafka lists them).
import { ErrorCode } from '../protocol/errors.js';
import { OffsetForLeaderEpochApi, type OffsetForLeaderEpochRequestOffsetForLeaderPartition } from '../protocol/messages/index.js';
import { CLUSTER_NAME } from '../security/acl.js';
import { AclOperation, ResourceType, allowed, quietlyAllowed } from './authorization.js';
import { leadsPartition } from './partition-leader.js';
import { defineHandler, type RequestContext } from './types.js';

const UNDEFINED_EPOCH = -1;
const UNDEFINED_EPOCH_OFFSET = -1n;

async function endOffset(ctx: RequestContext, topicName: string, p: OffsetForLeaderEpochRequestOffsetForLeaderPartition) {
  const failed = (errorCode: number) => ({ errorCode, partition: p.partition, leaderEpoch: UNDEFINED_EPOCH, endOffset: UNDEFINED_EPOCH_OFFSET });
  const topic = await ctx.broker.topics.get(topicName);
  if (!topic || p.partition < 0 || p.partition >= topic.partitionCount) return failed(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  const log = await ctx.broker.logs.partition(topic.topicId, p.partition);
  if (!log) return failed(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  if (!(await leadsPartition(ctx, topic, p.partition))) return failed(ErrorCode.NOT_LEADER_OR_FOLLOWER);
  if (p.currentLeaderEpoch >= 0 && p.currentLeaderEpoch !== log.leaderEpoch) {
    return failed(p.currentLeaderEpoch > log.leaderEpoch ? ErrorCode.UNKNOWN_LEADER_EPOCH : ErrorCode.FENCED_LEADER_EPOCH);
  }
  const answer = (leaderEpoch: number, offset: bigint) => ({ errorCode: ErrorCode.NONE, partition: p.partition, leaderEpoch, endOffset: offset });
  if (p.leaderEpoch === UNDEFINED_EPOCH || p.leaderEpoch > log.leaderEpoch) return answer(UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET);
  if (p.leaderEpoch === log.leaderEpoch) return answer(log.leaderEpoch, log.highWatermark);
  return answer(p.leaderEpoch, log.highWatermark);
}

export default defineHandler({
  codec: OffsetForLeaderEpochApi,
  minVersion: 0,
  maxVersion: 4,
  async handle(ctx, request) {
    // Brokers replicating (CLUSTER_ACTION) may ask for any topic; the check is quiet, as on Kafka.
    const cluster = quietlyAllowed(ctx, AclOperation.CLUSTER_ACTION, ResourceType.CLUSTER, CLUSTER_NAME);
    const authorized = request.topics.filter((t) => cluster || allowed(ctx, AclOperation.DESCRIBE, ResourceType.TOPIC, t.topic));
    const refused = request.topics.filter((t) => !authorized.includes(t));
    const topics = [];
    for (const t of authorized) {
      const partitions = [];
      for (const p of t.partitions) partitions.push(await endOffset(ctx, t.topic, p));
      topics.push({ topic: t.topic, partitions });
    }
    for (const t of refused) {
      topics.push({
        topic: t.topic,
        partitions: t.partitions.map((p) => ({ errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, partition: p.partition, leaderEpoch: UNDEFINED_EPOCH, endOffset: UNDEFINED_EPOCH_OFFSET })),
      });
    }
    return { throttleTimeMs: 0, topics };
  },
});
