// The lease a write of coordinator state is made under (groups, transactional
// ids): what the storage implementations check, in the write itself, before
// they change anything. Kafka's coordinators write through the leader of
// their __consumer_offsets / __transaction_state partition, fenced by its
// leader epoch (the coordinator epoch); here the slot's lease epoch is that.

/** The coordinator slot a write is made under: this broker instance's lease, at the epoch the writer loaded the slot's state with. */
export interface CoordinatorLease {
  slot: number;
  instanceId: string;
  epoch: bigint;
}

/** A write of coordinator state was refused: the slot's lease is no longer this broker's at that epoch, and nothing was written. */
export class LeaseLostError extends Error {
  constructor(readonly slot: number) {
    super(`coordinator slot ${slot} is no longer this broker's`);
  }
}
