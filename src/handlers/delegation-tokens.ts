// What the delegation token APIs share. pgkafka has no delegation token
// authentication (Kafka's delegation.token.secret.key unset), so these APIs
// give the answers of a Kafka cluster without it: a request Kafka refuses
// outright gets DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, the rest
// DELEGATION_TOKEN_AUTH_DISABLED, and nothing is ever created.
import { ANONYMOUS } from '../security/session.js';
import type { RequestContext } from './types.js';

/**
 * Kafka's allowTokenRequests: never over PLAINTEXT, nor over SSL without a
 * client certificate (1-way SSL); a token-authenticated principal never
 * exists here.
 */
export function tokenRequestsAllowed(ctx: RequestContext): boolean {
  if (ctx.listener === 'PLAINTEXT') return false;
  if (ctx.listener === 'SSL' && ctx.principal === ANONYMOUS) return false;
  return true;
}

/** "User:alice" as Kafka's KafkaPrincipal type and name. */
export function principalParts(principal: string): { type: string; name: string } {
  const colon = principal.indexOf(':');
  return { type: principal.slice(0, colon), name: principal.slice(colon + 1) };
}
