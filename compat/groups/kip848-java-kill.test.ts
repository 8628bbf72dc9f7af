// KIP-848 (group.protocol=consumer) with Apache Kafka's Java client
// (kafka-clients, compat/java/client): issue 17's second scenario, a member
// killed. Each member is a JVM of its own (GroupMember.java, the events of
// groups_driver.py), so one can be SIGKILLed mid-stream: its partitions move
// to the surviving member after the session timeout, the records it
// processed after its last commit are delivered again, nothing is skipped.
// The killed member is once the one that joined first (it gives half its
// partitions to the other), once the one that joined second (it was given
// the partitions the first revoked).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../../test/support/broker.js';
import { committed, createTopic, eventually, expectCovers, highWatermarks, javaConsumerProtocolMember, kit, produceEach, type Ev, type Kit, type Member } from './support.js';

const SESSION_MS = 4000;
const PARTITIONS = 4;

let broker: TestBroker;
let k: Kit;
beforeAll(async () => {
  broker = await startTestBroker({
    autoCreateTopicsEnable: false,
    groupInitialRebalanceDelayMs: 300,
    // A short session, so a killed member's partitions move within seconds.
    groupConsumerMinSessionTimeoutMs: 1000,
    groupConsumerSessionTimeoutMs: SESSION_MS,
    groupConsumerMinHeartbeatIntervalMs: 100,
    groupConsumerHeartbeatIntervalMs: 500,
  });
  k = await kit(broker);
});
afterAll(async () => {
  await k?.close();
  await broker?.destroy();
});

/** The partitions a member owns after its last assign or revoke event. */
const owned = (m: Member): number[] => (m.events.filter((e) => e.ev === 'assign' || e.ev === 'revoke').at(-1)?.owned as number[] | undefined) ?? [];
const isMsg = (e: Ev) => e.ev === 'msg';

describe('Java client (kafka-clients) with group.protocol=consumer, one JVM per member', () => {
  it.each([
    ['first', 'victim'],
    ['second', 'survivor'],
  ] as const)(
    '2 the member that joined %s killed mid-stream: its partitions move to the survivor after the session timeout, records after its last commit come again, nothing skipped',
    async (joined, firstName) => {
      const topic = `jk848-kill-${joined}`;
      await createTopic(k, topic, PARTITIONS);
      const req = { bootstrap: broker.bootstrap, topic, group: topic, max_s: 40 };
      // The victim commits every 5 records and stops after its 8th, so 3 are processed, not committed, when it is killed.
      const start = (name: string) => javaConsumerProtocolMember(name === 'victim' ? { ...req, name, commit_every: 5, stall_after: 8, process_ms: 10 } : { ...req, name, commit_every: 1 }, 60_000);
      const first = start(firstName);
      let second: Member | undefined;
      try {
        await first.waitFor((e) => e.ev === 'assign' && (e.owned as number[]).length === PARTITIONS, 30_000, `the ${firstName} owning every partition`);
        second = start(firstName === 'victim' ? 'survivor' : 'victim');
        const [victim, survivor] = firstName === 'victim' ? [first, second] : [second, first];
        // Records are written once both members hold partitions, so the victim reads some of its own.
        // (A condition over both members: a member's waitFor wakes only on its own events.)
        await eventually(() => {
          expect(owned(survivor).length).toBeGreaterThan(0);
          expect(owned(victim).length).toBeGreaterThan(0);
          expect(new Set([...owned(survivor), ...owned(victim)]).size).toBe(PARTITIONS);
        }, 30_000);
        const victimPartitions = owned(victim);
        await produceEach(k, topic, PARTITIONS, 30);
        const hw = await highWatermarks(k, topic);
        await victim.waitFor((e) => e.ev === 'stall', 20_000, 'the victim stopped mid-stream');
        const mark = survivor.events.length;
        const killedAt = Date.now();
        await victim.kill();

        const { committed: committedByVictim, uncommitted } = victim.processedAroundLastCommit();
        expect(committedByVictim).toHaveLength(5);
        expect(uncommitted).toHaveLength(3);

        // The survivor is given the victim's partitions once the victim's session expired.
        await survivor.waitFor(() => survivor.events.slice(mark).some((e) => e.ev === 'assign' && (e.owned as number[]).length === PARTITIONS), 20_000, 'every partition at the survivor');
        const movedAfterMs = Date.now() - killedAt;
        const added = survivor.events
          .slice(mark)
          .filter((e) => e.ev === 'assign')
          .flatMap((e) => e.partitions as number[]);
        expect(added.sort()).toEqual(victimPartitions);

        await survivor.waitFor(() => [...hw].every(([p, h]) => survivor.msgs().some((m) => m.p === p && m.o === h - 1)), 20_000, 'the survivor at the end of every partition');
        // It resumes the victim's partitions at their committed offsets, so the uncommitted records come again.
        const fromCommits = new Map<number, number>();
        for (const e of victim.events.filter((x) => x.ev === 'commit')) for (const [p, o] of e.offsets as [number, number][]) fromCommits.set(p, o);
        const co = await committed(k, topic, topic);
        for (const p of victimPartitions) {
          const resumed = survivor.events.slice(mark).find((e) => isMsg(e) && e.p === p)?.o;
          expect(resumed, `first offset of partition ${p} after the kill`).toBe(fromCommits.get(p) ?? 0);
        }
        const survivorKeys = survivor.msgs().map((m) => `${m.p}:${m.o}`);
        for (const u of uncommitted) expect(survivorKeys, `uncommitted ${u} delivered again`).toContain(u);
        expectCovers([...committedByVictim, ...survivorKeys], hw);
        // The broker kept what the victim committed until the survivor moved past it.
        for (const [p, o] of fromCommits) expect(co.get(p), `committed offset of partition ${p}`).toBeGreaterThanOrEqual(o);
        console.log(`KIP-848 Java member killed, joined ${joined} (session ${SESSION_MS} ms): its partitions ${victimPartitions.join(',')} at the survivor ${movedAfterMs} ms after SIGKILL`);
      } finally {
        await Promise.all([first.kill(), second?.kill()]);
      }
    },
    60_000,
  );
});
