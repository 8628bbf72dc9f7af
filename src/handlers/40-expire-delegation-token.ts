// ExpireDelegationToken (key 40), v0-2 (v0 removed in Kafka 4.0). v2: flexible.
// No delegation token authentication here (see delegation-tokens.ts):
// DELEGATION_TOKEN_REQUEST_NOT_ALLOWED over PLAINTEXT or 1-way SSL (expiry
// -1), else DELEGATION_TOKEN_AUTH_DISABLED (expiry 0), as Kafka answers.
import { ErrorCode } from '../protocol/errors.js';
import { ExpireDelegationTokenApi } from '../protocol/messages/index.js';
import { tokenRequestsAllowed } from './delegation-tokens.js';
import { defineHandler } from './types.js';

export default defineHandler({
  codec: ExpireDelegationTokenApi,
  minVersion: 0,
  maxVersion: 2,
  async handle(ctx) {
    if (!tokenRequestsAllowed(ctx)) return { errorCode: ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, expiryTimestampMs: -1n, throttleTimeMs: 0 };
    return { errorCode: ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED, expiryTimestampMs: 0n, throttleTimeMs: 0 };
  },
});
