// Transactions version 2 (KIP-890 part 2): a transactional producer no longer
// sends AddPartitionsToTxn; the partition leader adds the partition to the
// transaction on the producer's first transactional Produce (v12+), as
// Kafka's leader does by sending AddPartitionsToTxn v5 (verifyOnly false) to
// the transaction's coordinator (AddPartitionsToTxnManager).
// The seam: today the coordinator of every transactional id is this process's
// TransactionCoordinator, so this is a local call. Where transaction
// coordination is spread over brokers, this function is the one place that
// must reach the coordinator of `transactionalId` when it is another broker.
import type { RequestContext } from './types.js';

/** Adds the produced partitions to the producer's transaction: the coordinator's error per partition, in order (NONE when added or already in it). */
export function addProducedPartitionsToTransaction(
  ctx: RequestContext,
  transactionalId: string,
  producerId: bigint,
  producerEpoch: number,
  partitions: { topic: string; partition: number }[],
): Promise<number[]> {
  return ctx.broker.transactions.addPartitions(transactionalId, producerId, producerEpoch, partitions, false);
}
