// A minimal pipelining Kafka client over the project's generated codecs (for
// the idle and scale sections, which need many cheap connections).
import { connect, type Socket } from 'node:net';
import { Reader } from '../src/protocol/codec/reader.js';
import type { ApiCodec, Input } from '../src/protocol/codec/types.js';
import { Writer } from '../src/protocol/codec/writer.js';
import { readResponseHeader, requestHeaderVersion, responseHeaderVersion, writeRequestHeader } from '../src/protocol/messages/index.js';

export class RawClient {
  private chunks: Buffer[] = [];
  private buffered = 0;
  private readonly waiting: ((frame: Buffer | null) => void)[] = [];
  private correlationId = 1;
  closed = false;
  /** Sizes of the last request sent and response received, with their 4-byte length prefixes. */
  lastRequestBytes = 0;
  lastResponseBytes = 0;

  private constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.chunks.push(chunk);
      this.buffered += chunk.length;
      for (;;) {
        if (this.buffered < 4) return;
        if (this.chunks[0]!.length < 4) this.chunks = [Buffer.concat(this.chunks)];
        const size = this.chunks[0]!.readInt32BE(0);
        // Joined only once the whole frame is here: joining on every chunk is quadratic in a large response.
        if (this.buffered < 4 + size) return;
        let buf = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
        const frame = buf.subarray(4, 4 + size);
        buf = buf.subarray(4 + size);
        this.chunks = buf.length ? [buf] : [];
        this.buffered = buf.length;
        this.waiting.shift()?.(frame);
      }
    });
    socket.on('close', () => {
      this.closed = true;
      for (const w of this.waiting.splice(0)) w(null);
    });
    socket.on('error', () => {});
  }

  static connect(host: string, port: number, timeoutMs = 10_000): Promise<RawClient> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, host);
      const t = setTimeout(() => {
        socket.destroy();
        reject(new Error('connect timed out'));
      }, timeoutMs);
      socket.once('connect', () => {
        clearTimeout(t);
        socket.setNoDelay(true);
        resolve(new RawClient(socket));
      });
      socket.once('error', (e) => {
        clearTimeout(t);
        reject(e);
      });
    });
  }

  async request<Req, Res>(codec: ApiCodec<Req, Res>, version: number, body: Input<Req>, timeoutMs = 30_000): Promise<Res> {
    const correlationId = this.correlationId++;
    const w = new Writer();
    const sizeAt = w.reserveInt32();
    writeRequestHeader(w, requestHeaderVersion(codec.apiKey, version), {
      requestApiKey: codec.apiKey,
      requestApiVersion: version,
      correlationId,
      clientId: 'pgkafka-bench',
    });
    codec.writeRequest(w, version, body);
    w.patchInt32(sizeAt, w.length - 4);
    if (this.closed) throw new Error('connection closed');
    let timer: NodeJS.Timeout | undefined;
    const frame = await new Promise<Buffer | null>((resolve, reject) => {
      this.waiting.push(resolve);
      timer = setTimeout(() => reject(new Error(`${codec.name} timed out after ${timeoutMs} ms`)), timeoutMs);
      this.socket.write(w.toBuffer());
    }).finally(() => clearTimeout(timer));
    if (!frame) throw new Error(`connection closed instead of answering ${codec.name} v${version}`);
    this.lastRequestBytes = w.length;
    this.lastResponseBytes = frame.length + 4;
    const r = new Reader(frame);
    const header = readResponseHeader(r, responseHeaderVersion(codec.apiKey, version));
    if (header.correlationId !== correlationId) throw new Error(`correlation id ${header.correlationId}, expected ${correlationId}`);
    const decoded = codec.readResponse(r, version);
    if (r.error) throw new Error(`undecodable ${codec.name} v${version} response: ${r.error}`);
    return decoded;
  }

  close(): void {
    this.socket.destroy();
  }
}

import { FetchApi } from '../src/protocol/messages/index.js';
import { readBatchHeaderAt } from '../src/protocol/records/index.js';

export interface FetchPartitionResult {
  errorCode: number;
  highWatermark: bigint;
  records: number;
  bytes: number;
  /** offset after the last complete batch returned (the input offset when none) */
  nextOffset: bigint;
}

/** One Fetch v11 (topic names) for one partition; counts records from the batch headers without decoding them. */
export async function fetchPartition(
  c: RawClient,
  topic: string,
  partition: number,
  offset: bigint,
  opts: { maxWaitMs?: number; minBytes?: number; partitionMaxBytes?: number; timeoutMs?: number } = {},
): Promise<FetchPartitionResult> {
  const res = await c.request(
    FetchApi,
    11,
    {
      replicaId: -1,
      maxWaitMs: opts.maxWaitMs ?? 0,
      minBytes: opts.minBytes ?? 1,
      maxBytes: 64 * 1024 * 1024,
      isolationLevel: 0,
      sessionId: 0,
      sessionEpoch: -1,
      topics: [{ topic, partitions: [{ partition, currentLeaderEpoch: -1, fetchOffset: offset, logStartOffset: -1n, partitionMaxBytes: opts.partitionMaxBytes ?? 1_048_576 }] }],
      forgottenTopicsData: [],
      rackId: '',
    },
    opts.timeoutMs ?? 30_000,
  );
  const p = res.responses[0]?.partitions[0];
  if (!p) throw new Error(`Fetch answered no partition (error ${res.errorCode})`);
  const buf = p.records === null ? Buffer.alloc(0) : Array.isArray(p.records) ? Buffer.concat(p.records) : p.records;
  let pos = 0;
  let records = 0;
  let nextOffset = offset;
  for (;;) {
    const h = readBatchHeaderAt(buf, pos);
    if (!h) break;
    records += h.recordCount;
    nextOffset = h.baseOffset + BigInt(h.lastOffsetDelta) + 1n;
    pos = h.end;
  }
  return { errorCode: p.errorCode, highWatermark: p.highWatermark, records, bytes: pos, nextOffset };
}
