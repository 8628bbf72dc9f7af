// segmentio/kafka-go 0.4.51 through compat/go/kafkago/main.go: Writer (every
// codec) and Reader (one partition, or a group with CommitMessages) as
// applications use them, kafka.ConsumerGroup generations for the rebalance,
// and kafka.Client for admin (topics, configs, partitions, groups and
// offsets, ACLs); SASL PLAIN and SCRAM-SHA-512 over TLS on the Transport and
// the Reader's Dialer (goSecurityTests). kafka-go has no idempotent or
// transactional producer and no DeleteRecords or DescribeCluster call.
import { afterAll, beforeAll, describe } from 'vitest';
import { startTestBroker, type TestBroker } from '../test/support/broker.js';
import { runScenarios } from './scenarios.js';
import { buildGo, goScenarios, goSecurityTests } from './support/go.js';

let broker: TestBroker;
let bin: string;
beforeAll(async () => {
  bin = await buildGo('kafkago');
  broker = await startTestBroker({ autoCreateTopicsEnable: false });
}, 300_000); // a cold Go build cache
afterAll(async () => {
  await broker?.destroy();
});

const aclBroker = () => startTestBroker({ autoCreateTopicsEnable: false, authorizerEnabled: true, superUsers: 'User:ANONYMOUS' });

describe('kafka-go', () => {
  // kafka-go's Reader returns a zero-length value as nil (its Writer stores it as empty): FINDINGS.md.
  runScenarios(
    'kafka-go',
    goScenarios(
      () => bin,
      () => broker,
      {
        tag: 'kg',
        aclBroker,
        dataset: { emptyValue: false },
        lacks: [
          'admin: delete records',
          'admin: describe cluster',
          'produce: idempotent',
          'transactions: commit and abort',
          'transactions: consume-transform-produce',
          'admin: producers and transactions',
        ],
      },
    ),
    45_000,
  );
  goSecurityTests(() => bin, { tag: 'kg', authError: 'kafka.SASLAuthenticationFailed', dataset: { emptyValue: false } });
});
