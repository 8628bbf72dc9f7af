import type { Socket } from 'node:net';
import type { BrokerContext } from '../broker-context.js';
import type { HandlerRegistry } from '../handlers/registry.js';
import { Deferred, type RequestContext } from '../handlers/types.js';
import type { Input } from '../protocol/codec/types.js';
import type { Logger } from '../observability/logger.js';
import type { SecuritySession } from '../security/session.js';
import { Reader } from '../protocol/codec/reader.js';
import { Writer } from '../protocol/codec/writer.js';
import { readRequestHeader, requestHeaderVersion, responseHeaderVersion, writeResponseHeader } from '../protocol/messages/index.js';
import { FrameDecoder, FrameSizeError } from './framing.js';
import { CLOSE, internalFailureCode } from '../handlers/storage-failure.js';
import { errorName } from '../protocol/errors.js';
import { LogCode } from '../observability/log-codes.js';

const API_VERSIONS_KEY = 18;
const PRODUCE_KEY = 0;
/** Produce requests of one connection whose responses may be outstanding at once, and their bytes. */
export interface PipelineLimits {
  maxInFlightRequests: number;
  maxInFlightBytes: number;
}

/** Called as each response is written: the API's name and the seconds since its request was read (Kafka's TotalTimeMs). */
export type RequestObserver = (api: string, seconds: number) => void;

interface ResponseSlot {
  ready: boolean;
  bytes: Buffer[] | null;
  /** The API answered and when its request was read (performance.now()), for the observer. */
  api: string;
  receivedAt: number;
}

interface QueuedFrame {
  frame: Buffer;
  receivedAt: number;
}
/** Frames (and bytes of them) read but not yet handled before the socket stops reading (backpressure). */
const MAX_QUEUED_FRAMES = 64;
const MAX_QUEUED_BYTES = 16 * 1024 * 1024;

/** What a connection serves with: the handlers, the broker, its listener's session and limits. */
export interface ConnectionOptions {
  registry: HandlerRegistry;
  broker: BrokerContext;
  log: Logger;
  maxFrameBytes: number;
  session: SecuritySession;
  pipeline: PipelineLimits;
  observeRequest?: RequestObserver | null;
}

/**
 * One client connection. Requests are taken in arrival order and responses
 * leave in that order. Consecutive Produce requests overlap: each queues its
 * batches before the next is read (so appends keep the order sent) and its
 * response waits for the commit. Any other request waits until every earlier
 * response is out, as Kafka's broker handles one request per connection at a
 * time. A frame that cannot be decoded closes this connection only.
 *
 * On a SASL listener the connection's SecuritySession gates requests: until
 * authentication succeeds only ApiVersions and the SASL APIs are served
 * (anything else closes the connection, as on Kafka), and after SaslHandshake
 * v0 the next frames are raw SASL tokens answered with raw tokens.
 */
export class Connection {
  private readonly decoder: FrameDecoder;
  private readonly queue: QueuedFrame[] = [];
  private readonly responses: ResponseSlot[] = [];
  private queuedBytes = 0;
  private pipelinedBytes = 0;
  private readonly responseWaiters: (() => void)[] = [];
  /** Waiting for any response to go out (a pipelined Produce waiting for room). */
  private readonly progressWaiters: (() => void)[] = [];
  /** The request loop, idle with responses outstanding: woken by a new frame, the last response, or close. */
  private wakeLoop: (() => void) | null = null;
  private processing = false;
  private closed = false;
  /** A protocol error was seen: nothing more is read; the connection closes once earlier responses are out. */
  private closing = false;
  /** A bad size prefix followed complete frames: close once they are answered. */
  private closeWhenDrained: string | null = null;
  private paused = false;
  private idle: Promise<void> = Promise.resolve();
  private resolveIdle: (() => void) | null = null;
  private readonly clientHost: string;

  private readonly registry: HandlerRegistry;
  private readonly broker: BrokerContext;
  private readonly log: Logger;
  private readonly session: SecuritySession;
  private readonly pipeline: PipelineLimits;
  private readonly observeRequest: RequestObserver | null;

  constructor(
    private readonly socket: Socket,
    options: ConnectionOptions,
  ) {
    ({ registry: this.registry, broker: this.broker, log: this.log, session: this.session, pipeline: this.pipeline } = options);
    this.observeRequest = options.observeRequest ?? null;
    this.decoder = new FrameDecoder(options.maxFrameBytes);
    this.clientHost = `/${socket.remoteAddress ?? 'unknown'}`;
    socket.setNoDelay(true);
    socket.on('data', (chunk) => this.onData(chunk));
    socket.on('error', (err) => this.log.debug({ err: err.message }, 'socket error'));
    socket.on('close', () => {
      this.closed = true;
      this.queue.length = 0;
      this.queuedBytes = 0;
      for (const resolve of this.responseWaiters.splice(0)) resolve();
      for (const resolve of this.progressWaiters.splice(0)) resolve();
      this.wakeLoop?.();
    });
  }

  /** Whether a request is being handled or a response awaited. */
  get busy(): boolean {
    return this.processing || this.responses.length > 0;
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

  /**
   * A protocol error: read nothing more, but first send the responses of the
   * requests before it (pipelined Produce requests may still await their
   * commit), as Kafka, which answers requests in order, has already sent them.
   */
  private closeAfterResponses(reason: string, err?: unknown): void {
    if (this.closed || this.closing) return;
    this.closing = true;
    this.queue.length = 0;
    this.queuedBytes = 0;
    this.socket.pause();
    void this.responsesWritten().then(() => this.close(reason, err));
  }

  /** Closes the connection once what was written has gone out, whether or not the client closes its side. */
  end(): void {
    if (this.closed) return;
    this.closed = true;
    this.socket.destroySoon();
  }

  private onData(chunk: Buffer): void {
    if (this.closing) return;
    let frames: Buffer[];
    try {
      frames = this.decoder.push(chunk);
    } catch (err) {
      this.closeAfterResponses(err instanceof FrameSizeError ? err.message : 'framing error', err);
      return;
    }
    if (this.decoder.failure) {
      // Frames before the bad size prefix are answered; then the connection closes.
      this.socket.pause();
      this.closeWhenDrained = this.decoder.failure.message;
    }
    if (frames.length === 0) return;
    const receivedAt = performance.now();
    for (const frame of frames) {
      this.queue.push({ frame, receivedAt });
      this.queuedBytes += frame.length;
    }
    if ((this.queue.length >= MAX_QUEUED_FRAMES || this.queuedBytes >= MAX_QUEUED_BYTES) && !this.paused) {
      this.socket.pause();
      this.paused = true;
    }
    if (!this.processing) void this.processQueue();
    else this.wakeLoop?.();
  }

  private async processQueue(): Promise<void> {
    this.processing = true;
    this.idle = new Promise((resolve) => (this.resolveIdle = resolve));
    try {
      // Frames that arrive while earlier responses are awaited are taken up at
      // once (a Produce then joins its partition's next flush instead of
      // waiting for the running one to commit); the loop ends once nothing is
      // queued and every response is out.
      while (!this.closed && !this.closing) {
        if (this.queue.length > 0) {
          await this.handleQueuedFrames();
          continue;
        }
        if (this.responses.length === 0) break;
        await new Promise<void>((resolve) => (this.wakeLoop = resolve));
        this.wakeLoop = null;
      }
      if (this.closeWhenDrained && !this.closed) this.close(this.closeWhenDrained);
    } finally {
      this.processing = false;
      this.resolveIdle?.();
    }
  }

  private async handleQueuedFrames(): Promise<void> {
    while (this.queue.length > 0 && !this.closed && !this.closing) {
      const { frame, receivedAt } = this.queue.shift()!;
      this.queuedBytes -= frame.length;
      // Only Produce requests overlap (each queues its batches before the
      // next is read); any other request first waits for every earlier
      // response, so it sees their effects, as on Kafka.
      // A Produce waits only until the earliest responses free room, so
      // requests keep reaching the partitions' queues while a flush commits.
      const pipelined = frame.length >= 2 && frame.readInt16BE(0) === PRODUCE_KEY && this.session.authenticated && !this.session.expectsRawToken;
      if (!pipelined) await this.responsesWritten();
      else
        while (
          !this.closed &&
          this.responses.length > 0 &&
          (this.responses.length >= this.pipeline.maxInFlightRequests || (this.pipelinedBytes > 0 && this.pipelinedBytes + frame.length > this.pipeline.maxInFlightBytes))
        )
          await this.responseWritten();
      await this.handleFrame(frame, receivedAt);
      // A client that stops reading responses stops being served: no unbounded buffering of fetched batches.
      if (this.socket.writableNeedDrain && !this.closed) await this.drainOrClose();
      if (this.paused && this.queue.length < MAX_QUEUED_FRAMES / 2 && this.queuedBytes < MAX_QUEUED_BYTES / 2 && !this.broker.shuttingDown && !this.closeWhenDrained) {
        this.paused = false;
        this.socket.resume();
      }
    }
  }

  /** Queues a response slot in request order; slots are written as soon as they and all before them are ready. */
  private respondInOrder(response: Promise<Buffer[] | null> | Buffer[] | null, api: string, receivedAt: number): void {
    const slot: ResponseSlot = { ready: false, bytes: null, api, receivedAt };
    this.responses.push(slot);
    const fill = (bytes: Buffer[] | null) => {
      slot.ready = true;
      slot.bytes = bytes;
      this.writeReadyResponses();
    };
    if (response instanceof Promise) response.then(fill, () => fill(null));
    else fill(response);
  }

  private writeReadyResponses(): void {
    let written = false;
    while (this.responses.length > 0 && this.responses[0]!.ready) {
      const slot = this.responses.shift()!;
      if (slot.bytes) {
        this.send(slot.bytes);
        this.observeRequest?.(slot.api, (performance.now() - slot.receivedAt) / 1000);
      }
      written = true;
    }
    if (written) for (const resolve of this.progressWaiters.splice(0)) resolve();
    if (this.responses.length === 0) {
      for (const resolve of this.responseWaiters.splice(0)) resolve();
      this.wakeLoop?.();
    }
  }

  /** Resolves once the next response has been written (or the connection closed). */
  private responseWritten(): Promise<void> {
    if (this.responses.length === 0 || this.closed) return Promise.resolve();
    return new Promise((resolve) => this.progressWaiters.push(resolve));
  }

  /** Resolves once every response queued so far has been written (or the connection closed). */
  private responsesWritten(): Promise<void> {
    if (this.responses.length === 0 || this.closed) return Promise.resolve();
    return new Promise((resolve) => this.responseWaiters.push(resolve));
  }

  private drainOrClose(): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        this.socket.off('drain', done);
        this.socket.off('close', done);
        resolve();
      };
      this.socket.on('drain', done);
      this.socket.on('close', done);
    });
  }

  private async handleFrame(frame: Buffer, receivedAt: number): Promise<void> {
    if (this.session.expectsRawToken) return this.handleRawToken(frame, receivedAt);
    await this.handleRequest(frame, receivedAt);
    if (this.session.closeAfterResponse && !this.closed) {
      // A refused handshake or failed authentication: the answer goes out, then the connection closes.
      await this.responsesWritten();
      this.end();
    }
  }

  /** A SASL token after SaslHandshake v0: answered with a raw token, or the connection closes on failure. */
  private async handleRawToken(token: Buffer, receivedAt: number): Promise<void> {
    let challenge: Buffer | null;
    try {
      challenge = await this.session.rawToken(token);
    } catch (err) {
      this.log.error({ err: (err as Error).message, code: LogCode.HANDLER_FAILED }, 'SASL authentication failed internally');
      return this.close('internal error', err);
    }
    if (challenge === null) {
      this.log.warn({ code: LogCode.AUTHENTICATION_FAILED }, 'SASL authentication failed (SaslHandshake v0 flow)');
      return this.close('SASL authentication failed');
    }
    const size = Buffer.allocUnsafe(4);
    size.writeInt32BE(challenge.length);
    this.respondInOrder([size, challenge], 'SaslAuthenticate', receivedAt);
  }

  private async handleRequest(frame: Buffer, receivedAt: number): Promise<void> {
    if (frame.length < 8) return this.closeAfterResponses(`request of ${frame.length} bytes is too short for a header`);
    const apiKey = frame.readInt16BE(0);
    const apiVersion = frame.readInt16BE(2);
    const correlationId = frame.readInt32BE(4);
    const handler = this.registry.get(apiKey);
    if (!handler) return this.closeAfterResponses(`unknown API key ${apiKey}`);
    const refusal = this.session.refusal(apiKey);
    if (refusal) return this.close(refusal);
    if (apiVersion < handler.minVersion || apiVersion > handler.maxVersion) {
      if (apiKey === API_VERSIONS_KEY) {
        // Kafka reads the header of a version it does not know as that of its newest versions
        // (flexible past v2), and closes the connection when that header does not parse.
        const headerReader = new Reader(frame);
        readRequestHeader(headerReader, requestHeaderVersion(apiKey, Math.max(apiVersion, 0)));
        if (headerReader.error) return this.closeAfterResponses(`malformed ApiVersions v${apiVersion} request header: ${headerReader.error}`);
        return this.respondInOrder(this.registry.unsupportedApiVersionsResponse(correlationId), handler.codec.name, receivedAt);
      }
      return this.closeAfterResponses(`unsupported version ${apiVersion} of API ${handler.codec.name} (serves ${handler.minVersion}-${handler.maxVersion})`);
    }
    const reader = new Reader(frame);
    const header = readRequestHeader(reader, requestHeaderVersion(apiKey, apiVersion));
    const request = reader.error ? null : handler.codec.readRequest(reader, apiVersion);
    if (reader.error || request === null) {
      return this.closeAfterResponses(`malformed ${handler.codec.name} v${apiVersion} request: ${reader.error}`);
    }
    // The request's child logger is built only when something is logged (most requests log nothing).
    let requestLog: Logger | undefined;
    const parentLog = this.log;
    const ctx: RequestContext = {
      broker: this.broker,
      apiVersion,
      correlationId,
      clientId: header.clientId,
      clientHost: this.clientHost,
      listener: this.session.protocol,
      principal: this.session.principal,
      session: this.session,
      get log() {
        return (requestLog ??= parentLog.child({ api: handler.codec.name, v: apiVersion, correlationId }));
      },
    };
    if (this.log.isLevelEnabled('debug')) ctx.log.debug({ clientId: header.clientId }, 'request');
    // An internal failure (PostgreSQL unreachable, a bug): answered with the
    // code Kafka gives when that API's store fails, the request's resources
    // echoed, as Kafka's handleError does; closed where Kafka closes (SASL,
    // Produce with acks=0) and for Metadata (see storage-failure.ts).
    const failed = (err: unknown): Buffer[] | null => {
      const errorCode = internalFailureCode(apiKey);
      const detail = { err: (err as Error).message, stack: (err as Error).stack, code: LogCode.HANDLER_FAILED };
      let answer: Buffer[] | null = null;
      if (errorCode !== CLOSE) {
        try {
          const response = handler.codec.errorResponse(request, apiVersion, errorCode);
          answer = response === null ? null : encode(response);
        } catch (encodeErr) {
          ctx.log.error({ err: (encodeErr as Error).message, code: LogCode.HANDLER_FAILED }, 'error response could not be built');
        }
      }
      if (answer === null) {
        ctx.log.error({ ...detail, answer: 'connection closed' }, 'request failed');
        this.close('internal error', err);
        return null;
      }
      ctx.log.error({ ...detail, errorCode, answer: errorName(errorCode!) }, 'request failed');
      return answer;
    };
    const encode = (response: Input<unknown> | null): Buffer[] | null => {
      if (response === null || this.closed) return null;
      const writer = new Writer();
      const sizeAt = writer.reserveInt32();
      writeResponseHeader(writer, responseHeaderVersion(apiKey, apiVersion), { correlationId });
      handler.codec.writeResponse(writer, apiVersion, response);
      writer.patchInt32(sizeAt, writer.length - 4);
      return writer.toBuffers();
    };
    let response;
    try {
      response = await handler.handle(ctx, request);
    } catch (err) {
      this.respondInOrder(failed(err), handler.codec.name, receivedAt);
      return;
    }
    if (response instanceof Deferred) {
      // The request's bytes stay referenced (its batches) until the commit answers it.
      this.pipelinedBytes += frame.length;
      this.respondInOrder(
        response.result.then(
          (result) => {
            this.pipelinedBytes -= frame.length;
            return encode(result);
          },
          (err: unknown) => {
            this.pipelinedBytes -= frame.length;
            return failed(err);
          },
        ),
        handler.codec.name,
        receivedAt,
      );
    } else this.respondInOrder(encode(response), handler.codec.name, receivedAt);
  }

  private send(buffers: Buffer[]): void {
    if (this.closed) return;
    this.socket.cork();
    for (const b of buffers) this.socket.write(b);
    this.socket.uncork();
  }
}
