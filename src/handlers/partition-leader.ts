// A partition's client requests (Produce, Fetch, ListOffsets,
// OffsetForLeaderEpoch, DeleteRecords) are served by its leader only; the
// other brokers answer NOT_LEADER_OR_FOLLOWER and, where the version has the
// fields (KIP-951: Produce v10+, Fetch v12+ per partition, v16+ endpoints),
// name the current leader and its endpoint so the client goes there without
// a Metadata round trip.
import type { Topic } from '../log/topic-manager.js';
import { ErrorCode } from '../protocol/errors.js';
import type { RequestContext } from './types.js';

export interface CurrentLeader {
  leaderId: number;
  leaderEpoch: number;
}

/** Whether this broker leads the partition (its topic's leaders are read first if this broker has not seen the topic yet). */
export async function leadsPartition(ctx: RequestContext, topic: Topic, partition: number): Promise<boolean> {
  const { leadership } = ctx.broker;
  if (leadership.leads(topic.topicId, partition)) return true;
  await leadership.known(topic.topicId, topic.partitionCount);
  return leadership.leads(topic.topicId, partition);
}

/** KIP-951's CurrentLeader for a partition this broker does not lead: the leader and its epoch, -1 where there is none. */
export function currentLeader(ctx: RequestContext, topicId: string, partition: number): CurrentLeader {
  const { nodeId, epoch } = ctx.broker.leadership.leaderOf(topicId, partition);
  return { leaderId: nodeId, leaderEpoch: nodeId >= 0 ? epoch : -1 };
}

/** KIP-951's NodeEndpoints: the endpoints, on the request's listener, of the leaders named in the response. */
export function leaderEndpoints(ctx: RequestContext, leaders: Iterable<{ leaderId?: number } | undefined>): { nodeId: number; host: string; port: number; rack: string | null }[] {
  const ids = new Set<number>();
  for (const l of leaders) if (l?.leaderId !== undefined && l.leaderId >= 0) ids.add(l.leaderId);
  if (ids.size === 0) return [];
  return ctx.broker
    .liveBrokers(ctx.listener)
    .filter((b) => ids.has(b.nodeId))
    .map((b) => ({ nodeId: b.nodeId, host: b.host, port: b.port, rack: b.rack }));
}

/**
 * A partition as Metadata and DescribeTopicPartitions describe it: its
 * leader, the only replica and in-sync replica; with no live leader,
 * LEADER_NOT_AVAILABLE, leader -1, its last leader (if any) as the replica,
 * offline, as Kafka describes a partition whose only replica is down.
 */
export function partitionLeader(ctx: RequestContext, topicId: string, partition: number) {
  const { nodeId, epoch } = ctx.broker.leadership.leaderOf(topicId, partition);
  const leaderEpoch = Math.max(epoch, 0);
  if (nodeId >= 0) return { errorCode: ErrorCode.NONE, partitionIndex: partition, leaderId: nodeId, leaderEpoch, replicaNodes: [nodeId], isrNodes: [nodeId], offlineReplicas: [] };
  const last = ctx.broker.leadership.lastLeader(topicId, partition);
  const replicas = last >= 0 ? [last] : [];
  return { errorCode: ErrorCode.LEADER_NOT_AVAILABLE, partitionIndex: partition, leaderId: -1, leaderEpoch, replicaNodes: replicas, isrNodes: replicas, offlineReplicas: replicas };
}
