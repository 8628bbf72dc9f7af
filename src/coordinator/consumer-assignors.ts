// The server-side assignors of KIP-848 consumer groups, as Kafka's group
// coordinator has them: `uniform` (the default: balanced and sticky) and
// `range` (per topic, contiguous ranges in member order). An assignor sees
// the members' subscriptions (as topic ids) and the group's current target
// assignment, and returns the next target assignment. Partitions are keyed by
// topic id, as the ConsumerGroupHeartbeat API names them.

/** Topic id → partitions. */
export type TopicPartitions = Map<string, Set<number>>;

export interface AssignmentMember {
  memberId: string;
  instanceId: string | null;
  subscribedTopicIds: ReadonlySet<string>;
  /** The member's partitions in the current target assignment. */
  target: TopicPartitions;
}

export interface AssignmentSpec {
  /** In the group's member order. */
  members: AssignmentMember[];
  /** Topic id → partition count, for every subscribed topic that exists. */
  partitionCounts: ReadonlyMap<string, number>;
}

export type Assignor = (spec: AssignmentSpec) => Map<string, TopicPartitions>;

export const DEFAULT_ASSIGNOR = 'uniform';

/**
 * Kafka's subscription type: homogeneous when every member is subscribed to
 * the same topics (the uniform assignor's simpler path).
 */
function isHomogeneous(members: readonly AssignmentMember[]): boolean {
  const first = members[0]!.subscribedTopicIds;
  return members.every((m) => m.subscribedTopicIds.size === first.size && [...first].every((t) => m.subscribedTopicIds.has(t)));
}

function copy(partitions: TopicPartitions): TopicPartitions {
  return new Map([...partitions].map(([t, ps]) => [t, new Set(ps)]));
}

function add(partitions: TopicPartitions, topicId: string, partition: number): void {
  let set = partitions.get(topicId);
  if (!set) partitions.set(topicId, (set = new Set()));
  set.add(partition);
}

const count = (partitions: TopicPartitions): number => [...partitions.values()].reduce((n, ps) => n + ps.size, 0);

/**
 * The uniform assignor for a homogeneous group (Kafka's
 * UniformHomogeneousAssignmentBuilder): every member's quota is
 * floor(partitions / members), the first `partitions % members` members to
 * claim it one more; a member keeps the partitions of its current target up
 * to its quota, gives back the rest, and the partitions nobody keeps go to
 * the members under quota in member order.
 */
function uniformHomogeneous(spec: AssignmentSpec): Map<string, TopicPartitions> {
  const result = new Map<string, TopicPartitions>();
  const topics = [...spec.members[0]!.subscribedTopicIds].filter((t) => spec.partitionCounts.has(t));
  if (topics.length === 0) {
    for (const m of spec.members) result.set(m.memberId, new Map());
    return result;
  }
  const owned = new Set<string>();
  for (const m of spec.members) for (const [t, ps] of m.target) for (const p of ps) owned.add(`${t}:${p}`);
  const unassigned: [string, number][] = [];
  let total = 0;
  for (const t of topics) {
    const n = spec.partitionCounts.get(t)!;
    total += n;
    for (let p = 0; p < n; p++) if (!owned.has(`${t}:${p}`)) unassigned.push([t, p]);
  }
  const minQuota = Math.floor(total / spec.members.length);
  let extras = total % spec.members.length;
  const unfilled: [string, number][] = [];
  spec.members.forEach((m, index) => {
    let quota = minQuota;
    let hasExtra = false;
    if (extras > 0) {
      quota++;
      hasExtra = true;
    }
    const kept: TopicPartitions = new Map();
    for (const [t, ps] of m.target) {
      // Partitions of topics no longer subscribed (or gone) are dropped.
      if (!spec.partitionCounts.has(t) || !topics.includes(t)) continue;
      for (const p of [...ps].sort((a, b) => a - b)) {
        if (p >= spec.partitionCounts.get(t)!) continue;
        if (quota > 0) {
          quota--;
          add(kept, t, p);
        } else {
          unassigned.push([t, p]);
        }
      }
    }
    // A member that kept fewer than the minimum leaves its extra partition to the members after it.
    if (quota > 0 && hasExtra && spec.members.length - index > extras) {
      quota--;
      hasExtra = false;
    }
    if (quota > 0) unfilled.push([m.memberId, quota]);
    if (hasExtra) extras--;
    result.set(m.memberId, kept);
  });
  let next = 0;
  for (const [memberId, quota] of unfilled) {
    const assignment = result.get(memberId)!;
    for (let i = 0; i < quota && next < unassigned.length; i++, next++) add(assignment, unassigned[next]![0], unassigned[next]![1]);
  }
  return result;
}

/**
 * The uniform assignor for members subscribed to different topics: each
 * member keeps what it has of its subscribed topics; every other partition
 * goes to the least-loaded member subscribed to its topic (partitions with
 * the fewest candidates first); then partitions move, one at a time, from a
 * member to a candidate holding at least two fewer, until none can. Balanced
 * and sticky as Kafka's heterogeneous builder, not necessarily the same
 * choices.
 */
function uniformHeterogeneous(spec: AssignmentSpec): Map<string, TopicPartitions> {
  const result = new Map<string, TopicPartitions>();
  const owner = new Map<string, string>();
  for (const m of spec.members) {
    const kept: TopicPartitions = new Map();
    for (const [t, ps] of m.target) {
      const n = spec.partitionCounts.get(t);
      if (n === undefined || !m.subscribedTopicIds.has(t)) continue;
      for (const p of ps) {
        const key = `${t}:${p}`;
        if (p < n && !owner.has(key)) {
          add(kept, t, p);
          owner.set(key, m.memberId);
        }
      }
    }
    result.set(m.memberId, kept);
  }
  const candidates = new Map<string, AssignmentMember[]>();
  for (const [t] of spec.partitionCounts)
    candidates.set(
      t,
      spec.members.filter((m) => m.subscribedTopicIds.has(t)),
    );
  const load = (memberId: string) => count(result.get(memberId)!);
  const pending: [string, number][] = [];
  for (const [t, n] of spec.partitionCounts) {
    if (candidates.get(t)!.length === 0) continue;
    for (let p = 0; p < n; p++) if (!owner.has(`${t}:${p}`)) pending.push([t, p]);
  }
  pending.sort((a, b) => candidates.get(a[0])!.length - candidates.get(b[0])!.length);
  for (const [t, p] of pending) {
    const to = candidates.get(t)!.reduce((best, m) => (load(m.memberId) < load(best.memberId) ? m : best));
    add(result.get(to.memberId)!, t, p);
    owner.set(`${t}:${p}`, to.memberId);
  }
  for (let moved = true; moved;) {
    moved = false;
    for (const [key, from] of owner) {
      const [t, ps] = [key.slice(0, key.lastIndexOf(':')), Number(key.slice(key.lastIndexOf(':') + 1))];
      const to = candidates.get(t)!.reduce((best, m) => (load(m.memberId) < load(best.memberId) ? m : best));
      if (load(from) - load(to.memberId) >= 2) {
        result.get(from)!.get(t)!.delete(ps);
        if (result.get(from)!.get(t)!.size === 0) result.get(from)!.delete(t);
        add(result.get(to.memberId)!, t, ps);
        owner.set(key, to.memberId);
        moved = true;
      }
    }
  }
  return result;
}

export const uniformAssignor: Assignor = (spec) => {
  if (spec.members.length === 0) return new Map();
  return isHomogeneous(spec.members) ? uniformHomogeneous(spec) : uniformHeterogeneous(spec);
};

/**
 * Kafka's RangeAssignor for consumer groups: members in order (static
 * members first, by instance id, then the others by member id); for each
 * topic, its subscribers get contiguous ranges of floor(partitions /
 * subscribers), the first `partitions % subscribers` one more. Not sticky.
 */
export const rangeAssignor: Assignor = (spec) => {
  const sorted = [...spec.members].sort((a, b) => {
    if (a.instanceId !== null && b.instanceId !== null) return a.instanceId < b.instanceId ? -1 : a.instanceId > b.instanceId ? 1 : 0;
    if (a.instanceId !== null) return -1;
    if (b.instanceId !== null) return 1;
    return a.memberId < b.memberId ? -1 : a.memberId > b.memberId ? 1 : 0;
  });
  const result = new Map<string, TopicPartitions>(spec.members.map((m) => [m.memberId, new Map()]));
  for (const [t, n] of spec.partitionCounts) {
    const subscribers = sorted.filter((m) => m.subscribedTopicIds.has(t));
    if (subscribers.length === 0) continue;
    const minQuota = Math.floor(n / subscribers.length);
    let extras = n % subscribers.length;
    let start = 0;
    for (const m of subscribers) {
      let quota = minQuota;
      if (extras > 0) {
        quota++;
        extras--;
      }
      const end = Math.min(start + quota, n);
      for (let p = start; p < end; p++) add(result.get(m.memberId)!, t, p);
      start = end;
    }
  }
  return result;
};

export const ASSIGNORS: ReadonlyMap<string, Assignor> = new Map([
  ['uniform', uniformAssignor],
  ['range', rangeAssignor],
]);

export { copy as copyTopicPartitions };
