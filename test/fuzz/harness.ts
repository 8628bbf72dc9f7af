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
// The cases are built in cases.ts, the broker and its seeded topic in
// fuzz-broker.ts; this file runs the cases and checks the answers.
import { connect, type Socket } from 'node:net';
import { Reader } from '../../src/protocol/codec/reader.js';
import { apiByKey, ApiVersionsApi, MetadataApi, readResponseHeader, responseHeaderVersion } from '../../src/protocol/messages/index.js';
import { RawClient } from '../support/raw-client.js';
import { makeCase, registry, type FuzzCase } from './cases.js';

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
    seed: opts.seed,
    cases: 0,
    valid: 0,
    mutated: 0,
    answered: 0,
    silent: 0,
    closes: 0,
    desyncs: 0,
    connections: 0,
    bystanderChecks: 0,
    bystanderMaxMs: 0,
    elapsedMs: 0,
    anomalies: [],
    anomalyCounts: {},
    perApi: {},
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
            anomaly({
              kind: 'answered-undecodable',
              caseIndex: last.index,
              api: `${apiName(last.apiKey)} v${last.version}`,
              detail: `${last.kind}: a response although the frame does not decode (${last.expect})`,
            });
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
          const before = (batch.indexOf(c) > 0 ? batch.slice(Math.max(0, batch.indexOf(c) - 3), batch.indexOf(c)) : previous.slice(-3)).map(
            (x) => `${x.index} ${x.frame.length >= 8 ? `${apiName(x.frame.readInt16BE(4))} v${x.frame.readInt16BE(6)}` : 'short'} ${x.kind} ${x.expect}`,
          );
          const related = batch
            .slice(0, batch.indexOf(c))
            .filter((x) => x.expect === 'silent')
            .map((x) => x.index);
          anomaly({
            kind: 'unexpected-close',
            caseIndex: c.index,
            api: `${apiName(c.apiKey)} v${c.version}`,
            detail: `${c.kind}: connection closed instead of an answer (after ${before.join('; ') || 'nothing'})`,
            related,
          });
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
    const within = <T>(p: Promise<T>, what: string) => Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what}: no answer within 10 s`)), 10_000))]);
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
