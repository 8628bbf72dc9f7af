// DescribeTransactions (key 65), v0: the coordinator's state of each
// transactional id (kafka-transactions.sh describe). Unknown ids answer
// TRANSACTIONAL_ID_NOT_FOUND, the empty id INVALID_REQUEST, an id another
// broker coordinates (its slot is not held here) NOT_COORDINATOR. As Kafka
// (TransactionCoordinator.handleDescribeTransactions), an entry with an
// error carries only its id and the code: every other field keeps the
// spec's default (state "", zero timeout, start time, producer id and epoch).
// Authorization, as Kafka: DESCRIBE on the transactional id, else
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED; the answer names only the topics
// the requester may DESCRIBE.
import { ErrorCode } from '../protocol/errors.js';
import { DescribeTransactionsApi } from '../protocol/messages/index.js';
import { AclOperation, ResourceType, allowed } from './authorization.js';
import { authorizedNames } from './authorized-names.js';
import { defineHandler } from './types.js';

const failed = (transactionalId: string, errorCode: number) => ({
  errorCode,
  transactionalId,
  transactionState: '',
  transactionTimeoutMs: 0,
  transactionStartTimeMs: 0n,
  producerId: 0n,
  producerEpoch: 0,
  topics: [],
});

export default defineHandler({
  codec: DescribeTransactionsApi,
  minVersion: 0,
  maxVersion: 0,
  async handle(ctx, request) {
    const transactionStates = request.transactionalIds.map((transactionalId) => {
      if (!allowed(ctx, AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, transactionalId)) return failed(transactionalId, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
      if (transactionalId === '') return failed(transactionalId, ErrorCode.INVALID_REQUEST);
      if (!ctx.broker.transactions.serves(transactionalId)) return failed(transactionalId, ErrorCode.NOT_COORDINATOR);
      const meta = ctx.broker.transactions.describe(transactionalId);
      if (!meta) return failed(transactionalId, ErrorCode.TRANSACTIONAL_ID_NOT_FOUND);
      const describable = authorizedNames(
        ctx,
        AclOperation.DESCRIBE,
        ResourceType.TOPIC,
        [...meta.partitions.values()].map((p) => p.topic),
      );
      const byTopic = new Map<string, number[]>();
      for (const p of meta.partitions.values()) if (describable.has(p.topic)) byTopic.set(p.topic, [...(byTopic.get(p.topic) ?? []), p.partition]);
      return {
        errorCode: ErrorCode.NONE,
        transactionalId,
        transactionState: meta.state,
        transactionTimeoutMs: meta.timeoutMs,
        transactionStartTimeMs: BigInt(meta.startTimeMs),
        producerId: meta.producerId,
        producerEpoch: meta.producerEpoch,
        topics: [...byTopic].map(([topic, partitions]) => ({ topic, partitions: partitions.sort((a, b) => a - b) })),
      };
    });
    return { throttleTimeMs: 0, transactionStates };
  },
});
