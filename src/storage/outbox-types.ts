// The outbox's rows as the relay takes them (log/outbox-relay.ts; SQL in storage/pg/outbox-store.ts).
import type { Appended } from './log-types.js';

/** One record sent with send(): the send call's clock (ms), key, value, headers. */
export interface OutboxRecord {
  timestampMs: bigint;
  key: Buffer | null;
  value: Buffer | null;
  headers: { key: string; value: Buffer | null }[];
}

/** The first committed sending transactions of a partition not yet in the log: their commit numbers and records, in commit order, then call order. */
export interface OutboxPending {
  firstSeq: bigint;
  lastSeq: bigint;
  commits: number;
  records: OutboxRecord[];
}

/** What the relay's append found: appended, the records claimed by another broker's relay first, or no such partition. */
export type OutboxAppended = Appended | 'claimed' | null;

/** A relay polling the outbox (sending transactions do not NOTIFY meanwhile); stop() returns once every transaction that saw it polling has ended. */
export interface OutboxPolling {
  stop(): Promise<void>;
}
