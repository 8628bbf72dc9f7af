// ListPartitionReassignments (key 46), v0. Flexible.
// Nothing is ever being reassigned (one copy per partition, in PostgreSQL,
// see 45-alter-partition-reassignments.ts): the answer lists no partition,
// for all topics (null) or named ones; Kafka's controller skips unknown
// topics silently, so they need no look-up.
// Authorization, as Kafka: DESCRIBE on the cluster, else CLUSTER_AUTHORIZATION_FAILED.
import { ErrorCode } from '../protocol/errors.js';
import { ListPartitionReassignmentsApi } from '../protocol/messages/index.js';
import { AclOperation, clusterAllowed } from './authorization.js';
import { defineHandler } from './types.js';

export default defineHandler({
  codec: ListPartitionReassignmentsApi,
  minVersion: 0,
  maxVersion: 0,
  async handle(ctx) {
    if (!clusterAllowed(ctx, AclOperation.DESCRIBE)) return { throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: 'Cluster authorization failed.', topics: [] };
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: null, topics: [] };
  },
});
