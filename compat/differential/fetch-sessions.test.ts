// Differential: incremental fetch sessions (KIP-227) sent as the same raw
// Fetch requests to a real Apache Kafka and to pgkafka: which partitions each
// answer carries, and the session errors. Session ids are random on both, so
// only whether one was given is compared.
import { describe, it } from 'vitest';
import { FetchApi, ProduceApi, type FetchRequest } from '../../src/protocol/messages/index.js';
import type { Input } from '../../src/protocol/codec/types.js';
import { buildBatch } from '../../src/protocol/records/index.js';
import type { RawClient } from '../../test/support/raw-client.js';
import { createTopics, eventually, expectSame, onBoth, usePair } from '../support/differential.js';

const pair = usePair();

const asked = (partition: number, fetchOffset = 0n) => ({ partition, fetchOffset, partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1 });

describe('incremental fetch sessions', () => {
  it('answers only what changed, and refuses stale epochs, unknown sessions and a switch to topic ids', async () => {
    expectSame(
      await onBoth(pair(), async (connect) => {
        const c: RawClient = await connect();
        const topic = 'diff-sessions';
        await createTopics(c, [{ name: topic, numPartitions: 3 }]);
        const produce = async (partition: number) => {
          const records = buildBatch({ baseTimestamp: 1_700_000_000_000n, records: [{ key: null, value: Buffer.from('v'), timestampDelta: 0n, headers: [] }] });
          return eventually(
            () => c.request(ProduceApi, 11, { acks: -1, timeoutMs: 10_000, topicData: [{ name: topic, partitionData: [{ index: partition, records }] }] }),
            (r) => r.responses[0]!.partitionResponses[0]!.errorCode === 0,
          );
        };
        const fetch = async (version: number, body: Partial<Input<FetchRequest>>) => {
          const res = await c.request(FetchApi, version, { replicaId: -1, maxWaitMs: 0, minBytes: 1, maxBytes: 1 << 20, isolationLevel: 0, topics: [], ...body });
          const answered = res.responses.flatMap((t) =>
            t.partitions.map((p) => [p.partitionIndex, p.errorCode, p.highWatermark, Array.isArray(p.records) ? p.records.length > 0 : (p.records?.length ?? 0) > 0]),
          );
          return { res, seen: { errorCode: res.errorCode, session: res.sessionId !== 0, answered } };
        };
        await produce(0);
        const full = await fetch(12, { sessionId: 0, sessionEpoch: 0, topics: [{ topic, partitions: [asked(0), asked(1), asked(2)] }] });
        const id = full.res.sessionId;
        const idle = await fetch(12, { sessionId: id, sessionEpoch: 1, topics: [{ topic, partitions: [asked(0, 1n)] }] });
        await produce(2);
        const news = await fetch(12, { sessionId: id, sessionEpoch: 2 });
        const stale = await fetch(12, { sessionId: id, sessionEpoch: 2 });
        const unknown = await fetch(12, { sessionId: id + 1, sessionEpoch: 1 });
        const byId = await fetch(13, { sessionId: id, sessionEpoch: 3 });
        const forgot = await fetch(12, { sessionId: id, sessionEpoch: 3, topics: [{ topic, partitions: [asked(2, 1n)] }], forgottenTopicsData: [{ topic, partitions: [0] }] });
        const closed = await fetch(12, { sessionId: id, sessionEpoch: -1, topics: [{ topic, partitions: [asked(1)] }] });
        const gone = await fetch(12, { sessionId: id, sessionEpoch: 4 });
        return [full, idle, news, stale, unknown, byId, forgot, closed, gone].map((f) => f.seen);
      }),
    );
  });
});
