import { createServer, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer, type TlsOptions, type TLSSocket } from 'node:tls';
import type { BrokerContext } from '../broker-context.js';
import type { HandlerRegistry } from '../handlers/registry.js';
import type { Logger } from '../observability/logger.js';
import type { ListenerSpec } from '../config/listeners.js';
import { SecuritySession, type SecurityOptions } from '../security/session.js';
import { tlsPrincipal } from '../security/tls.js';
import { Connection, type PipelineLimits, type RequestObserver } from './connection.js';
import { LogCode } from '../observability/log-codes.js';

export interface KafkaServerOptions {
  /** One socket server per listener; SSL and SASL_SSL listeners need `tls`. */
  listeners: ListenerSpec[];
  maxFrameBytes: number;
  tls?: TlsOptions;
  security: SecurityOptions;
  /** Kafka's max.connections and max.connections.per.ip: a connection beyond them is closed at once. */
  maxConnections: number;
  maxConnectionsPerIp: number;
  /** Kafka's connections.max.idle.ms: a connection with no request in flight and no traffic for this long is closed. */
  connectionsMaxIdleMs: number;
  pipeline: PipelineLimits;
  /** Told of every response written (the request metrics); none when metrics are off. */
  observeRequest?: RequestObserver;
}

/** The Kafka listeners: accept connections (TLS ones after the handshake) and hand each to a Connection. */
export class KafkaServer {
  private readonly servers: { listener: ListenerSpec; server: Server }[] = [];
  private readonly connections = new Set<Connection>();
  private readonly perIp = new Map<string, number>();
  private nextConnectionId = 1;

  constructor(
    private readonly options: KafkaServerOptions,
    private readonly registry: HandlerRegistry,
    private readonly broker: BrokerContext,
    private readonly log: Logger,
  ) {
    for (const listener of options.listeners) {
      const tls = listener.name === 'SSL' || listener.name === 'SASL_SSL';
      if (tls && !options.tls) throw new Error(`listener ${listener.name} needs a TLS certificate and key`);
      // As on Kafka, ssl.client.auth applies to SSL listeners; SASL_SSL clients authenticate with SASL.
      const tlsOptions: TlsOptions = listener.name === 'SSL' ? options.tls! : { ...options.tls, requestCert: false, rejectUnauthorized: false };
      const server = tls ? createTlsServer(tlsOptions, (socket) => this.accept(listener, socket, tlsPrincipal(socket))) : createServer((socket) => this.accept(listener, socket, null));
      if (tls) {
        server.on('tlsClientError', (err: Error, socket: TLSSocket) =>
          this.log.warn({ listener: listener.name, remote: `${socket.remoteAddress}:${socket.remotePort}`, err: err.message, code: LogCode.TLS_HANDSHAKE_FAILED }, 'TLS handshake failed'),
        );
      }
      this.servers.push({ listener, server });
    }
  }

  private accept(listener: ListenerSpec, socket: Socket, certificatePrincipal: string | null): void {
    const id = this.nextConnectionId++;
    const log = this.log.child({ conn: id, listener: listener.name, remote: `${socket.remoteAddress}:${socket.remotePort}` });
    const ip = socket.remoteAddress ?? 'unknown';
    const fromIp = this.perIp.get(ip) ?? 0;
    if (this.connections.size >= this.options.maxConnections || fromIp >= this.options.maxConnectionsPerIp) {
      log.warn({ connections: this.connections.size, fromIp, code: LogCode.CONNECTION_LIMIT }, 'connection refused: max.connections or max.connections.per.ip reached');
      socket.destroy();
      return;
    }
    this.perIp.set(ip, fromIp + 1);
    // A client certificate names the principal on SSL listeners; on SASL_SSL the SASL user does.
    const session = new SecuritySession(listener.name, this.options.security, listener.name === 'SSL' ? certificatePrincipal : null);
    const connection = new Connection(socket, {
      registry: this.registry,
      broker: this.broker,
      log,
      maxFrameBytes: this.options.maxFrameBytes,
      session,
      pipeline: this.options.pipeline,
      observeRequest: this.options.observeRequest,
    });
    this.connections.add(connection);
    log.debug({ principal: listener.name === 'SSL' ? session.principal : undefined }, 'connection opened');
    if (this.options.connectionsMaxIdleMs > 0) {
      socket.setTimeout(this.options.connectionsMaxIdleMs, () => {
        if (connection.busy) return; // a request (e.g. a long poll) is being served: not idle
        log.debug({ idleMs: this.options.connectionsMaxIdleMs }, 'closing idle connection (connections.max.idle.ms)');
        socket.destroy();
      });
    }
    socket.on('close', () => {
      this.connections.delete(connection);
      const left = (this.perIp.get(ip) ?? 1) - 1;
      if (left > 0) this.perIp.set(ip, left);
      else this.perIp.delete(ip);
      log.debug('connection closed');
    });
  }

  /** Starts every listener; resolves to the port each is bound to, by listener name. */
  async listen(): Promise<Map<string, number>> {
    const ports = new Map<string, number>();
    for (const { listener, server } of this.servers) {
      const port = await new Promise<number>((resolve, reject) => {
        server.once('error', reject);
        server.listen(listener.port, listener.host === '' ? undefined : listener.host, () => {
          server.off('error', reject);
          const address = server.address();
          resolve(typeof address === 'object' && address ? address.port : listener.port);
        });
      });
      ports.set(listener.name, port);
    }
    return ports;
  }

  /** Stops accepting, lets every connection finish the requests it has received (up to timeoutMs), then closes them. */
  async close(timeoutMs: number): Promise<void> {
    const closed = Promise.all(this.servers.map(({ server }) => new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve()))));
    for (const c of this.connections) c.stopReading();
    const drained = Promise.all([...this.connections].map((c) => c.drained()));
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
    await Promise.race([drained, timeout]);
    clearTimeout(timer);
    for (const c of this.connections) c.end();
    await closed;
  }
}
