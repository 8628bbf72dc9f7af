// Scenario 1 for the Python clients (30 members in threads of one
// groups_driver.py process), and 5 (static member restarted) and 6
// (cooperative-sticky) for the librdkafka members, in a child process
// (confluent-kafka-python) or in this process (confluent-kafka-javascript).
import { expect } from 'vitest';
import type { MemberEnv } from './member-scenarios.js';
import { createTopic, generation, produceEach, pyMembers, type Ev, type Member, type PyClient } from './support.js';

/** 1: 12 partitions, 30 members: 12 own one partition, 18 none; 1200 keyed records consumed exactly once. */
export async function spreadPython(env: MemberEnv, client: PyClient) {
  const k = env.kit();
  const topic = `${env.tag}-spread`;
  await createTopic(k, topic, 12);
  const res = await pyMembers({ client, bootstrap: env.broker().bootstrap, topic, group: topic, session_ms: 10_000, heartbeat_ms: 1000, n: 30, partitions: 12, records: 1200 });
  expect(res.errors).toEqual([]);
  expect(res.stable).toBe(true);
  const sizes = res.current.map((c) => c!.length).sort();
  expect(sizes).toEqual([...Array(18).fill(0), ...Array(12).fill(1)]);
  expect(res.current.flat().sort((a, b) => a! - b!)).toEqual(Array.from({ length: 12 }, (_, i) => i));
  // Exactly once: 1200 distinct (partition, offset), 1200 distinct keys, each read by the member that owns its partition.
  expect(res.consumed).toHaveLength(1200);
  expect(new Set(res.consumed.map(([, p, o]) => `${p}:${o}`)).size).toBe(1200);
  expect(new Set(res.consumed.map(([, , , kk]) => kk)).size).toBe(1200);
  for (const [i, p] of res.consumed) expect(res.current[i]).toEqual([p]);
  // The group committed everything it read.
  const [co] = await k.admin.fetchOffsets({ groupId: topic, topics: [topic] });
  const hw = await k.admin.fetchTopicOffsets(topic);
  expect(co!.partitions.map((p) => [p.partition, p.offset]).sort((a, b) => Number(a[0]) - Number(b[0]))).toEqual(hw.map((h) => [h.partition, h.high]).sort((a, b) => Number(a[0]) - Number(b[0])));
}

const assigns = (p: Member) => p.events.filter((e: Ev) => e.ev === 'assign' || e.ev === 'revoke');
const owned = (p: Member) => (assigns(p).at(-1)?.owned as number[] | undefined) ?? [];

/** 5: a static member (group.instance.id) closed and restarted within session.timeout.ms: no rebalance for the other member. */
export async function staticRestart(env: MemberEnv) {
  const k = env.kit();
  const topic = `${env.tag}-static`;
  await createTopic(k, topic, 4);
  await produceEach(k, topic, 4, 5);
  const req = { bootstrap: env.broker().bootstrap, topic, group: topic, session_ms: 15_000, heartbeat_ms: 500, max_s: 40, commit_every: 1 };
  const a = env.spawn({ ...req, name: 'a', instance_id: 'static-a' });
  let b: Member | undefined;
  let a2: Member | undefined;
  try {
    await a.waitFor((e) => e.ev === 'assign' && (e.partitions as number[]).length === 4, 20_000, 'a owns all partitions');
    b = env.spawn({ ...req, name: 'b', instance_id: 'static-b' });
    await b.waitFor((e) => e.ev === 'assign' && (e.partitions as number[]).length === 2, 20_000, 'b owns two partitions');
    await a.waitFor(() => owned(a).length === 2, 20_000, 'a owns two partitions');
    const aOwned = owned(a);
    const bOwned = owned(b);
    expect([...aOwned, ...bOwned].sort()).toEqual([0, 1, 2, 3]);
    const gen = await generation(env.broker(), topic);
    const bEvents = assigns(b).length;
    const { groups: before } = await k.admin.describeGroups([topic]);
    const bMember = before[0]!.members.find((m) => m.clientId === 'b')!.memberId;

    // Close a (a static member sends no LeaveGroup) and start it again with the same group.instance.id.
    await a.stop();
    a2 = env.spawn({ ...req, name: 'a', instance_id: 'static-a' });
    const reassigned = await a2.waitFor((e) => e.ev === 'assign', 20_000, 'restarted a assigned');
    expect(reassigned.partitions).toEqual(aOwned);
    await produceEach(k, topic, 4, 1, 'after');
    await b.waitCount((e) => e.ev === 'msg', 2, 20_000, 'b reads the new records of its partitions');
    await new Promise((r) => setTimeout(r, 1500));
    // b saw no revoke and no new assignment; the generation and b's member id are unchanged.
    expect(assigns(b).length).toBe(bEvents);
    expect(await generation(env.broker(), topic)).toBe(gen);
    const { groups: after } = await k.admin.describeGroups([topic]);
    expect(after[0]!.state).toBe('Stable');
    expect(after[0]!.members.map((m) => m.memberId)).toContain(bMember);
    expect(after[0]!.members).toHaveLength(2);
  } finally {
    await Promise.all([a.kill(), b?.stop(), a2?.stop()]);
  }
}

/** 6: cooperative-sticky: a second member joins; the first revokes only the partitions that move and keeps consuming the rest. */
export async function cooperativeSticky(env: MemberEnv) {
  const k = env.kit();
  const topic = `${env.tag}-coop`;
  await createTopic(k, topic, 4);
  await produceEach(k, topic, 4, 5);
  const req = { bootstrap: env.broker().bootstrap, topic, group: topic, session_ms: 6000, heartbeat_ms: 500, max_s: 40, commit_every: 1, strategy: 'cooperative-sticky' };
  const a = env.spawn({ ...req, name: 'a' });
  let b: Member | undefined;
  try {
    await a.waitCount((e) => e.ev === 'msg', 20, 20_000, 'a read everything');
    expect(owned(a)).toEqual([0, 1, 2, 3]);
    const aBefore = a.events.length;
    b = env.spawn({ ...req, name: 'b' });
    await b.waitFor(() => owned(b!).length === 2, 20_000, 'b owns two partitions');
    await a.waitFor(() => owned(a).length === 2, 20_000, 'a owns two partitions');
    const moved = owned(b);
    const kept = owned(a);
    const revokes = a.events.slice(aBefore).filter((e) => e.ev === 'revoke');
    // Only the moved partitions were revoked, never the whole assignment.
    expect(revokes.flatMap((e) => e.partitions as number[]).sort()).toEqual(moved);
    expect(
      a.events
        .slice(aBefore)
        .filter((e) => e.ev === 'assign')
        .every((e) => (e.partitions as number[]).length === 0),
    ).toBe(true);
    // Both go on consuming their partitions: a its kept ones (from where it was), b the moved ones (from the commits).
    await produceEach(k, topic, 4, 3, 'after');
    await a.waitCount((e) => e.ev === 'msg', 20 + 6, 20_000, 'a reads its kept partitions');
    await b.waitCount((e) => e.ev === 'msg', 6, 20_000, 'b reads the moved partitions');
    const aNew = a.msgs().slice(20);
    expect(new Set(aNew.map((m) => m.p))).toEqual(new Set(kept));
    expect(aNew.map((m) => m.o).every((o) => o >= 5)).toBe(true);
    expect(new Set(b.msgs().map((m) => m.p))).toEqual(new Set(moved));
    expect(
      b
        .msgs()
        .map((m) => m.o)
        .every((o) => o >= 5),
    ).toBe(true);
  } finally {
    await Promise.all([a.stop(), b?.stop()]);
  }
}
