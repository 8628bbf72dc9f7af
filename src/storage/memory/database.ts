// The in-memory counterpart of the PostgreSQL schema: the tables the memory
// stores share (a deleted topic takes its committed offsets with it; a
// committed transaction writes the groups' committed offsets), with
// PostgreSQL's rules where the domain can tell the difference: text holds no
// NUL, text sorts by its UTF-8 bytes (the C collation), stored values are
// copies (a caller's later mutation does not reach the table), and every
// change that PostgreSQL NOTIFYs is announced to `onNotify` listeners. For
// unit tests and single-process use; nothing here survives the process.
import type { Clock } from '../../clock.js';
import { systemClock } from '../../clock.js';
import type { AclBinding } from '../security-types.js';
import type { ScramCredential } from '../security-types.js';
import type { CoordinatorLease } from '../coordinator-lease.js';
import type { PendingTxnOffset, StoredTransaction } from '../transaction-types.js';
import type { TopicRow } from '../topic-types.js';

/** A group's committed offset of one partition (table committed_offsets). */
export interface MemoryCommittedOffset {
  groupId: string;
  topic: string;
  partition: number;
  committedOffset: bigint;
  leaderEpoch: number;
  metadata: string | null;
  commitTimestamp: Date;
}

/** A stored batch (table batches), its base offset already written into `data`. */
export interface MemoryBatch {
  baseOffset: bigint;
  lastOffset: bigint;
  recordCount: number;
  firstTimestamp: bigint;
  maxTimestamp: bigint;
  producerId: bigint;
  producerEpoch: number;
  baseSequence: number;
  isTransactional: boolean;
  isControl: boolean;
  size: number;
  data: Buffer;
}

/** A partition's row (table partitions) with its batches in offset order and its transaction index (open_txns, aborted_txns). */
export interface MemoryPartition {
  topicId: string;
  partition: number;
  /** The high watermark. */
  nextOffset: bigint;
  logStartOffset: bigint;
  leaderEpoch: number;
  batches: MemoryBatch[];
  /** Producer id → first offset of its open transaction. */
  openTxns: Map<bigint, bigint>;
  abortedTxns: { producerId: bigint; firstOffset: bigint; lastOffset: bigint }[];
}

export const newPartition = (topicId: string, partition: number): MemoryPartition => ({
  topicId,
  partition,
  nextOffset: 0n,
  logStartOffset: 0n,
  leaderEpoch: 0,
  batches: [],
  openTxns: new Map(),
  abortedTxns: [],
});

export interface MemoryBroker {
  nodeId: number;
  host: string;
  port: number;
  rack: string | null;
  instanceId: string;
  listeners: Record<string, { host: string; port: number }> | null;
  startedAt: number;
  lastSeen: number;
}

/** The channels PostgreSQL would NOTIFY on (payloads as the pg stores send them). */
export type MemoryChannel = 'topics' | 'acls' | 'brokerConfigs' | 'groupConfigs';

/** Thrown where PostgreSQL refuses a value (as node-postgres surfaces a DatabaseError). */
export class MemoryStorageError extends Error {
  constructor(
    message: string,
    /** PostgreSQL's SQLSTATE for the same refusal. */
    readonly code: string,
  ) {
    super(message);
    this.name = 'MemoryStorageError';
  }
}

/** PostgreSQL text cannot hold NUL: refused as PostgreSQL refuses it. */
export function text(value: string): string {
  if (value.includes('\0')) throw new MemoryStorageError('invalid byte sequence for encoding "UTF8": 0x00', '22021');
  return value;
}

/** Text order under the C collation: by UTF-8 bytes (code points), not JavaScript's UTF-16 units. */
export function compareText(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/** Offset metadata is stored as its UTF-8 bytes: what comes back is what those bytes decode to. */
export const utf8RoundTrip = (s: string | null): string | null => (s === null ? null : Buffer.from(s, 'utf8').toString('utf8'));

export const key = (...parts: (string | number)[]): string => parts.join('\u0000');

export class MemoryDatabase {
  readonly topics = new Map<string, TopicRow>();
  /** By topic id\0partition; created and dropped with their topic. */
  readonly partitions = new Map<string, MemoryPartition>();
  readonly committedOffsets = new Map<string, MemoryCommittedOffset>();
  /** Records groups never read before a log start passed them, by group\0topic\0partition (table deleted_unread). */
  readonly deletedUnread = new Map<string, bigint>();
  readonly transactions = new Map<string, StoredTransaction & { updatedAt: Date }>();
  /** Staged TxnOffsetCommit offsets by transactional id, then group\0topic\0partition. */
  readonly txnOffsets = new Map<string, Map<string, PendingTxnOffset>>();
  readonly brokerConfigs = new Map<string, Record<string, string>>();
  /** The configs set on each group (table group_configs): a group with none has no entry. */
  readonly groupConfigs = new Map<string, Record<string, string>>();
  readonly acls = new Map<string, AclBinding>();
  readonly credentials = new Map<string, ScramCredential>();
  readonly brokers = new Map<number, MemoryBroker>();
  /** Instances with a session open (PostgreSQL: a connection named by the instance). */
  readonly sessions = new Map<string, number>();
  /** Coordinator slots' leases (table coordinator_slots): holder, epoch, and when the lease lapses on the clock. */
  readonly coordinatorSlots = new Map<number, { instanceId: string; epoch: bigint; expiresAt: number }>();
  clusterId: string | null = null;
  /** The producer_ids sequence (START 1000). */
  nextProducerId = 1000n;
  private readonly listeners: ((channel: MemoryChannel, payload: string) => void)[] = [];

  constructor(readonly clock: Clock = systemClock) {}

  /**
   * Takes or renews the slot's lease for the instance for `leaseMs`, whoever
   * held it (unit tests stand for a lease that lapsed): the epoch moves when
   * the holder changes, as coordinator_slots_claim moves it.
   */
  leaseSlot(slot: number, instanceId: string, leaseMs: number): CoordinatorLease {
    const held = this.coordinatorSlots.get(slot);
    const epoch = !held ? 1n : held.instanceId === instanceId ? held.epoch : held.epoch + 1n;
    this.coordinatorSlots.set(slot, { instanceId, epoch, expiresAt: this.clock.now() + leaseMs });
    return { slot, instanceId, epoch };
  }

  /** Whether the lease is still the slot's, at its epoch, and has not lapsed: the fence of every write of coordinator state. */
  leaseHeld(lease: CoordinatorLease): boolean {
    const held = this.coordinatorSlots.get(lease.slot);
    return held !== undefined && held.instanceId === lease.instanceId && held.epoch === lease.epoch && this.clock.now() < held.expiresAt;
  }

  onNotify(listener: (channel: MemoryChannel, payload: string) => void): void {
    this.listeners.push(listener);
  }

  notify(channel: MemoryChannel, payload: string): void {
    // As NOTIFY: delivered after the change is in place, never inside the caller's work.
    queueMicrotask(() => {
      for (const l of this.listeners) l(channel, payload);
    });
  }
}
