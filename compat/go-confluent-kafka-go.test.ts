// confluent-kafka-go 2.11.1 (cgo over the librdkafka 2.11.1 its module ships
// as a static library) through compat/go/confluent/main.go: Producer with
// delivery reports (every codec, idempotent, transactional), Consumer with
// Assign() for group-less reads and Subscribe() for groups, AdminClient
// (topics, configs, partitions, groups and offsets, DeleteRecords, ACLs,
// DescribeCluster) and SendOffsetsToTransaction; SASL PLAIN and SCRAM-SHA-512
// over TLS (goSecurityTests).
import { afterAll, beforeAll, describe } from 'vitest';
import { startTestBroker, type TestBroker } from '../test/support/broker.js';
import { runScenarios } from './scenarios.js';
import { buildGo, goScenarios, goSecurityTests } from './support/go.js';

let broker: TestBroker;
let bin: string;
beforeAll(async () => {
  bin = await buildGo('confluent');
  broker = await startTestBroker({ autoCreateTopicsEnable: false });
}, 300_000); // a cold Go build cache
afterAll(async () => {
  await broker?.destroy();
});

const aclBroker = () => startTestBroker({ autoCreateTopicsEnable: false, authorizerEnabled: true, superUsers: 'User:ANONYMOUS' });

describe('confluent-kafka-go', () => {
  // The group description of librdkafka's admin API carries no protocol type.
  runScenarios(
    'confluent-kafka-go',
    goScenarios(
      () => bin,
      () => broker,
      { tag: 'ckg', aclBroker, noProtocolType: true, lacks: ['admin: delete group offsets and groups', 'admin: producers and transactions'] },
    ),
    45_000,
  );
  // Its Assign() reader is a Consumer with a group.id, for which librdkafka sends FindCoordinator: app needs READ on that group.
  goSecurityTests(() => bin, { tag: 'ckg', authError: 'kafka.ErrAuthentication', readerGroup: 'compat-unused' });
});
