// Fuzz cases for a running broker: the request targets, case generation from
// (seed, index), mutation, and the local decode that predicts what the broker
// must do with each frame (test/fuzz/harness.ts runs them).
import { aclFilterOf } from '../../src/handlers/authorization.js';
import { HandlerRegistry } from '../../src/handlers/registry.js';
import { Reader } from '../../src/protocol/codec/reader.js';
import type { ApiCodec } from '../../src/protocol/codec/types.js';
import { Writer } from '../../src/protocol/codec/writer.js';
import { apiByKey, readRequestHeader, requestHeaderVersion, writeRequestHeader } from '../../src/protocol/messages/index.js';
import { ATTRIBUTES_OFFSET, buildBatch, CRC_OFFSET, crc32c, RECORDS_OFFSET, type Compression } from '../../src/protocol/records/index.js';
import { hasUnknownCode } from '../../src/security/acl.js';
import { inRange, loadOldSpecs, loadSpecs, mulberry32, SpecModel } from '../protocol/messages/spec.js';

/** The largest frame the fuzzed broker accepts (smaller than the default so "huge" sizes close at once). */
export const FUZZ_MAX_FRAME_BYTES = 1024 * 1024;

// ---------------------------------------------------------------- targets

export interface Target {
  apiKey: number;
  version: number;
  codec: ApiCodec<any, any>;
  model: SpecModel;
}

export const registry = new HandlerRegistry();
const specs = loadSpecs();
const oldSpecs = loadOldSpecs();

/** Every (API, version) the broker advertises, in order. */
export const targets: Target[] = registry.apiVersions().flatMap(({ apiKey, minVersion, maxVersion }) => {
  const codec = apiByKey.get(apiKey)!;
  const spec = specs.get(`${codec.name}Request`)!;
  const model = new SpecModel(spec);
  const old = oldSpecs.get(`request:${apiKey}`);
  // Versions Kafka 4 removed are described by Kafka 3.9.1's definition only.
  const oldModel = old === undefined ? model : new SpecModel(old);
  const out: Target[] = [];
  for (let version = minVersion; version <= maxVersion; version++) out.push({ apiKey, version, codec, model: inRange(spec.validVersions, version) ? model : oldModel });
  return out;
});
const servedKeys = registry.apiVersions().map((a) => a.apiKey);

// ---------------------------------------------------------------- cases

export type Expect = 'answer' | 'silent' | 'close' | 'desync';

export interface FuzzCase {
  index: number;
  apiKey: number;
  version: number;
  /** "valid" or the mutation applied. */
  kind: string;
  /** The bytes sent, size prefix included. */
  frame: Buffer;
  expect: Expect;
  /** For answer: how the answer is decoded. */
  correlationId: number;
  answerVersion: number;
}

function caseSeed(seed: number, index: number): number {
  let h = Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ index;
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d);
  h = Math.imul(h ^ (h >>> 15), 0x846ca68b);
  return (h ^ (h >>> 16)) >>> 0;
}

const int = (rnd: () => number, n: number) => Math.floor(rnd() * n);
const pick = <T>(rnd: () => number, xs: readonly T[]): T => xs[int(rnd, xs.length)]!;
const randBytes = (rnd: () => number, n: number) => {
  const b = Buffer.alloc(n);
  for (let i = 0; i < n; i++) b[i] = int(rnd, 256);
  return b;
};

/** A real record batch (sometimes compressed, sometimes with a corrupted payload but a correct CRC). */
function realBatch(rnd: () => number): Buffer {
  const n = 1 + int(rnd, 4);
  const records = Array.from({ length: n }, () => ({
    key: rnd() < 0.3 ? null : randBytes(rnd, int(rnd, 12)),
    value: rnd() < 0.1 ? null : randBytes(rnd, int(rnd, 64)),
    headers: rnd() < 0.2 ? [{ key: 'h', value: randBytes(rnd, 3) }] : undefined,
  }));
  const idempotent = rnd() < 0.3;
  const batch = buildBatch({
    compression: int(rnd, 5) as Compression,
    baseTimestamp: 1_700_000_000_000n + BigInt(int(rnd, 1_000_000)),
    producerId: idempotent ? BigInt(int(rnd, 1000)) : -1n,
    producerEpoch: idempotent ? int(rnd, 3) : -1,
    baseSequence: idempotent ? int(rnd, 5) : -1,
    isTransactional: rnd() < 0.1,
    records,
  });
  if (rnd() < 0.5 && batch.length > RECORDS_OFFSET) {
    // Corrupt the records (or compressed payload) or the header after the CRC, then fix the CRC so the damage gets past it.
    const flips = 1 + int(rnd, 4);
    for (let i = 0; i < flips; i++) {
      const at = rnd() < 0.7 ? RECORDS_OFFSET + int(rnd, batch.length - RECORDS_OFFSET) : ATTRIBUTES_OFFSET + int(rnd, RECORDS_OFFSET - ATTRIBUTES_OFFSET);
      batch[at]! ^= 1 << int(rnd, 8);
    }
    batch.writeUInt32BE(crc32c(batch, ATTRIBUTES_OFFSET), CRC_OFFSET);
  }
  return batch;
}

function withRealBatches(value: Record<string, unknown>, rnd: () => number): void {
  for (const t of (value.topicData as { partitionData: { records: unknown }[] }[] | undefined) ?? []) {
    for (const p of t.partitionData ?? []) {
      if (rnd() < 0.5) p.records = rnd() < 0.2 ? Buffer.concat([realBatch(rnd), realBatch(rnd)]) : realBatch(rnd);
    }
  }
}

const CLIENT_IDS = ['fuzz', null, '', 'rdkafka', 'ü'];

function encodeHeader(apiKey: number, version: number, headerVersion: number, correlationId: number, clientId: string | null): Buffer {
  const w = new Writer();
  writeRequestHeader(w, headerVersion, { requestApiKey: apiKey, requestApiVersion: version, correlationId, clientId });
  return w.toBuffer();
}

function encodeBody(t: Target, rnd: () => number): Buffer {
  const value = t.model.random(t.version, rnd);
  if (t.apiKey === 0) withRealBatches(value, rnd);
  const w = new Writer();
  t.codec.writeRequest(w, t.version, value);
  return w.toBuffer();
}

const INT16S = [0x7fff, 0xffff, 0x8000, 0xfffe, 0x0000, 0x0001, 0x7ffe];
const INT32S = [0x7fffffff, 0xffffffff, 0x80000000, 0xfffffffe, 0x00000000, 0x00ffffff, 0x0000ffff, 0x40000000];
const UVARINTS = [
  [0xff, 0xff, 0xff, 0xff, 0x0f], // 2^32-1
  [0xff, 0xff, 0xff, 0xff, 0x07],
  [0x80, 0x80, 0x80, 0x80, 0x08],
  [0xff, 0xff, 0xff, 0xff, 0xff, 0x01], // too long
  [0xff, 0xff, 0x03],
  [0x00],
];

/** Mutates a frame body (the bytes after the size prefix). */
function mutate(body: Buffer, t: Target, rnd: () => number, header: Buffer): { kind: string; body: Buffer } {
  const b: Buffer = Buffer.from(body);
  const op = int(rnd, 9);
  const pos = (from = 0) => (b.length > from ? from + int(rnd, b.length - from) : b.length);
  switch (op) {
    case 0: {
      const flips = 1 + int(rnd, 8);
      for (let i = 0; i < flips && b.length > 0; i++) b[pos(rnd() < 0.9 ? 8 : 0)]! ^= 1 << int(rnd, 8);
      return { kind: 'bitflip', body: b };
    }
    case 1:
      return { kind: 'truncate', body: b.subarray(0, int(rnd, b.length)) };
    case 2: {
      // A huge, negative or off-by-a-lot length where the body has one (or anywhere).
      const at = pos(8);
      const r = rnd();
      if (r < 0.35) {
        const v = pick(rnd, INT16S);
        const x = Buffer.alloc(2);
        x.writeUInt16BE(v);
        return { kind: 'length16', body: Buffer.concat([b.subarray(0, at), x, b.subarray(Math.min(b.length, at + 2))]) };
      }
      if (r < 0.7) {
        const x = Buffer.alloc(4);
        x.writeUInt32BE(pick(rnd, INT32S));
        return { kind: 'length32', body: Buffer.concat([b.subarray(0, at), x, b.subarray(Math.min(b.length, at + 4))]) };
      }
      const x = Buffer.from(pick(rnd, UVARINTS));
      const replace = rnd() < 0.5 ? 1 : 0;
      return { kind: 'uvarint', body: Buffer.concat([b.subarray(0, at), x, b.subarray(Math.min(b.length, at + replace))]) };
    }
    case 3:
      return { kind: 'garbage', body: Buffer.concat([header.subarray(0, 8), randBytes(rnd, int(rnd, 300))]) };
    case 4: {
      // The body after a header of the wrong version (v0: no client id; v1: no tags; v2: tags).
      const right = requestHeaderVersion(t.apiKey, t.version);
      const wrong = pick(
        rnd,
        [0, 1, 2].filter((v) => v !== right),
      );
      const h = encodeHeader(t.apiKey, t.version, wrong, header.readInt32BE(4), 'fuzz');
      return { kind: `header-v${wrong}`, body: Buffer.concat([h, b.subarray(header.length)]) };
    }
    case 5: {
      // Right API, another version (served or not).
      const v =
        rnd() < 0.8
          ? pick(
              rnd,
              targets.filter((x) => x.apiKey === t.apiKey),
            ).version + (rnd() < 0.2 ? 1 : 0)
          : int(rnd, 65536) - 32768;
      b.writeInt16BE(v, 2);
      return { kind: 'version', body: b };
    }
    case 6: {
      const key = rnd() < 0.85 ? pick(rnd, servedKeys) : int(rnd, 65536) - 32768;
      b.writeInt16BE(key, 0);
      return { kind: 'apikey', body: b };
    }
    case 7: {
      // Insert, delete or duplicate a run of bytes.
      const at = pos(8);
      const len = 1 + int(rnd, 16);
      const r = rnd();
      if (r < 0.33) return { kind: 'insert', body: Buffer.concat([b.subarray(0, at), randBytes(rnd, len), b.subarray(at)]) };
      if (r < 0.66) return { kind: 'delete', body: Buffer.concat([b.subarray(0, at), b.subarray(at + len)]) };
      return { kind: 'duplicate', body: Buffer.concat([b.subarray(0, at + len), b.subarray(at)]) };
    }
    default: {
      // Byte-level havoc: several interesting bytes.
      const n = 1 + int(rnd, 6);
      for (let i = 0; i < n && b.length > 0; i++) b[pos(8)] = pick(rnd, [0x00, 0xff, 0x7f, 0x80, 0x01, 0xfe]);
      return { kind: 'bytes', body: b };
    }
  }
}

/** What the broker must do with a frame body: mirrors src/server/connection.ts. */
export function predict(body: Buffer): { expect: Expect; correlationId: number; answerVersion: number } {
  if (body.length < 8) return { expect: 'close', correlationId: 0, answerVersion: 0 };
  const apiKey = body.readInt16BE(0);
  const version = body.readInt16BE(2);
  const correlationId = body.readInt32BE(4);
  const handler = registry.get(apiKey);
  if (!handler) return { expect: 'close', correlationId, answerVersion: 0 };
  if (version < handler.minVersion || version > handler.maxVersion) {
    if (apiKey !== 18) return { expect: 'close', correlationId, answerVersion: 0 };
    // ApiVersions at an unknown version is answered once its header parses as the newest versions' header.
    const h = new Reader(body);
    readRequestHeader(h, requestHeaderVersion(apiKey, Math.max(version, 0)));
    return h.error ? { expect: 'close', correlationId, answerVersion: 0 } : { expect: 'answer', correlationId, answerVersion: -1 };
  }
  const r = new Reader(body);
  readRequestHeader(r, requestHeaderVersion(apiKey, version));
  const request = r.error ? null : (handler.codec.readRequest(r, version) as { acks?: number } | null);
  if (r.error || request === null) return { expect: 'close', correlationId, answerVersion: 0 };
  if (apiKey === 0 && request.acks === 0) return { expect: 'silent', correlationId, answerVersion: version };
  if (hasUnknownAclCode(apiKey, request)) return { expect: 'close', correlationId, answerVersion: 0 };
  return { expect: 'answer', correlationId, answerVersion: version };
}

/** The ACL APIs close the connection on an ACL binding or filter holding an UNKNOWN (0) code, as Kafka's request parser refuses it. */
function hasUnknownAclCode(apiKey: number, request: unknown): boolean {
  type Filter = Parameters<typeof aclFilterOf>[0];
  if (apiKey === 29) return hasUnknownCode(aclFilterOf(request as Filter));
  if (apiKey === 30) {
    const { creations } = request as { creations: { resourceType: number; resourcePatternType: number; operation: number; permissionType: number }[] };
    return creations.some((c) => hasUnknownCode({ ...c, patternType: c.resourcePatternType }));
  }
  if (apiKey === 31) return (request as { filters: Filter[] }).filters.some((f) => hasUnknownCode(aclFilterOf(f)));
  return false;
}

export function makeCase(seed: number, index: number): FuzzCase {
  const rnd = mulberry32(caseSeed(seed, index));
  const t = targets[index % targets.length]!;
  const correlationId = index | 0;
  const header = encodeHeader(t.apiKey, t.version, requestHeaderVersion(t.apiKey, t.version), correlationId, pick(rnd, CLIENT_IDS));
  let body: Buffer = Buffer.concat([header, encodeBody(t, rnd)]);
  let kind = 'valid';
  if (rnd() < 0.6) ({ kind, body } = mutate(body, t, rnd, header));
  const size = Buffer.alloc(4);
  if (rnd() < 0.01) {
    // A size prefix that does not match the body: negative, too large, or off (the stream loses its framing).
    const r = rnd();
    const wrong = r < 0.3 ? -1 - int(rnd, 1000) : r < 0.5 ? FUZZ_MAX_FRAME_BYTES + 1 + int(rnd, 1 << 30) : Math.max(0, body.length + int(rnd, 41) - 20);
    if (wrong !== body.length) {
      size.writeInt32BE(wrong);
      const expect: Expect = wrong < 0 || wrong > FUZZ_MAX_FRAME_BYTES ? 'close' : 'desync';
      return {
        index,
        apiKey: t.apiKey,
        version: t.version,
        kind: `${kind}+size${wrong - body.length >= 0 ? '+' : ''}${wrong - body.length}`,
        frame: Buffer.concat([size, body]),
        expect,
        correlationId,
        answerVersion: 0,
      };
    }
  }
  size.writeInt32BE(body.length);
  const p = predict(body);
  return { index, apiKey: t.apiKey, version: t.version, kind, frame: Buffer.concat([size, body]), ...p };
}
