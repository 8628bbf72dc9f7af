// For every API and every version: random values built from the JSON spec
// (seeded), write -> read -> equal to the value normalised for that version,
// and write(read(bytes)) byte-identical.
import { describe, expect, it } from 'vitest';
import { Reader } from '../../../src/protocol/codec/reader.js';
import { Writer } from '../../../src/protocol/codec/writer.js';
import * as messages from '../../../src/protocol/messages/index.js';
import { apiByKey } from '../../../src/protocol/messages/index.js';
import { readRequestHeader, requestHeaderVersion, responseHeaderVersion, writeRequestHeader } from '../../../src/protocol/messages/request-header.js';
import { readResponseHeader, writeResponseHeader } from '../../../src/protocol/messages/response-header.js';
import { loadOldSpecs, loadSpecs, mulberry32, rangeOf, SpecModel } from './spec.js';

const SEED = Number(process.env.PROTOCOL_SEED ?? 0x5eed1234);
const VALUES_PER_VERSION = 6;
const specs = loadSpecs();
const oldSpecs = loadOldSpecs();
/** 3.9.1 versions the generator leaves out on purpose (scripts/protocol-gen/merge.ts NOT_EXTENDED). */
const NOT_EXTENDED = new Set(['ShareGroupHeartbeat', 'ShareGroupDescribe', 'ShareFetch', 'ShareAcknowledge']);

/** The versions a codec must cover: 4.3.1's, extended by those only 3.9.1 defines. */
function unionRange(name: string, apiKey: number): [number, number] {
  const [min, max] = rangeOf(specs.get(`${name}Request`)!.validVersions)!;
  const old = oldSpecs.get(`request:${apiKey}`);
  const o = old === undefined || NOT_EXTENDED.has(name) ? null : rangeOf(old.validVersions);
  return o === null ? [min, max] : [Math.min(min, o[0]), Math.max(max, o[1])];
}

type ReadFn = (r: Reader, v: number) => unknown;
type WriteFn = (w: Writer, v: number, m: any) => void;

/**
 * subset: the model is 3.9.1's, which lacks the fields 4.x added; the decoder
 * fills those with defaults, so the decoded value must contain the model's.
 */
function roundTrip(model: SpecModel, read: ReadFn, write: WriteFn, version: number, seed: number, subset = false): void {
  const rnd = mulberry32(seed);
  for (let i = 0; i < VALUES_PER_VERSION; i++) {
    const value = model.random(version, rnd);
    const where = `${model.msg.name} v${version} value #${i} (seed ${seed}, PROTOCOL_SEED=${SEED})`;
    try {
      const w = new Writer();
      write(w, version, value);
      const bytes = w.toBuffer();
      expect(bytes.length).toBe(w.length);
      const r = new Reader(bytes);
      const decoded = read(r, version);
      expect(r.error).toBeNull();
      expect(r.remaining()).toBe(0);
      if (subset) expect(decoded).toMatchObject(model.normalize(value, version) as object);
      else expect(decoded).toEqual(model.normalize(value, version));
      const w2 = new Writer();
      write(w2, version, decoded);
      expect(w2.toBuffer().equals(bytes)).toBe(true);
      // Every strict prefix must fail cleanly (sticky error, no throw).
      if (bytes.length > 0 && i === 0) {
        const cut = Math.floor(rnd() * bytes.length);
        const rp = new Reader(bytes, 0, cut);
        read(rp, version);
        expect(rp.error).not.toBeNull();
      }
    } catch (e) {
      (e as Error).message = `${where}: ${(e as Error).message}`;
      throw e;
    }
  }
}

const apis = [...apiByKey.values()].sort((a, b) => a.apiKey - b.apiKey);

describe('generated codecs cover the spec', () => {
  it('has a codec for every request/response pair with valid versions', () => {
    const expected = [...specs.values()]
      .filter((s) => s.type === 'request' && s.validVersions !== 'none')
      .map((s) => s.apiKey!)
      .sort((a, b) => a - b);
    expect(apis.map((a) => a.apiKey)).toEqual(expected);
    for (const a of apis) {
      const s = specs.get(`${a.name}Request`)!;
      expect([a.minVersion, a.maxVersion]).toEqual(unionRange(a.name, a.apiKey));
      expect(s).toBeDefined();
      expect(a.latestVersionUnstable).toBe(s.latestVersionUnstable === true);
    }
  });
});

describe('round trip, every API and version', () => {
  for (const api of apis) {
    for (const kind of ['Request', 'Response'] as const) {
      it(`${api.name}${kind} v${api.minVersion}-${api.maxVersion}`, () => {
        const spec = specs.get(api.name + kind)!;
        const model = new SpecModel(spec);
        const old = oldSpecs.get(`${kind.toLowerCase()}:${api.apiKey}`);
        const oldModel = old === undefined ? null : new SpecModel(old);
        const [min, max] = rangeOf(spec.validVersions)!;
        const read = (kind === 'Request' ? api.readRequest : api.readResponse) as ReadFn;
        const write = (kind === 'Request' ? api.writeRequest : api.writeResponse) as WriteFn;
        for (let v = api.minVersion; v <= api.maxVersion; v++) {
          const seed = (SEED ^ (api.apiKey * 7919 + v * 104729 + (kind === 'Request' ? 0 : 1))) >>> 0;
          // Versions only 3.9.1 defines are checked against 3.9.1's own definition;
          // a codec extended to them also carries 3.9-only fields in 4.x versions.
          const extended = api.minVersion < min || api.maxVersion > max;
          if (v >= min && v <= max) roundTrip(model, read, write, v, seed, extended);
          else roundTrip(oldModel!, read, write, v, seed, true);
        }
      });
    }
  }
});

describe('round trip, data schemas and headers', () => {
  for (const spec of specs.values()) {
    if (spec.type !== 'data' && spec.type !== 'header') continue;
    it(`${spec.name}`, () => {
      const mod = messages as unknown as Record<string, unknown>;
      const read = mod[`read${spec.name}`] as ReadFn;
      const write = mod[`write${spec.name}`] as WriteFn;
      expect(typeof read).toBe('function');
      const [min, max] = rangeOf(spec.validVersions)!;
      for (let v = min; v <= max; v++) roundTrip(new SpecModel(spec), read, write, v, (SEED + v * 31) >>> 0);
    });
  }
});

describe('headers', () => {
  it('request header v1 and v2, ClientId always has an int16 length', () => {
    for (const hv of [1, 2]) {
      const w = new Writer();
      writeRequestHeader(w, hv, { requestApiKey: 18, requestApiVersion: 3, correlationId: 7, clientId: 'rdkafka' });
      const b = w.toBuffer();
      const expected = Buffer.concat([Buffer.from('00120003000000070007', 'hex'), Buffer.from('rdkafka'), hv === 2 ? Buffer.from([0]) : Buffer.alloc(0)]);
      expect(b.toString('hex')).toBe(expected.toString('hex'));
      const r = new Reader(b);
      expect(readRequestHeader(r, hv)).toEqual({ requestApiKey: 18, requestApiVersion: 3, correlationId: 7, clientId: 'rdkafka' });
      expect(r.remaining()).toBe(0);
    }
  });

  it('null client id and unknown header tags', () => {
    const w = new Writer();
    const h = { requestApiKey: 3, requestApiVersion: 12, correlationId: -5, clientId: null, unknownTaggedFields: [{ tag: 3, data: Buffer.from('hi') }] };
    writeRequestHeader(w, 2, h);
    const b = w.toBuffer();
    expect(b.toString('hex')).toBe('0003000cfffffffbffff010302' + Buffer.from('hi').toString('hex'));
    const r = new Reader(b);
    expect(readRequestHeader(r, 2)).toEqual(h);
  });

  it('response header v0 and v1', () => {
    const w0 = new Writer();
    writeResponseHeader(w0, 0, { correlationId: 42 });
    expect(w0.toBuffer().toString('hex')).toBe('0000002a');
    const w1 = new Writer();
    writeResponseHeader(w1, 1, { correlationId: 42 });
    expect(w1.toBuffer().toString('hex')).toBe('0000002a00');
    expect(readResponseHeader(new Reader(w1.toBuffer()), 1)).toEqual({ correlationId: 42 });
  });

  it('header versions', () => {
    expect(requestHeaderVersion(18, 3)).toBe(2);
    expect(requestHeaderVersion(18, 2)).toBe(1);
    expect(requestHeaderVersion(0, 9)).toBe(2);
    expect(requestHeaderVersion(0, 8)).toBe(1);
    expect(requestHeaderVersion(17, 1)).toBe(1); // SaslHandshake never flexible
    expect(responseHeaderVersion(18, 4)).toBe(0); // ApiVersions exception
    expect(responseHeaderVersion(18, 0)).toBe(0);
    expect(responseHeaderVersion(3, 9)).toBe(1);
    expect(responseHeaderVersion(3, 8)).toBe(0);
    expect(responseHeaderVersion(1, 12)).toBe(1);
    expect(responseHeaderVersion(1, 11)).toBe(0);
  });
});

describe('defaults and tagged fields', () => {
  it('decoders fill absent fields with spec defaults', () => {
    const w = new Writer();
    messages.writeFetchRequest(w, 4, { maxWaitMs: 500, minBytes: 1, topics: [{ topic: 't', partitions: [{ partition: 0 }] }] });
    const m = messages.readFetchRequest(new Reader(w.toBuffer()), 4);
    expect(m.topics[0]!.partitions[0]!.highWatermark).toBe(9223372036854775807n); // tagged, v18+
    expect(m.topics[0]!.partitions[0]!.logStartOffset).toBe(-1n);
    expect(m.clusterId).toBeNull(); // default "null"
    expect(m.replicaId).toBe(-1);
    expect(m.sessionEpoch).toBe(-1);
    expect(m.replicaState).toEqual({ replicaId: -1, replicaEpoch: -1n });
    expect(m.rackId).toBe('');
  });

  it('known tagged fields are written only when not default, in tag order with unknown ones', () => {
    const base = { responses: [], throttleTimeMs: 0 };
    const w = new Writer();
    messages.writeProduceResponse(w, 10, base);
    expect(w.toBuffer().toString('hex')).toBe('010000000000');
    const w2 = new Writer();
    messages.writeProduceResponse(w2, 10, {
      ...base,
      nodeEndpoints: [{ nodeId: 1, host: 'h', port: 9092, rack: null }],
      unknownTaggedFields: [{ tag: 5, data: Buffer.from([0xaa]) }],
    });
    // 01 (responses: empty) 00000000 (throttle) 02 (two tags)
    // tag 0 size 0d: 02 (1 endpoint) 00000001 0268 00002384 00 (rack null) 00 (no tags)
    // tag 5 size 01 aa
    expect(w2.toBuffer().toString('hex')).toBe('010000000002000d020000000102680000238400000501aa');
  });

  it('tagged struct equal to the default is omitted', () => {
    const w = new Writer();
    messages.writeFetchResponse(w, 12, {
      responses: [{ topic: 't', partitions: [{ partitionIndex: 0, currentLeader: { leaderId: -1, leaderEpoch: -1 }, records: Buffer.alloc(0) }] }],
    });
    const m = messages.readFetchResponse(new Reader(w.toBuffer()), 12);
    expect(m.responses[0]!.partitions[0]!.currentLeader).toEqual({ leaderId: -1, leaderEpoch: -1 });
    const w2 = new Writer();
    messages.writeFetchResponse(w2, 12, {
      responses: [{ topic: 't', partitions: [{ partitionIndex: 0, currentLeader: { leaderId: 3, leaderEpoch: 7 }, records: Buffer.alloc(0) }] }],
    });
    expect(w2.length).toBeGreaterThan(w.length);
    const m2 = messages.readFetchResponse(new Reader(w2.toBuffer()), 12);
    expect(m2.responses[0]!.partitions[0]!.currentLeader).toEqual({ leaderId: 3, leaderEpoch: 7 });
  });

  it('fields absent from the written version are skipped', () => {
    const w = new Writer();
    messages.writeProduceRequest(w, 3, { transactionalId: null, acks: -1, timeoutMs: 1000, topicData: [{ name: 't', topicId: '0123456789abcdef0123456789abcdef', partitionData: [] }] });
    const m = messages.readProduceRequest(new Reader(w.toBuffer()), 3);
    expect(m.topicData[0]!.topicId).toBe('00000000-0000-0000-0000-000000000000');
    expect(m.topicData[0]!.name).toBe('t');
  });
});
