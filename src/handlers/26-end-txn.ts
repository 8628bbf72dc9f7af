// EndTxn (key 26), v0-5.
// v1: same as v0. v2: PRODUCER_FENCED (KIP-588). v3: flexible. v4:
// same as v3. v5: the producer id and epoch in the answer (KIP-890 part 2;
// this broker does not bump the epoch at each commit, so they are unchanged).
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
    const result = await ctx.broker.transactions.endTxn(request.transactionalId, request.producerId, request.producerEpoch, request.committed);
    if (result.errorCode !== 0) ctx.log.info({ transactionalId: request.transactionalId, commit: request.committed, errorCode: result.errorCode }, 'EndTxn refused');
    return { throttleTimeMs: 0, errorCode: fencedForVersion(result.errorCode, ctx.apiVersion, 2), producerId: result.producerId, producerEpoch: result.producerEpoch };
  },
});
