// kafkajs 2.2.4 (pure JS; JoinGroup v5, eager protocol) as consumer-group
// members: 30 consumers in this process for scenario 1, one member per child
// process (kafkajs_child.mjs) for the others. kafkajs 2.2.4 has no
// max.poll.interval.ms (scenario 3 relies on its session timeout: heartbeats
// stop while eachMessage blocks), does not pass group.instance.id from its
// consumer (no scenario 5) and has no cooperative protocol (no scenario 6).
import { AssignerProtocol, logLevel, type Consumer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { startTestBroker, type TestBroker } from '../../test/support/broker.js';
import { independentGroups, killMidBatch, lagViews, maxPollExceeded, replay, type MemberEnv } from './member-scenarios.js';
import { runGroupScenarios } from './scenarios.js';
import { createTopic, eventually, generation, kit, kjsMember, type Kit } from './support.js';

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

const env: MemberEnv = { broker: () => broker, kit: () => k, spawn: (req) => kjsMember(req), tag: 'kjs', sessionMs: 3000 };

/** 1: 30 kafkajs consumers (round-robin assigner) on 12 partitions. */
async function spread() {
  const topic = 'kjs-spread';
  await createTopic(k, topic, 12);
  const joins: { generationId: number; parts: number[] }[] = Array.from({ length: 30 }, () => ({ generationId: -1, parts: [] }));
  const consumed: { member: number; p: number; o: number; key: string }[] = [];
  const consumers: Consumer[] = [];
  try {
    for (let i = 0; i < 30; i++) {
      const c = k.kafka.consumer({ groupId: topic, sessionTimeout: 10_000, heartbeatInterval: 1000, rebalanceTimeout: 20_000, maxWaitTimeInMs: 200 });
      c.logger().setLogLevel(logLevel.NOTHING);
      // GROUP_JOIN carries the assignment but (in 2.2.4) no generation; HEARTBEAT carries the generation.
      c.on(c.events.GROUP_JOIN, (e) => (joins[i] = { generationId: -1, parts: e.payload.memberAssignment[topic] ?? [] }));
      c.on(c.events.HEARTBEAT, (e) => (joins[i]!.generationId = e.payload.groupGenerationId));
      consumers.push(c);
    }
    await Promise.all(
      consumers.map(async (c, i) => {
        await c.connect();
        await c.subscribe({ topics: [topic], fromBeginning: true });
        await c.run({ eachMessage: async ({ partition, message }) => void consumed.push({ member: i, p: partition, o: Number(message.offset), key: message.key!.toString() }) });
      }),
    );
    // Every member heartbeats in the same (latest) generation and the 12 partitions are spread one each.
    const gen = await eventually(
      async () => {
        const g = await generation(broker, topic);
        expect(joins.map((j) => j.generationId)).toEqual(Array(30).fill(g));
        return g;
      },
      40_000,
      250,
    );
    expect(joins.map((j) => j.parts.length).sort()).toEqual([...Array(18).fill(0), ...Array(12).fill(1)]);
    expect(joins.flatMap((j) => j.parts).sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, i) => i));
    // DescribeGroups says the same.
    const { groups } = await k.admin.describeGroups([topic]);
    expect(groups[0]!.state).toBe('Stable');
    expect(groups[0]!.members).toHaveLength(30);
    const described = groups[0]!.members.map((m) => AssignerProtocol.MemberAssignment.decode(m.memberAssignment)?.assignment[topic] ?? []);
    expect(described.map((a) => a.length).sort()).toEqual([...Array(18).fill(0), ...Array(12).fill(1)]);

    await k.producer.send({ topic, acks: -1, messages: Array.from({ length: 1200 }, (_, i) => ({ key: `key-${i}`, value: `value-${i}` })) });
    await eventually(() => expect(consumed.length).toBeGreaterThanOrEqual(1200), 30_000);
    await new Promise((r) => setTimeout(r, 2000)); // duplicates, if any, would come now
    expect(consumed).toHaveLength(1200);
    expect(new Set(consumed.map((c) => `${c.p}:${c.o}`)).size).toBe(1200);
    expect(new Set(consumed.map((c) => c.key)).size).toBe(1200);
    for (const c of consumed) expect(joins[c.member]!.parts).toEqual([c.p]);
    expect(await generation(broker, topic)).toBe(gen);
  } finally {
    await Promise.allSettled(consumers.map((c) => c.disconnect()));
  }
}

describe('kafkajs consumer groups', () => {
  runGroupScenarios('kafkajs', {
    '1 spread: 30 members, 12 partitions': spread,
    '2 independent groups': () => independentGroups(env),
    '3 max.poll.interval exceeded': () => maxPollExceeded(env),
    '4 SIGKILL mid-batch': () => killMidBatch(env),
    '7 replay': () => replay(env),
    '8 lag: CLI and /metrics': () => lagViews(env),
  });
});
