// A node id belongs to one live broker at a time, as Kafka's controller
// refuses a second registration of a broker id whose session is still live
// (DuplicateBrokerRegistrationException). Two brokers sharing a database
// under one node id would each take the other's coordinator slots and no
// group would settle. A broker restarted after a crash may find its previous
// registration not yet lapsed: the killed process's sessions are gone (the
// kernel closed its sockets), so the new broker starts at once. A
// registration whose instance is still connected is watched: if its
// heartbeat moves, that broker is alive and start-up is refused naming it;
// if not (a hung process), the new broker starts once it lapses.
import type { Logger } from './observability/logger.js';
import type { ClusterStorage, Registration } from './coordinator/cluster-storage.js';

const POLL_MS = 250;

export class DuplicateNodeIdError extends Error {
  constructor(nodeId: number, holder: Pick<Registration, 'instanceId' | 'host' | 'port' | 'startedAt'>) {
    super(
      `Node id ${nodeId} is in use by a live broker: instance ${holder.instanceId} at ${holder.host}:${holder.port}, started ${holder.startedAt.toISOString()} ` +
        `(another broker is registered with that broker id). Give every broker sharing the database its own node id: set PGKAFKA_NODE_ID (config file: nodeId).`,
    );
    this.name = 'DuplicateNodeIdError';
  }
}

/** Returns once no other live broker holds `nodeId`'s registration; throws DuplicateNodeIdError when one does. */
export async function awaitNodeId(store: ClusterStorage, nodeId: number, instanceId: string, livenessMs: number, log: Logger): Promise<void> {
  let first: Registration | null = null;
  for (;;) {
    const reg = await store.registration(nodeId, livenessMs);
    if (!reg || !reg.live || reg.instanceId === instanceId) return;
    if (!reg.connected) {
      log.info({ nodeId, instance: reg.instanceId }, 'node id registered by an earlier broker that is gone (no session left): taking it over');
      return;
    }
    if (!first) {
      first = reg;
      log.info(
        { nodeId, instance: reg.instanceId, host: reg.host, port: reg.port, lapsesInMs: Math.round(reg.expiresInMs) },
        'node id still registered by an earlier broker: starting once its registration lapses, unless that broker is alive',
      );
    } else if (reg.instanceId !== first.instanceId || reg.lastSeen.getTime() !== first.lastSeen.getTime()) {
      throw new DuplicateNodeIdError(nodeId, reg);
    }
    await new Promise((r) => setTimeout(r, Math.min(POLL_MS, reg.expiresInMs + 10)));
  }
}
