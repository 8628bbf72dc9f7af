// What the broker's start-up and heartbeat need from storage: the cluster id
// and the registry of live broker processes (one registration per node id).
// Implementations match it structurally, so storage never imports the domain.
import type { BrokerRow, Registration } from '../storage/cluster-types.js';

export type { BrokerRow, Registration } from '../storage/cluster-types.js';

export interface ClusterStorage {
  /** The stored cluster id, storing `candidate` if there is none yet. */
  ensureClusterId(candidate: string): Promise<string>;
  registration(nodeId: number, livenessMs: number): Promise<Registration | null>;
  /**
   * Registers the instance under its node id unless another instance holds a
   * live registration of it (seen within `livenessMs`, and still connected).
   * Returns whether it did.
   */
  registerBroker(broker: BrokerRow, instanceId: string, livenessMs: number): Promise<boolean>;
  /** Refreshes the instance's registration; false when the node id is registered by another instance now. */
  heartbeat(nodeId: number, instanceId: string): Promise<boolean>;
  unregisterBroker(nodeId: number, instanceId: string): Promise<void>;
  /** The brokers seen within `maxAgeMs`, and the node ids of every registered one (live or not), by node id. */
  liveBrokers(maxAgeMs: number): Promise<{ live: BrokerRow[]; registered: number[] }>;
}
