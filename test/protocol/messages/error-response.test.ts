// The generated error responses (scripts/error-responses.ts): for every API
// and version, the answer to a random request encodes and decodes, carries
// the error in every error field it has (Kafka's getErrorResponse), and
// echoes the request's resources; a few APIs checked field by field against
// what Kafka's request classes build.
import { describe, expect, it } from 'vitest';
import { Reader } from '../../../src/protocol/codec/reader.js';
import { Writer } from '../../../src/protocol/codec/writer.js';
import type { ApiCodec } from '../../../src/protocol/codec/types.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { AlterReplicaLogDirsApi, apiByKey, DeleteTopicsApi, FetchApi, FindCoordinatorApi, MetadataApi, OffsetFetchApi, ProduceApi } from '../../../src/protocol/messages/index.js';
import { errorCodes, inRange, loadSpecs, mulberry32, rangeOf, SpecModel } from './spec.js';

const SEED = Number(process.env.PROTOCOL_SEED ?? 0x0e770e77);
const CODE = ErrorCode.KAFKA_STORAGE_ERROR;
const specs = loadSpecs();

/** Encodes and decodes `m` as `api`'s response at `version`. */
function throughWire<Res>(api: ApiCodec<unknown, Res>, version: number, m: unknown): Res {
  const w = new Writer();
  api.writeResponse(w, version, m as never);
  const r = new Reader(w.toBuffer());
  const decoded = api.readResponse(r, version);
  expect(r.error).toBeNull();
  expect(r.remaining()).toBe(0);
  return decoded;
}

/** The request as a broker decodes it (absent fields at their defaults). */
function decodedRequest<Req>(api: ApiCodec<Req, unknown>, version: number, value: unknown): Req {
  const w = new Writer();
  api.writeRequest(w, version, value as never);
  return api.readRequest(new Reader(w.toBuffer()), version);
}

const apis = [...apiByKey.values()].sort((a, b) => a.apiKey - b.apiKey);

describe('error responses, every API and version', () => {
  for (const api of apis) {
    const reqSpec = specs.get(`${api.name}Request`)!;
    const resSpec = specs.get(`${api.name}Response`)!;
    const [min, max] = rangeOf(reqSpec.validVersions)!;
    it(`${api.name} v${min}-${max}`, () => {
      const model = new SpecModel(reqSpec);
      const resModel = new SpecModel(resSpec);
      const topError = resSpec.fields?.find((f) => f.name === 'ErrorCode');
      for (let v = min; v <= max; v++) {
        const rnd = mulberry32(SEED + api.apiKey * 100 + v);
        for (let i = 0; i < 4; i++) {
          const request = decodedRequest(api, v, model.random(v, rnd));
          const built = api.errorResponse(request, v, CODE);
          if (built === null) {
            expect(api.name).toBe('Produce');
            continue;
          }
          const res = throughWire(api, v, built) as Record<string, unknown>;
          const codes = errorCodes(resModel.msg, res, v);
          const where = `${api.name} v${v} #${i}`;
          // Metadata v13's top-level code means REBOOTSTRAP_REQUIRED: Kafka leaves it at 0.
          if (api.name === 'Metadata') expect(codes.slice(0, -1).every((c) => c === CODE) && res.errorCode === 0, where).toBe(true);
          else
            expect(
              codes.every((c) => c === CODE),
              where,
            ).toBe(true);
          if (topError && inRange(topError.versions, v) && api.name !== 'Metadata') {
            expect(res.errorCode, where).toBe(CODE);
          }
        }
      }
    });
  }
});

const partition = (index: number) => ({ index, records: null });

describe("error responses echo what Kafka's getErrorResponse echoes", () => {
  it('Produce: every partition asked for, with base offset -1; nothing at acks=0', () => {
    const request = decodedRequest(ProduceApi, 9, { acks: -1, timeoutMs: 1000, topicData: [{ name: 't', partitionData: [partition(0), partition(3)] }] });
    const res = throughWire(ProduceApi, 9, ProduceApi.errorResponse(request, 9, CODE));
    expect(res.responses.map((t) => [t.name, t.partitionResponses.map((p) => [p.index, p.errorCode, p.baseOffset, p.logStartOffset])])).toEqual([
      [
        't',
        [
          [0, CODE, -1n, -1n],
          [3, CODE, -1n, -1n],
        ],
      ],
    ]);
    expect(ProduceApi.errorResponse(decodedRequest(ProduceApi, 9, { acks: 0, topicData: [] }), 9, CODE)).toBeNull();
  });

  it('Fetch: partitions with high watermark -1 before v13, the top-level code and session alone from v13', () => {
    const topics = [{ topic: 't', topicId: '8f3c36b6-3b28-4d47-9d1b-1c2e3f4a5b6c', partitions: [{ partition: 2, fetchOffset: 5n, partitionMaxBytes: 100 }] }];
    const v12 = throughWire(FetchApi, 12, FetchApi.errorResponse(decodedRequest(FetchApi, 12, { sessionId: 7, topics }), 12, CODE));
    expect([v12.errorCode, v12.sessionId, v12.responses.map((t) => [t.topic, t.partitions.map((p) => [p.partitionIndex, p.errorCode, p.highWatermark])])]).toEqual([
      CODE,
      7,
      [['t', [[2, CODE, -1n]]]],
    ]);
    const v13 = throughWire(FetchApi, 13, FetchApi.errorResponse(decodedRequest(FetchApi, 13, { sessionId: 7, topics }), 13, CODE));
    expect([v13.errorCode, v13.sessionId, v13.responses]).toEqual([CODE, 7, []]);
  });

  it('OffsetFetch: partitions at v1, the top-level code at v2-7, each group from v8', () => {
    const v1 = throughWire(OffsetFetchApi, 1, OffsetFetchApi.errorResponse(decodedRequest(OffsetFetchApi, 1, { groupId: 'g', topics: [{ name: 't', partitionIndexes: [4] }] }), 1, CODE));
    expect(v1.topics.map((t) => [t.name, t.partitions.map((p) => [p.partitionIndex, p.errorCode, p.committedOffset, p.metadata])])).toEqual([['t', [[4, CODE, -1n, '']]]]);
    const v5 = throughWire(OffsetFetchApi, 5, OffsetFetchApi.errorResponse(decodedRequest(OffsetFetchApi, 5, { groupId: 'g', topics: [{ name: 't', partitionIndexes: [4] }] }), 5, CODE));
    expect([v5.errorCode, v5.topics]).toEqual([CODE, []]);
    const v8 = throughWire(
      OffsetFetchApi,
      8,
      OffsetFetchApi.errorResponse(
        decodedRequest(OffsetFetchApi, 8, {
          groups: [
            { groupId: 'a', topics: null },
            { groupId: 'b', topics: null },
          ],
        }),
        8,
        CODE,
      ),
    );
    expect(v8.groups.map((g) => [g.groupId, g.errorCode, g.topics])).toEqual([
      ['a', CODE, []],
      ['b', CODE, []],
    ]);
  });

  it('DeleteTopics: the names before v6, names and ids from v6', () => {
    const v5 = throughWire(DeleteTopicsApi, 5, DeleteTopicsApi.errorResponse(decodedRequest(DeleteTopicsApi, 5, { topicNames: ['a', 'b'], timeoutMs: 1 }), 5, CODE));
    expect(v5.responses.map((t) => [t.name, t.errorCode])).toEqual([
      ['a', CODE],
      ['b', CODE],
    ]);
    const id = '0b5d7e0e-3a0c-4e4f-8a53-6a1e2f9c8d7b';
    const v6 = throughWire(DeleteTopicsApi, 6, DeleteTopicsApi.errorResponse(decodedRequest(DeleteTopicsApi, 6, { topics: [{ name: null, topicId: id }], timeoutMs: 1 }), 6, CODE));
    expect(v6.responses.map((t) => [t.name, t.topicId, t.errorCode])).toEqual([[null, id, CODE]]);
  });

  it('FindCoordinator: no node before v4, each key from v4', () => {
    const v3 = throughWire(FindCoordinatorApi, 3, FindCoordinatorApi.errorResponse(decodedRequest(FindCoordinatorApi, 3, { key: 'g' }), 3, ErrorCode.COORDINATOR_NOT_AVAILABLE));
    expect([v3.errorCode, v3.nodeId, v3.host, v3.port]).toEqual([ErrorCode.COORDINATOR_NOT_AVAILABLE, -1, '', -1]);
    const v4 = throughWire(FindCoordinatorApi, 4, FindCoordinatorApi.errorResponse(decodedRequest(FindCoordinatorApi, 4, { coordinatorKeys: ['g', 'h'] }), 4, ErrorCode.COORDINATOR_NOT_AVAILABLE));
    expect(v4.coordinators.map((c) => [c.key, c.errorCode, c.nodeId, c.port])).toEqual([
      ['g', 15, -1, -1],
      ['h', 15, -1, -1],
    ]);
  });

  it('AlterReplicaLogDirs: the topics of every directory, flattened', () => {
    const request = decodedRequest(AlterReplicaLogDirsApi, 2, {
      dirs: [
        { path: '/a', topics: [{ name: 't', partitions: [0, 1] }] },
        { path: '/b', topics: [{ name: 'u', partitions: [2] }] },
      ],
    });
    const res = throughWire(AlterReplicaLogDirsApi, 2, AlterReplicaLogDirsApi.errorResponse(request, 2, CODE));
    expect(res.results.map((t) => [t.topicName, t.partitions.map((p) => [p.partitionIndex, p.errorCode])])).toEqual([
      [
        't',
        [
          [0, CODE],
          [1, CODE],
        ],
      ],
      ['u', [[2, CODE]]],
    ]);
  });

  it('Metadata: the topics asked for, with their code; none when all topics are asked for', () => {
    const named = throughWire(MetadataApi, 12, MetadataApi.errorResponse(decodedRequest(MetadataApi, 12, { topics: [{ name: 't' }] }), 12, CODE));
    expect(named.topics.map((t) => [t.name, t.errorCode, t.partitions])).toEqual([['t', CODE, []]]);
    expect(throughWire(MetadataApi, 12, MetadataApi.errorResponse(decodedRequest(MetadataApi, 12, { topics: null }), 12, CODE)).topics).toEqual([]);
  });
});
