// @confluentinc/kafka-javascript 1.10.1 (librdkafka 2.15.1) as consumer-group
// members in this process (ckjs-member.ts, the node-rdkafka-style
// KafkaConsumer). Scenario 4 needs a member in a process of its own to SIGKILL:
// it is covered for librdkafka by confluent-kafka-python.
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { startTestBroker, type TestBroker } from '../../test/support/broker.js';
import { CkMember } from './ckjs-member.js';
import { independentGroups, lagViews, maxPollExceeded, replay, type MemberEnv } from './member-scenarios.js';
import { cooperativeSticky, staticRestart } from './rdkafka-scenarios.js';
import { runGroupScenarios } from './scenarios.js';
import { createTopic, eventually, generation, kit, type Kit, type MemberRequest } from './support.js';

let broker: TestBroker;
let k: Kit;
beforeAll(async () => {
  broker = await startTestBroker({ autoCreateTopicsEnable: false, groupMinSessionTimeoutMs: 1000, groupInitialRebalanceDelayMs: 300 });
  k = await kit(broker);
});
afterAll(async () => {
  await k?.close();
  await broker?.destroy();
});

const produce = async (topic: string, recs: [string, string][]) => {
  await k.producer.send({ topic, acks: -1, messages: recs.map(([key, value]) => ({ key, value })) });
};
const member = (req: MemberRequest) => new CkMember(req, produce).begin();
const env: MemberEnv = { broker: () => broker, kit: () => k, spawn: member, tag: 'ckjs', sessionMs: 3000 };

/** 1: 30 KafkaConsumer instances (range assignor) on 12 partitions. */
async function spread() {
  const topic = 'ckjs-spread';
  await createTopic(k, topic, 12);
  const members = Array.from({ length: 30 }, (_, i) => member({ bootstrap: broker.bootstrap, topic, group: topic, name: `m${i}`, session_ms: 10_000, heartbeat_ms: 1000, commit_every: 1, max_s: 60 }));
  const owned = (m: CkMember) => m.events.filter((e) => e.ev === 'assign' || e.ev === 'revoke').at(-1) as { ev: string; owned: number[] } | undefined;
  try {
    // Settled: every member's last rebalance event is an assignment, and the 12 partitions are spread one each.
    const gen = await eventually(
      async () => {
        const last = members.map(owned);
        expect(last.every((e) => e?.ev === 'assign')).toBe(true);
        expect(last.map((e) => e!.owned.length).sort()).toEqual([...Array(18).fill(0), ...Array(12).fill(1)]);
        expect(last.flatMap((e) => e!.owned).sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, i) => i));
        const { groups } = await k.admin.describeGroups([topic]);
        expect(groups[0]!.state).toBe('Stable');
        expect(groups[0]!.members).toHaveLength(30);
        return generation(broker, topic);
      },
      45_000,
      300,
    );
    const assignments = members.map((m) => owned(m)!.owned);
    await k.producer.send({ topic, acks: -1, messages: Array.from({ length: 1200 }, (_, i) => ({ key: `key-${i}`, value: `value-${i}` })) });
    const all = () => members.flatMap((m, i) => m.msgs().map((x) => ({ ...x, member: i })));
    await eventually(() => expect(all().length).toBeGreaterThanOrEqual(1200), 30_000);
    await new Promise((r) => setTimeout(r, 2000)); // duplicates, if any, would come now
    const consumed = all();
    expect(consumed).toHaveLength(1200);
    expect(new Set(consumed.map((c) => `${c.p}:${c.o}`)).size).toBe(1200);
    expect(new Set(consumed.map((c) => c.k)).size).toBe(1200);
    for (const c of consumed) expect(assignments[c.member]).toEqual([c.p]);
    expect(await generation(broker, topic)).toBe(gen);
  } finally {
    await Promise.allSettled(members.map((m) => m.stop()));
  }
}

describe('@confluentinc/kafka-javascript consumer groups', () => {
  runGroupScenarios('confluent-kafka-javascript', {
    '1 spread: 30 members, 12 partitions': spread,
    '2 independent groups': () => independentGroups(env),
    '3 max.poll.interval exceeded': () => maxPollExceeded(env),
    '5 static member restart': () => staticRestart(env),
    '6 cooperative-sticky': () => cooperativeSticky(env),
    '7 replay': () => replay(env),
    '8 lag: CLI and /metrics': () => lagViews(env),
  });
});
