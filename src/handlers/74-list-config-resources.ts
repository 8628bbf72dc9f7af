// ListConfigResources (key 74), v0 only: Kafka 3.7's ListClientMetricsResources
// (KIP-714), which lists the client metrics config resources. pgkafka has no
// client metrics subscriptions, so the list is empty. v1 (KIP-1142: every
// config resource type, filtered by type) is not served: a client asking for
// other types learns from ApiVersions that this broker cannot list them.
// Authorization, as Kafka: DESCRIBE_CONFIGS on the cluster, else CLUSTER_AUTHORIZATION_FAILED.
import { ErrorCode } from '../protocol/errors.js';
import { ListConfigResourcesApi } from '../protocol/messages/index.js';
import { AclOperation, clusterAllowed } from './authorization.js';
import { defineHandler } from './types.js';

export default defineHandler({
  codec: ListConfigResourcesApi,
  minVersion: 0,
  maxVersion: 0,
  async handle(ctx) {
    const errorCode = clusterAllowed(ctx, AclOperation.DESCRIBE_CONFIGS) ? ErrorCode.NONE : ErrorCode.CLUSTER_AUTHORIZATION_FAILED;
    return { throttleTimeMs: 0, errorCode, configResources: [] };
  },
});
