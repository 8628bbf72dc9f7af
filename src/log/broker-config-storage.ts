// What the broker configs need from storage: the dynamic layers, keyed by
// Kafka's resource name ('' for the cluster default, else a node id).

export interface BrokerConfigStorage {
  /** The cluster default and this broker's own dynamic configs ({} where none is stored). */
  load(nodeId: number): Promise<{ clusterDefault: Record<string, string>; broker: Record<string, string> }>;
  /**
   * Replaces a resource's configs with what `change` makes of the stored ones
   * ({} when none), atomically, and tells every broker. `change` returns null
   * to leave them as they are.
   */
  update(resourceName: string, change: (current: Record<string, string>) => Record<string, string> | null): Promise<void>;
}
