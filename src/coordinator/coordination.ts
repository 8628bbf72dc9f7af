// Which broker coordinates which consumer group, when several brokers share
// the database. Groups fall into 50 slots as Kafka's fall into the 50
// partitions of __consumer_offsets (abs(String.hashCode) % 50); the live
// brokers split the slots by rendezvous hashing, and each slot is served
// only by the broker instance holding its lease in PostgreSQL. A broker that
// leaves or dies loses its leases (released at shutdown, expired otherwise)
// and the others take its slots over, restoring the groups from the
// database — the same failover a Kafka coordinator goes through.
//
// A live holder keeps its slots: no broker takes a slot whose lease is live.
// The slots the hashing gives to another live broker (one that joined or came
// back) are handed to it by their holder, and only at a quiet moment — no
// group of the slot in a rebalance (SlotOwner.rebalancing) — as Kafka moves a
// coordinator back with a preferred-leader election rather than in the
// middle of a failover. Moving a quiet group costs its members one
// NOT_COORDINATOR and a FindCoordinator: the next holder restores it whole.
import type { Logger } from '../observability/logger.js';
import type { CoordinatorStore } from '../storage/pg/coordinator-store.js';
import { LogCode } from '../observability/log-codes.js';
import { CoalescedTask } from './coalesced-task.js';

export const COORDINATOR_SLOTS = 50;
/** Ownership ends locally this long before the lease expires in the database, so two brokers never serve one slot. */
const LEASE_SAFETY_MS = 1000;
/** Another broker's lease is claimed this long after it should have lapsed (the database's clock decides). */
const EXPIRY_MARGIN_MS = 20;

/** A broker of the registry and the monotonic time (this process's clock) its registration lapses at. */
export interface LiveBroker {
  nodeId: number;
  until: number;
}

/** Kafka's partitionFor: Utils.abs(String.hashCode) % slots, over UTF-16 code units. */
export function slotOf(key: string): number {
  let h = 0;
  for (let i = 0; i < key.length; i++) h = (Math.imul(31, h) + key.charCodeAt(i)) | 0;
  return (h & 0x7fffffff) % COORDINATOR_SLOTS;
}

/** A well-mixed weight per (slot, node): the node with the highest weight owns the slot, so a joining or leaving node moves only its share. */
function weight(slot: number, nodeId: number): number {
  let x = Math.imul(slot + 1, 0x9e3779b1) ^ Math.imul(nodeId + 1, 0x85ebca6b);
  x ^= x >>> 16;
  x = Math.imul(x, 0x7feb352d);
  x ^= x >>> 15;
  x = Math.imul(x, 0x846ca68b);
  x ^= x >>> 16;
  return x >>> 0;
}

export function desiredOwner(slot: number, nodeIds: readonly number[]): number {
  let best = -1;
  let bestWeight = -1;
  for (const node of nodeIds) {
    const w = weight(slot, node);
    if (w > bestWeight || (w === bestWeight && node < best)) [best, bestWeight] = [node, w];
  }
  return best;
}

/** What holds state per slot (the group and transaction coordinators): loads it before the slot is served, drops it after. */
export interface SlotOwner {
  /** Loads the slots' state; `leases` gives each slot's lease epoch, which every write of that state is then fenced by (the coordinator epoch). */
  acquire(leases: ReadonlyMap<number, bigint>): Promise<void>;
  release(slots: ReadonlySet<number>): Promise<void>;
  /** Whether a group of the slot is in a rebalance now (its slot is then not handed over). */
  rebalancing?(slot: number): boolean;
  /** Given once, when added: how the owner reports a write it made under a slot's lease that the database refused. */
  onLeaseLost?(report: (slot: number) => void): void;
}

export interface CoordinationOptions {
  store: CoordinatorStore;
  nodeId: number;
  /** This broker process: the holder its leases name. */
  instanceId: string;
  /** How long a slot's lease lasts without renewal. */
  leaseMs: number;
  /** How long a broker's registration lasts without a heartbeat (the registry's liveness). */
  livenessMs: number;
  log: Logger;
  /** Monotonic milliseconds (performance.now by default). */
  now?: () => number;
}

export class Coordination {
  /** Slots served here, with the lease epoch their state was loaded under. */
  private readonly owned = new Map<number, bigint>();
  /** Monotonic time until which the owned leases are certainly still ours. */
  private ownedUntil = 0;
  /** Live lease holders as last read: slot → node id and the monotonic time its lease lapses at (never later than in the database). */
  private holders = new Map<number, { nodeId: number; until: number }>();
  private live: LiveBroker[] = [];
  private readonly owners: SlotOwner[] = [];
  private stopped = false;
  private readonly rebalances = new CoalescedTask(
    () => this.runOnce(),
    () => this.stopped,
  );
  /** Runs a rebalance when another broker's lease lapses, so its slots are taken then rather than at the next heartbeat. */
  private expiryTimer: NodeJS.Timeout | null = null;

  private readonly store: CoordinatorStore;
  readonly nodeId: number;
  private readonly instanceId: string;
  private readonly leaseMs: number;
  private readonly livenessMs: number;
  private readonly log: Logger;
  private readonly now: () => number;

  constructor(options: CoordinationOptions) {
    this.store = options.store;
    this.nodeId = options.nodeId;
    this.instanceId = options.instanceId;
    this.leaseMs = options.leaseMs;
    this.livenessMs = options.livenessMs;
    this.log = options.log;
    this.now = options.now ?? (() => performance.now());
  }

  addOwner(owner: SlotOwner): void {
    this.owners.push(owner);
    owner.onLeaseLost?.((slot) => this.leaseLost(slot));
  }

  /**
   * A write under the slot's lease was refused: another broker holds it now.
   * The slot stops being served at once (its groups are answered
   * NOT_COORDINATOR), the lease holders are read again so FindCoordinator
   * names the new one, and the slot is taken back, its state reloaded, only
   * when a later renewal wins its lease again.
   */
  private leaseLost(slot: number): void {
    if (!this.owned.has(slot)) return;
    this.drop(new Set([slot]))
      .then(() => this.rebalance(this.live))
      .catch((err: Error) => this.log.warn({ err: err.message, slot, code: LogCode.COORDINATOR_LEASE_FAILED }, 'dropping a lost coordinator slot failed'));
  }

  /** Whether this broker serves the key's group now. */
  owns(key: string): boolean {
    return this.owned.has(slotOf(key)) && this.now() < this.ownedUntil;
  }

  /**
   * The node id FindCoordinator names for the key: the holder of the slot's
   * lease while both its lease and its registration are live, else the live
   * broker that takes the slot next. A broker whose lease lapsed is never
   * named, even before the lease is read again.
   */
  coordinatorOf(key: string): number {
    const slot = slotOf(key);
    if (this.owns(key)) return this.nodeId;
    const nodes = this.nodes();
    const holder = this.holders.get(slot);
    if (holder && holder.nodeId !== this.nodeId && this.now() < holder.until && nodes.includes(holder.nodeId)) return holder.nodeId;
    return desiredOwner(slot, nodes);
  }

  /** The brokers whose registration has not lapsed, and this one. */
  private nodes(): number[] {
    const now = this.now();
    const nodes = this.live.filter((b) => now < b.until).map((b) => b.nodeId);
    return nodes.includes(this.nodeId) ? nodes : [...nodes, this.nodeId];
  }

  /** Renews this broker's leases, takes the free slots that are its own and hands others back when quiet; runs one at a time (a call during a run schedules one more). */
  rebalance(live: readonly LiveBroker[]): Promise<void> {
    this.live = [...live];
    return this.rebalances.run();
  }

  private async runOnce(): Promise<void> {
    if (this.stopped) return;
    const nodes = this.nodes();
    try {
      // The hashing gives these to another live broker: handed over only while none of their groups is rebalancing.
      const handBack = new Set([...this.owned.keys()].filter((s) => desiredOwner(s, nodes) !== this.nodeId && !this.owners.some((o) => o.rebalancing?.(s))));
      if (handBack.size > 0) {
        await this.drop(handBack);
        await this.store.release(this.instanceId, [...handBack]);
        this.log.info({ slots: handBack.size, owned: this.owned.size }, 'handed quiet coordinator slots to the brokers they belong to');
      }
      // Renew what is held; take this broker's own slots where they are free (the database refuses live leases of others).
      const wanted = new Set(this.owned.keys());
      for (let slot = 0; slot < COORDINATOR_SLOTS; slot++) if (desiredOwner(slot, nodes) === this.nodeId) wanted.add(slot);
      const started = this.now();
      const leases = await this.store.claim(this.nodeId, this.instanceId, [...wanted], this.leaseMs, this.livenessMs);
      const held = new Map(leases.map((l) => [l.slot, l.epoch]));
      // Owned slots not renewed, or held meanwhile by another broker (epoch moved): their state is stale.
      const stale = new Set([...this.owned.keys()].filter((s) => held.get(s) !== this.owned.get(s)));
      if (stale.size > 0) await this.drop(stale);
      this.ownedUntil = started + this.leaseMs - LEASE_SAFETY_MS;
      const fresh = new Map([...held].filter(([s]) => !this.owned.has(s)));
      if (fresh.size > 0) {
        for (const owner of this.owners) await owner.acquire(fresh);
        for (const [slot, epoch] of fresh) this.owned.set(slot, epoch);
        this.log.info({ slots: fresh.size, owned: this.owned.size }, 'took over coordinator slots');
      }
      // Measured from before the query: the local deadline is never later than the database's.
      const asked = this.now();
      this.holders = new Map((await this.store.holders()).map((h) => [h.slot, { nodeId: h.nodeId, until: asked + h.expiresInMs }]));
      this.scheduleExpiry();
    } catch (err) {
      this.log.warn({ err: (err as Error).message, code: LogCode.COORDINATOR_LEASE_FAILED }, 'coordinator lease renewal failed; slots stop being served when the leases lapse');
    }
  }

  /** Wakes up just after the first of the other brokers' leases lapses (a dead broker's; live ones renew before). */
  private scheduleExpiry(): void {
    if (this.expiryTimer) clearTimeout(this.expiryTimer);
    this.expiryTimer = null;
    const others = [...this.holders.entries()].filter(([slot, h]) => h.nodeId !== this.nodeId || !this.owned.has(slot)).map(([, h]) => h.until);
    if (others.length === 0 || this.stopped) return;
    this.expiryTimer = setTimeout(
      () => {
        this.expiryTimer = null;
        this.rebalance(this.live).catch(() => {});
      },
      Math.max(0, Math.min(...others) - this.now()) + EXPIRY_MARGIN_MS,
    );
    this.expiryTimer.unref();
  }

  private async drop(slots: ReadonlySet<number>): Promise<void> {
    for (const slot of slots) this.owned.delete(slot);
    for (const owner of this.owners) await owner.release(slots);
  }

  /** Graceful shutdown: hands every slot over at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.expiryTimer) clearTimeout(this.expiryTimer);
    await this.rebalances.settled();
    const slots = new Set(this.owned.keys());
    await this.drop(slots);
    await this.store.release(this.instanceId, [...slots]).catch(() => {});
  }
}
