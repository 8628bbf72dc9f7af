// KIP-848 (group.protocol=consumer) with librdkafka: confluent-kafka-python
// 2.16.1 from the PyPI venv (librdkafka 2.12+), one member per child process
// (groups_driver.py). Scenarios of issue 17: members joining one at a time
// (and the same with the classic protocol, for the pauses), a member killed
// (its partitions move after the session timeout, uncommitted records come
// again), a regular-expression subscription picking up a topic created
// later, a static member restarted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../../test/support/broker.js';
import { joinOneAtATime, staticRestartConsumerProtocol } from './kip848-scenarios.js';
import { killMidBatch, type MemberEnv } from './member-scenarios.js';
import { kit, pyConsumerProtocolMember, pyVenvClassicMember, type Kit } from './support.js';
import { runVenvScript } from '../support/python.js';

let broker: TestBroker;
let k: Kit;
beforeAll(async () => {
  broker = await startTestBroker({
    autoCreateTopicsEnable: false,
    groupMinSessionTimeoutMs: 1000,
    groupInitialRebalanceDelayMs: 300,
    // A short session, so a killed member's partitions move within seconds.
    groupConsumerMinSessionTimeoutMs: 1000,
    groupConsumerSessionTimeoutMs: 4000,
    groupConsumerMinHeartbeatIntervalMs: 100,
    groupConsumerHeartbeatIntervalMs: 500,
  });
  k = await kit(broker);
});
afterAll(async () => {
  await k?.close();
  await broker?.destroy();
});

/** Members of scenario 1, one child process each (the 30). */
const JOINING = 30;

const env: MemberEnv = { broker: () => broker, kit: () => k, spawn: (req) => pyConsumerProtocolMember(req, 90_000), tag: 'k848', sessionMs: 4000 };

describe('librdkafka (confluent-kafka-python 2.16.1) with group.protocol=consumer', () => {
  it(`1 ${JOINING} members join one at a time: every partition owned once, every record consumed once; pauses next to the classic protocol`, async () => {
    const consumer = await joinOneAtATime(broker, k, (req) => pyConsumerProtocolMember(req, 120_000), 'k848-join', JOINING, 1000);
    const classic = await joinOneAtATime(broker, k, (req) => pyVenvClassicMember(req, 120_000), 'k848-join-classic', JOINING, 1000);
    // The figures the issue asks for: the longest pause each member saw while the group grew (ms).
    console.log(`KIP-848 join pauses (ms), consumer protocol: ${consumer.pauses.join(' ')} (${consumer.records} records)`);
    console.log(`KIP-848 join pauses (ms), classic protocol:  ${classic.pauses.join(' ')} (${classic.records} records)`);
    expect(consumer.pauses).toHaveLength(JOINING);
  }, 240_000);

  it('2 a member killed mid-batch: its partitions move after the session timeout, records after its last commit come again', () => killMidBatch(env), 60_000);

  it('3 a ^ pattern (sent to the broker as SubscribedTopicRegex) picks up a matching topic created later', async () => {
    const run = await runVenvScript('kip848_regex.py', [broker.bootstrap], 150_000);
    const out = JSON.parse(run.stdout.toString('utf8')) as { read: Record<string, string>; laterAfterMs: number; errors?: string[] };
    expect(out.errors).toBeUndefined();
    expect(out.read).toEqual({ 'lr-rx-orders': 'first', 'lr-rx-payments': 'later' });
    // The figure: the broker resolves a group's patterns at most every 10 s.
    console.log(`librdkafka ^ pattern: the new topic's record read ${out.laterAfterMs} ms after its creation`);
  }, 160_000);

  it(
    '4 a static member restarted gets its partitions back, with no epoch change for the others',
    () => staticRestartConsumerProtocol(broker, k, (req) => pyConsumerProtocolMember(req, 60_000), 'k848-static'),
    60_000,
  );
});
