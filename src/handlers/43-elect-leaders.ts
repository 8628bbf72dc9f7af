// ElectLeaders (key 43), v0-2.
// v1: election type (0 preferred, 1 unclean) and a top-level error code.
// v2: flexible.
// Each partition has one replica, and it leads (any live broker serves it
// from PostgreSQL), so it already has its preferred leader and a leader:
// Kafka's controller answers ELECTION_NOT_NEEDED for each named partition,
// UNKNOWN_TOPIC_OR_PARTITION for an unknown one, and, for all partitions
// (null), lists every topic with no partition (it leaves out those that
// needed no election). An unknown election type is INVALID_REQUEST.
// Authorization, as Kafka: ALTER on the cluster, else CLUSTER_AUTHORIZATION_FAILED everywhere.
import { ErrorCode } from '../protocol/errors.js';
import { ElectLeadersApi, type ElectLeadersRequest } from '../protocol/messages/index.js';
import { AclOperation, clusterAllowed } from './authorization.js';
import { defineHandler } from './types.js';

const PREFERRED = 0;
const UNCLEAN = 1;

function everyPartition(request: ElectLeadersRequest, errorCode: number, errorMessage: string | null) {
  return {
    throttleTimeMs: 0,
    errorCode,
    replicaElectionResults: (request.topicPartitions ?? []).map((t) => ({ topic: t.topic, partitionResult: t.partitions.map((partitionId) => ({ partitionId, errorCode, errorMessage })) })),
  };
}

export default defineHandler({
  codec: ElectLeadersApi,
  minVersion: 0,
  maxVersion: 2,
  async handle(ctx, request) {
    if (!clusterAllowed(ctx, AclOperation.ALTER)) return everyPartition(request, ErrorCode.CLUSTER_AUTHORIZATION_FAILED, 'Cluster authorization failed.');
    if (request.electionType !== PREFERRED && request.electionType !== UNCLEAN) {
      ctx.log.info({ electionType: request.electionType }, 'unknown election type');
      return everyPartition(request, ErrorCode.INVALID_REQUEST, `Unknown election type ${request.electionType}`);
    }
    const { topics } = ctx.broker;
    if (request.topicPartitions === null) {
      return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, replicaElectionResults: (await topics.list()).map((t) => ({ topic: t.name, partitionResult: [] })) };
    }
    const replicaElectionResults = [];
    for (const t of request.topicPartitions) {
      const topic = await topics.get(t.topic);
      const partitionResult = t.partitions.map((partitionId) => {
        if (!topic) return { partitionId, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: `No such topic as ${t.topic}` };
        if (partitionId < 0 || partitionId >= topic.partitionCount)
          return { partitionId, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: `No such partition as ${t.topic}-${partitionId}` };
        return { partitionId, errorCode: ErrorCode.ELECTION_NOT_NEEDED, errorMessage: 'Leader election not needed for topic partition.' };
      });
      replicaElectionResults.push({ topic: t.topic, partitionResult });
    }
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, replicaElectionResults };
  },
});
