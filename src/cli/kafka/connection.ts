// One TCP connection to one broker, speaking the Kafka protocol through the
// project's generated codecs: size-prefixed frames, correlation ids, responses
// matched in order (Kafka answers each connection's requests in order).
import { connect, type Socket } from 'node:net';
import { Reader } from '../../protocol/codec/reader.js';
import type { ApiCodec, Input } from '../../protocol/codec/types.js';
import { Writer } from '../../protocol/codec/writer.js';
import { ApiVersionsApi, readResponseHeader, requestHeaderVersion, responseHeaderVersion, writeRequestHeader } from '../../protocol/messages/index.js';
import { CliError } from '../errors.js';

const CLIENT_ID = 'pgkafka-cli';
/** ApiVersions v3 is the first with the client's software name; every broker since Kafka 2.4 serves it. */
const API_VERSIONS_VERSION = 3;
/** Longest wait for any answer (the CLI's long polls wait 500 ms; CreateTopics and the like up to 30 s). */
const REQUEST_TIMEOUT_MS = 40_000;

interface Pending {
  correlationId: number;
  resolve(frame: Buffer): void;
  reject(err: Error): void;
}

export class Connection {
  private buffer: Buffer = Buffer.alloc(0);
  private readonly pending: Pending[] = [];
  private nextCorrelationId = 1;
  private closedWith: Error | null = null;
  /** The broker's version range per API key, from ApiVersions. */
  readonly versions = new Map<number, { min: number; max: number }>();

  private constructor(
    private readonly socket: Socket,
    readonly address: string,
  ) {
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', (err) => this.fail(new CliError(`connection to ${address} failed: ${err.message}`)));
    socket.on('close', () => this.fail(new CliError(`broker ${address} closed the connection`)));
  }

  /** Connects and negotiates versions; a broker that cannot be reached within timeoutMs is a CliError. */
  static async open(address: string, timeoutMs: number): Promise<Connection> {
    const { host, port } = splitAddress(address);
    const socket = await new Promise<Socket>((resolve, reject) => {
      const s = connect({ host, port });
      const timer = setTimeout(() => {
        s.destroy();
        reject(new CliError(`cannot reach broker ${address}: no connection within ${timeoutMs} ms`));
      }, timeoutMs);
      s.once('connect', () => {
        clearTimeout(timer);
        s.setNoDelay(true);
        resolve(s);
      });
      s.once('error', (err: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        reject(new CliError(`cannot reach broker ${address}: ${err.code ?? err.message}`));
      });
    });
    const conn = new Connection(socket, address);
    const answer = await conn.send(ApiVersionsApi, API_VERSIONS_VERSION, { clientSoftwareName: 'pgkafka-cli', clientSoftwareVersion: '1' }, timeoutMs);
    if (answer.errorCode !== 0) throw new CliError(`broker ${address} refused ApiVersions (error ${answer.errorCode})`);
    for (const k of answer.apiKeys) conn.versions.set(k.apiKey, { min: k.minVersion, max: k.maxVersion });
    return conn;
  }

  /** The highest version both sides serve (at most `cap`), or a CliError naming the API. */
  version(codec: ApiCodec<unknown, unknown>, cap = Infinity): number {
    const theirs = this.versions.get(codec.apiKey);
    const version = Math.min(codec.maxVersion, cap, theirs?.max ?? -1);
    if (!theirs || version < Math.max(codec.minVersion, theirs.min)) throw new CliError(`broker ${this.address} does not serve ${codec.name} in a version this tool speaks`);
    return version;
  }

  /** Sends a request at the negotiated version (capped) and decodes its response. */
  request<Req, Res>(codec: ApiCodec<Req, Res>, body: Input<Req>, cap = Infinity): Promise<Res> {
    return this.send(codec, this.version(codec as ApiCodec<unknown, unknown>, cap), body);
  }

  /** Sends a request that gets no response (Produce with acks=0). */
  sendOnly<Req>(codec: ApiCodec<Req, unknown>, body: Input<Req>, cap = Infinity): void {
    const version = this.version(codec as ApiCodec<unknown, unknown>, cap);
    this.socket.write(this.encode(codec, version, body, this.nextCorrelationId++));
  }

  /** A broker that takes longer than timeoutMs to answer is given up on (its connection closed: later answers would be out of order). */
  async send<Req, Res>(codec: ApiCodec<Req, Res>, version: number, body: Input<Req>, timeoutMs = REQUEST_TIMEOUT_MS): Promise<Res> {
    if (this.closedWith) throw this.closedWith;
    const correlationId = this.nextCorrelationId++;
    let timer: NodeJS.Timeout | undefined;
    const frame = new Promise<Buffer>((resolve, reject) => {
      this.pending.push({ correlationId, resolve, reject });
      timer = setTimeout(() => {
        this.fail(new CliError(`broker ${this.address} did not answer ${codec.name} within ${timeoutMs} ms`));
        this.socket.destroy();
      }, timeoutMs);
    });
    this.socket.write(this.encode(codec, version, body, correlationId));
    const r = new Reader(await frame.finally(() => clearTimeout(timer)));
    const header = readResponseHeader(r, responseHeaderVersion(codec.apiKey, version));
    if (header.correlationId !== correlationId) throw new CliError(`broker ${this.address} answered correlation id ${header.correlationId}, expected ${correlationId}`);
    const decoded = codec.readResponse(r, version);
    if (r.error) throw new CliError(`broker ${this.address} sent an undecodable ${codec.name} v${version} response`);
    return decoded;
  }

  /** Closes after what was written is flushed (an acks=0 produce has no answer to wait for). */
  close(): void {
    this.closedWith ??= new CliError(`connection to ${this.address} closed`);
    this.socket.end();
    this.socket.unref();
  }

  private encode<Req>(codec: ApiCodec<Req, unknown>, version: number, body: Input<Req>, correlationId: number): Buffer {
    const w = new Writer();
    const sizeAt = w.reserveInt32();
    writeRequestHeader(w, requestHeaderVersion(codec.apiKey, version), { requestApiKey: codec.apiKey, requestApiVersion: version, correlationId, clientId: CLIENT_ID });
    codec.writeRequest(w, version, body);
    w.patchInt32(sizeAt, w.length - 4);
    return w.toBuffer();
  }

  private onData(chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    while (this.buffer.length >= 4 && this.buffer.length >= 4 + this.buffer.readInt32BE(0)) {
      const size = this.buffer.readInt32BE(0);
      const frame = this.buffer.subarray(4, 4 + size);
      this.buffer = this.buffer.subarray(4 + size);
      this.pending.shift()?.resolve(frame);
    }
  }

  private fail(err: Error): void {
    this.closedWith ??= err;
    for (const p of this.pending.splice(0)) p.reject(this.closedWith);
  }
}

export function splitAddress(address: string): { host: string; port: number } {
  const at = address.lastIndexOf(':');
  const host = at > 0 ? address.slice(0, at).replace(/^\[(.*)\]$/, '$1') : address;
  const port = at > 0 ? Number(address.slice(at + 1)) : 9092;
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new CliError(`bad broker address ${address}: expected host:port`, 2);
  return { host, port };
}
