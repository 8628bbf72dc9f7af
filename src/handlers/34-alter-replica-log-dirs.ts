// AlterReplicaLogDirs (key 34), v0-2 (v0 removed in Kafka 4.0). v1: same as v0. v2: flexible.
// There is one log dir, the PostgreSQL schema DescribeLogDirs reports
// ("postgresql:<schema>"), so no replica can move. Kafka's ReplicaManager
// answers: LOG_DIR_NOT_FOUND for a dir the broker does not have;
// REPLICA_NOT_AVAILABLE for a partition it does not host; NONE for a
// partition already in the dir named (nothing to move). A partition named
// under several dirs takes the last, as Kafka's map of partition to dir does.
// Authorization, as Kafka: ALTER on the cluster, else CLUSTER_AUTHORIZATION_FAILED for every partition.
import { ErrorCode } from '../protocol/errors.js';
import { AlterReplicaLogDirsApi } from '../protocol/messages/index.js';
import { AclOperation, clusterAllowed } from './authorization.js';
import { defineHandler } from './types.js';

export default defineHandler({
  codec: AlterReplicaLogDirsApi,
  minVersion: 0,
  maxVersion: 2,
  async handle(ctx, request) {
    const logDir = `postgresql:${ctx.broker.config.schema}`;
    const authorized = clusterAllowed(ctx, AclOperation.ALTER);
    // topic -> partition -> destination dir, in first-appearance order.
    const wanted = new Map<string, Map<number, string>>();
    for (const dir of request.dirs) {
      for (const t of dir.topics) {
        const partitions = wanted.get(t.name) ?? new Map<number, string>();
        for (const p of t.partitions) partitions.set(p, dir.path);
        wanted.set(t.name, partitions);
      }
    }
    const results = [];
    for (const [name, partitions] of wanted) {
      const topic = authorized ? await ctx.broker.topics.get(name) : null;
      results.push({
        topicName: name,
        partitions: [...partitions].map(([partitionIndex, path]) => {
          let errorCode: number = ErrorCode.NONE;
          if (!authorized) errorCode = ErrorCode.CLUSTER_AUTHORIZATION_FAILED;
          else if (path !== logDir) errorCode = ErrorCode.LOG_DIR_NOT_FOUND;
          else if (!topic || partitionIndex < 0 || partitionIndex >= topic.partitionCount) errorCode = ErrorCode.REPLICA_NOT_AVAILABLE;
          return { partitionIndex, errorCode };
        }),
      });
    }
    return { throttleTimeMs: 0, results };
  },
});
