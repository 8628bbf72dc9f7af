// What the broker's start-up and heartbeat need from storage: the cluster id
// and the registry of live broker processes (one registration per node id).

export interface BrokerRow {
  nodeId: number;
  host: string;
  port: number;
  rack: string | null;
  /** The advertised endpoint per listener name (null: registered by a broker before listeners existed). */
  listeners?: Record<string, { host: string; port: number }> | null;
  /** How long the registration has left before it lapses, by the storage's clock (rows read from the registry). */
  expiresInMs?: number;
}

/** A node id's registration as stored: which instance holds it and whether it is still live. */
export interface Registration {
  nodeId: number;
  instanceId: string;
  host: string;
  port: number;
  startedAt: Date;
  lastSeen: Date;
  live: boolean;
  expiresInMs: number;
  /** Whether the registered instance is still connected to the storage (a killed one is not). */
  connected: boolean;
}

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
