// ListConfigResources (key 74), v0-1, as Kafka 4.3's KafkaApis.handleListConfigResources.
// v0: Kafka 3.7's ListClientMetricsResources (KIP-714), which lists the client
// metrics config resources only. v1 (KIP-1142): every config resource type,
// filtered by the request's types (none: every type the version supports), an
// unsupported one failing the whole request with UNSUPPORTED_VERSION.
// Listed in Kafka's order, type by type: GROUP (the groups with configs set,
// whether the group exists or not: Kafka's GroupConfigManager.groupIds, not
// the groups themselves), CLIENT_METRICS (pgkafka has no client metrics
// subscriptions: none), BROKER_LOGGER and BROKER (the live brokers with the
// request's listener), TOPIC (every topic, __consumer_offsets once it exists).
// Authorization, as Kafka: DESCRIBE_CONFIGS on the cluster, else CLUSTER_AUTHORIZATION_FAILED.
import { ConfigResourceType } from '../log/config-values.js';
import { ErrorCode } from '../protocol/errors.js';
import { ListConfigResourcesApi } from '../protocol/messages/index.js';
import { AclOperation, clusterAllowed } from './authorization.js';
import { CONSUMER_OFFSETS_TOPIC } from './consumer-offsets.js';
import { defineHandler } from './types.js';

/** ConfigResource.Type ids: those DescribeConfigs serves, and CLIENT_METRICS, which pgkafka lists (empty) but does not describe. */
const Type = { ...ConfigResourceType, CLIENT_METRICS: 16 } as const;

/** ListConfigResourcesRequest.supportedResourceTypes. */
const supportedTypes = (apiVersion: number): number[] => (apiVersion === 0 ? [Type.CLIENT_METRICS] : [Type.TOPIC, Type.BROKER, Type.BROKER_LOGGER, Type.CLIENT_METRICS, Type.GROUP]);

export default defineHandler({
  codec: ListConfigResourcesApi,
  minVersion: 0,
  maxVersion: 1,
  async handle(ctx, request) {
    const { broker } = ctx;
    if (!clusterAllowed(ctx, AclOperation.DESCRIBE_CONFIGS)) return { throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, configResources: [] };
    const supported = supportedTypes(ctx.apiVersion);
    const types = new Set(request.resourceTypes.length === 0 ? supported : request.resourceTypes);
    if ([...types].some((t) => !supported.includes(t))) return { throttleTimeMs: 0, errorCode: ErrorCode.UNSUPPORTED_VERSION, configResources: [] };
    const configResources: { resourceName: string; resourceType: number }[] = [];
    const add = (resourceType: number, names: string[]) => {
      if (types.has(resourceType)) for (const resourceName of names) configResources.push({ resourceName, resourceType });
    };
    const nodeIds = broker.liveBrokers(ctx.listener).map((b) => String(b.nodeId));
    add(Type.GROUP, broker.groupConfigs.groupIds());
    add(Type.BROKER_LOGGER, nodeIds);
    add(Type.BROKER, nodeIds);
    if (types.has(Type.TOPIC)) {
      const topics = (await broker.topics.list()).map((t) => t.name);
      add(Type.TOPIC, (await broker.consumerOffsets.exists()) ? [...topics, CONSUMER_OFFSETS_TOPIC] : topics);
    }
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, configResources };
  },
});
