// CreateAcls (key 30), v0-3 (v0, removed in Kafka 4.0: literal patterns only,
// the default pattern type; v1: literal and prefixed patterns, KIP-290;
// v2: flexible). Needs ALTER on the cluster. Each binding is checked as
// Kafka checks it (INVALID_REQUEST with the reason); the valid ones are
// stored in one transaction and apply on every broker sharing the database.
// Without an authorizer every creation answers SECURITY_DISABLED. As on Kafka,
// a binding with an UNKNOWN code closes the connection (Kafka refuses it while
// parsing), and one with ANY or MATCH fails the whole request with
// UNKNOWN_SERVER_ERROR (Kafka's AclBinding constructor throws on it).
import { ErrorCode } from '../protocol/errors.js';
import { CreateAclsApi } from '../protocol/messages/index.js';
import { bindingError, hasUnknownCode, isFilterOnly, type AclBinding } from '../security/acl.js';
import { AclOperation, CLUSTER_AUTHORIZATION_MESSAGE, clusterAllowed } from './authorization.js';
import { defineHandler } from './types.js';

export default defineHandler({
  codec: CreateAclsApi,
  minVersion: 0,
  maxVersion: 3,
  async handle(ctx, request) {
    const { authorizer } = ctx.broker;
    const all = (errorCode: number, errorMessage: string | null) => ({
      throttleTimeMs: 0,
      results: request.creations.map(() => ({ errorCode, errorMessage })),
    });
    const bindings: AclBinding[] = request.creations.map((c) => ({
      resourceType: c.resourceType,
      resourceName: c.resourceName,
      patternType: c.resourcePatternType,
      principal: c.principal,
      host: c.host,
      operation: c.operation,
      permissionType: c.permissionType,
    }));
    if (bindings.some(hasUnknownCode)) {
      ctx.log.warn('CreateAcls with an UNKNOWN code: closing the connection, as Kafka does');
      ctx.session.closeAfterResponse = true;
      return null;
    }
    if (!authorizer.enabled) return all(ErrorCode.SECURITY_DISABLED, 'No Authorizer is configured on the broker');
    if (!clusterAllowed(ctx, AclOperation.ALTER)) return all(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, CLUSTER_AUTHORIZATION_MESSAGE);
    if (bindings.some(isFilterOnly)) return all(ErrorCode.UNKNOWN_SERVER_ERROR, null);
    const errors = bindings.map(bindingError);
    const valid = bindings.filter((_, i) => errors[i] === null);
    // A PostgreSQL failure here is answered by the connection (REQUEST_TIMED_OUT, retriable).
    await authorizer.create(valid);
    return {
      throttleTimeMs: 0,
      results: errors.map((e) => (e === null ? { errorCode: ErrorCode.NONE, errorMessage: '' } : { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: e })),
    };
  },
});
