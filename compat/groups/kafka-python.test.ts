// kafka-python 2.0.2 (pure Python; JoinGroup v2, OffsetCommit v2, OffsetFetch v1)
// as consumer-group members through groups_driver.py. It has neither static
// membership nor the cooperative protocol (scenarios 5 and 6).
import { afterAll, beforeAll, describe } from 'vitest';
import { startTestBroker, type TestBroker } from '../../test/support/broker.js';
import { independentGroups, killMidBatch, lagViews, maxPollExceeded, replay, type MemberEnv } from './member-scenarios.js';
import { spreadPython } from './rdkafka-scenarios.js';
import { runGroupScenarios } from './scenarios.js';
import { kit, pyMember, type Kit } from './support.js';

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

const env: MemberEnv = { broker: () => broker, kit: () => k, spawn: (req) => pyMember({ ...req, client: 'kafka-python' }), tag: 'kpy', sessionMs: 3000 };

describe('kafka-python consumer groups', () => {
  runGroupScenarios('kafka-python', {
    '1 spread: 30 members, 12 partitions': () => spreadPython(env, 'kafka-python'),
    '2 independent groups': () => independentGroups(env),
    '3 max.poll.interval exceeded': () => maxPollExceeded(env),
    '4 SIGKILL mid-batch': () => killMidBatch(env),
    '7 replay': () => replay(env),
    '8 lag: CLI and /metrics': () => lagViews(env),
  });
});
