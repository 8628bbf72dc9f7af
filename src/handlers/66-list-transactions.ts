// ListTransactions (key 66), v0-2: the transactional ids this coordinator
// knows, filtered by state and producer id. As Kafka, each broker lists the
// ids of the coordinator slots it holds; the admin client asks every broker. v1: duration filter (running
// longer than, KIP-994). v2: transactional id pattern (a regular expression, KIP-1152).
// Authorization, as Kafka: only the transactional ids the requester may
// DESCRIBE are listed (Kafka logs the denials of the others).
import { ErrorCode } from '../protocol/errors.js';
import { ListTransactionsApi } from '../protocol/messages/index.js';
import { TXN_STATES, type TxnState } from '../coordinator/transaction-coordinator.js';
import { AclOperation, ResourceType, allowed } from './authorization.js';
import { defineHandler } from './types.js';

export default defineHandler({
  codec: ListTransactionsApi,
  minVersion: 0,
  maxVersion: 2,
  async handle(ctx, request) {
    const unknownStateFilters = request.stateFilters.filter((s) => !TXN_STATES.includes(s as TxnState));
    const states = new Set(request.stateFilters);
    const producerIds = new Set(request.producerIdFilters);
    let pattern: RegExp | null = null;
    if (ctx.apiVersion >= 2 && request.transactionalIdPattern !== null && request.transactionalIdPattern !== '') {
      try {
        pattern = new RegExp(`^(?:${request.transactionalIdPattern})$`);
      } catch {
        return { throttleTimeMs: 0, errorCode: ErrorCode.INVALID_REGULAR_EXPRESSION, unknownStateFilters: [], transactionStates: [] };
      }
    }
    const now = Date.now();
    const transactionStates = ctx.broker.transactions
      .list()
      .filter((t) => states.size === 0 || states.has(t.state))
      .filter((t) => producerIds.size === 0 || producerIds.has(t.producerId))
      // As Kafka: running longer than the filter, measured from the start time, -1 (Empty) included.
      .filter((t) => ctx.apiVersion < 1 || request.durationFilter < 0n || BigInt(now - t.startTimeMs) > request.durationFilter)
      .filter((t) => !pattern || pattern.test(t.transactionalId))
      .filter((t) => allowed(ctx, AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, t.transactionalId))
      .map((t) => ({ transactionalId: t.transactionalId, producerId: t.producerId, transactionState: t.state }));
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, unknownStateFilters, transactionStates };
  },
});
