import type pg from 'pg';
import type { Logger } from '../../observability/logger.js';
import { LogCode } from '../../observability/log-codes.js';

// Payloads sent as NOTIFYs on the append channel, in a transaction of their
// own. A notifying transaction holds a database-wide lock until its commit
// ends, so that commit must not wait for a WAL flush: this one writes no WAL
// of its own, and synchronous_commit is off for it besides (the payloads
// only describe appends that are already durable).
const ANNOUNCE_SQL = `SELECT set_config('synchronous_commit', 'off', true), pg_notify($1, payload) FROM unnest($2::text[]) AS payload`;

/** A failed announcement is retried after this long, doubling up to the maximum. */
const RETRY_FIRST_MS = 100;
const RETRY_MAX_MS = 5000;

/**
 * Tells the other broker processes sharing the database how far partitions'
 * logs reach, after the appends committed. Announcing inside the append's
 * own statement made every partition's commit wait for the previous
 * notifying commit, fsync included; here at most one statement is in
 * flight, and what is announced meanwhile goes out with the next one, the
 * newest payload per partition.
 */
export class AppendAnnouncer {
  private readonly pending = new Map<string, string>();
  private sending: Promise<void> | null = null;
  private retryMs = RETRY_FIRST_MS;
  private closed = false;
  /** Ends the wait before a retry (at close, or when an append shows PostgreSQL is back). */
  private skipWait: (() => void) | null = null;

  constructor(
    private readonly pool: pg.Pool,
    private readonly channel: string,
    private readonly log: Logger,
  ) {}

  /**
   * Queues `payload` as the newest position of `partitionKey`, replacing one
   * not yet sent. An append just committed, so PostgreSQL is reachable: a
   * failed announcement waiting to be retried is retried now.
   */
  announce(partitionKey: string, payload: string): void {
    this.pending.set(partitionKey, payload);
    this.skipWait?.();
    this.sending ??= this.send();
  }

  /** Shutdown: sends what is queued, without retrying a failure. */
  async close(): Promise<void> {
    this.closed = true;
    this.skipWait?.();
    this.sending ??= this.pending.size > 0 ? this.send() : null;
    await this.sending;
  }

  private async send(): Promise<void> {
    try {
      while (this.pending.size > 0) {
        const sent = [...this.pending];
        this.pending.clear();
        try {
          await this.pool.query({ name: 'pgkafka_announce', text: ANNOUNCE_SQL, values: [this.channel, sent.map(([, payload]) => payload)] });
          this.retryMs = RETRY_FIRST_MS;
        } catch (err) {
          // Until a retry lands, other brokers see these partitions as they were (their fetches wait, nothing is lost).
          this.log.warn({ err: (err as Error).message, partitions: sent.length, retryMs: this.retryMs, code: LogCode.ANNOUNCE_FAILED }, 'telling other brokers about appends failed');
          if (this.closed) return;
          for (const [key, payload] of sent) if (!this.pending.has(key)) this.pending.set(key, payload);
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, this.retryMs);
            this.skipWait = () => {
              clearTimeout(timer);
              resolve();
            };
          });
          this.skipWait = null;
          this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
        }
      }
    } finally {
      this.sending = null;
    }
  }
}
