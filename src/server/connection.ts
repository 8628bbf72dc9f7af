import type { Socket } from 'node:net';
import type { BrokerContext } from '../broker-context.js';
import type { HandlerRegistry } from '../handlers/registry.js';
import type { Logger } from '../observability/logger.js';
import { Reader } from '../protocol/codec/reader.js';
import { Writer } from '../protocol/codec/writer.js';
import { readRequestHeader, requestHeaderVersion, responseHeaderVersion, writeResponseHeader } from '../protocol/messages/index.js';
import { FrameDecoder, FrameSizeError } from './framing.js';

const API_VERSIONS_KEY = 18;
/** Frames read but not yet handled before the socket stops reading (backpressure). */
const MAX_QUEUED_FRAMES = 64;

/**
 * One client connection. Requests are handled one at a time, in arrival
 * order, as Kafka's broker does (it mutes a channel until its response is
 * sent), so responses leave in request order and produce requests on one
 * connection append in the order sent. A frame that cannot be decoded closes
 * this connection only.
 */
export class Connection {
  private readonly decoder: FrameDecoder;
  private readonly queue: Buffer[] = [];
  private processing = false;
  private closed = false;
  private paused = false;
  private idle: Promise<void> = Promise.resolve();
  private resolveIdle: (() => void) | null = null;
  private readonly clientHost: string;

  constructor(
    private readonly socket: Socket,
    private readonly registry: HandlerRegistry,
    private readonly broker: BrokerContext,
    private readonly log: Logger,
    maxFrameBytes: number,
  ) {
    this.decoder = new FrameDecoder(maxFrameBytes);
    this.clientHost = `/${socket.remoteAddress ?? 'unknown'}`;
    socket.setNoDelay(true);
    socket.on('data', (chunk) => this.onData(chunk));
    socket.on('error', (err) => this.log.debug({ err: err.message }, 'socket error'));
    socket.on('close', () => {
      this.closed = true;
      this.queue.length = 0;
    });
  }

  /** Resolves once every request already received has been answered. */
  drained(): Promise<void> {
    return this.processing ? this.idle : Promise.resolve();
  }

  /** Stop reading: graceful shutdown lets queued requests finish, then ends the socket. */
  stopReading(): void {
    this.socket.pause();
    this.paused = true;
  }

  close(reason: string, err?: unknown): void {
    if (this.closed) return;
    this.closed = true;
    this.queue.length = 0;
    this.log.warn({ reason, err: err instanceof Error ? err.message : err }, 'closing connection');
    this.socket.destroy();
  }

  end(): void {
    if (this.closed) return;
    this.closed = true;
    this.socket.end();
  }

  private onData(chunk: Buffer): void {
    let frames: Buffer[];
    try {
      frames = this.decoder.push(chunk);
    } catch (err) {
      this.close(err instanceof FrameSizeError ? err.message : 'framing error', err);
      return;
    }
    if (frames.length === 0) return;
    this.queue.push(...frames);
    if (this.queue.length >= MAX_QUEUED_FRAMES && !this.paused) {
      this.socket.pause();
      this.paused = true;
    }
    if (!this.processing) void this.processQueue();
  }

  private async processQueue(): Promise<void> {
    this.processing = true;
    this.idle = new Promise((resolve) => (this.resolveIdle = resolve));
    try {
      while (this.queue.length > 0 && !this.closed) {
        const frame = this.queue.shift()!;
        await this.handleFrame(frame);
        if (this.paused && this.queue.length < MAX_QUEUED_FRAMES / 2 && !this.broker.shuttingDown) {
          this.paused = false;
          this.socket.resume();
        }
      }
    } finally {
      this.processing = false;
      this.resolveIdle?.();
    }
  }

  private async handleFrame(frame: Buffer): Promise<void> {
    if (frame.length < 8) return this.close(`request of ${frame.length} bytes is too short for a header`);
    const apiKey = frame.readInt16BE(0);
    const apiVersion = frame.readInt16BE(2);
    const correlationId = frame.readInt32BE(4);
    const handler = this.registry.get(apiKey);
    if (!handler) return this.close(`unknown API key ${apiKey}`);
    if (apiVersion < handler.minVersion || apiVersion > handler.maxVersion) {
      if (apiKey === API_VERSIONS_KEY) return this.send(this.registry.unsupportedApiVersionsResponse(correlationId));
      return this.close(`unsupported version ${apiVersion} of API ${handler.codec.name} (serves ${handler.minVersion}-${handler.maxVersion})`);
    }
    const reader = new Reader(frame);
    const header = readRequestHeader(reader, requestHeaderVersion(apiKey, apiVersion));
    const request = reader.error ? null : handler.codec.readRequest(reader, apiVersion);
    if (reader.error || request === null) {
      return this.close(`malformed ${handler.codec.name} v${apiVersion} request: ${reader.error}`);
    }
    const log = this.log.child({ api: handler.codec.name, v: apiVersion, correlationId });
    if (log.isLevelEnabled('debug')) log.debug({ clientId: header.clientId }, 'request');
    let response;
    try {
      response = await handler.handle({ broker: this.broker, apiVersion, correlationId, clientId: header.clientId, clientHost: this.clientHost, log }, request);
    } catch (err) {
      // Internal failure (e.g. PostgreSQL unreachable): the client sees a
      // network error, which every client treats as retriable.
      log.error({ err: (err as Error).message, stack: (err as Error).stack, code: 'PGKAFKA_HANDLER_FAILED' }, 'request failed');
      return this.close('internal error', err);
    }
    if (response === null || this.closed) return;
    const writer = new Writer();
    const sizeAt = writer.reserveInt32();
    writeResponseHeader(writer, responseHeaderVersion(apiKey, apiVersion), { correlationId });
    handler.codec.writeResponse(writer, apiVersion, response);
    writer.patchInt32(sizeAt, writer.length - 4);
    this.send(writer.toBuffers());
  }

  private send(buffers: Buffer[]): void {
    if (this.closed) return;
    this.socket.cork();
    for (const b of buffers) this.socket.write(b);
    this.socket.uncork();
  }
}
