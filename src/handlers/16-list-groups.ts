// ListGroups (key 16), v0-5.
// v1: throttle time. v3: flexible. v4: state filter and states in the
// answer (KIP-518). v5: type filter and types (KIP-848), each group's type
// as the group names it.
// Authorization, as Kafka: DESCRIBE on the cluster lists every group;
// otherwise only the groups the requester may DESCRIBE, without an error
// (neither check logs a denial).
import { ErrorCode } from '../protocol/errors.js';
import { ListGroupsApi } from '../protocol/messages/index.js';
import { CLUSTER_NAME } from '../security/acl.js';
import { AclOperation, ResourceType, quietlyAllowed } from './authorization.js';
import { defineHandler } from './types.js';

export default defineHandler({
  codec: ListGroupsApi,
  minVersion: 0,
  maxVersion: 5,
  async handle(ctx, request) {
    const states = new Set(request.statesFilter.map((s) => s.toLowerCase()));
    const types = new Set(request.typesFilter.map((t) => t.toLowerCase()));
    const everyGroup = quietlyAllowed(ctx, AclOperation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME);
    const groups = ctx.broker.groups.list(states, types).filter((g) => everyGroup || quietlyAllowed(ctx, AclOperation.DESCRIBE, ResourceType.GROUP, g.groupId));
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, groups };
  },
});
