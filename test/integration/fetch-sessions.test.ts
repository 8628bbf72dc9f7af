// Incremental fetch sessions (KIP-227) at the wire: a full fetch opens a
// session, incremental fetches name only what changed and are answered with
// only the partitions that have news, on any connection; the session errors
// and /metrics as a client and an operator see them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/protocol/errors.js';
import { CreateTopicsApi, FetchApi, ProduceApi, type FetchRequest } from '../../src/protocol/messages/index.js';
import type { Input } from '../../src/protocol/codec/types.js';
import { buildBatch } from '../../src/protocol/records/index.js';
import { startTestBroker, type TestBroker } from '../support/broker.js';
import { RawClient } from '../support/raw-client.js';

let broker: TestBroker;
let client: RawClient;

beforeAll(async () => {
  broker = await startTestBroker({ autoCreateTopicsEnable: false });
  client = await RawClient.connect(broker.bootstrap);
});
afterAll(async () => {
  client?.close();
  await broker?.destroy();
});

async function createTopic(name: string, numPartitions: number): Promise<string> {
  const res = await client.request(CreateTopicsApi, 7, { topics: [{ name, numPartitions, replicationFactor: 1 }], timeoutMs: 1000 });
  expect(res.topics[0]!.errorCode).toBe(ErrorCode.NONE);
  return res.topics[0]!.topicId;
}

async function produce(topic: string, partition: number, value: string, via = client) {
  const records = buildBatch({ compression: 0, baseTimestamp: 1_700_000_000_000n, records: [{ offsetDelta: 0, timestampDelta: 0n, key: null, value: Buffer.from(value), headers: [] }] });
  const res = await via.request(ProduceApi, 9, { acks: -1, timeoutMs: 1000, topicData: [{ name: topic, partitionData: [{ index: partition, records }] }] });
  expect(res.responses[0]!.partitionResponses[0]!.errorCode).toBe(ErrorCode.NONE);
}

const asked = (partition: number, fetchOffset = 0n) => ({ partition, fetchOffset, partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1 });

function fetch(version: number, body: Partial<Input<FetchRequest>>, via = client) {
  return via.request(FetchApi, version, { replicaId: -1, maxWaitMs: 0, minBytes: 1, maxBytes: 10 << 20, isolationLevel: 0, topics: [], ...body });
}

/** [topic, partition, high watermark, bytes of records] of each partition answered. */
const answered = (res: Awaited<ReturnType<typeof fetch>>) =>
  res.responses.flatMap((t) => t.partitions.map((p) => [t.topic, p.partitionIndex, p.highWatermark, Array.isArray(p.records) ? Buffer.concat(p.records).length : (p.records?.length ?? 0)] as const));

describe('incremental fetch sessions', () => {
  it('answers an incremental fetch with only the partitions that changed, across connections', async () => {
    await createTopic('sessions', 3);
    await produce('sessions', 0, 'a');
    const full = await fetch(12, { sessionId: 0, sessionEpoch: 0, topics: [{ topic: 'sessions', partitions: [asked(0), asked(1), asked(2)] }] });
    expect(full.errorCode).toBe(ErrorCode.NONE);
    expect(full.sessionId).toBeGreaterThan(0);
    expect(answered(full).map(([t, p, hw]) => [t, p, hw])).toEqual([
      ['sessions', 0, 1n],
      ['sessions', 1, 0n],
      ['sessions', 2, 0n],
    ]);
    const id = full.sessionId;

    // Nothing new: the session's partitions are all read, none answered.
    const idle = await fetch(12, { sessionId: id, sessionEpoch: 1, topics: [{ topic: 'sessions', partitions: [asked(0, 1n)] }] });
    expect([idle.errorCode, idle.sessionId, answered(idle)]).toEqual([ErrorCode.NONE, id, []]);

    // A record on partition 2 (offset 0 still asked, from the full fetch): only it is answered, also on another connection.
    await produce('sessions', 2, 'b');
    const other = await RawClient.connect(broker.bootstrap);
    try {
      const news = await fetch(12, { sessionId: id, sessionEpoch: 2 }, other);
      expect(answered(news).map(([t, p, hw]) => [t, p, hw])).toEqual([['sessions', 2, 1n]]);
      expect(answered(news)[0]![3]).toBeGreaterThan(0);
    } finally {
      other.close();
    }

    // A repeated epoch, an unknown session, and a version that changes to topic ids are refused with no partitions.
    const stale = await fetch(12, { sessionId: id, sessionEpoch: 2 });
    expect([stale.errorCode, stale.sessionId, stale.responses]).toEqual([ErrorCode.INVALID_FETCH_SESSION_EPOCH, 0, []]);
    const unknown = await fetch(12, { sessionId: id + 1, sessionEpoch: 1 });
    expect(unknown.errorCode).toBe(ErrorCode.FETCH_SESSION_ID_NOT_FOUND);
    const byId = await fetch(13, { sessionId: id, sessionEpoch: 3 });
    expect(byId.errorCode).toBe(ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR);

    // Forgetting partition 0 and moving partition 2 on; then the final epoch closes the session.
    const forgot = await fetch(12, { sessionId: id, sessionEpoch: 3, topics: [{ topic: 'sessions', partitions: [asked(2, 1n)] }], forgottenTopicsData: [{ topic: 'sessions', partitions: [0] }] });
    expect([forgot.errorCode, answered(forgot)]).toEqual([ErrorCode.NONE, []]);
    const closed = await fetch(12, { sessionId: id, sessionEpoch: -1, topics: [{ topic: 'sessions', partitions: [asked(1)] }] });
    expect([closed.sessionId, answered(closed).length]).toEqual([0, 1]);
    expect((await fetch(12, { sessionId: id, sessionEpoch: 4 })).errorCode).toBe(ErrorCode.FETCH_SESSION_ID_NOT_FOUND);
  });

  it('parks an incremental long poll until a partition of the session grows, and answers just that one (topic ids, v13+)', async () => {
    const topicId = await createTopic('sessions-by-id', 4);
    const full = await fetch(16, { sessionId: 0, sessionEpoch: 0, topics: [{ topicId, partitions: [0, 1, 2, 3].map((p) => asked(p)) }] });
    expect(full.sessionId).toBeGreaterThan(0);
    expect(full.responses.map((t) => [t.topicId, t.partitions.length])).toEqual([[topicId, 4]]);

    // Responses go out in request order on a connection, so the record comes from another.
    const producer = await RawClient.connect(broker.bootstrap);
    const parked = fetch(16, { sessionId: full.sessionId, sessionEpoch: 1, maxWaitMs: 20_000 });
    await produce('sessions-by-id', 3, 'c', producer).finally(() => producer.close());
    const woken = await parked;
    expect(woken.responses.map((t) => [t.topicId, t.partitions.map((p) => [p.partitionIndex, p.highWatermark])])).toEqual([[topicId, [[3, 1n]]]]);
  });

  it('counts sessions and incremental fetches in /metrics', async () => {
    const body = await (await globalThis.fetch(`http://127.0.0.1:${broker.metricsPort}/metrics`)).text();
    const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(body)?.[1]);
    // The session of the first test was closed; the long poll's is open with its 4 partitions.
    expect([value('pgkafka_fetch_sessions'), value('pgkafka_fetch_session_partitions')]).toEqual([1, 4]);
    expect(value('pgkafka_fetch_incremental_requests_total')).toBe(4);
  });
});
