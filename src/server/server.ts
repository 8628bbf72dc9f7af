import { createServer, type Server, type Socket } from 'node:net';
import type { BrokerContext } from '../broker-context.js';
import type { HandlerRegistry } from '../handlers/registry.js';
import type { Logger } from '../observability/logger.js';
import { Connection } from './connection.js';

export interface KafkaServerOptions {
  host: string;
  port: number;
  maxFrameBytes: number;
}

/** The Kafka listener: accepts connections and hands each to a Connection. */
export class KafkaServer {
  private readonly server: Server;
  private readonly connections = new Set<Connection>();
  private nextConnectionId = 1;

  constructor(
    private readonly options: KafkaServerOptions,
    private readonly registry: HandlerRegistry,
    private readonly broker: BrokerContext,
    private readonly log: Logger,
  ) {
    this.server = createServer((socket) => this.accept(socket));
  }

  private accept(socket: Socket): void {
    const id = this.nextConnectionId++;
    const log = this.log.child({ conn: id, remote: `${socket.remoteAddress}:${socket.remotePort}` });
    const connection = new Connection(socket, this.registry, this.broker, log, this.options.maxFrameBytes);
    this.connections.add(connection);
    log.info('connection opened');
    socket.on('close', () => {
      this.connections.delete(connection);
      log.info('connection closed');
    });
  }

  listen(): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.options.port, this.options.host, () => {
        this.server.off('error', reject);
        const address = this.server.address();
        resolve(typeof address === 'object' && address ? address.port : this.options.port);
      });
    });
  }

  /** Stops accepting, lets every connection finish the requests it has received (up to timeoutMs), then closes them. */
  async close(timeoutMs: number): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
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
