// SaslHandshake (key 17), v0-1 (KIP-43). The client names a mechanism; the
// answer lists those enabled. v0: the SASL tokens that follow are raw frames
// (int32 length + bytes), not requests; v1: they come in SaslAuthenticate
// requests, and a v1 handshake on an authenticated connection begins
// re-authentication (KIP-368) when sessions expire (connections.max.reauth.ms).
// On a listener without SASL, or once authenticated otherwise, the answer is
// ILLEGAL_SASL_STATE without mechanisms and the connection stays, as from
// Kafka's request handler; in the middle of an exchange
// ILLEGAL_SASL_STATE, and for an unknown mechanism UNSUPPORTED_SASL_MECHANISM,
// are followed by closing the connection.
import { SaslHandshakeApi } from '../protocol/messages/index.js';
import { defineHandler } from './types.js';

export default defineHandler({
  codec: SaslHandshakeApi,
  minVersion: 0,
  maxVersion: 1,
  async handle(ctx, request) {
    const answer = ctx.session.handshake(request.mechanism, ctx.apiVersion);
    if (answer.errorCode !== 0) ctx.log.warn({ mechanism: request.mechanism, errorCode: answer.errorCode }, 'SASL handshake refused');
    return answer;
  },
});
