// Transactions through three brokers on one schema (one in this process, two
// child processes): every broker names the slot holder as a transactional
// id's coordinator and the others answer NOT_COORDINATOR; kafkajs
// transactions succeed whichever broker they bootstrap with; a batch
// produced through its partition's leader, which does not coordinate its
// transaction, is checked against the stored state, so its records and its
// offsets (committed through a third broker) commit together; a
// read_committed fetch through the leader (the only broker serving fetches)
// stops at an open transaction another broker coordinates, and shows its
// outcome (Fetch and ListOffsets) as soon as EndTxn answered, even with the
// leader's NOTIFYs held, and no aborted record ever reaches a read_committed
// consumer; under transactions version 2 (finalized in the cluster) the
// leader adds the partition, and the group's coordinator the group, at the
// transaction's coordinator on another broker, whose checks fence a zombie;
// and after kill -9 of a coordinator the next holder completes
// the commit it died in and aborts, at its timeout, the transaction it left
// open, while a kafkajs producer with the same transactional id carries on.
import { isDeepStrictEqual } from 'node:util';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COORDINATOR_SLOTS, slotOf } from '../../src/coordinator/coordination.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { AddOffsetsToTxnApi, ApiVersionsApi, DescribeTransactionsApi, InitProducerIdApi, ListTransactionsApi, OffsetFetchApi, TxnOffsetCommitApi } from '../../src/protocol/messages/index.js';
import { BrokerCluster } from '../support/broker-cluster.js';
import { leadersOf, until } from '../support/cluster.js';
import { addPartitions, createTopic, endTxn, endTxnBumpingEpoch, fetch, init, latest, produce, visible } from '../support/txn-wire.js';

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

/** The partition leader of a one-partition topic, once every live broker names the same live one. */
async function leaderOf(topic: string, live = [1, 2, 3]): Promise<number> {
  let leader = -1;
  await until(`every live broker names one live leader of ${topic}`, async () => {
    const answers = await Promise.all(live.map(async (node) => (await leadersOf(cluster.bootstrap(node), topic))[0]?.leader ?? -1));
    leader = answers[0]!;
    return live.includes(leader) && answers.every((a) => a === leader);
  });
  return leader;
}

/** A read_committed fetch of a one-partition topic through its leader, looked up again if leadership moved in between. */
async function fetchAtLeader(topic: string, live = [1, 2, 3]) {
  for (let attempt = 0; ; attempt++) {
    const part = await fetch(client(await leaderOf(topic, live)), topic, READ_COMMITTED);
    if (part.errorCode !== ErrorCode.NOT_LEADER_OR_FOLLOWER || attempt === 10) return part;
    await sleep(200);
  }
}

/** What a read_committed consumer reads at the leader, sorted: the outcome of a transaction that EndTxn answered, whichever broker coordinated it. */
async function expectVisibleAtLeader(topic: string, expected: string[], live = [1, 2, 3]) {
  expect(visible(await fetchAtLeader(topic, live)).sort()).toEqual(expected);
}

/**
 * A new one-partition topic that broker 1 (this process, whose announcements the test can hold) leads, and a
 * transactional producer that broker 2 coordinates.
 */
async function transactionLedElsewhere(prefix: string) {
  const answer = await leaseHolders([1, 2, 3]);
  for (let i = 0; i < 20; i++) {
    const topic = `${prefix}-${i}`;
    await createTopic(client(1), topic);
    if ((await leaderOf(topic)) !== 1) continue;
    const coordinator = client(2);
    return { topic, leader: client(1), coordinator, p: await init(coordinator, cluster.keyOn(answer, 2)) };
  }
  throw new Error('broker 1 leads none of the topics created');
}

/** Holds the append announcements broker 1 (this process) hears from the others until the returned function delivers them. */
function holdAnnouncements(): () => void {
  const logs = cluster.first.context.logs;
  const deliver = logs.onAppendNotification.bind(logs);
  const held: string[] = [];
  logs.onAppendNotification = (payload) => void held.push(payload);
  return () => {
    logs.onAppendNotification = deliver;
    for (const payload of held) deliver(payload);
  };
}

/** The live brokers other than `leader`: the coordinators the cross-broker tests pick. */
const others = (leader: number, live = [1, 2, 3]) => live.filter((n) => n !== leader);

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
    // kafkajs sends the records to the partition's leader itself; only the leader serves the fetch.
    await expectVisibleAtLeader(topic, ['via-1-a', 'via-1-b', 'via-2-a', 'via-2-b', 'via-3-a', 'via-3-b']);
  });

  /** An output and an input topic (`<prefix>-out`, `<prefix>-in`), and a producer whose transaction one broker coordinates, with the group's coordinator a second broker and the output's leader the third. */
  async function threeBrokerTransaction(prefix: string) {
    const answer = await leaseHolders([1, 2, 3]);
    const [topic, input] = [`${prefix}-out`, `${prefix}-in`];
    await createTopic(client(1), topic);
    await createTopic(client(1), input);
    const leaderNode = await leaderOf(topic);
    const [txnNode, groupNode] = others(leaderNode) as [number, number];
    const [leader, coordinator, groupCoordinator] = [client(leaderNode), client(txnNode), client(groupNode)];
    const groupId = cluster.keyOn(answer, groupNode);
    const p = await init(coordinator, cluster.keyOn(answer, txnNode));
    return { topic, input, leader, coordinator, groupCoordinator, groupId, p };
  }

  it('commit records produced through one broker and offsets committed through another with a transaction a third coordinates', async () => {
    // Only the output partition's leader appends; the transaction and the group are coordinated by the two other brokers.
    const { topic, input, leader, coordinator, groupCoordinator, groupId, p } = await threeBrokerTransaction('cluster-eos');
    expect(await addPartitions(coordinator, p, topic)).toEqual([ErrorCode.NONE]);
    const added = await coordinator.request(AddOffsetsToTxnApi, 3, { transactionalId: p.transactionalId, producerId: p.producerId, producerEpoch: p.producerEpoch, groupId });
    expect(added.errorCode).toBe(ErrorCode.NONE);
    // The records go through the partition's leader, which does not coordinate the transaction.
    expect((await produce(leader, p, topic, ['r1', 'r2'])).errorCode).toBe(ErrorCode.NONE);
    expect((await produce(leader, p, topic, ['r3'])).errorCode).toBe(ErrorCode.NONE);
    // The offsets through the group's coordinator, a third broker.
    const committed = await groupCoordinator.request(TxnOffsetCommitApi, 3, {
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
      (await groupCoordinator.request(OffsetFetchApi, 7, { groupId, topics: [{ name: input, partitionIndexes: [0] }], requireStable })).topics[0]!.partitions[0]!;
    expect((await offsetFetch(true)).errorCode).toBe(ErrorCode.UNSTABLE_OFFSET_COMMIT);
    expect((await offsetFetch(false)).committedOffset).toBe(-1n);

    expect(await endTxn(coordinator, p, true)).toBe(ErrorCode.NONE);
    expect(await offsetFetch(true)).toMatchObject({ errorCode: ErrorCode.NONE, committedOffset: 3n });
    await expectVisibleAtLeader(topic, ['r1', 'r2', 'r3']);
  });

  it('stop a read_committed fetch through the leader at a transaction still open that another broker coordinates', async () => {
    const answer = await leaseHolders([1, 2, 3]);
    const topic = 'cluster-open';
    await createTopic(client(1), topic);
    const leaderNode = await leaderOf(topic);
    const [leader, coordinator] = [client(leaderNode), client(others(leaderNode)[0]!)];
    const p = await init(coordinator, cluster.keyOn(answer, others(leaderNode)[0]!));
    expect(await addPartitions(coordinator, p, topic)).toEqual([ErrorCode.NONE]);
    expect((await produce(leader, p, topic, ['open-1', 'open-2'])).errorCode).toBe(ErrorCode.NONE);
    const open = await fetch(leader, topic, READ_COMMITTED);
    expect(open).toMatchObject({ errorCode: ErrorCode.NONE, highWatermark: 2n, lastStableOffset: 0n });
    expect(visible(open)).toEqual([]);
    expect(await endTxn(coordinator, p, false)).toBe(ErrorCode.NONE);
    // The coordinator, another broker, appended the marker before it answered; the leader reads it back before it answers.
    const aborted = await fetch(leader, topic, READ_COMMITTED);
    expect(aborted).toMatchObject({ errorCode: ErrorCode.NONE, highWatermark: 3n, lastStableOffset: 3n, abortedTransactions: [{ producerId: p.producerId, firstOffset: 0n }] });
    expect(visible(aborted)).toEqual([]);
  });

  it('serve transactions version 2 when the partition leader, the transaction coordinator and the group coordinator are three brokers', async () => {
    // Finalized in the cluster: Kafka 4 clients switch to it.
    const features = await client(1).request(ApiVersionsApi, 3, { clientSoftwareName: 'test', clientSoftwareVersion: '1' });
    expect(features.finalizedFeatures.find((f) => f.name === 'transaction.version')).toMatchObject({ minVersionLevel: 2, maxVersionLevel: 2 });

    const { topic, input, leader, coordinator, groupCoordinator, groupId, p } = await threeBrokerTransaction('cluster-tv2');
    const zombie = { ...p };

    // No AddPartitionsToTxn: the leader adds the partition at the coordinator, another broker.
    expect((await produce(leader, p, topic, ['c1', 'c2'], { version: 12 })).errorCode).toBe(ErrorCode.NONE);
    expect((await produce(leader, p, topic, ['c3'], { version: 12 })).errorCode).toBe(ErrorCode.NONE);
    expect((await coordinator.request(DescribeTransactionsApi, 0, { transactionalIds: [p.transactionalId] })).transactionStates[0]).toMatchObject({
      transactionState: 'Ongoing',
      topics: [{ topic, partitions: [0] }],
    });
    // No AddOffsetsToTxn: TxnOffsetCommit v5 through the group's coordinator, a third broker, adds the group.
    const commitOffsets = async (producer: typeof p, offset: bigint) =>
      (
        await groupCoordinator.request(TxnOffsetCommitApi, 5, {
          transactionalId: producer.transactionalId,
          groupId,
          producerId: producer.producerId,
          producerEpoch: producer.producerEpoch,
          generationId: -1,
          memberId: '',
          groupInstanceId: null,
          topics: [{ name: input, partitions: [{ partitionIndex: 0, committedOffset: offset, committedLeaderEpoch: -1, committedMetadata: null }] }],
        })
      ).topics[0]!.partitions[0]!.errorCode;
    expect(await commitOffsets(p, 3n)).toBe(ErrorCode.NONE);
    const readable = await fetch(leader, topic, READ_COMMITTED);
    expect(readable).toMatchObject({ highWatermark: 3n, lastStableOffset: 0n });

    expect((await endTxnBumpingEpoch(coordinator, p, true)).errorCode).toBe(ErrorCode.NONE);
    expect(p.producerEpoch).toBe(zombie.producerEpoch + 1);
    await expectVisibleAtLeader(topic, ['c1', 'c2', 'c3']);
    const offsetFetch = async () => (await groupCoordinator.request(OffsetFetchApi, 7, { groupId, topics: [{ name: input, partitionIndexes: [0] }], requireStable: true })).topics[0]!.partitions[0]!;
    expect(await offsetFetch()).toMatchObject({ errorCode: ErrorCode.NONE, committedOffset: 3n });

    // The next transaction, at the epoch the commit named, is aborted: its records and its offsets never show.
    expect((await produce(leader, p, topic, ['a1'], { version: 12 })).errorCode).toBe(ErrorCode.NONE);
    expect(await commitOffsets(p, 4n)).toBe(ErrorCode.NONE);
    expect((await endTxnBumpingEpoch(coordinator, p, false)).errorCode).toBe(ErrorCode.NONE);
    let aborted = await fetch(leader, topic, READ_COMMITTED);
    await until('the abort marker reaches the leader', async () => (aborted = await fetch(leader, topic, READ_COMMITTED)).lastStableOffset === 6n);
    expect(visible(aborted)).toEqual(['c1', 'c2', 'c3']);
    expect(await offsetFetch()).toMatchObject({ errorCode: ErrorCode.NONE, committedOffset: 3n });

    // A zombie of the first epoch is fenced by the coordinator through the leader, and its batch is not appended.
    expect((await produce(leader, zombie, topic, ['zombie'], { version: 12 })).errorCode).toBe(ErrorCode.INVALID_PRODUCER_EPOCH);
    expect(await commitOffsets(zombie, 9n)).toBe(ErrorCode.INVALID_PRODUCER_EPOCH);
    expect((await fetch(leader, topic, READ_COMMITTED)).highWatermark).toBe(6n);
    expect(await offsetFetch()).toMatchObject({ errorCode: ErrorCode.NONE, committedOffset: 3n });
  });

  it("show a transaction's outcome at its partition's leader as soon as EndTxn answers, when another broker coordinates it (read_committed Fetch, ListOffsets)", async () => {
    const { topic, leader, coordinator, p } = await transactionLedElsewhere('cluster-outcome');
    // The leader hears of the coordinator's markers by NOTIFY; held, the race with it is lost every time.
    const release = holdAnnouncements();
    // Commit and abort, ListOffsets or Fetch first: each combination five times.
    const TRANSACTIONS = 20;
    const stale: string[] = [];
    try {
      for (let i = 0, end = 0n; i < TRANSACTIONS; i++) {
        const commit = i % 2 === 0;
        expect(await addPartitions(coordinator, p, topic)).toEqual([ErrorCode.NONE]);
        const produced = await produce(leader, p, topic, [`t${i}-a`, `t${i}-b`]);
        expect(produced).toMatchObject({ errorCode: ErrorCode.NONE, baseOffset: end });
        expect(await endTxn(coordinator, p, commit)).toBe(ErrorCode.NONE);
        end += 3n; // two records and the marker
        const listFirst = i % 4 < 2;
        const listedBefore = listFirst ? await latest(leader, topic, READ_COMMITTED) : null;
        const read = await fetch(leader, topic, READ_COMMITTED, produced.baseOffset);
        const listed = listedBefore ?? (await latest(leader, topic, READ_COMMITTED));
        const seen = { lastStableOffset: read.lastStableOffset, listed, visible: visible(read), aborted: read.abortedTransactions };
        const expected = {
          lastStableOffset: end,
          listed: end,
          visible: commit ? [`t${i}-a`, `t${i}-b`] : [],
          aborted: commit ? [] : [{ producerId: p.producerId, firstOffset: produced.baseOffset }],
        };
        if (!isDeepStrictEqual(seen, expected))
          stale.push(`${commit ? 'commit' : 'abort'} ${i}: last stable ${seen.lastStableOffset}, listed ${listed}, want ${end}; visible ${seen.visible.join(' ') || 'none'}`);
      }
    } finally {
      release();
    }
    expect(stale).toEqual([]);
  });

  it("keep an aborted transaction's records from read_committed consumers when its producer's next one starts at the leader before the leader heard of the marker", async () => {
    const { topic, leader, coordinator, p } = await transactionLedElsewhere('cluster-next');
    // Nothing reads in between, so the leader still holds each transaction open when the next one's records come.
    const release = holdAnnouncements();
    try {
      for (let i = 0; i < 10; i++) {
        expect(await addPartitions(coordinator, p, topic)).toEqual([ErrorCode.NONE]);
        expect((await produce(leader, p, topic, [`n${i}`])).errorCode).toBe(ErrorCode.NONE);
        expect(await endTxn(coordinator, p, i % 2 === 0)).toBe(ErrorCode.NONE);
      }
    } finally {
      release();
    }
    const read = await fetch(leader, topic, READ_COMMITTED);
    expect(read).toMatchObject({ highWatermark: 20n, lastStableOffset: 20n });
    expect(visible(read)).toEqual(['n0', 'n2', 'n4', 'n6', 'n8']);
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
      // The records go through each partition's leader (which may be broker 3 itself: its partitions move to the survivors too).
      expect((await produce(client(await leaderOf(committing)), inCommit, committing, ['c1', 'c2'])).errorCode).toBe(ErrorCode.NONE);
      expect((await produce(client(await leaderOf(open)), leftOpen, open, ['o1'])).errorCode).toBe(ErrorCode.NONE);

      await cluster.kill(3);
      // What the coordinator had stored when it died in the middle of EndTxn(commit): PrepareCommit, no marker yet.
      await cluster.first.query("UPDATE transactions SET state = 'PrepareCommit' WHERE transactional_id = $1", [inCommit.transactionalId]);

      // Once its leases lapse, the survivors take its slots over.
      const after = await cluster.settled();
      const holder = after.get(inCommit.transactionalId)!;
      expect([1, 2]).toContain(holder);
      for (const deadline = Date.now() + 20_000; ;) {
        if (visible(await fetchAtLeader(committing, [1, 2])).length === 2) break;
        if (Date.now() > deadline) throw new Error('the commit was not completed by the next coordinator');
        await sleep(200);
      }
      expect(visible(await fetchAtLeader(committing, [1, 2]))).toEqual(['c1', 'c2']);

      // The open one is aborted at its timeout, with a bumped epoch: its records never become visible, and the last stable offset moves past them.
      for (const deadline = Date.now() + 30_000; ;) {
        const part = await fetchAtLeader(open, [1, 2]);
        if (part.lastStableOffset === 2n) break;
        if (Date.now() > deadline) throw new Error('the open transaction was not aborted by the next coordinator');
        await sleep(200);
      }
      expect(visible(await fetchAtLeader(open, [1, 2]))).toEqual([]);
      // Refused by the leader itself for its fenced epoch, not merely for being sent to another broker.
      expect((await produce(client(await leaderOf(open, [1, 2])), leftOpen, open, ['late'])).errorCode).not.toBeOneOf([ErrorCode.NONE, ErrorCode.NOT_LEADER_OR_FOLLOWER]);

      // The producer of that transactional id starts again through a survivor and commits.
      const producer = new Kafka({ brokers: [cluster.bootstrap(1)], logLevel: logLevel.NOTHING }).producer({ transactionalId: leftOpen.transactionalId, maxInFlightRequests: 1, idempotent: true });
      await producer.connect();
      const txn = await producer.transaction();
      await txn.send({ topic: open, messages: [{ value: 'again' }] });
      await txn.commit();
      await producer.disconnect();
      await expectVisibleAtLeader(open, ['again'], [1, 2]);
    },
  );
});
