// DescribeDelegationToken (key 41), v0-3 (v0 removed in Kafka 4.0).
// v2: flexible. v3: token requester in the answer (KIP-373).
// No delegation token authentication here (see delegation-tokens.ts), so no
// token exists: DELEGATION_TOKEN_REQUEST_NOT_ALLOWED over PLAINTEXT or 1-way
// SSL, else DELEGATION_TOKEN_AUTH_DISABLED, with no token, as Kafka answers.
import { ErrorCode } from '../protocol/errors.js';
import { DescribeDelegationTokenApi } from '../protocol/messages/index.js';
import { tokenRequestsAllowed } from './delegation-tokens.js';
import { defineHandler } from './types.js';

export default defineHandler({
  codec: DescribeDelegationTokenApi,
  minVersion: 0,
  maxVersion: 3,
  async handle(ctx) {
    const errorCode = tokenRequestsAllowed(ctx) ? ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED : ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED;
    return { errorCode, tokens: [], throttleTimeMs: 0 };
  },
});
