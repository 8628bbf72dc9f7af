// AddOffsetsToTxn (key 25), v0-4.
// v1: same as v0. v2: PRODUCER_FENCED (KIP-588). v3: flexible. v4: same as v3.
// The transaction will carry offsets of the group (TxnOffsetCommit).
// Authorization, as Kafka: WRITE on the transactional id, else
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED; READ on the group, else
// GROUP_AUTHORIZATION_FAILED.
import { isValidGroupId } from '../coordinator/group-types.js';
import { ErrorCode } from '../protocol/errors.js';
import { AddOffsetsToTxnApi } from '../protocol/messages/index.js';
import { AclOperation, ResourceType, allowed } from './authorization.js';
import { fencedForVersion } from './txn-errors.js';
import { defineHandler } from './types.js';

export default defineHandler({
  codec: AddOffsetsToTxnApi,
  minVersion: 0,
  maxVersion: 4,
  async handle(ctx, request) {
    if (!allowed(ctx, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, request.transactionalId)) return { throttleTimeMs: 0, errorCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED };
    if (!allowed(ctx, AclOperation.READ, ResourceType.GROUP, request.groupId)) return { throttleTimeMs: 0, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED };
    if (!isValidGroupId(request.groupId)) return { throttleTimeMs: 0, errorCode: ErrorCode.INVALID_GROUP_ID };
    const errorCode = await ctx.broker.transactions.addOffsets(request.transactionalId, request.producerId, request.producerEpoch, request.groupId);
    return { throttleTimeMs: 0, errorCode: fencedForVersion(errorCode, ctx.apiVersion, 2) };
  },
});
