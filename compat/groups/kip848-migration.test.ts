// Issue 17, scenario 5: a classic group upgraded online as its members roll
// over to the consumer protocol (KIP-848's migration, policy bidirectional,
// the default), and downgraded as they roll back, while a producer keeps
// writing: every record is consumed (none lost or skipped) and the commits
// carry across both migrations. Classic members are kafkajs 2.2.4 (eager,
// its own assignor) or classic librdkafka (confluent-kafka-python 2.16.1,
// range); consumer-protocol members are librdkafka with
// group.protocol=consumer. One member per child process (support.ts). While
// the group is a consumer-protocol group, its lag is in /metrics and
// `pgkafka groups` (issue 17, scenario 6). And
// the same with Apache Kafka's Java client on both sides (group.protocol
// classic, then consumer, then classic), its members in one JVM.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestBroker } from '../../test/support/broker.js';
import { startTestBroker } from '../../test/support/broker.js';
import { runJavaClient } from '../support/java.js';
import {
  cliGroup,
  committed,
  createTopic,
  eventually,
  highWatermarks,
  kit,
  metricsLag,
  kjsMember,
  pyConsumerProtocolMember,
  pyVenvClassicMember,
  type Kit,
  type Member,
  type MemberRequest,
} from './support.js';

let broker: TestBroker;
let k: Kit;
beforeAll(async () => {
  broker = await startTestBroker({
    autoCreateTopicsEnable: false,
    groupMinSessionTimeoutMs: 1000,
    groupInitialRebalanceDelayMs: 300,
    groupConsumerMinSessionTimeoutMs: 1000,
    groupConsumerSessionTimeoutMs: 6000,
    groupConsumerMinHeartbeatIntervalMs: 100,
    groupConsumerHeartbeatIntervalMs: 500,
  });
  k = await kit(broker);
});
afterAll(async () => {
  await k?.close();
  await broker?.destroy();
});

const PARTITIONS = 6;
const MEMBERS = 2;

async function groupType(group: string): Promise<string | null> {
  const [row] = await broker.query<{ type: string }>(`SELECT type FROM groups WHERE group_id = $1`, [group]);
  return row?.type ?? null;
}

const owned = (m: Member) => (m.events.filter((e) => e.ev === 'assign' || e.ev === 'revoke').at(-1)?.owned as number[] | undefined) ?? [];

/**
 * MEMBERS classic members consume while records flow; one at a time, a
 * consumer-protocol member joins and a classic one leaves (the group is a
 * consumer group from the first join); then the same back to classic members
 * (a classic group again once the last consumer-protocol member leaves).
 * Returns the group's type after each phase.
 */
async function rollOverAndBack(classic: (req: MemberRequest) => Member, topic: string): Promise<string[]> {
  await createTopic(k, topic, PARTITIONS);
  const req: MemberRequest = { bootstrap: broker.bootstrap, topic, group: topic, commit_every: 1, max_s: 90, session_ms: 6000, heartbeat_ms: 500 };
  const consumer = (name: string) => pyConsumerProtocolMember({ ...req, name }, 100_000);
  const all: Member[] = [];
  const spawn = (make: (name: string) => Member, name: string) => {
    const m = make(name);
    all.push(m);
    return m;
  };
  let producing = true;
  let sent = 0;
  const producer = (async () => {
    while (producing) {
      await k.producer.send({ topic, acks: -1, messages: Array.from({ length: PARTITIONS }, (_, p) => ({ partition: p, value: `v${sent + p}` })) });
      sent += PARTITIONS;
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  const types: string[] = [];
  // Every partition has an owner again (from the members' own callbacks) and a member that joined has some.
  const settled = (members: Member[], joined: Member) =>
    eventually(
      () => {
        expect(owned(joined).length).toBeGreaterThan(0);
        expect(members.flatMap(owned).sort((a, b) => a - b)).toEqual(Array.from({ length: PARTITIONS }, (_, p) => p));
      },
      30_000,
      250,
    );
  /** From `from` members to ones made by `to`, one at a time: the new one joins, then an old one leaves. */
  const roll = async (from: Member[], to: (name: string) => Member, tag: string) => {
    const now = [...from];
    for (let i = 0; i < from.length; i++) {
      const joined = spawn(to, `${tag}${i}`);
      now.push(joined);
      await settled(now, joined);
      await from[i]!.stop();
      now.splice(now.indexOf(from[i]!), 1);
    }
    await settled(now, now.at(-1)!);
    return now;
  };
  try {
    const first = Array.from({ length: MEMBERS }, (_, i) => spawn((name) => classic({ ...req, name }), `classic${i}`));
    await settled(first, first.at(-1)!);
    types.push((await groupType(topic))!);
    const upgraded = await roll(first, consumer, 'consumer');
    types.push((await groupType(topic))!);
    // The consumer-protocol group's lag, per partition, in /metrics and `pgkafka groups`, with its members as owners.
    expect([...(await metricsLag(broker, topic, topic)).keys()].sort()).toEqual(Array.from({ length: PARTITIONS }, (_, p) => p));
    const cli = await cliGroup(broker, topic);
    expect(cli.members).toBe(MEMBERS);
    expect(cli.partitions.map((p) => p.partition).sort()).toEqual(Array.from({ length: PARTITIONS }, (_, p) => p));
    const back = await roll(upgraded, (name) => classic({ ...req, name }), 'back');
    types.push((await groupType(topic))!);
    producing = false;
    await producer;
    // Nothing lost or skipped: every record produced was consumed by some member, and the last commits reach the end.
    const hw = await highWatermarks(k, topic);
    await eventually(async () => expect([...(await committed(k, topic, topic))].sort((a, b) => a[0] - b[0])).toEqual([...hw].sort((a, b) => a[0] - b[0])), 30_000);
    const seen = new Set(all.flatMap((m) => m.msgs().map((c) => `${c.p}:${c.o}`)));
    const missing = [...hw].flatMap(([p, h]) => Array.from({ length: h }, (_, o) => `${p}:${o}`)).filter((key) => !seen.has(key));
    expect(missing).toEqual([]);
    expect(sent).toBe([...hw.values()].reduce((a, b) => a + b, 0));
    await Promise.all(back.map((m) => m.stop()));
    for (const m of all) expect(m.events.filter((e) => e.ev === 'error')).toEqual([]);
    return types;
  } finally {
    producing = false;
    await producer.catch(() => {});
    await Promise.allSettled(all.map((m) => m.stop()));
  }
}

describe('scenario 5: a classic group rolled over to the consumer protocol and back, online', () => {
  it('kafkajs classic members ↔ librdkafka group.protocol=consumer: no record lost or skipped, commits carried across', async () => {
    expect(await rollOverAndBack((req) => kjsMember(req, 100_000), 'mig-kafkajs')).toEqual(['classic', 'consumer', 'classic']);
  }, 120_000);

  it('classic librdkafka members ↔ librdkafka group.protocol=consumer: no record lost or skipped, commits carried across', async () => {
    expect(await rollOverAndBack((req) => pyVenvClassicMember(req, 100_000), 'mig-librdkafka')).toEqual(['classic', 'consumer', 'classic']);
  }, 120_000);

  it('Java client group.protocol=classic ↔ consumer: no record lost or skipped, commits carried across', async () => {
    const topic = 'mig-java';
    await createTopic(k, topic, PARTITIONS);
    const res = await runJavaClient(
      broker.bootstrap,
      [{ id: 'roll', op: 'rollOver', topic, group: topic, partitions: PARTITIONS, members: MEMBERS, phases: ['classic', 'consumer', 'classic'] }],
      {},
      110_000,
    );
    const roll = res.roll as { types: string[]; sent: number; distinct: number; committed: Record<string, number>; ends: Record<string, number>; errors: string[]; pausesMs: number[] };
    expect(roll.errors).toEqual([]);
    expect(roll.types).toEqual(['Classic', 'Consumer', 'Classic']);
    expect(roll.sent).toBeGreaterThan(0);
    expect(roll.distinct).toBe(roll.sent);
    expect(roll.committed).toEqual(roll.ends);
    console.log(`Java roll-over pauses (ms), classic → consumer → classic: ${roll.pausesMs.join(' ')} (${roll.sent} records)`);
  }, 120_000);
});
