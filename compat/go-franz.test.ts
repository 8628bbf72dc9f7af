// franz-go 1.22 (kgo) with kadm 1.20 through compat/go/franz/main.go: every
// codec, group-less reads (ConsumePartitions), consumer groups (commit,
// resume, a second member rebalancing), kadm admin (topics, configs,
// partitions, groups and lag, DeleteRecords, ACLs, brokers), DescribeCluster
// as a raw kmsg request, the idempotent producer (franz-go's default),
// transactions and a GroupTransactSession; SASL PLAIN and SCRAM-SHA-512 over
// TLS (goSecurityTests).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../test/support/broker.js';
import { runScenarios } from './scenarios.js';
import { buildGo, goScenarios, goSecurityTests, runGo } from './support/go.js';
import { dataset, expectRecords, fromJson, toJson, type JsonRead } from './support/records.js';

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

describe('franz-go incremental fetch sessions', () => {
  it('reads 120 partitions through a session, most of it in incremental fetches', async () => {
    const metric = async (name: string) => {
      const body = await (await fetch(`http://127.0.0.1:${broker.metricsPort}/metrics`)).text();
      return Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(body)?.[1] ?? 0);
    };
    const topic = 'fg-sessions';
    const partitions = Array.from({ length: 120 }, (_, p) => p);
    const recs = dataset(topic, { partitions: partitions.length, perPartition: 3 });
    const before = await metric('pgkafka_fetch_incremental_requests_total');
    const [, , read] = (await runGo(bin, broker.bootstrap, [
      { op: 'create', topics: [{ name: topic, partitions: partitions.length, configs: {} }] },
      { op: 'produce', topic, codec: 'none', records: toJson(recs) },
      { op: 'fetch', topic, partitions, maxBytes: 4096 },
    ])) as [unknown, unknown, { records: JsonRead[] }];
    expectRecords(fromJson(read.records), recs);
    expect((await metric('pgkafka_fetch_incremental_requests_total')) - before).toBeGreaterThan(10);
  }, 60_000);
});
