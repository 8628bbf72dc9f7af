// IBM/sarama 1.61 through compat/go/sarama/main.go, with config.Version set
// to the Kafka version whose protocol pgkafka serves (4.3.1): SyncProducer
// (every codec, idempotent, transactional), group-less reads
// (ConsumePartition), ConsumerGroup (manual commit, resume, range rebalance
// on a second member), ClusterAdmin (topics, configs, partitions, groups and
// offsets, DeleteRecords, ACLs, DescribeCluster) and a consume-transform-
// produce loop with AddMessageToTxn; SASL PLAIN and SCRAM-SHA-512 (xdg-go/scram)
// over TLS (goSecurityTests). Sarama's default version: FINDINGS.md.
import { afterAll, beforeAll, describe } from 'vitest';
import { startTestBroker, type TestBroker } from '../test/support/broker.js';
import { runScenarios } from './scenarios.js';
import { buildGo, goScenarios, goSecurityTests } from './support/go.js';

let broker: TestBroker;
let bin: string;
beforeAll(async () => {
  bin = await buildGo('sarama');
  broker = await startTestBroker({ autoCreateTopicsEnable: false });
}, 300_000); // a cold Go build cache
afterAll(async () => {
  await broker?.destroy();
});

const aclBroker = () => startTestBroker({ autoCreateTopicsEnable: false, authorizerEnabled: true, superUsers: 'User:ANONYMOUS' });

describe('sarama', () => {
  runScenarios(
    'sarama',
    goScenarios(
      () => bin,
      () => broker,
      { tag: 'sr', aclBroker, noLowWatermark: true, lacks: ['admin: producers and transactions'], env: { SARAMA_VERSION: process.env.SARAMA_VERSION ?? '4.3.1' } },
    ),
    45_000,
  );
  goSecurityTests(() => bin, { tag: 'sr', authError: 'sarama.ErrSASLAuthenticationFailed', env: { SARAMA_VERSION: process.env.SARAMA_VERSION ?? '4.3.1' } });
});
