// DescribeTransactions (key 65), v0: the coordinator's state of each
// transactional id (kafka-transactions.sh describe). Unknown ids answer
// TRANSACTIONAL_ID_NOT_FOUND.
import { ErrorCode } from '../protocol/errors.js';
import { DescribeTransactionsApi } from '../protocol/messages/index.js';
import { defineHandler } from './types.js';

export default defineHandler({
  codec: DescribeTransactionsApi,
  minVersion: 0,
  maxVersion: 0,
  async handle(ctx, request) {
    const transactionStates = request.transactionalIds.map((transactionalId) => {
      const meta = ctx.broker.transactions.describe(transactionalId);
      if (!meta) {
        return { errorCode: ErrorCode.TRANSACTIONAL_ID_NOT_FOUND, transactionalId, transactionState: '', transactionTimeoutMs: 0, transactionStartTimeMs: -1n, producerId: -1n, producerEpoch: -1, topics: [] };
      }
      const byTopic = new Map<string, number[]>();
      for (const p of meta.partitions.values()) byTopic.set(p.topic, [...(byTopic.get(p.topic) ?? []), p.partition]);
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
