// SaslAuthenticate (key 36), v0-2 (KIP-152): one SASL token per request
// after SaslHandshake v1. v1: session_lifetime_ms, the time after which the
// client must re-authenticate (KIP-368, connections.max.reauth.ms). v2:
// flexible. A failure is SASL_AUTHENTICATION_FAILED with a message, after
// which the connection closes. Without a pending exchange (a listener
// without SASL, or already authenticated) the answer is ILLEGAL_SASL_STATE
// and the connection stays, as on Kafka; before any SaslHandshake the
// connection closes unanswered (Kafka's authenticator takes only ApiVersions
// and SaslHandshake then).
import { SaslAuthenticateApi } from '../protocol/messages/index.js';
import { defineHandler } from './types.js';
import { LogCode } from '../observability/log-codes.js';

export default defineHandler({
  codec: SaslAuthenticateApi,
  minVersion: 0,
  maxVersion: 2,
  async handle(ctx, request) {
    const result = await ctx.session.authenticate(request.authBytes, ctx.apiVersion);
    if (result.errorCode !== 0) ctx.log.warn({ errorCode: result.errorCode, reason: result.errorMessage, code: LogCode.AUTHENTICATION_FAILED }, 'SASL authentication failed');
    else if (ctx.session.authenticated) ctx.log.debug({ principal: ctx.session.principal }, 'SASL step');
    return result;
  },
});
