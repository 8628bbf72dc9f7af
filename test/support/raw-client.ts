// A minimal Kafka client over the project's generated codecs, for tests that
// need exact control of versions and bytes. Third-party clients are tested in compat/.
import { connect, type Socket } from 'node:net';
import { Reader } from '../../src/protocol/codec/reader.js';
import type { ApiCodec, Input } from '../../src/protocol/codec/types.js';
import { Writer } from '../../src/protocol/codec/writer.js';
import { readResponseHeader, requestHeaderVersion, responseHeaderVersion, writeRequestHeader } from '../../src/protocol/messages/index.js';

export class RawClient {
  private buffer = Buffer.alloc(0);
  private readonly waiting: ((frame: Buffer | null) => void)[] = [];
  private correlationId = 1;
  closed = false;

  private constructor(readonly socket: Socket) {
    socket.on('data', (chunk) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      while (this.buffer.length >= 4 && this.buffer.length >= 4 + this.buffer.readInt32BE(0)) {
        const size = this.buffer.readInt32BE(0);
        const frame = this.buffer.subarray(4, 4 + size);
        this.buffer = this.buffer.subarray(4 + size);
        this.waiting.shift()?.(frame);
      }
    });
    socket.on('close', () => {
      this.closed = true;
      for (const w of this.waiting.splice(0)) w(null);
    });
    socket.on('error', () => {});
  }

  static connect(bootstrap: string): Promise<RawClient> {
    const [host, port] = bootstrap.split(':');
    return new Promise((resolve, reject) => {
      const socket = connect(Number(port), host!, () => resolve(new RawClient(socket)));
      socket.once('error', reject);
    });
  }

  /** Sends raw bytes (a whole frame or any fragment of one). */
  write(bytes: Buffer): void {
    this.socket.write(bytes);
  }

  /** The next response frame (without its size prefix), or null if the broker closed the connection. */
  nextFrame(): Promise<Buffer | null> {
    if (this.closed) return Promise.resolve(null);
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  encode<Req>(codec: ApiCodec<Req, unknown>, version: number, body: Input<Req>, correlationId = this.correlationId++): Buffer {
    const w = new Writer();
    const sizeAt = w.reserveInt32();
    writeRequestHeader(w, requestHeaderVersion(codec.apiKey, version), { requestApiKey: codec.apiKey, requestApiVersion: version, correlationId, clientId: 'pgkafka-test' });
    codec.writeRequest(w, version, body);
    w.patchInt32(sizeAt, w.length - 4);
    return w.toBuffer();
  }

  async request<Req, Res>(codec: ApiCodec<Req, Res>, version: number, body: Input<Req>): Promise<Res> {
    const correlationId = this.correlationId++;
    const response = this.nextFrame();
    this.write(this.encode(codec, version, body, correlationId));
    const frame = await response;
    if (!frame) throw new Error(`connection closed instead of answering ${codec.name} v${version}`);
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
