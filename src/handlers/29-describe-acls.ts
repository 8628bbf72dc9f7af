// DescribeAcls (key 29), v0-3 (v0, removed in Kafka 4.0: literal patterns
// only, the filter's pattern type defaults to LITERAL as Kafka 3.9 set it; v1: pattern type filters, KIP-290; v2:
// flexible). The ACLs matching one filter, grouped by resource pattern.
// Needs DESCRIBE on the cluster; without an authorizer: SECURITY_DISABLED. A
// filter with an UNKNOWN code closes the connection, as Kafka's parser refuses it.
import { ErrorCode } from '../protocol/errors.js';
import { DescribeAclsApi } from '../protocol/messages/index.js';
import { filterError, hasUnknownCode, type AclBinding } from '../security/acl.js';
import { AclOperation, CLUSTER_AUTHORIZATION_MESSAGE, aclFilterOf, clusterAllowed } from './authorization.js';
import { defineHandler } from './types.js';

const failed = (errorCode: number, errorMessage: string | null) => ({ throttleTimeMs: 0, errorCode, errorMessage, resources: [] });

export default defineHandler({
  codec: DescribeAclsApi,
  minVersion: 0,
  maxVersion: 3,
  async handle(ctx, request) {
    const { authorizer } = ctx.broker;
    const filter = aclFilterOf(request);
    if (hasUnknownCode(filter)) {
      ctx.log.warn('DescribeAcls with an UNKNOWN code: closing the connection, as Kafka does');
      ctx.session.closeAfterResponse = true;
      return null;
    }
    if (!authorizer.enabled) return failed(ErrorCode.SECURITY_DISABLED, 'No Authorizer is configured on the broker');
    if (!clusterAllowed(ctx, AclOperation.DESCRIBE)) return failed(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, CLUSTER_AUTHORIZATION_MESSAGE);
    const invalid = filterError(filter);
    if (invalid) return failed(ErrorCode.INVALID_REQUEST, invalid);
    const byPattern = new Map<string, { resourceType: number; resourceName: string; patternType: number; acls: AclBinding[] }>();
    for (const b of authorizer.describe(filter)) {
      const key = JSON.stringify([b.resourceType, b.resourceName, b.patternType]);
      let resource = byPattern.get(key);
      if (!resource) byPattern.set(key, (resource = { resourceType: b.resourceType, resourceName: b.resourceName, patternType: b.patternType, acls: [] }));
      resource.acls.push(b);
    }
    return {
      throttleTimeMs: 0,
      errorCode: ErrorCode.NONE,
      errorMessage: '',
      resources: [...byPattern.values()].map((r) => ({
        resourceType: r.resourceType,
        resourceName: r.resourceName,
        patternType: r.patternType,
        acls: r.acls.map((a) => ({ principal: a.principal, host: a.host, operation: a.operation, permissionType: a.permissionType })),
      })),
    };
  },
});
