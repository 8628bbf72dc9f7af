// AlterPartitionReassignments (key 45), v0-1. Flexible from v0.
// v1: allow_replication_factor_change (KIP-860), echoed in the response.
// Each partition has one copy, in PostgreSQL, and every live broker serves
// it (Metadata names the answering broker as its replica), so there is never
// a reassignment in progress. Kafka's controller answers, per partition:
// UNKNOWN_TOPIC_OR_PARTITION for an unknown topic or partition;
// NO_REASSIGNMENT_IN_PROGRESS for a cancellation (null replicas);
// INVALID_REPLICA_ASSIGNMENT for an empty list, a broker not registered or
// one named twice. A list of one live broker is a no-op (NONE). More than one
// replica cannot be placed: INVALID_REPLICATION_FACTOR, the answer Kafka gives
// when the replication factor may not change.
// Authorization, as Kafka: ALTER on the cluster, else CLUSTER_AUTHORIZATION_FAILED everywhere.
import { ErrorCode } from '../protocol/errors.js';
import { AlterPartitionReassignmentsApi, type AlterPartitionReassignmentsRequestReassignablePartition } from '../protocol/messages/index.js';
import { AclOperation, clusterAllowed } from './authorization.js';
import { defineHandler, type RequestContext } from './types.js';

type Outcome = { errorCode: number; errorMessage: string | null };

async function reassign(ctx: RequestContext, topicName: string, target: AlterPartitionReassignmentsRequestReassignablePartition, allowReplicationFactorChange: boolean): Promise<Outcome> {
  const topic = await ctx.broker.topics.get(topicName);
  if (!topic) return { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: `Unable to find a topic named ${topicName}.` };
  if (target.partitionIndex < 0 || target.partitionIndex >= topic.partitionCount) {
    return { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: `Unable to find partition ${topicName}:${target.partitionIndex}.` };
  }
  if (target.replicas === null) return { errorCode: ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, errorMessage: null }; // as Kafka's controller: no message
  if (target.replicas.length === 0) return { errorCode: ErrorCode.INVALID_REPLICA_ASSIGNMENT, errorMessage: 'The manual partition assignment includes an empty replica list.' };
  const registered = new Set(ctx.broker.liveBrokers().map((b) => b.nodeId));
  let previous: number | null = null;
  for (const id of [...target.replicas].sort((a, b) => a - b)) {
    if (!registered.has(id)) return { errorCode: ErrorCode.INVALID_REPLICA_ASSIGNMENT, errorMessage: `The manual partition assignment includes broker ${id}, but no such broker is registered.` };
    if (id === previous) return { errorCode: ErrorCode.INVALID_REPLICA_ASSIGNMENT, errorMessage: `The manual partition assignment includes the broker ${id} more than once.` };
    previous = id;
  }
  if (target.replicas.length !== 1) {
    const why = allowReplicationFactorChange ? 'each partition has exactly one copy, in PostgreSQL' : 'allow_replication_factor_change is false';
    return { errorCode: ErrorCode.INVALID_REPLICATION_FACTOR, errorMessage: `The replication factor cannot change from 1 to ${target.replicas.length}: ${why}.` };
  }
  return { errorCode: ErrorCode.NONE, errorMessage: null };
}

export default defineHandler({
  codec: AlterPartitionReassignmentsApi,
  minVersion: 0,
  maxVersion: 1,
  async handle(ctx, request) {
    const allowReplicationFactorChange = request.allowReplicationFactorChange;
    if (!clusterAllowed(ctx, AclOperation.ALTER)) {
      const errorMessage = 'Cluster authorization failed.';
      return {
        throttleTimeMs: 0,
        allowReplicationFactorChange,
        errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
        errorMessage,
        responses: request.topics.map((t) => ({
          name: t.name,
          partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage })),
        })),
      };
    }
    const responses = [];
    for (const t of request.topics) {
      const partitions = [];
      for (const p of t.partitions) {
        const outcome = await reassign(ctx, t.name, p, allowReplicationFactorChange);
        if (outcome.errorCode !== ErrorCode.NONE) ctx.log.info({ topic: t.name, partition: p.partitionIndex, replicas: p.replicas, errorCode: outcome.errorCode }, 'partition reassignment refused');
        partitions.push({ partitionIndex: p.partitionIndex, ...outcome });
      }
      responses.push({ name: t.name, partitions });
    }
    return { throttleTimeMs: 0, allowReplicationFactorChange, errorCode: ErrorCode.NONE, errorMessage: null, responses };
  },
});
