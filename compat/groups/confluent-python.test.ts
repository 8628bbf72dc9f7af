// confluent-kafka-python 1.7.0 (librdkafka 2.0.2) as consumer-group members:
// groups_driver.py runs one member per process (or 30 in threads of one).
import { afterAll, beforeAll, describe } from 'vitest';
import { startTestBroker, type TestBroker } from '../../test/support/broker.js';
import { independentGroups, killMidBatch, lagViews, maxPollExceeded, replay, type MemberEnv } from './member-scenarios.js';
import { runGroupScenarios } from './scenarios.js';
import { kit, pyMember, type Kit } from './support.js';
import { cooperativeSticky, spreadPython, staticRestart } from './rdkafka-scenarios.js';

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

const env: MemberEnv = { broker: () => broker, kit: () => k, spawn: (req) => pyMember({ ...req, client: 'confluent' }), tag: 'cpy', sessionMs: 3000 };

describe('confluent-kafka-python consumer groups', () => {
  runGroupScenarios('confluent-kafka-python', {
    '1 spread: 30 members, 12 partitions': () => spreadPython(env, 'confluent'),
    '2 independent groups': () => independentGroups(env),
    '3 max.poll.interval exceeded': () => maxPollExceeded(env),
    '4 SIGKILL mid-batch': () => killMidBatch(env),
    '5 static member restart': () => staticRestart(env),
    '6 cooperative-sticky': () => cooperativeSticky(env),
    '7 replay': () => replay(env),
    '8 lag: CLI and /metrics': () => lagViews(env),
  });
});
