// InitProducerId (key 22), v0-5 (v6, two-phase commit, is unstable in Kafka
// and not advertised). v1: same as v0. v2: flexible. v3: an existing
// producer id and epoch may be passed to bump the epoch (KIP-360).
// v4: PRODUCER_FENCED replaces INVALID_PRODUCER_EPOCH (KIP-588). v5: same as v4.
// Idempotent producers get a producer id unique across every broker sharing
// the database. A transactional id keeps its producer id; every InitProducerId
// bumps its epoch, fencing older instances and aborting their open transaction.
// Authorization, as Kafka: WRITE on the transactional id, else
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED; without one, IDEMPOTENT_WRITE on the
// cluster or WRITE on at least one topic (KIP-679), else
// CLUSTER_AUTHORIZATION_FAILED.
import { ErrorCode } from '../protocol/errors.js';
import { InitProducerIdApi } from '../protocol/messages/index.js';
import { CLUSTER_NAME } from '../security/acl.js';
import { MAX_TRANSACTION_TIMEOUT_MS } from '../coordinator/transaction-coordinator.js';
import { AclOperation, ResourceType, allowed, quietlyAllowed, requester } from './authorization.js';
import { storageFailure } from './storage-failure.js';
import { defineHandler, type RequestContext } from './types.js';

const MAX_EPOCH = 32767;

/** An idempotent producer: IDEMPOTENT_WRITE on the cluster (its denial is not logged, as Kafka) or WRITE on any topic. */
function mayProduceIdempotently(ctx: RequestContext): boolean {
  return quietlyAllowed(ctx, AclOperation.IDEMPOTENT_WRITE, ResourceType.CLUSTER, CLUSTER_NAME) || ctx.broker.authorizer.authorizeAny(requester(ctx), AclOperation.WRITE, ResourceType.TOPIC);
}

export default defineHandler({
  codec: InitProducerIdApi,
  minVersion: 0,
  maxVersion: 5,
  async handle(ctx, request) {
    const failed = (errorCode: number) => ({ throttleTimeMs: 0, errorCode, producerId: -1n, producerEpoch: -1 });
    if (request.transactionalId !== null) {
      if (!allowed(ctx, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, request.transactionalId)) return failed(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
      // Kafka refuses an empty transactional id; PostgreSQL text cannot hold a NUL character.
      if (request.transactionalId === '' || request.transactionalId.includes('\0')) return failed(ErrorCode.INVALID_REQUEST);
      if (request.transactionTimeoutMs <= 0 || request.transactionTimeoutMs > MAX_TRANSACTION_TIMEOUT_MS) return failed(ErrorCode.INVALID_TRANSACTION_TIMEOUT);
      let result;
      try {
        result = await ctx.broker.transactions.initProducerId(request.transactionalId, request.transactionTimeoutMs, request.producerId, request.producerEpoch);
      } catch (err) {
        return failed(storageFailure(ctx, err));
      }
      const errorCode = result.errorCode === ErrorCode.PRODUCER_FENCED && ctx.apiVersion < 4 ? ErrorCode.INVALID_PRODUCER_EPOCH : result.errorCode;
      if (errorCode !== ErrorCode.NONE) return failed(errorCode);
      return { throttleTimeMs: 0, errorCode, producerId: result.producerId, producerEpoch: result.producerEpoch };
    }
    if (!mayProduceIdempotently(ctx)) return failed(ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
    // KIP-360: an idempotent producer that lost track of its sequences asks for the next epoch of its id.
    if (request.producerId >= 0n && request.producerEpoch >= 0) {
      if (request.producerEpoch < MAX_EPOCH) return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, producerId: request.producerId, producerEpoch: request.producerEpoch + 1 };
    }
    let producerId;
    try {
      producerId = await ctx.broker.logs.allocateProducerId();
    } catch (err) {
      // Kafka's answer while a producer id block cannot be had.
      return failed(storageFailure(ctx, err, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS));
    }
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, producerId, producerEpoch: 0 };
  },
});
