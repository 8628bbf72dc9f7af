import { EventEmitter } from 'node:events';
import type pg from 'pg';
import type { Logger } from '../../observability/logger.js';
import { createClient } from './pool.js';
import type { ServerWatch } from './server-watch.js';
import { LogCode } from '../../observability/log-codes.js';

/** First reconnect attempt after a lost LISTEN connection; the delay then doubles up to the maximum. */
const RECONNECT_FIRST_MS = 100;
const RECONNECT_MAX_MS = 1000;

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
    private readonly connection: { connectionString: string; schema: string; connectTimeoutMs?: number; watch?: ServerWatch },
    private readonly channels: readonly string[],
    private readonly log: Logger,
  ) {
    super();
  }

  async start(): Promise<void> {
    await this.connect();
  }

  private async connect(): Promise<void> {
    const { watch, ...connection } = this.connection;
    const client = createClient({ ...connection, applicationName: 'pgkafka-listen' });
    client.on('notification', (msg) => this.emit('notification', msg.channel, msg.payload ?? ''));
    client.on('error', (err) => {
      if (this.client !== client) return; // still connecting: the failed attempt is retried below
      this.log.warn({ err: err.message, code: LogCode.LISTEN_LOST }, 'LISTEN connection lost');
      this.reconnectLater(client);
    });
    client.on('end', () => this.reconnectLater(client));
    try {
      await client.connect();
      for (const channel of this.channels) await client.query(`LISTEN "${channel}"`);
    } catch (err) {
      // A server that went away between connecting and LISTEN: nothing of this attempt may stay open.
      await client.end().catch(() => {});
      throw err;
    }
    if (this.stopped) {
      // stop() ran while this attempt was under way.
      await client.end().catch(() => {});
      return;
    }
    this.client = client;
    watch?.add(client);
  }

  private reconnectLater(failed: pg.Client): void {
    if (this.stopped || this.client !== failed || this.retryTimer) return;
    this.client = null;
    failed.end().catch(() => {});
    let delay = RECONNECT_FIRST_MS;
    let failures = 0;
    const attempt = () => {
      this.retryTimer = null;
      if (this.stopped) return;
      this.connect().then(
        () => {
          if (this.stopped) return;
          this.log.info({ attempts: failures + 1, code: LogCode.LISTEN_RESTORED }, 'LISTEN connection restored');
          this.emit('resync');
        },
        (err: Error) => {
          // One line at the first failure and then every tenth, not one per attempt while PostgreSQL is down.
          if (failures++ % 10 === 0) this.log.warn({ err: err.message, attempts: failures, code: LogCode.LISTEN_RECONNECT_FAILED }, 'LISTEN reconnect failed; retrying');
          if (this.stopped) return;
          delay = Math.min(delay * 2, RECONNECT_MAX_MS);
          this.retryTimer = setTimeout(attempt, delay);
        },
      );
    };
    this.retryTimer = setTimeout(attempt, delay);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => {});
  }
}
