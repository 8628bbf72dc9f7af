// What handlers ask the authorizer, in the terms of a request: who is asking
// (principal and address), and the "authorized operations" bit sets Kafka
// reports in Metadata, DescribeCluster, DescribeGroups and
// DescribeTopicPartitions (one bit per AclOperation code).
import { ErrorCode } from '../protocol/errors.js';
import { AclOperation as Op, CLUSTER_NAME, ResourceType, type AclFilter, type AuthorizationRequest } from '../security/acl.js';
import type { RequestContext } from './types.js';

export { AclOperation, ResourceType } from '../security/acl.js';

/** An unrequested authorized-operations field: Kafka's -2^31 sentinel. */
export const NOT_REQUESTED = -2147483648;

/** The operations each resource type supports, in Kafka's order. */
const SUPPORTED: Record<number, readonly number[]> = {
  [ResourceType.TOPIC]: [Op.READ, Op.WRITE, Op.CREATE, Op.DELETE, Op.ALTER, Op.DESCRIBE, Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS],
  [ResourceType.CLUSTER]: [Op.CREATE, Op.ALTER, Op.DESCRIBE, Op.CLUSTER_ACTION, Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS, Op.IDEMPOTENT_WRITE],
  // DESCRIBE_CONFIGS and ALTER_CONFIGS: group configs (KIP-848), which Kafka reports for every group.
  [ResourceType.GROUP]: [Op.READ, Op.DELETE, Op.DESCRIBE, Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS],
};

/** The requester as the authorizer sees it: the principal and the bare client address (Kafka's leading slash dropped). */
export function requester(ctx: RequestContext): AuthorizationRequest {
  return { principal: ctx.principal, host: ctx.clientHost.startsWith('/') ? ctx.clientHost.slice(1) : ctx.clientHost };
}

/** Whether the requester may perform the operation on the resource (a denial is logged). */
export function allowed(ctx: RequestContext, operation: number, resourceType: number, name: string): boolean {
  // Produce and Fetch ask per topic: without an authorizer, nothing is built to answer yes.
  return !ctx.broker.authorizer.enabled || ctx.broker.authorizer.authorize(requester(ctx), operation, resourceType, name);
}

export function clusterAllowed(ctx: RequestContext, operation: number): boolean {
  return allowed(ctx, operation, ResourceType.CLUSTER, CLUSTER_NAME);
}

/** Whether the requester may perform the operation, checked without a log line (for filtering lists, as Kafka does). */
export function quietlyAllowed(ctx: RequestContext, operation: number, resourceType: number, name: string): boolean {
  return !ctx.broker.authorizer.enabled || ctx.broker.authorizer.authorize(requester(ctx), operation, resourceType, name, false);
}

/** The bit set of operations the requester may perform on the resource. */
export function authorizedOperations(ctx: RequestContext, resourceType: number, name: string): number {
  let bits = 0;
  for (const op of SUPPORTED[resourceType] ?? []) if (quietlyAllowed(ctx, op, resourceType, name)) bits |= 1 << op;
  return bits;
}

export function clusterAuthorizedOperations(ctx: RequestContext): number {
  return authorizedOperations(ctx, ResourceType.CLUSTER, CLUSTER_NAME);
}

/** CREATE on the cluster or on the topic: what topic creation (CreateTopics, auto-creation) needs. */
export function mayCreateTopic(ctx: RequestContext, name: string): boolean {
  return quietlyAllowed(ctx, Op.CREATE, ResourceType.CLUSTER, CLUSTER_NAME) || allowed(ctx, Op.CREATE, ResourceType.TOPIC, name);
}

/** ALTER_CONFIGS on the topic, or on the cluster for broker and logger configs: the refusal AlterConfigs and IncrementalAlterConfigs answer, or null. */
export function configsAlterAuthorizationError(ctx: RequestContext, configResourceType: number, name: string): { errorCode: number; errorMessage: string } | null {
  // ConfigResource types: 2 TOPIC, 4 BROKER, 8 BROKER_LOGGER, 32 GROUP.
  if (configResourceType === 32 && !allowed(ctx, Op.ALTER_CONFIGS, ResourceType.GROUP, name)) return { errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, errorMessage: 'Group authorization failed.' };
  if (configResourceType === 2 && !allowed(ctx, Op.ALTER_CONFIGS, ResourceType.TOPIC, name)) return { errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, errorMessage: 'Topic authorization failed.' };
  if ((configResourceType === 4 || configResourceType === 8) && !clusterAllowed(ctx, Op.ALTER_CONFIGS))
    return { errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: 'Cluster authorization failed.' };
  return null;
}

/** A DescribeAcls request or DeleteAcls filter (same field names on the wire) as the authorizer's filter. */
export function aclFilterOf(f: {
  resourceTypeFilter: number;
  resourceNameFilter: string | null;
  patternTypeFilter: number;
  principalFilter: string | null;
  hostFilter: string | null;
  operation: number;
  permissionType: number;
}): AclFilter {
  return {
    resourceType: f.resourceTypeFilter,
    resourceName: f.resourceNameFilter,
    patternType: f.patternTypeFilter,
    principal: f.principalFilter,
    host: f.hostFilter,
    operation: f.operation,
    permissionType: f.permissionType,
  };
}

/** The text of a CLUSTER_AUTHORIZATION_FAILED answer (Kafka's names the request; clients show it, never parse it). */
export const CLUSTER_AUTHORIZATION_MESSAGE = 'Cluster authorization failed.';
