// DeleteAcls (key 31), v0-3 (v0, removed in Kafka 4.0: literal patterns
// only, the filter's default pattern type; v1: pattern type filters, KIP-290; v2:
// flexible). Needs ALTER on the cluster. Every binding any valid filter
// matches is deleted in one transaction; each filter's result lists the
// bindings it matched. Without an authorizer: SECURITY_DISABLED per filter. A
// filter with an UNKNOWN code closes the connection, as Kafka's parser refuses it.
import { ErrorCode } from '../protocol/errors.js';
import { DeleteAclsApi } from '../protocol/messages/index.js';
import { filterError, hasUnknownCode } from '../security/acl.js';
import { AclOperation, CLUSTER_AUTHORIZATION_MESSAGE, aclFilterOf, clusterAllowed } from './authorization.js';
import { defineHandler } from './types.js';

export default defineHandler({
  codec: DeleteAclsApi,
  minVersion: 0,
  maxVersion: 3,
  async handle(ctx, request) {
    const { authorizer } = ctx.broker;
    const all = (errorCode: number, errorMessage: string | null) => ({
      throttleTimeMs: 0,
      filterResults: request.filters.map(() => ({ errorCode, errorMessage, matchingAcls: [] })),
    });
    const filters = request.filters.map(aclFilterOf);
    if (filters.some(hasUnknownCode)) {
      ctx.log.warn('DeleteAcls with an UNKNOWN code: closing the connection, as Kafka does');
      ctx.session.closeAfterResponse = true;
      return null;
    }
    if (!authorizer.enabled) return all(ErrorCode.SECURITY_DISABLED, 'No Authorizer is configured on the broker');
    if (!clusterAllowed(ctx, AclOperation.ALTER)) return all(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, CLUSTER_AUTHORIZATION_MESSAGE);
    const errors = filters.map(filterError);
    // A PostgreSQL failure here is answered by the connection (REQUEST_TIMED_OUT, retriable).
    const matched = await authorizer.delete(filters.filter((_, i) => errors[i] === null));
    let next = 0;
    return {
      throttleTimeMs: 0,
      filterResults: errors.map((error) => {
        if (error !== null) return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: error, matchingAcls: [] };
        return {
          errorCode: ErrorCode.NONE,
          errorMessage: null,
          matchingAcls: matched[next++]!.map((b) => ({
            errorCode: ErrorCode.NONE,
            errorMessage: null,
            resourceType: b.resourceType,
            resourceName: b.resourceName,
            patternType: b.patternType,
            principal: b.principal,
            host: b.host,
            operation: b.operation,
            permissionType: b.permissionType,
          })),
        };
      }),
    };
  },
});
