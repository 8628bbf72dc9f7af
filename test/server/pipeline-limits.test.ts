// The per-connection pipelining limits are options: with tiny ones, a
// client that pipelines many Produce requests is still read and answered in
// order (it just waits for room), and nothing is lost or reordered.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/protocol/errors.js';
import { CreateTopicsApi, FetchApi, ProduceApi } from '../../src/protocol/messages/index.js';
import { buildBatch, decodeRecords, parseBatches } from '../../src/protocol/records/index.js';
import { startTestBroker, type TestBroker } from '../support/broker.js';
import { RawClient } from '../support/raw-client.js';

let broker: TestBroker;
let client: RawClient;

beforeAll(async () => {
  broker = await startTestBroker({ connectionMaxInFlightRequests: 2, connectionMaxInFlightBytes: 1024, fetchReadAheadMaxBytes: 0 });
  client = await RawClient.connect(broker.bootstrap);
  const created = await client.request(CreateTopicsApi, 7, { topics: [{ name: 'limited', numPartitions: 1, replicationFactor: 1 }], timeoutMs: 1000 });
  expect(created.topics[0]!.errorCode).toBe(ErrorCode.NONE);
});
afterAll(async () => {
  client?.close();
  await broker?.destroy();
});

describe('pipeline limits', () => {
  it('answers 50 pipelined Produce requests in order past a limit of 2 requests / 1 KiB in flight', async () => {
    const n = 50;
    const value = (i: number) => `v${i}-${'x'.repeat(300)}`;
    const frames = Array.from({ length: n }, (_, i) =>
      client.encode(
        ProduceApi,
        9,
        { acks: -1, timeoutMs: 1000, topicData: [{ name: 'limited', partitionData: [{ index: 0, records: buildBatch({ records: [{ key: null, value: Buffer.from(value(i)) }] }) }] }] },
        1000 + i,
      ),
    );
    const answers = Array.from({ length: n }, () => client.nextFrame());
    client.write(Buffer.concat(frames));
    const responses = await Promise.all(answers);
    expect(responses.map((f) => f!.readInt32BE(0))).toEqual(Array.from({ length: n }, (_, i) => 1000 + i));
    const fetched = await client.request(FetchApi, 11, {
      replicaId: -1,
      maxWaitMs: 0,
      minBytes: 1,
      maxBytes: 1 << 20,
      isolationLevel: 0,
      sessionId: 0,
      sessionEpoch: -1,
      topics: [{ topic: 'limited', partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: 0n, logStartOffset: -1n, partitionMaxBytes: 1 << 20 }] }],
      forgottenTopicsData: [],
      rackId: '',
    });
    const raw = fetched.responses[0]!.partitions[0]!.records as Buffer | Buffer[];
    const records = Array.isArray(raw) ? Buffer.concat(raw) : raw;
    const stored = parseBatches(records, { mode: 'log' }).batches.flatMap((h) => decodeRecords(records, h).records.map((r) => r.value!.toString()));
    expect(stored).toEqual(Array.from({ length: n }, (_, i) => value(i)));
  });
});
