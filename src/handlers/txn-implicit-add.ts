// Transactions version 2 (KIP-890 part 2): a transactional producer no longer
// sends AddPartitionsToTxn nor AddOffsetsToTxn; the partition leader adds the
// partition to the transaction on the producer's first transactional Produce
// (v12+), and the group coordinator adds the group on TxnOffsetCommit v5, as
// Kafka's brokers do by sending AddPartitionsToTxn v5 (verifyOnly false) to
// the transaction's coordinator (AddPartitionsToTxnManager). The coordinator
// may be this broker or another one (coordinator/txn-add-requests.ts); these
// functions are the handlers' one way to it, and give the answers Kafka's
// broker gives its client when the add fails.
import { ErrorCode, errorName } from '../protocol/errors.js';
import type { RequestContext } from './types.js';

/** Adds the produced partitions to the producer's transaction: the coordinator's error per partition, in order (NONE when added or already in it). */
export function addProducedPartitionsToTransaction(
  ctx: RequestContext,
  transactionalId: string,
  producerId: bigint,
  producerEpoch: number,
  partitions: { topic: string; partition: number }[],
): Promise<number[]> {
  return ctx.broker.txnAdds.addPartitions(transactionalId, producerId, producerEpoch, partitions);
}

/**
 * What a Produce answers for a partition the coordinator did not add, as
 * Kafka's ReplicaManager after the verification: a fenced epoch is
 * INVALID_PRODUCER_EPOCH (what producers expect); errors that only say the
 * coordinator could not answer now (completing the transaction, moving, not
 * reached) are NOT_ENOUGH_REPLICAS, which every client retries without a
 * metadata refresh; the rest as the coordinator gave them.
 */
export function produceAddError(errorCode: number): { errorCode: number; errorMessage: string | null } {
  switch (errorCode) {
    case ErrorCode.PRODUCER_FENCED:
      return { errorCode: ErrorCode.INVALID_PRODUCER_EPOCH, errorMessage: null };
    case ErrorCode.TRANSACTION_ABORTABLE:
    case ErrorCode.INVALID_TXN_STATE:
      return { errorCode: ErrorCode.INVALID_TXN_STATE, errorMessage: 'Partition was not added to the transaction' };
    case ErrorCode.CONCURRENT_TRANSACTIONS:
    case ErrorCode.NETWORK_EXCEPTION:
    case ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
    case ErrorCode.COORDINATOR_NOT_AVAILABLE:
    case ErrorCode.NOT_COORDINATOR:
      return { errorCode: ErrorCode.NOT_ENOUGH_REPLICAS, errorMessage: `Unable to verify the partition has been added to the transaction. Underlying error: ${errorName(errorCode)}` };
    default:
      return { errorCode, errorMessage: null };
  }
}

/**
 * TxnOffsetCommit v5: adds the group to the producer's transaction at its
 * coordinator. The coordinator's error, with Kafka's group coordinator's
 * translation of the ones that only say it was not reached: a timeout
 * (NETWORK_EXCEPTION) is COORDINATOR_LOAD_IN_PROGRESS, retried without a
 * coordinator lookup; the transaction's coordinator moving is
 * COORDINATOR_NOT_AVAILABLE (NOT_COORDINATOR would say the group moved).
 */
export async function addOffsetsToTransaction(ctx: RequestContext, transactionalId: string, producerId: bigint, producerEpoch: number, groupId: string): Promise<number> {
  const errorCode = await ctx.broker.txnAdds.addOffsets(transactionalId, producerId, producerEpoch, groupId);
  if (errorCode === ErrorCode.NETWORK_EXCEPTION) return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS;
  if (errorCode === ErrorCode.NOT_COORDINATOR) return ErrorCode.COORDINATOR_NOT_AVAILABLE;
  return errorCode;
}
