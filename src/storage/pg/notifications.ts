import { EventEmitter } from 'node:events';
import type pg from 'pg';
import type { Logger } from '../../observability/logger.js';
import { createClient } from './pool.js';

/**
 * One dedicated connection LISTENing on the broker's channels. Emits
 * ('notification', channel, payload) and, after a lost connection is
 * re-established, ('resync'): notifications may have been missed, so caches
 * fed by them must be reloaded.
 */
export class Notifications extends EventEmitter {
  private client: pg.Client | null = null;
  private stopped = false;
  private retryTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly connection: { connectionString: string; schema: string },
    private readonly channels: readonly string[],
    private readonly log: Logger,
  ) {
    super();
  }

  async start(): Promise<void> {
    await this.connect();
  }

  private async connect(): Promise<void> {
    const client = createClient({ ...this.connection, applicationName: 'pgkafka-listen' });
    client.on('notification', (msg) => this.emit('notification', msg.channel, msg.payload ?? ''));
    client.on('error', (err) => {
      this.log.warn({ err: err.message, code: 'PGKAFKA_LISTEN_LOST' }, 'LISTEN connection lost');
      this.reconnectLater(client);
    });
    client.on('end', () => this.reconnectLater(client));
    await client.connect();
    for (const channel of this.channels) await client.query(`LISTEN "${channel}"`);
    this.client = client;
  }

  private reconnectLater(failed: pg.Client): void {
    if (this.stopped || this.client !== failed || this.retryTimer) return;
    this.client = null;
    failed.end().catch(() => {});
    const attempt = () => {
      this.retryTimer = null;
      if (this.stopped) return;
      this.connect().then(
        () => this.emit('resync'),
        (err: Error) => {
          this.log.warn({ err: err.message }, 'LISTEN reconnect failed; retrying');
          this.retryTimer = setTimeout(attempt, 1000);
        },
      );
    };
    this.retryTimer = setTimeout(attempt, 200);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => {});
  }
}
