// DescribeClientQuotas (key 48), v0-1. v1: flexible.
// pgkafka enforces no client quotas (every throttle time is 0) and stores
// none: AlterClientQuotas is not served, so Kafka's admin client reports it
// unsupported before sending anything. Described, the quotas are therefore
// none: a valid filter matches no entry. The filter is validated as Kafka's
// metadata image validates it: an empty entity type, one named twice, a match
// string that contradicts the match type, an unknown match type, or an ip
// component beside user or client-id are INVALID_REQUEST; an entity type
// other than user, client-id and ip is UNSUPPORTED_VERSION.
// Authorization, as Kafka: DESCRIBE_CONFIGS on the cluster, else CLUSTER_AUTHORIZATION_FAILED.
import { ErrorCode } from '../protocol/errors.js';
import { DescribeClientQuotasApi, type DescribeClientQuotasRequest } from '../protocol/messages/index.js';
import { AclOperation, clusterAllowed } from './authorization.js';
import { defineHandler } from './types.js';

const MATCH_EXACT = 0;
const MATCH_DEFAULT = 1;
const MATCH_SPECIFIED = 2;
const ENTITY_TYPES = new Set(['user', 'client-id', 'ip']);

function filterError(request: DescribeClientQuotasRequest): { errorCode: number; errorMessage: string } | null {
  const invalid = (errorMessage: string) => ({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage });
  const seen = new Set<string>();
  for (const c of request.components) {
    if (c.entityType === '') return invalid('Invalid empty entity type.');
    if (seen.has(c.entityType)) return invalid(`Entity type ${c.entityType} cannot appear more than once in the filter.`);
    if (!ENTITY_TYPES.has(c.entityType)) return { errorCode: ErrorCode.UNSUPPORTED_VERSION, errorMessage: `Unsupported entity type ${c.entityType}` };
    if (c.matchType === MATCH_EXACT && c.match === null) return invalid('Request specified MATCH_TYPE_EXACT, but set match string to null.');
    if (c.matchType === MATCH_DEFAULT && c.match !== null) return invalid('Request specified MATCH_TYPE_DEFAULT, but also specified a match string.');
    if (c.matchType === MATCH_SPECIFIED && c.match !== null) return invalid('Request specified MATCH_TYPE_SPECIFIED, but also specified a match string.');
    if (c.matchType !== MATCH_EXACT && c.matchType !== MATCH_DEFAULT && c.matchType !== MATCH_SPECIFIED) return invalid(`Unknown match type ${c.matchType}`);
    seen.add(c.entityType);
  }
  if (seen.has('ip') && (seen.has('user') || seen.has('client-id'))) {
    return invalid('Invalid entity filter component combination. IP filter component should not be used with user or clientId filter component.');
  }
  return null;
}

export default defineHandler({
  codec: DescribeClientQuotasApi,
  minVersion: 0,
  maxVersion: 1,
  async handle(ctx, request) {
    if (!clusterAllowed(ctx, AclOperation.DESCRIBE_CONFIGS))
      return { throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: 'Cluster authorization failed.', entries: null };
    const error = filterError(request);
    if (error) {
      ctx.log.info({ components: request.components, errorCode: error.errorCode }, 'client quota filter refused');
      return { throttleTimeMs: 0, ...error, entries: null };
    }
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: '', entries: [] }; // Kafka's default message: empty
  },
});
