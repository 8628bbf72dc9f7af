// The request and commit histograms on /metrics: fed by the requests the
// broker serves, so an operator can see how long each API takes and how much
// of a produce's time is PostgreSQL's commit.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/protocol/errors.js';
import { CreateTopicsApi, FetchApi, ProduceApi } from '../../src/protocol/messages/index.js';
import { buildBatch } from '../../src/protocol/records/index.js';
import { startTestBroker, type TestBroker } from '../support/broker.js';
import { RawClient } from '../support/raw-client.js';

let broker: TestBroker;
let client: RawClient;

beforeAll(async () => {
  broker = await startTestBroker({ metricsEnabled: true });
  client = await RawClient.connect(broker.bootstrap);
});
afterAll(async () => {
  client?.close();
  await broker?.destroy();
});

async function scrape(): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${broker.metricsPort}/metrics`);
  expect(res.status).toBe(200);
  return res.text();
}

/** The value of one sample line, e.g. `pgkafka_produce_commit_duration_seconds_count`, or `name{le="0.5"}`; `whenAbsent` for a series not yet observed. */
function sample(body: string, series: string, whenAbsent?: number): number {
  const line = body.split('\n').find((l) => l.startsWith(`${series} `));
  if (!line && whenAbsent !== undefined) return whenAbsent;
  if (!line) throw new Error(`no sample ${series}`);
  return Number(line.slice(series.length + 1));
}

async function createTopic(name: string) {
  const res = await client.request(CreateTopicsApi, 7, { topics: [{ name, numPartitions: 1, replicationFactor: 1 }], timeoutMs: 1000 });
  expect(res.topics[0]!.errorCode).toBe(ErrorCode.NONE);
}

describe('request and commit histograms', () => {
  it('count every Produce and its commit, and time a parked Fetch from its read to its answer', async () => {
    await createTopic('metrics-produce');
    await createTopic('metrics-empty');
    const before = await scrape();
    const producesBefore = sample(before, 'pgkafka_request_duration_seconds_count{api="Produce"}', 0);
    const commitsBefore = sample(before, 'pgkafka_produce_commit_duration_seconds_count');

    for (let i = 0; i < 5; i++) {
      const records = buildBatch({ records: [{ key: null, value: Buffer.from(`v${i}`) }] });
      const res = await client.request(ProduceApi, 9, { transactionalId: null, acks: -1, timeoutMs: 5000, topicData: [{ name: 'metrics-produce', partitionData: [{ index: 0, records }] }] });
      expect(res.responses[0]!.partitionResponses[0]!.errorCode).toBe(ErrorCode.NONE);
    }
    // A long poll on an empty partition: answered empty after its wait, which the Fetch histogram includes.
    const fetched = await client.request(FetchApi, 11, {
      replicaId: -1,
      maxWaitMs: 300,
      minBytes: 1,
      maxBytes: 1 << 20,
      isolationLevel: 0,
      sessionId: 0,
      sessionEpoch: -1,
      topics: [{ topic: 'metrics-empty', partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: 0n, logStartOffset: -1n, partitionMaxBytes: 1 << 20 }] }],
      forgottenTopicsData: [],
      rackId: '',
    });
    expect(fetched.responses[0]!.partitions[0]!.errorCode).toBe(ErrorCode.NONE);

    const after = await scrape();
    expect(sample(after, 'pgkafka_request_duration_seconds_count{api="Produce"}') - producesBefore).toBe(5);
    // Each of the 5 one-at-a-time Produce requests was its own flush.
    expect(sample(after, 'pgkafka_produce_commit_duration_seconds_count') - commitsBefore).toBe(5);
    expect(sample(after, 'pgkafka_produce_commit_duration_seconds_sum')).toBeGreaterThan(0);
    // The parked Fetch took at least its 300 ms wait: it is not in the buckets below 0.25 s.
    expect(sample(after, 'pgkafka_request_duration_seconds_count{api="Fetch"}')).toBe(1);
    expect(sample(after, 'pgkafka_request_duration_seconds_bucket{le="0.25",api="Fetch"}')).toBe(0);
    expect(sample(after, 'pgkafka_request_duration_seconds_bucket{le="0.5",api="Fetch"}')).toBe(1);
    // A commit takes no longer than the Produce request that waited for it.
    expect(sample(after, 'pgkafka_produce_commit_duration_seconds_sum')).toBeLessThanOrEqual(sample(after, 'pgkafka_request_duration_seconds_sum{api="Produce"}'));
  });

  it('are not served when metrics are off, and the broker still answers', async () => {
    const off = await startTestBroker({ metricsEnabled: false });
    try {
      expect(off.metricsPort).toBeNull();
      const c = await RawClient.connect(off.bootstrap);
      try {
        const res = await c.request(CreateTopicsApi, 7, { topics: [{ name: 'no-metrics', numPartitions: 1, replicationFactor: 1 }], timeoutMs: 1000 });
        expect(res.topics[0]!.errorCode).toBe(ErrorCode.NONE);
      } finally {
        c.close();
      }
    } finally {
      await off.destroy();
    }
  });
});
