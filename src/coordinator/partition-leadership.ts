// Which broker leads which partition, when several brokers share the
// database. A partition's leader is the only broker that serves its client
// requests (Produce, Fetch, ListOffsets, OffsetForLeaderEpoch,
// DeleteRecords); the others answer NOT_LEADER_OR_FOLLOWER naming it, the
// code on which clients refresh their metadata. Leadership is a lease in
// PostgreSQL (partitions.leader_instance, migration 0018) held while the
// leading instance's registration is live and it has a session open: a
// broker killed with kill -9 loses its sessions with its process, so its
// partitions are free at once, and the survivors see that within a probe
// (PROBE_MS). Every change of leader bumps the partition's leader epoch.
//
// The live brokers split each topic's partitions evenly (12 over 3 brokers:
// 4 each), and so all partitions, stickily: a leader keeps its partitions up to its share, so a broker that
// joins takes only its share, each of the others handing over only what it
// holds beyond its own. A partition is handed over once its queued appends
// have committed (its quiet moment), released in PostgreSQL, and taken by
// the broker it now belongs to, which reads its state back from PostgreSQL
// before serving it: while a broker leads a partition, its write-side cache
// (producers' sequences, transaction index) is authoritative.
import type { LogManager } from '../log/log-manager.js';
import type { Logger } from '../observability/logger.js';
import { LogCode } from '../observability/log-codes.js';
import type { LeadershipStore } from '../storage/pg/leadership-store.js';
import { CoalescedTask } from './coalesced-task.js';

/** Leadership ends locally this long before this broker's registration lapses in the database, so two brokers never lead one partition. */
const LEASE_SAFETY_MS = 1000;
/** How often the live lease holders are looked at: a killed broker's partitions move within about this long. */
const PROBE_MS = 1000;

/** A partition's leader as Metadata names it: -1 when no live broker leads it. */
export interface PartitionLeader {
  nodeId: number;
  epoch: number;
}

interface KnownLeader extends PartitionLeader {
  /** Monotonic time the leader's lease lapses at (0: nobody leads the partition). */
  until: number;
}

/**
 * The leader each partition should have, given each partition's topic and
 * live leader (-1 for none), partitions of a topic next to each other, and
 * the live node ids. Within each topic every node gets ⌊n/k⌋ or ⌈n/k⌉ of
 * its partitions, the larger shares going to the nodes that lead fewest
 * partitions overall so far (ties: those that lead most of the topic now,
 * then the lowest id), so both each topic and the whole are spread evenly;
 * a leader keeps its partitions up to its share, and the rest go
 * round-robin to the nodes below theirs. A pure function of what every
 * broker reads, so all agree on it.
 */
export function assignLeaders(partitions: readonly { topicId: string; leader: number }[], nodes: readonly number[]): number[] {
  const assigned = partitions.map(() => -1);
  const sorted = [...new Set(nodes)].sort((a, b) => a - b);
  if (sorted.length === 0) return assigned;
  const overall = new Map(sorted.map((node) => [node, 0]));
  for (let from = 0; from < partitions.length;) {
    let to = from;
    while (to < partitions.length && partitions[to]!.topicId === partitions[from]!.topicId) to++;
    const leading = new Map(sorted.map((node) => [node, 0]));
    for (let i = from; i < to; i++) if (leading.has(partitions[i]!.leader)) leading.set(partitions[i]!.leader, leading.get(partitions[i]!.leader)! + 1);
    const base = Math.floor((to - from) / sorted.length);
    const larger = (to - from) % sorted.length;
    const ranked = [...sorted].sort((a, b) => overall.get(a)! - overall.get(b)! || leading.get(b)! - leading.get(a)! || a - b);
    const share = new Map(ranked.map((node, i) => [node, base + (i < larger ? 1 : 0)]));
    const held = new Map(sorted.map((node) => [node, 0]));
    for (let i = from; i < to; i++) {
      const l = partitions[i]!.leader;
      if (share.has(l) && held.get(l)! < share.get(l)!) {
        assigned[i] = l;
        held.set(l, held.get(l)! + 1);
      }
    }
    let next = 0;
    for (let i = from; i < to; i++) {
      if (assigned[i] !== -1) continue;
      while (held.get(sorted[next % sorted.length]!)! >= share.get(sorted[next % sorted.length]!)!) next++;
      const node = sorted[next++ % sorted.length]!;
      assigned[i] = node;
      held.set(node, held.get(node)! + 1);
    }
    for (const [node, n] of held) overall.set(node, overall.get(node)! + n);
    from = to;
  }
  return assigned;
}

export interface LeadershipOptions {
  store: LeadershipStore;
  logs: LogManager;
  nodeId: number;
  /** This broker process: the holder its leases name. */
  instanceId: string;
  /** How long a broker's registration lasts without a heartbeat (its leases last as long). */
  livenessMs: number;
  log: Logger;
  /** Monotonic milliseconds (performance.now by default). */
  now?: () => number;
}

export class PartitionLeadership {
  /** Partitions led here: topic id → partition → leader epoch. */
  private readonly owned = new Map<string, Map<number, number>>();
  /** Monotonic time until which this broker's leases are certainly still its own. */
  private ownedUntil = 0;
  /** Every partition's leader as last read: topic id → by partition. */
  private leaders = new Map<string, KnownLeader[]>();
  /** The live lease holders the probe saw last. */
  private holdersSeen = '';
  private stopped = false;
  private readonly rebalances = new CoalescedTask(
    () => this.runOnce(),
    () => this.stopped,
  );
  private probeTimer: NodeJS.Timeout | null = null;

  private readonly o: LeadershipOptions;
  private readonly now: () => number;

  constructor(options: LeadershipOptions) {
    this.o = options;
    this.now = options.now ?? (() => performance.now());
  }

  /** Whether this broker leads the partition now: an in-memory look-up, made on every client request for it. */
  leads(topicId: string, partition: number): boolean {
    return this.owned.get(topicId)?.has(partition) === true && this.now() < this.ownedUntil;
  }

  /** The partition's live leader and its epoch (nodeId -1: none now; epoch -1: never read). */
  leaderOf(topicId: string, partition: number): PartitionLeader {
    const epoch = this.owned.get(topicId)?.get(partition);
    if (epoch !== undefined && this.now() < this.ownedUntil) return { nodeId: this.o.nodeId, epoch };
    const known = this.leaders.get(topicId)?.[partition];
    if (known && known.nodeId !== this.o.nodeId && this.now() < known.until) return { nodeId: known.nodeId, epoch: known.epoch };
    return { nodeId: -1, epoch: known?.epoch ?? -1 };
  }

  /** The node id that led the partition last, live or not (-1: never led). */
  lastLeader(topicId: string, partition: number): number {
    return this.leaders.get(topicId)?.[partition]?.nodeId ?? -1;
  }

  /** Partitions led per node id, as last read (the CLI and /metrics read PostgreSQL instead; this is for tests and logs). */
  counts(): Map<number, number> {
    const counts = new Map<number, number>();
    for (const [topicId, leaders] of this.leaders) {
      leaders.forEach((_, partition) => {
        const { nodeId } = this.leaderOf(topicId, partition);
        if (nodeId >= 0) counts.set(nodeId, (counts.get(nodeId) ?? 0) + 1);
      });
    }
    return counts;
  }

  /** Makes sure the topic's partitions have been read (a topic created since is read, and its partitions taken where they are this broker's). */
  async known(topicId: string, partitionCount: number): Promise<void> {
    if ((this.leaders.get(topicId)?.length ?? 0) >= partitionCount) return;
    await this.rebalance();
  }

  /** Starts the probe that notices a broker gone (or come) within PROBE_MS. */
  start(): void {
    if (this.stopped || this.probeTimer) return;
    this.probeTimer = setInterval(() => this.probe(), PROBE_MS);
    this.probeTimer.unref();
  }

  private probe(): void {
    const asked = this.now();
    this.o.store
      .holders(this.o.livenessMs)
      .then((holders) => {
        const self = holders.find((h) => h.instanceId === this.o.instanceId);
        if (self && this.owned.size > 0) this.ownedUntil = Math.max(this.ownedUntil, asked + self.expiresInMs - LEASE_SAFETY_MS);
        const seen = holders.map((h) => h.instanceId).join(',');
        if (seen !== this.holdersSeen) return this.rebalance();
      })
      .catch((err: Error) => this.o.log.warn({ err: err.message, code: LogCode.LEADERSHIP_FAILED }, 'reading the partition leaders failed'));
  }

  /** Reads the leaders, hands over what is beyond this broker's share and takes what is its own; one run at a time (a call during a run schedules one more). */
  rebalance(): Promise<void> {
    return this.rebalances.run();
  }

  private async runOnce(): Promise<void> {
    if (this.stopped) return;
    const { store, logs, nodeId, instanceId, livenessMs, log } = this.o;
    try {
      const asked = this.now();
      const [holders, rows] = await Promise.all([store.holders(livenessMs), store.leaders(livenessMs)]);
      this.holdersSeen = holders.map((h) => h.instanceId).join(',');
      const self = holders.find((h) => h.instanceId === instanceId);
      // Not registered (yet, or lapsed): this broker leads nothing, and the others share the partitions.
      this.ownedUntil = self ? asked + self.expiresInMs - LEASE_SAFETY_MS : 0;
      const nodes = holders.filter((h) => h.instanceId === instanceId || h.nodeId !== nodeId).map((h) => h.nodeId);
      const assigned = assignLeaders(
        rows.map((r) => ({ topicId: r.topicId, leader: r.expiresInMs > 0 ? r.nodeId : -1 })),
        nodes,
      );
      const byKey = new Map(rows.map((r, i) => [`${r.topicId}:${r.partition}`, { row: r, assigned: assigned[i]! }]));

      // Led here, but gone, taken by another instance meanwhile, or beyond this broker's share: handed over once quiet.
      const handOver: { topicId: string; partition: number }[] = [];
      for (const [topicId, partitions] of this.owned) {
        for (const [partition, epoch] of partitions) {
          const entry = byKey.get(`${topicId}:${partition}`);
          const stillOurs = entry && entry.row.nodeId === nodeId && entry.row.epoch === epoch && entry.row.expiresInMs > 0;
          if (stillOurs && entry.assigned === nodeId && self) continue;
          partitions.delete(partition);
          if (stillOurs) handOver.push({ topicId, partition });
        }
        if (partitions.size === 0) this.owned.delete(topicId);
      }
      if (handOver.length > 0) {
        // Appends queued before the hand-over commit first: the next leader reads them back.
        await Promise.all(handOver.map((p) => logs.loadedPartition(p.topicId, p.partition)).flatMap((p) => (p ? [logs.flushed(p)] : [])));
        await store.release(instanceId, handOver);
        log.info({ partitions: handOver.length }, 'handed partitions over to the brokers they belong to');
      }

      const wanted = self ? rows.filter((r, i) => assigned[i] === nodeId && !this.owned.get(r.topicId)?.has(r.partition)) : [];
      const claimed = await store.claim(nodeId, instanceId, wanted, livenessMs);
      for (const c of claimed) {
        // A partition this broker had loaded is read back (another broker may have appended while it led); one not loaded is read on load.
        const loaded = logs.loadedPartition(c.topicId, c.partition);
        if (loaded) await logs.takeLeadership(loaded);
        let partitions = this.owned.get(c.topicId);
        if (!partitions) this.owned.set(c.topicId, (partitions = new Map()));
        partitions.set(c.partition, c.epoch);
      }
      if (claimed.length > 0) log.info({ partitions: claimed.length, led: this.ledCount() }, 'took partition leadership');

      const leaders = new Map<string, KnownLeader[]>();
      for (const r of rows) {
        let ofTopic = leaders.get(r.topicId);
        if (!ofTopic) leaders.set(r.topicId, (ofTopic = []));
        ofTopic[r.partition] = { nodeId: r.nodeId, epoch: r.epoch, until: r.expiresInMs > 0 ? asked + r.expiresInMs : 0 };
      }
      for (const c of claimed) leaders.get(c.topicId)![c.partition] = { nodeId, epoch: c.epoch, until: this.ownedUntil };
      for (const p of handOver) leaders.get(p.topicId)![p.partition]!.until = 0;
      this.leaders = leaders;
    } catch (err) {
      log.warn({ err: (err as Error).message, code: LogCode.LEADERSHIP_FAILED }, 'partition leadership could not be read or taken; led partitions stop being served when the lease lapses');
    }
  }

  private ledCount(): number {
    let n = 0;
    for (const partitions of this.owned.values()) n += partitions.size;
    return n;
  }

  /** Graceful shutdown: hands every partition over at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.probeTimer) clearInterval(this.probeTimer);
    await this.rebalances.settled();
    this.owned.clear();
    await this.o.store.release(this.o.instanceId, null).catch(() => {});
  }
}
