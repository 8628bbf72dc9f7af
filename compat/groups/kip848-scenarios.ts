// KIP-848 scenarios over group members in child processes (groups_driver.py
// under the PyPI venv's confluent-kafka, group.protocol=consumer): members
// joining one at a time while records flow (ownership from the members' own
// callbacks, exactly-once delivery, the longest pause each member saw), and a
// static member restarted. The same join scenario runs for the classic
// protocol, so the pauses can be compared.
import { expect } from 'vitest';
import type { TestBroker } from '../../test/support/broker.js';
import { createTopic, eventually, generation, type Ev, type Kit, type Member, type MemberRequest } from './support.js';

export interface JoinRun {
  /** Longest gap between two records a member received, from its first record until the last member joined and the group settled (ms). */
  pauses: number[];
  records: number;
}

const t = (e: Ev) => (e.t as number) * 1000;

/**
 * Every partition held by at most one member at any moment, judged from the
 * members' assign and revoke callbacks (wall-clock stamps of one machine).
 */
export function expectSingleOwnership(members: Member[]): void {
  const changes = members.flatMap((m, i) => m.events.filter((e) => e.ev === 'assign' || e.ev === 'revoke').map((e) => ({ member: i, e })));
  changes.sort((a, b) => t(a.e) - t(b.e) || (a.e.ev === 'revoke' ? -1 : 1));
  const owner = new Map<number, number>();
  for (const { member, e } of changes) {
    for (const p of e.partitions as number[]) {
      if (e.ev === 'revoke') {
        if (owner.get(p) === member) owner.delete(p);
      } else {
        expect(owner.get(p) ?? member, `partition ${p} assigned to member ${member} while member ${owner.get(p)} holds it`).toBe(member);
        owner.set(p, member);
      }
    }
  }
}

/**
 * 1: `n` members join one at a time (every `joinEveryMs`) a group reading a
 * 12-partition topic that a producer keeps writing to; then production stops
 * and everything is read. Every record is consumed exactly once and no
 * partition is ever owned twice.
 */
export async function joinOneAtATime(broker: TestBroker, k: Kit, spawn: (req: MemberRequest) => Member, topic: string, n = 8, joinEveryMs = 1500): Promise<JoinRun> {
  await createTopic(k, topic, 12);
  const req: MemberRequest = { bootstrap: broker.bootstrap, topic, group: topic, commit_every: 1, max_s: 80, session_ms: 10_000, heartbeat_ms: 500 };
  const members: Member[] = [];
  let producing = true;
  let sent = 0;
  const producer = (async () => {
    while (producing) {
      await k.producer.send({ topic, acks: -1, messages: Array.from({ length: 12 }, (_, p) => ({ partition: p, key: `k${sent + p}`, value: `v${sent + p}` })) });
      sent += 12;
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  try {
    for (let i = 0; i < n; i++) {
      members.push(spawn({ ...req, name: `m${i}`, stamp: true }));
      await new Promise((r) => setTimeout(r, joinEveryMs));
    }
    // Settled: the group's epoch stops moving and every partition has an owner (from the callbacks).
    const owners = () => members.flatMap((m) => (m.events.filter((e) => e.ev === 'assign' || e.ev === 'revoke').at(-1)?.owned as number[] | undefined) ?? []);
    await eventually(
      async () => {
        expect(owners().sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, i) => i));
        const before = await generation(broker, topic);
        await new Promise((r) => setTimeout(r, 1000));
        expect(await generation(broker, topic)).toBe(before);
      },
      40_000,
      500,
    );
    const settledAt = Date.now();
    producing = false;
    await producer;
    const consumed = () => members.flatMap((m) => m.msgs());
    await eventually(() => expect(consumed().length).toBeGreaterThanOrEqual(sent), 30_000);
    await new Promise((r) => setTimeout(r, 1500)); // duplicates, if any, would come now
    const all = consumed();
    expect(new Set(all.map((c) => `${c.p}:${c.o}`)).size).toBe(sent);
    expect(all).toHaveLength(sent);
    expectSingleOwnership(members);
    const pauses = members.map((m) => {
      const times = m.events.filter((e) => e.ev === 'msg' && t(e) <= settledAt).map(t);
      let longest = 0;
      for (let i = 1; i < times.length; i++) longest = Math.max(longest, times[i]! - times[i - 1]!);
      return Math.round(longest);
    });
    return { pauses, records: sent };
  } finally {
    producing = false;
    await producer.catch(() => {});
    await Promise.allSettled(members.map((m) => m.stop()));
  }
}

const assigns = (p: Member) => p.events.filter((e: Ev) => e.ev === 'assign' || e.ev === 'revoke');
const owned = (p: Member) => (assigns(p).at(-1)?.owned as number[] | undefined) ?? [];

/**
 * 4: a static member (group.instance.id) closed and restarted: it leaves with
 * epoch -2, comes back under a new member id and gets its partitions back;
 * the group epoch does not move and the other member sees no revoke or assign.
 */
export async function staticRestartConsumerProtocol(broker: TestBroker, k: Kit, spawn: (req: MemberRequest) => Member, topic: string) {
  await createTopic(k, topic, 4);
  const req: MemberRequest = { bootstrap: broker.bootstrap, topic, group: topic, max_s: 40, commit_every: 1 };
  const a = spawn({ ...req, name: 'a', instance_id: 'static-a' });
  let b: Member | undefined;
  let a2: Member | undefined;
  try {
    await a.waitFor((e) => e.ev === 'assign' && owned(a).length === 4, 20_000, 'a owns all partitions');
    b = spawn({ ...req, name: 'b', instance_id: 'static-b' });
    await eventually(() => expect([owned(a).length, owned(b!).length]).toEqual([2, 2]), 20_000);
    const aOwned = owned(a);
    const epoch = await generation(broker, topic);
    const bEvents = assigns(b).length;

    await a.stop();
    a2 = spawn({ ...req, name: 'a', instance_id: 'static-a' });
    await a2.waitFor((e) => e.ev === 'assign', 20_000, 'restarted a assigned');
    await eventually(() => expect(owned(a2!)).toEqual(aOwned), 10_000);
    await k.producer.send({ topic, acks: -1, messages: [0, 1, 2, 3].map((p) => ({ partition: p, value: `after-${p}` })) });
    await b.waitCount((e) => e.ev === 'msg', 2, 20_000, 'b reads the new records of its partitions');
    await a2.waitCount((e) => e.ev === 'msg', 2, 20_000, 'restarted a reads the new records of its partitions');
    await new Promise((r) => setTimeout(r, 1500));
    expect(assigns(b).length).toBe(bEvents);
    expect(await generation(broker, topic)).toBe(epoch);
  } finally {
    await Promise.all([a.kill(), b?.stop(), a2?.stop()]);
  }
}
