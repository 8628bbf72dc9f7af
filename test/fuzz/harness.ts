// Protocol fuzzer for a running broker, shared by test/fuzz/broker-fuzz.test.ts
// (100,000 cases in CI) and scripts/fuzz.ts (long runs).
//
// Every case is a function of (seed, index) alone: `makeCase(seed, i)` rebuilds
// its exact bytes. Cases are spread over a few connections (case i goes to
// connection i % connections) and pipelined (many frames per write). Before a
// frame is sent it is decoded locally exactly as the broker decodes it, which
// says whether the broker must answer it, stay silent (Produce acks=0) or close
// the connection; a batch ends at the first frame that closes, and the
// connection is reopened. Anything else the broker does is an anomaly.
import { Writable } from 'node:stream';
import { connect, type Socket } from 'node:net';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { startBroker, type RunningBroker } from '../../src/broker.js';
import { loadConfig, type OptionName } from '../../src/config/schema.js';
import { HandlerRegistry } from '../../src/handlers/registry.js';
import { createLogger } from '../../src/observability/logger.js';
import { Reader } from '../../src/protocol/codec/reader.js';
import type { ApiCodec } from '../../src/protocol/codec/types.js';
import { Writer } from '../../src/protocol/codec/writer.js';
import {
  apiByKey,
  ApiVersionsApi,
  MetadataApi,
  readRequestHeader,
  readResponseHeader,
  requestHeaderVersion,
  responseHeaderVersion,
  writeRequestHeader,
} from '../../src/protocol/messages/index.js';
import { ATTRIBUTES_OFFSET, buildBatch, CRC_OFFSET, crc32c, RECORDS_OFFSET, type Compression } from '../../src/protocol/records/index.js';
import { loadSpecs, mulberry32, SpecModel } from '../protocol/messages/spec.js';
import { RawClient } from '../support/raw-client.js';

/** The largest frame the fuzzed broker accepts (smaller than the default so "huge" sizes close at once). */
export const FUZZ_MAX_FRAME_BYTES = 1024 * 1024;

// ---------------------------------------------------------------- targets

export interface Target {
  apiKey: number;
  version: number;
  codec: ApiCodec<any, any>;
  model: SpecModel;
}

const registry = new HandlerRegistry();
const specs = loadSpecs();

/** Every (API, version) the broker advertises, in order. */
export const targets: Target[] = registry.apiVersions().flatMap(({ apiKey, minVersion, maxVersion }) => {
  const codec = apiByKey.get(apiKey)!;
  const model = new SpecModel(specs.get(`${codec.name}Request`)!);
  const out: Target[] = [];
  for (let version = minVersion; version <= maxVersion; version++) out.push({ apiKey, version, codec, model });
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
      const wrong = pick(rnd, [0, 1, 2].filter((v) => v !== right));
      const h = encodeHeader(t.apiKey, t.version, wrong, header.readInt32BE(4), 'fuzz');
      return { kind: `header-v${wrong}`, body: Buffer.concat([h, b.subarray(header.length)]) };
    }
    case 5: {
      // Right API, another version (served or not).
      const v = rnd() < 0.8 ? pick(rnd, targets.filter((x) => x.apiKey === t.apiKey)).version + (rnd() < 0.2 ? 1 : 0) : int(rnd, 65536) - 32768;
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
  return { expect: 'answer', correlationId, answerVersion: version };
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
      return { index, apiKey: t.apiKey, version: t.version, kind: `${kind}+size${wrong - body.length >= 0 ? '+' : ''}${wrong - body.length}`, frame: Buffer.concat([size, body]), expect, correlationId, answerVersion: 0 };
    }
  }
  size.writeInt32BE(body.length);
  const p = predict(body);
  return { index, apiKey: t.apiKey, version: t.version, kind, frame: Buffer.concat([size, body]), ...p };
}

// ---------------------------------------------------------------- running

export interface Anomaly {
  kind: 'unexpected-close' | 'timeout' | 'bad-answer' | 'answered-undecodable' | 'bystander';
  caseIndex: number | null;
  api: string;
  detail: string;
  /** Silent (Produce acks=0) frames sent just before, whose failure would close the connection unseen. */
  related?: number[];
}

export interface FuzzStats {
  seed: number;
  cases: number;
  valid: number;
  mutated: number;
  answered: number;
  silent: number;
  closes: number;
  desyncs: number;
  connections: number;
  bystanderChecks: number;
  bystanderMaxMs: number;
  elapsedMs: number;
  anomalies: Anomaly[];
  anomalyCounts: Record<string, number>;
  perApi: Record<string, number>;
}

export interface FuzzOptions {
  bootstrap: string;
  seed: number;
  cases: number;
  connections?: number;
  /** Most frames per write. */
  batch?: number;
  /** A batch unanswered for this long is given up (connection dropped). */
  batchTimeoutMs?: number;
  /** Seeded topic the bystander checks (name and partition count). */
  seededTopic?: { name: string; partitions: number };
  progress?: (done: number, stats: FuzzStats) => void;
  /** Anomalies kept per kind (all are counted). */
  maxAnomaliesKept?: number;
}

const apiName = (key: number) => apiByKey.get(key)?.name ?? `api${key}`;

/** A socket that splits the responses into frames and reports close. */
class FuzzSocket {
  private chunks: Buffer[] = [];
  private buffered = 0;
  readonly frames: Buffer[] = [];
  closed = false;
  private wake: (() => void) | null = null;

  private constructor(readonly socket: Socket) {
    socket.on('data', (c: Buffer) => {
      this.chunks.push(c);
      this.buffered += c.length;
      for (;;) {
        if (this.buffered < 4) break;
        if (this.chunks[0]!.length < 4) this.chunks = [Buffer.concat(this.chunks)];
        const size = this.chunks[0]!.readInt32BE(0);
        if (this.buffered < 4 + size) break;
        const all = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
        this.frames.push(all.subarray(4, 4 + size));
        const rest = all.subarray(4 + size);
        this.chunks = rest.length ? [rest] : [];
        this.buffered = rest.length;
      }
      this.notify();
    });
    socket.on('close', () => {
      this.closed = true;
      this.notify();
    });
    socket.on('error', () => {});
  }

  private notify(): void {
    const w = this.wake;
    this.wake = null;
    w?.();
  }

  static open(host: string, port: number): Promise<FuzzSocket> {
    return new Promise((resolve, reject) => {
      const s = connect(port, host, () => {
        s.setNoDelay(true);
        resolve(new FuzzSocket(s));
      });
      s.once('error', reject);
    });
  }

  /** Resolves on the next frame or close, or after ms. */
  next(ms: number): Promise<void> {
    if (this.frames.length > 0 || this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.wake = null;
        resolve();
      }, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  destroy(): void {
    this.socket.destroy();
  }
}

function checkAnswer(c: FuzzCase, frame: Buffer): string | null {
  // The API key the frame actually carries (mutations may change it).
  const key = c.frame.readInt16BE(4);
  const unsupported = c.answerVersion === -1;
  const version = unsupported ? 0 : c.answerVersion;
  const codec = apiByKey.get(key)!;
  const r = new Reader(frame);
  const header = readResponseHeader(r, unsupported ? 0 : responseHeaderVersion(key, version));
  if (header.correlationId !== c.correlationId) return `correlation id ${header.correlationId}, expected ${c.correlationId}`;
  const decoded = codec.readResponse(r, version) as { errorCode?: number };
  if (r.error) return `undecodable ${codec.name} v${version} response: ${r.error}`;
  if (r.remaining() !== 0) return `${r.remaining()} bytes after the ${codec.name} v${version} response`;
  if (unsupported && decoded.errorCode !== 35) return `ApiVersions at an unknown version answered error ${decoded.errorCode}`;
  return null;
}

export async function runFuzz(opts: FuzzOptions): Promise<FuzzStats> {
  const [host, portText] = opts.bootstrap.split(':');
  const port = Number(portText);
  const connections = opts.connections ?? 6;
  const batchMax = opts.batch ?? 24;
  const batchTimeoutMs = opts.batchTimeoutMs ?? 4000;
  const keep = opts.maxAnomaliesKept ?? 1000;
  const started = Date.now();
  const stats: FuzzStats = {
    seed: opts.seed, cases: 0, valid: 0, mutated: 0, answered: 0, silent: 0, closes: 0, desyncs: 0, connections: 0,
    bystanderChecks: 0, bystanderMaxMs: 0, elapsedMs: 0, anomalies: [], anomalyCounts: {}, perApi: {},
  };
  const anomaly = (a: Anomaly) => {
    stats.anomalyCounts[a.kind] = (stats.anomalyCounts[a.kind] ?? 0) + 1;
    if (stats.anomalyCounts[a.kind]! <= keep) stats.anomalies.push(a);
  };

  let done = false;
  let lastProgress = 0;

  const worker = async (w: number) => {
    let sock: FuzzSocket | null = null;
    let carried: FuzzCase | null = null;
    let previous: FuzzCase[] = [];
    let i = w;
    while (i < opts.cases || carried) {
      if (!sock || sock.closed) {
        sock = await FuzzSocket.open(host!, port);
        stats.connections++;
      }
      const batch: FuzzCase[] = [];
      while (batch.length < batchMax && (carried || i < opts.cases)) {
        const c: FuzzCase = carried ?? makeCase(opts.seed, i);
        // Sent in a batch of their own: a frame that closes the connection
        // while a Produce answer is still pending (Produce requests are
        // pipelined) drops that answer, and a bad size prefix drops the
        // frames that arrived before it in the same read (see the report in
        // broker-fuzz.test.ts).
        if (batch.length > 0 && (c.kind.includes('+size') || ((c.expect === 'close' || c.expect === 'desync') && batch.some((b) => b.frame.length >= 6 && b.frame.readInt16BE(4) === 0)))) {
          if (c !== carried) i += connections;
          carried = c;
          break;
        }
        if (c === carried) carried = null;
        else i += connections;
        batch.push(c);
        if (c.expect === 'close' || c.expect === 'desync') break;
      }
      sock.socket.write(batch.length === 1 ? batch[0]!.frame : Buffer.concat(batch.map((c) => c.frame)));
      for (const c of batch) {
        stats.cases++;
        if (c.kind === 'valid') stats.valid++;
        else stats.mutated++;
        const name = apiName(c.apiKey);
        stats.perApi[name] = (stats.perApi[name] ?? 0) + 1;
      }
      const answers = batch.filter((c) => c.expect === 'answer');
      const last = batch[batch.length - 1]!;
      const deadline = Date.now() + batchTimeoutMs;
      let k = 0;
      for (;;) {
        while (sock.frames.length > 0) {
          const frame = sock.frames.shift()!;
          const c = answers[k++];
          if (!c) {
            anomaly({ kind: 'answered-undecodable', caseIndex: last.index, api: `${apiName(last.apiKey)} v${last.version}`, detail: `${last.kind}: a response although the frame does not decode (${last.expect})` });
            continue;
          }
          const problem = checkAnswer(c, frame);
          if (problem) anomaly({ kind: 'bad-answer', caseIndex: c.index, api: `${apiName(c.apiKey)} v${c.version}`, detail: `${c.kind}: ${problem}` });
          else stats.answered++;
        }
        if (k >= answers.length) {
          if (last.expect === 'answer' || last.expect === 'silent') break;
          if (last.expect === 'desync' || sock.closed) break;
        }
        if (sock.closed) {
          const c = answers[k]!;
          const before = (batch.indexOf(c) > 0 ? batch.slice(Math.max(0, batch.indexOf(c) - 3), batch.indexOf(c)) : previous.slice(-3)).map((x) => `${x.index} ${x.frame.length >= 8 ? `${apiName(x.frame.readInt16BE(4))} v${x.frame.readInt16BE(6)}` : 'short'} ${x.kind} ${x.expect}`);
          const related = batch.slice(0, batch.indexOf(c)).filter((x) => x.expect === 'silent').map((x) => x.index);
          anomaly({ kind: 'unexpected-close', caseIndex: c.index, api: `${apiName(c.apiKey)} v${c.version}`, detail: `${c.kind}: connection closed instead of an answer (after ${before.join('; ') || 'nothing'})`, related });
          break;
        }
        const left = deadline - Date.now();
        if (left <= 0) {
          const c = answers[k] ?? last;
          anomaly({ kind: 'timeout', caseIndex: c.index, api: `${apiName(c.apiKey)} v${c.version}`, detail: `${c.kind}: no ${k < answers.length ? 'answer' : 'close'} within ${batchTimeoutMs} ms` });
          sock.destroy();
          sock = null;
          break;
        }
        await sock.next(left);
      }
      if (sock) {
        if (last.expect === 'close') stats.closes++;
        if (last.expect === 'desync') {
          stats.desyncs++;
          sock.destroy();
          sock = null;
        }
      }
      previous = batch;
      stats.silent += batch.filter((c) => c.expect === 'silent').length;
      if (opts.progress && stats.cases - lastProgress >= 10_000) {
        lastProgress = stats.cases;
        stats.elapsedMs = Date.now() - started;
        opts.progress(stats.cases, stats);
      }
    }
    sock?.destroy();
  };

  const bystander = async () => {
    const client = await RawClient.connect(opts.bootstrap);
    const expectedVersions = registry.apiVersions();
    const within = <T>(p: Promise<T>, what: string) =>
      Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what}: no answer within 10 s`)), 10_000))]);
    try {
      while (!done) {
        const t0 = Date.now();
        try {
          const av = await within(client.request(ApiVersionsApi, 3, { clientSoftwareName: 'bystander', clientSoftwareVersion: '1' }), 'ApiVersions');
          if (av.errorCode !== 0) throw new Error(`ApiVersions error ${av.errorCode}`);
          const got = av.apiKeys.map((k) => ({ apiKey: k.apiKey, minVersion: k.minVersion, maxVersion: k.maxVersion }));
          if (JSON.stringify(got) !== JSON.stringify(expectedVersions)) throw new Error(`ApiVersions answered ${JSON.stringify(got)}`);
          if (opts.seededTopic) {
            const md = await within(client.request(MetadataApi, 12, { topics: [{ name: opts.seededTopic.name }], allowAutoTopicCreation: false }), 'Metadata');
            const t = md.topics[0];
            if (md.brokers.length !== 1 || !t || t.errorCode !== 0 || t.partitions.length !== opts.seededTopic.partitions) {
              throw new Error(`Metadata answered ${JSON.stringify(md, (_, v) => (typeof v === 'bigint' ? String(v) : v))}`);
            }
          }
          stats.bystanderChecks++;
          stats.bystanderMaxMs = Math.max(stats.bystanderMaxMs, Date.now() - t0);
        } catch (err) {
          anomaly({ kind: 'bystander', caseIndex: null, api: 'bystander', detail: (err as Error).message });
          if (client.closed) return;
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      client.close();
    }
  };

  const watching = bystander();
  await Promise.all(Array.from({ length: connections }, (_, w) => worker(w)));
  done = true;
  await watching;
  stats.elapsedMs = Date.now() - started;
  return stats;
}

export function formatStats(s: FuzzStats): string {
  const lines = [
    `seed ${s.seed}: ${s.cases} cases (${s.valid} valid, ${s.mutated} mutated) in ${(s.elapsedMs / 1000).toFixed(1)} s, ${Math.round(s.cases / (s.elapsedMs / 1000))}/s`,
    `answered ${s.answered}, silent ${s.silent}, closed ${s.closes}, desynced ${s.desyncs}, connections ${s.connections}; bystander ${s.bystanderChecks} checks, slowest ${s.bystanderMaxMs} ms`,
    `anomalies: ${JSON.stringify(s.anomalyCounts)}`,
  ];
  // Per kind: the APIs involved and the first few cases (rebuild one with makeCase(seed, index)).
  const kinds = new Map<string, Anomaly[]>();
  for (const a of s.anomalies) kinds.set(a.kind, [...(kinds.get(a.kind) ?? []), a]);
  for (const [kind, list] of kinds) {
    const apis = new Map<string, number>();
    for (const a of list) apis.set(a.api, (apis.get(a.api) ?? 0) + 1);
    lines.push(`  ${kind} (kept ${list.length}) by API: ${[...apis].map(([api, n]) => `${api}: ${n}`).join(', ')}`);
    for (const a of list.slice(0, 5)) lines.push(`    case ${a.caseIndex} (${a.api}): ${a.detail}`);
  }
  return lines.join('\n');
}

// ---------------------------------------------------------------- broker and seeded topic

export interface BrokerLogLine {
  level: number;
  msg: string;
  [k: string]: unknown;
}

export interface FuzzBroker {
  broker: RunningBroker;
  bootstrap: string;
  schema: string;
  /** Broker log lines at error level and above. */
  errors: BrokerLogLine[];
  query<T extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params?: unknown[]): Promise<T[]>;
  destroy(): Promise<void>;
}

/** An in-process broker in a fresh schema, whose error logs are kept. */
export async function startFuzzBroker(databaseUrl: string, overrides: Partial<Record<OptionName, unknown>> = {}): Promise<FuzzBroker> {
  const schema = `fuzz_${randomBytes(6).toString('hex')}`;
  const errors: BrokerLogLine[] = [];
  let pending = '';
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      pending += chunk.toString();
      let nl;
      while ((nl = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        try {
          const parsed = JSON.parse(line) as BrokerLogLine;
          if (process.env.FUZZ_LOG_LEVEL) process.stderr.write(line + "\n");
          if (parsed.level >= 50 && errors.length < 10_000) errors.push(parsed);
        } catch {
          /* not JSON */
        }
      }
      cb();
    },
  });
  const config = loadConfig(
    {},
    {
      databaseUrl, schema, port: 0, host: '127.0.0.1', advertisedHost: '127.0.0.1', metricsEnabled: false, logLevel: "error", ...(process.env.FUZZ_LOG_LEVEL ? { logLevel: process.env.FUZZ_LOG_LEVEL } : {}),
      socketRequestMaxBytes: FUZZ_MAX_FRAME_BYTES, fetchMaxWaitMsCap: 50, groupInitialRebalanceDelayMs: 0,
      // The authorizer is on so fuzzed CreateAcls/DescribeAcls/DeleteAcls really store and match; the fuzzing clients are super users so their other requests still reach the handlers' logic.
      authorizerEnabled: true, superUsers: 'User:ANONYMOUS', ...overrides,
    },
  );
  const broker = await startBroker(config, createLogger(config.logLevel, sink));
  const admin = new pg.Pool({ connectionString: databaseUrl, max: 2, options: `-c search_path=${schema}` });
  return {
    broker,
    bootstrap: `127.0.0.1:${broker.port}`,
    schema,
    errors,
    async query(sql, params) {
      return (await admin.query(sql, params as unknown[])).rows;
    },
    async destroy() {
      await broker.stop();
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.end();
    },
  };
}

/** Broker error logs grouped by message, with the APIs and the first case (correlation id = case index). */
export function summarizeErrors(errors: BrokerLogLine[]): string {
  const groups = new Map<string, { n: number; apis: Set<string>; first: unknown; stack: unknown }>();
  for (const e of errors) {
    const key = `${e.msg}: ${String(e.err)}`;
    const g = groups.get(key) ?? { n: 0, apis: new Set<string>(), first: e.correlationId, stack: e.stack };
    g.n++;
    g.apis.add(`${String(e.api)} v${String(e.v)}`);
    groups.set(key, g);
  }
  return [...groups]
    .map(([m, g]) => `  ${g.n}x ${m}\n    first case ${String(g.first)}; ${[...g.apis].sort().join(', ')}${g.stack ? `\n    ${String(g.stack).split('\n').slice(0, 4).join('\n    ')}` : ''}`)
    .join('\n');
}

/** A name the request generator never produces (its strings come from a fixed list). */
export const SEEDED_TOPIC = { name: 'pgkafka-fuzz-seeded-topic', partitions: 3 };

/** Creates the seeded topic and writes known batches into it. */
export async function seedTopic(bootstrap: string): Promise<void> {
  const { CreateTopicsApi, ProduceApi } = await import('../../src/protocol/messages/index.js');
  const client = await RawClient.connect(bootstrap);
  try {
    const created = await client.request(CreateTopicsApi, 7, { topics: [{ name: SEEDED_TOPIC.name, numPartitions: SEEDED_TOPIC.partitions, replicationFactor: 1 }], timeoutMs: 5000 });
    if (created.topics[0]!.errorCode !== 0) throw new Error(`CreateTopics: error ${created.topics[0]!.errorCode}`);
    for (let round = 0; round < 4; round++) {
      for (let p = 0; p < SEEDED_TOPIC.partitions; p++) {
        const records = Array.from({ length: 1 + round }, (_, i) => ({ key: Buffer.from(`k${p}-${round}-${i}`), value: Buffer.from(`value ${p}/${round}/${i}`) }));
        const res = await client.request(ProduceApi, 9, {
          acks: -1, timeoutMs: 5000,
          topicData: [{ name: SEEDED_TOPIC.name, partitionData: [{ index: p, records: buildBatch({ compression: (round % 5) as Compression, records }) }] }],
        });
        const e = res.responses[0]!.partitionResponses[0]!.errorCode;
        if (e !== 0) throw new Error(`Produce to the seeded topic: error ${e}`);
      }
    }
  } finally {
    client.close();
  }
}

/** Everything stored for the seeded topic, as comparable text. */
export async function snapshotSeededTopic(b: Pick<FuzzBroker, 'query'>): Promise<string> {
  const topic = await b.query('SELECT topic_id, name, partition_count, configs FROM topics WHERE name = $1', [SEEDED_TOPIC.name]);
  const parts = await b.query(
    'SELECT p.partition, p.next_offset::text, p.log_start_offset::text, p.leader_epoch FROM partitions p JOIN topics t USING (topic_id) WHERE t.name = $1 ORDER BY 1',
    [SEEDED_TOPIC.name],
  );
  const batches = await b.query(
    `SELECT b.partition, b.base_offset::text, b.last_offset::text, b.record_count, b.size, encode(b.data, 'hex') AS data
       FROM batches b JOIN topics t USING (topic_id) WHERE t.name = $1 ORDER BY 1, 2`,
    [SEEDED_TOPIC.name],
  );
  return JSON.stringify({ topic, parts, batches });
}
