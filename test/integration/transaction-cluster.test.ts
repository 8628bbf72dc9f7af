// Transactions through three brokers on one schema (one in this process, two
// child processes): every broker names the slot holder as a transactional
// id's coordinator and the others answer NOT_COORDINATOR; kafkajs
// transactions succeed whichever broker they bootstrap with; a batch
// produced through a broker that does not coordinate its transaction is
// checked against the stored state, so its records and its offsets commit
// together; a read_committed fetch through any broker stops at an open
// transaction; and after kill -9 of a coordinator the next holder completes
// the commit it died in and aborts, at its timeout, the transaction it left
// open, while a kafkajs producer with the same transactional id carries on.
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COORDINATOR_SLOTS, slotOf } from '../../src/coordinator/coordination.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { AddOffsetsToTxnApi, DescribeTransactionsApi, InitProducerIdApi, ListTransactionsApi, OffsetFetchApi, TxnOffsetCommitApi } from '../../src/protocol/messages/index.js';
import { BrokerCluster } from '../support/broker-cluster.js';
import { addPartitions, createTopic, endTxn, fetch, init, produce, visible } from '../support/txn-wire.js';

const READ_COMMITTED = 1;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let cluster: BrokerCluster;
const client = (node: number) => cluster.client(node);

/**
 * Each key's coordinator by the slot leases in the database, once every live
 * node holds some: what the bug reproductions pick their ids by, so that they
 * reach the code under test even where FindCoordinator would not agree.
 */
async function leaseHolders(live: number[], deadlineMs = 30_000): Promise<Map<string, number>> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const rows = await cluster.first.query<{ slot: number; node_id: number }>('SELECT slot, node_id FROM coordinator_slots WHERE expires_at > now()');
    const bySlot = new Map(rows.map((r) => [r.slot, r.node_id]));
    if (bySlot.size === COORDINATOR_SLOTS && live.every((n) => [...bySlot.values()].includes(n))) return new Map(cluster.keys.map((k) => [k, bySlot.get(slotOf(k))!]));
    if (Date.now() > deadline) throw new Error('the slots were not spread over the brokers');
    await sleep(200);
  }
}

beforeAll(async () => {
  cluster = await BrokerCluster.start(3);
}, 60_000);
afterAll(async () => {
  await cluster?.stop();
});

describe('three brokers on one schema', () => {
  it('name one coordinator per transactional id, from every broker; the others answer NOT_COORDINATOR', async () => {
    const answer = await cluster.settled();
    const id = cluster.keyOn(answer, 2);
    const initVia = (node: number) => client(node).request(InitProducerIdApi, 4, { transactionalId: id, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
    expect((await initVia(1)).errorCode).toBe(ErrorCode.NOT_COORDINATOR);
    expect((await initVia(3)).errorCode).toBe(ErrorCode.NOT_COORDINATOR);
    expect((await initVia(2)).errorCode).toBe(ErrorCode.NONE);
    const describeVia = async (node: number) => (await client(node).request(DescribeTransactionsApi, 0, { transactionalIds: [id] })).transactionStates[0]!.errorCode;
    expect(await describeVia(1)).toBe(ErrorCode.NOT_COORDINATOR);
    expect(await describeVia(2)).toBe(ErrorCode.NONE);
    // As Kafka, each broker lists the transactional ids it coordinates.
    const listVia = async (node: number) => (await client(node).request(ListTransactionsApi, 0, { stateFilters: [], producerIdFilters: [] })).transactionStates.map((t) => t.transactionalId);
    expect(await listVia(2)).toContain(id);
    expect(await listVia(1)).not.toContain(id);
    expect(await listVia(3)).not.toContain(id);
  });

  it('let kafkajs transactions succeed whichever broker they bootstrap with', async () => {
    const answer = await leaseHolders([1, 2, 3]);
    const topic = 'cluster-kafkajs';
    await createTopic(client(1), topic);
    // One producer per bootstrap broker, each with a transactional id another broker coordinates.
    for (const [bootstrapNode, coordinatorNode] of [
      [1, 2],
      [2, 3],
      [3, 1],
    ] as const) {
      const transactionalId = cluster.keyOn(answer, coordinatorNode);
      const producer = new Kafka({ brokers: [cluster.bootstrap(bootstrapNode)], logLevel: logLevel.NOTHING, retry: { retries: 2 } }).producer({
        transactionalId,
        maxInFlightRequests: 1,
        idempotent: true,
      });
      await producer.connect();
      const txn = await producer.transaction();
      await txn.send({ topic, messages: [{ value: `via-${bootstrapNode}-a` }, { value: `via-${bootstrapNode}-b` }] });
      await txn.commit();
      await producer.disconnect();
    }
    for (const node of [1, 2, 3]) {
      expect(visible(await fetch(client(node), topic, READ_COMMITTED)).sort()).toEqual(['via-1-a', 'via-1-b', 'via-2-a', 'via-2-b', 'via-3-a', 'via-3-b']);
    }
  });

  it('commit records produced through one broker and offsets committed through another with a transaction a third coordinates', async () => {
    const answer = await leaseHolders([1, 2, 3]);
    const [topic, input] = ['cluster-eos-out', 'cluster-eos-in'];
    await createTopic(client(1), topic);
    await createTopic(client(1), input);
    const coordinator = client(2);
    const groupId = cluster.keyOn(answer, 3);
    const p = await init(coordinator, cluster.keyOn(answer, 2));
    expect(await addPartitions(coordinator, p, topic)).toEqual([ErrorCode.NONE]);
    const added = await coordinator.request(AddOffsetsToTxnApi, 3, { transactionalId: p.transactionalId, producerId: p.producerId, producerEpoch: p.producerEpoch, groupId });
    expect(added.errorCode).toBe(ErrorCode.NONE);
    // The records go through broker 1, which does not coordinate the transaction.
    expect((await produce(client(1), p, topic, ['r1', 'r2'])).errorCode).toBe(ErrorCode.NONE);
    expect((await produce(client(1), p, topic, ['r3'])).errorCode).toBe(ErrorCode.NONE);
    // The offsets through broker 3, the group's coordinator.
    const committed = await client(3).request(TxnOffsetCommitApi, 3, {
      transactionalId: p.transactionalId,
      groupId,
      producerId: p.producerId,
      producerEpoch: p.producerEpoch,
      generationId: -1,
      memberId: '',
      groupInstanceId: null,
      topics: [{ name: input, partitions: [{ partitionIndex: 0, committedOffset: 3n, committedLeaderEpoch: -1, committedMetadata: null }] }],
    });
    expect(committed.topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.NONE);
    const offsetFetch = async (requireStable: boolean) =>
      (await client(3).request(OffsetFetchApi, 7, { groupId, topics: [{ name: input, partitionIndexes: [0] }], requireStable })).topics[0]!.partitions[0]!;
    expect((await offsetFetch(true)).errorCode).toBe(ErrorCode.UNSTABLE_OFFSET_COMMIT);
    expect((await offsetFetch(false)).committedOffset).toBe(-1n);

    expect(await endTxn(coordinator, p, true)).toBe(ErrorCode.NONE);
    expect(await offsetFetch(true)).toMatchObject({ errorCode: ErrorCode.NONE, committedOffset: 3n });
    for (const node of [1, 2, 3]) expect(visible(await fetch(client(node), topic, READ_COMMITTED))).toEqual(['r1', 'r2', 'r3']);
  });

  it('stop a read_committed fetch through any broker at a transaction still open', async () => {
    const answer = await leaseHolders([1, 2, 3]);
    const topic = 'cluster-open';
    await createTopic(client(1), topic);
    const p = await init(client(2), cluster.keyOn(answer, 2));
    expect(await addPartitions(client(2), p, topic)).toEqual([ErrorCode.NONE]);
    expect((await produce(client(2), p, topic, ['open-1', 'open-2'])).errorCode).toBe(ErrorCode.NONE);
    for (const node of [1, 2, 3]) {
      const part = await fetch(client(node), topic, READ_COMMITTED);
      expect(part.lastStableOffset).toBe(0n);
      expect(visible(part)).toEqual([]);
    }
    expect(await endTxn(client(2), p, false)).toBe(ErrorCode.NONE);
    for (const node of [1, 2, 3]) {
      const part = await fetch(client(node), topic, READ_COMMITTED);
      expect(part.lastStableOffset).toBe(3n);
      expect(visible(part)).toEqual([]);
    }
  });

  it(
    'complete, after kill -9 of their coordinator, the commit it died in and (at its timeout) the transaction it left open; a producer carries on through the survivors',
    { timeout: 60_000 },
    async () => {
      const answer = await cluster.settled();
      const [committing, open] = ['cluster-dies-committing', 'cluster-dies-open'];
      await createTopic(client(1), committing);
      await createTopic(client(1), open);
      const c3 = client(3);
      const inCommit = await init(c3, cluster.keyOn(answer, 3));
      const leftOpen = await init(c3, cluster.keyOn(answer, 3), 12_000);
      expect(await addPartitions(c3, inCommit, committing)).toEqual([ErrorCode.NONE]);
      expect(await addPartitions(c3, leftOpen, open)).toEqual([ErrorCode.NONE]);
      expect((await produce(client(1), inCommit, committing, ['c1', 'c2'])).errorCode).toBe(ErrorCode.NONE);
      expect((await produce(client(1), leftOpen, open, ['o1'])).errorCode).toBe(ErrorCode.NONE);

      await cluster.kill(3);
      // What the coordinator had stored when it died in the middle of EndTxn(commit): PrepareCommit, no marker yet.
      await cluster.first.query("UPDATE transactions SET state = 'PrepareCommit' WHERE transactional_id = $1", [inCommit.transactionalId]);

      // Once its leases lapse, the survivors take its slots over.
      const after = await cluster.settled();
      const holder = after.get(inCommit.transactionalId)!;
      expect([1, 2]).toContain(holder);
      for (const deadline = Date.now() + 20_000; ;) {
        if (visible(await fetch(client(1), committing, READ_COMMITTED)).length === 2) break;
        if (Date.now() > deadline) throw new Error('the commit was not completed by the next coordinator');
        await sleep(200);
      }
      for (const node of [1, 2]) expect(visible(await fetch(client(node), committing, READ_COMMITTED))).toEqual(['c1', 'c2']);

      // The open one is aborted at its timeout, with a bumped epoch: its records never become visible, and the last stable offset moves past them.
      for (const deadline = Date.now() + 30_000; ;) {
        const part = await fetch(client(2), open, READ_COMMITTED);
        if (part.lastStableOffset === 2n) break;
        if (Date.now() > deadline) throw new Error('the open transaction was not aborted by the next coordinator');
        await sleep(200);
      }
      for (const node of [1, 2]) expect(visible(await fetch(client(node), open, READ_COMMITTED))).toEqual([]);
      expect((await produce(client(1), leftOpen, open, ['late'])).errorCode).not.toBe(ErrorCode.NONE);

      // The producer of that transactional id starts again through a survivor and commits.
      const producer = new Kafka({ brokers: [cluster.bootstrap(1)], logLevel: logLevel.NOTHING }).producer({ transactionalId: leftOpen.transactionalId, maxInFlightRequests: 1, idempotent: true });
      await producer.connect();
      const txn = await producer.transaction();
      await txn.send({ topic: open, messages: [{ value: 'again' }] });
      await txn.commit();
      await producer.disconnect();
      for (const node of [1, 2]) expect(visible(await fetch(client(node), open, READ_COMMITTED))).toEqual(['again']);
    },
  );
});
