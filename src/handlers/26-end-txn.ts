// EndTxn (key 26), v0-5.
// v1: same as v0. v2: PRODUCER_FENCED (KIP-588). v3: flexible. v4:
// same as v3. v5: transactions version 2 (KIP-890 part 2), as Kafka decides
// it, by the request's version: every commit or abort bumps the producer's
// epoch (the markers carry the new one, so a late batch of the old epoch is
// refused), and the answer names the producer id and epoch to go on with.
// Commit or abort: a COMMIT/ABORT marker is appended to every partition of
// the transaction and its offsets are applied or dropped before the answer.
// Authorization, as Kafka: WRITE on the transactional id, else
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED.
import { ErrorCode } from '../protocol/errors.js';
import { EndTxnApi } from '../protocol/messages/index.js';
import { AclOperation, ResourceType, allowed } from './authorization.js';
import { fencedForVersion } from './txn-errors.js';
import { defineHandler } from './types.js';

export default defineHandler({
  codec: EndTxnApi,
  minVersion: 0,
  maxVersion: 5,
  async handle(ctx, request) {
    if (!allowed(ctx, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, request.transactionalId)) {
      return { throttleTimeMs: 0, errorCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, producerId: -1n, producerEpoch: -1 };
    }
    const result = await ctx.broker.transactions.endTxn(request.transactionalId, request.producerId, request.producerEpoch, request.committed, ctx.apiVersion >= 5);
    if (result.errorCode !== 0) ctx.log.info({ transactionalId: request.transactionalId, commit: request.committed, errorCode: result.errorCode }, 'EndTxn refused');
    return { throttleTimeMs: 0, errorCode: fencedForVersion(result.errorCode, ctx.apiVersion, 2), producerId: result.producerId, producerEpoch: result.producerEpoch };
  },
});
