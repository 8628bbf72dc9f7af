// Transactions version 2 across brokers (KIP-890 part 2): the implicit adds
// of a partition leader (Produce v12+) and of a group coordinator
// (TxnOffsetCommit v5) reach the transactional id's coordinator when it is
// another broker, as Kafka's leader sends AddPartitionsToTxn v5 (verifyOnly
// false) to it through its AddPartitionsToTxnManager.
// Brokers sharing a schema have no link but PostgreSQL (no inter-broker
// listener, credentials or TLS to configure), so the request and its answer
// are NOTIFYs on one channel. The request names the coordinator's node id
// (FindCoordinator's answer, coordination.ts); that broker runs it through
// its own TransactionCoordinator, in the id's queue and with its checks
// (epoch, state, CONCURRENT_TRANSACTIONS while a completion is under way,
// NOT_COORDINATOR once the slot moved), so the transaction's state keeps one
// owner, and NOTIFYs the answer to the asking broker instance. An answer
// that does not come in time (a lost LISTEN connection, a coordinator that
// died) is NETWORK_EXCEPTION, as for Kafka's request that timed out.
import type { Logger } from '../observability/logger.js';
import { LogCode } from '../observability/log-codes.js';
import { ErrorCode } from '../protocol/errors.js';
import { systemClock, type Clock, type Timer } from '../clock.js';
import type { TransactionCoordinator } from './transaction-coordinator.js';

/** Where the requests and answers go: a NOTIFY on the channel every broker of the schema listens on (storage/pg/txn-add-channel.ts). */
export interface TxnAddNotifier {
  send(payload: string): Promise<void>;
}

/** How long the asking broker waits for the coordinator's answer (Kafka's inter-broker requests wait request.timeout.ms, 30 s; a client's produce request waits as long, so this is shorter). */
export const TXN_ADD_TIMEOUT_MS = 10_000;
/** PostgreSQL refuses a NOTIFY payload of 8000 bytes or more; a larger add goes in several requests. */
const PAYLOAD_MAX_BYTES = 7900;
/** So that the answer fits too: up to four bytes per partition's error code. */
const PARTITIONS_PER_REQUEST_MAX = 1500;

export interface TxnAddRequest {
  kind: 'add';
  id: string;
  /** The coordinator's node id. */
  to: number;
  /** The asking broker instance, which the answer names. */
  from: string;
  transactionalId: string;
  producerId: string;
  producerEpoch: number;
  /** Partitions to add, by topic (Produce v12+); their errors come back flattened in this order. */
  topics?: [string, number[]][];
  /** A group whose offsets the transaction will carry (TxnOffsetCommit v5). */
  groupId?: string;
}

interface TxnAddAnswer {
  kind: 'answer';
  id: string;
  to: string;
  errors: number[];
}

export interface TxnAddRequestsOptions {
  notifier: TxnAddNotifier;
  transactions: Pick<TransactionCoordinator, 'addPartitions' | 'addOffsets'>;
  /** The node FindCoordinator names for a transactional id (Coordination.coordinatorOf). */
  coordinatorOf: (transactionalId: string) => number;
  nodeId: number;
  instanceId: string;
  log: Logger;
  clock?: Clock;
  timeoutMs?: number;
}

type Partition = { topic: string; partition: number };

/** Splits the partitions into requests that fit a NOTIFY: each with its topics and the input positions of its errors, in the order they come back. */
function chunk(base: Omit<TxnAddRequest, 'id' | 'topics'>, partitions: Partition[]): { topics: [string, number[]][]; order: number[] }[] {
  const baseBytes = Buffer.byteLength(JSON.stringify({ ...base, id: 'x'.repeat(60), topics: [] }));
  const chunks: { topics: Map<string, number[]>; positions: Map<string, number[]>; bytes: number; count: number }[] = [];
  partitions.forEach((p, i) => {
    const cost = (c: (typeof chunks)[number]) => (c.topics.has(p.topic) ? 0 : Buffer.byteLength(JSON.stringify(p.topic)) + 6) + String(p.partition).length + 1;
    let current = chunks.at(-1);
    if (!current || (current.count > 0 && (current.bytes + cost(current) > PAYLOAD_MAX_BYTES || current.count === PARTITIONS_PER_REQUEST_MAX))) {
      current = { topics: new Map(), positions: new Map(), bytes: baseBytes, count: 0 };
      chunks.push(current);
    }
    current.bytes += cost(current);
    current.count++;
    if (!current.topics.has(p.topic)) {
      current.topics.set(p.topic, []);
      current.positions.set(p.topic, []);
    }
    current.topics.get(p.topic)!.push(p.partition);
    current.positions.get(p.topic)!.push(i);
  });
  return chunks.map((c) => ({ topics: [...c.topics], order: [...c.positions.values()].flat() }));
}

export class TxnAddRequests {
  /** Requests sent from here waiting for their answer, by request id. */
  private readonly pending = new Map<string, { answer: (errors: number[]) => void; size: number }>();
  private sequence = 0;
  private readonly notifier: TxnAddNotifier;
  private readonly transactions: Pick<TransactionCoordinator, 'addPartitions' | 'addOffsets'>;
  private readonly coordinatorOf: (transactionalId: string) => number;
  private readonly nodeId: number;
  private readonly instanceId: string;
  private readonly log: Logger;
  private readonly clock: Clock;
  private readonly timeoutMs: number;

  constructor(options: TxnAddRequestsOptions) {
    this.notifier = options.notifier;
    this.transactions = options.transactions;
    this.coordinatorOf = options.coordinatorOf;
    this.nodeId = options.nodeId;
    this.instanceId = options.instanceId;
    this.log = options.log;
    this.clock = options.clock ?? systemClock;
    this.timeoutMs = options.timeoutMs ?? TXN_ADD_TIMEOUT_MS;
  }

  /**
   * Adds the partitions to the producer's transaction at its coordinator,
   * here or on another broker: the coordinator's error per partition, in
   * order (NONE when added or already in it).
   */
  async addPartitions(transactionalId: string, producerId: bigint, producerEpoch: number, partitions: Partition[]): Promise<number[]> {
    const to = this.coordinatorOf(transactionalId);
    if (to === this.nodeId) return this.transactions.addPartitions(transactionalId, producerId, producerEpoch, partitions, false);
    const base = { kind: 'add' as const, to, from: this.instanceId, transactionalId, producerId: String(producerId), producerEpoch };
    const errors = new Array<number>(partitions.length).fill(ErrorCode.UNKNOWN_SERVER_ERROR);
    await Promise.all(
      chunk(base, partitions).map(async ({ topics, order }) => {
        const answered = await this.ask({ ...base, topics }, order.length);
        order.forEach((position, k) => (errors[position] = answered[k] ?? ErrorCode.UNKNOWN_SERVER_ERROR));
      }),
    );
    return errors;
  }

  /** Adds the group to the producer's transaction at its coordinator (TxnOffsetCommit v5): the coordinator's error. */
  async addOffsets(transactionalId: string, producerId: bigint, producerEpoch: number, groupId: string): Promise<number> {
    const to = this.coordinatorOf(transactionalId);
    if (to === this.nodeId) return this.transactions.addOffsets(transactionalId, producerId, producerEpoch, groupId);
    const [error] = await this.ask({ kind: 'add', to, from: this.instanceId, transactionalId, producerId: String(producerId), producerEpoch, groupId }, 1);
    return error ?? ErrorCode.UNKNOWN_SERVER_ERROR;
  }

  /** A message on the channel: a request for this broker, or an answer to one of its own. */
  onNotification(payload: string): void {
    let message: TxnAddRequest | TxnAddAnswer;
    try {
      message = JSON.parse(payload) as TxnAddRequest | TxnAddAnswer;
    } catch {
      return;
    }
    if (message.kind === 'answer') {
      if (message.to === this.instanceId) this.pending.get(message.id)?.answer(message.errors);
    } else if (message.kind === 'add' && message.to === this.nodeId) {
      void this.serve(message);
    }
  }

  /**
   * The LISTEN connection was lost: answers may have been missed, so every
   * request waiting is answered NETWORK_EXCEPTION now rather than at its timeout.
   */
  failPending(): void {
    for (const p of [...this.pending.values()]) p.answer(new Array<number>(p.size).fill(ErrorCode.NETWORK_EXCEPTION));
  }

  private ask(request: Omit<TxnAddRequest, 'id'>, size: number): Promise<number[]> {
    const id = `${this.instanceId}:${++this.sequence}`;
    return new Promise((resolve) => {
      let timer: Timer | null = null;
      const answer = (errors: number[]) => {
        timer?.cancel();
        this.pending.delete(id);
        resolve(errors);
      };
      const failed = () => answer(new Array<number>(size).fill(ErrorCode.NETWORK_EXCEPTION));
      this.pending.set(id, { answer, size });
      timer = this.clock.setTimeout(() => {
        this.log.info({ transactionalId: request.transactionalId, coordinator: request.to, timeoutMs: this.timeoutMs }, 'transaction coordinator did not answer an implicit add in time');
        failed();
      }, this.timeoutMs);
      this.notifier.send(JSON.stringify({ ...request, id })).catch((err: Error) => {
        this.log.info({ err: err.message, transactionalId: request.transactionalId, coordinator: request.to }, 'sending an implicit add to the transaction coordinator failed');
        failed();
      });
    });
  }

  /** Runs another broker's request through this broker's transaction coordinator and answers it. */
  private async serve(request: TxnAddRequest): Promise<void> {
    const partitions = (request.topics ?? []).flatMap(([topic, indexes]) => indexes.map((partition) => ({ topic, partition })));
    const size = request.groupId === undefined ? partitions.length : 1;
    let errors: number[];
    try {
      const producerId = BigInt(request.producerId);
      errors =
        request.groupId === undefined
          ? await this.transactions.addPartitions(request.transactionalId, producerId, request.producerEpoch, partitions, false)
          : [await this.transactions.addOffsets(request.transactionalId, producerId, request.producerEpoch, request.groupId)];
    } catch (err) {
      // Storing the transaction failed (PostgreSQL): retriable, as a Kafka coordinator that could not write its log.
      this.log.warn({ err: (err as Error).message, transactionalId: request.transactionalId, code: LogCode.TXN_ADD_FAILED }, 'an implicit add from another broker failed');
      errors = new Array<number>(size).fill(ErrorCode.COORDINATOR_NOT_AVAILABLE);
    }
    const answer: TxnAddAnswer = { kind: 'answer', id: request.id, to: request.from, errors };
    await this.notifier.send(JSON.stringify(answer)).catch((err: Error) => {
      this.log.info({ err: err.message, transactionalId: request.transactionalId }, 'answering an implicit add failed; the asking broker times out');
    });
  }
}
