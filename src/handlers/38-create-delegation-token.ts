// CreateDelegationToken (key 38), v0-3 (v0, removed in Kafka 4.0, is v1
// without throttling on the client side, KIP-219).
// v2: flexible. v3: owner principal (KIP-373: a token for another user).
// No delegation token authentication here (see delegation-tokens.ts): Kafka's
// answer, in its order: DELEGATION_TOKEN_REQUEST_NOT_ALLOWED over PLAINTEXT
// or 1-way SSL; DELEGATION_TOKEN_AUTHORIZATION_FAILED for a token for another
// owner without CREATE_TOKENS on that user; INVALID_PRINCIPAL_TYPE for a
// renewer that is not a User; else DELEGATION_TOKEN_AUTH_DISABLED. Owner and
// requester are reported; timestamps are -1 when refused outright, 0 from
// the disabled token manager, as Kafka's are.
import { ErrorCode } from '../protocol/errors.js';
import { CreateDelegationTokenApi } from '../protocol/messages/index.js';
import { AclOperation, ResourceType, allowed } from './authorization.js';
import { principalParts, tokenRequestsAllowed } from './delegation-tokens.js';
import { defineHandler } from './types.js';

export default defineHandler({
  codec: CreateDelegationTokenApi,
  minVersion: 0,
  maxVersion: 3,
  async handle(ctx, request) {
    const requester = principalParts(ctx.principal);
    const owner = request.ownerPrincipalName === null || request.ownerPrincipalName === '' ? requester : { type: request.ownerPrincipalType ?? 'User', name: request.ownerPrincipalName };
    const answer = (errorCode: number, timestamp: bigint) => ({
      errorCode,
      principalType: owner.type,
      principalName: owner.name,
      tokenRequesterPrincipalType: requester.type,
      tokenRequesterPrincipalName: requester.name,
      issueTimestampMs: timestamp,
      expiryTimestampMs: timestamp,
      maxTimestampMs: timestamp,
      tokenId: '',
      hmac: Buffer.alloc(0),
      throttleTimeMs: 0,
    });
    const ownerIsRequester = owner.type === requester.type && owner.name === requester.name;
    let errorCode: number = ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED;
    if (!tokenRequestsAllowed(ctx)) errorCode = ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED;
    else if (!ownerIsRequester && !allowed(ctx, AclOperation.CREATE_TOKENS, ResourceType.USER, `${owner.type}:${owner.name}`)) errorCode = ErrorCode.DELEGATION_TOKEN_AUTHORIZATION_FAILED;
    else if (request.renewers.some((r) => r.principalType !== 'User')) errorCode = ErrorCode.INVALID_PRINCIPAL_TYPE;
    ctx.log.info({ principal: ctx.principal, errorCode }, 'delegation token not created');
    return answer(errorCode, errorCode === ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED ? 0n : -1n);
  },
});
