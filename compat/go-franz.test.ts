// franz-go 1.22 (kgo) with kadm 1.20 through compat/go/franz/main.go: every
// codec, group-less reads (ConsumePartitions), consumer groups (commit,
// resume, a second member rebalancing), kadm admin (topics, configs,
// partitions, groups and lag, DeleteRecords, ACLs, brokers), DescribeCluster
// as a raw kmsg request, the idempotent producer (franz-go's default),
// transactions and a GroupTransactSession; SASL PLAIN and SCRAM-SHA-512 over
// TLS (goSecurityTests).
import { afterAll, beforeAll, describe } from 'vitest';
import { startTestBroker, type TestBroker } from '../test/support/broker.js';
import { runScenarios } from './scenarios.js';
import { buildGo, goScenarios, goSecurityTests } from './support/go.js';

let broker: TestBroker;
let bin: string;
beforeAll(async () => {
  bin = await buildGo('franz');
  broker = await startTestBroker({ autoCreateTopicsEnable: false });
}, 300_000); // a cold Go build cache
afterAll(async () => {
  await broker?.destroy();
});

const aclBroker = () => startTestBroker({ autoCreateTopicsEnable: false, authorizerEnabled: true, superUsers: 'User:ANONYMOUS' });

describe('franz-go', () => {
  // kadm's ListOffsetsAfterMilli answers the end offset where Kafka answers -1 (no record at or after the time).
  runScenarios(
    'franz-go',
    goScenarios(
      () => bin,
      () => broker,
      { tag: 'fg', aclBroker, timestampMissIsEnd: true },
    ),
    45_000,
  );
  goSecurityTests(() => bin, { tag: 'fg', authError: 'kerr.SaslAuthenticationFailed' });
});
