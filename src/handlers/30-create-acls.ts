// CreateAcls (key 30), v1-3 (v1: literal and prefixed patterns, KIP-290;
// v2: flexible). Needs ALTER on the cluster. Each binding is checked as
// Kafka checks it (INVALID_REQUEST with the reason); the valid ones are
// stored in one transaction and apply on every broker sharing the database.
// Without an authorizer every creation answers SECURITY_DISABLED.
import { ErrorCode } from '../protocol/errors.js';
import { CreateAclsApi } from '../protocol/messages/index.js';
import { bindingError, type AclBinding } from '../security/acl.js';
import { AclOperation, clusterAllowed } from './authorization.js';
import { defineHandler } from './types.js';

export default defineHandler({
  codec: CreateAclsApi,
  minVersion: 1,
  maxVersion: 3,
  async handle(ctx, request) {
    const { authorizer } = ctx.broker;
    const all = (errorCode: number, errorMessage: string | null) => ({
      throttleTimeMs: 0,
      results: request.creations.map(() => ({ errorCode, errorMessage })),
    });
    if (!authorizer.enabled) return all(ErrorCode.SECURITY_DISABLED, 'No Authorizer is configured on the broker');
    if (!clusterAllowed(ctx, AclOperation.ALTER)) return all(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, null);
    const bindings: AclBinding[] = request.creations.map((c) => ({
      resourceType: c.resourceType,
      resourceName: c.resourceName,
      patternType: c.resourcePatternType,
      principal: c.principal,
      host: c.host,
      operation: c.operation,
      permissionType: c.permissionType,
    }));
    const errors = bindings.map(bindingError);
    const valid = bindings.filter((_, i) => errors[i] === null);
    // A PostgreSQL failure here is answered by the connection (REQUEST_TIMED_OUT, retriable).
    await authorizer.create(valid);
    return {
      throttleTimeMs: 0,
      results: errors.map((e) => (e === null ? { errorCode: ErrorCode.NONE, errorMessage: null } : { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: e })),
    };
  },
});
