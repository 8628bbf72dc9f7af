// The registry's rows as every storage implementation keeps them (the
// interface start-up and the heartbeat use is coordinator/cluster-storage.ts).

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
