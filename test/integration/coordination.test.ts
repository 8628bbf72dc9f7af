// Group coordination spread over brokers sharing one database: every broker
// names the same coordinator for a group, the groups are split between the
// brokers, a broker that does not coordinate a group answers NOT_COORDINATOR,
// kafkajs consumers bootstrapped to different brokers form one group (each
// partition to exactly one member), and when a broker stops — or is killed —
// its groups move to the other with their committed offsets. A broker that
// lost its slot's lease writes no group or transaction state and stops
// serving the slot.
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COORDINATOR_SLOTS, desiredOwner, slotOf } from '../../src/coordinator/coordination.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import {
  AddPartitionsToTxnApi,
  CreateTopicsApi,
  EndTxnApi,
  FindCoordinatorApi,
  HeartbeatApi,
  InitProducerIdApi,
  JoinGroupApi,
  OffsetCommitApi,
  OffsetFetchApi,
  SyncGroupApi,
  TxnOffsetCommitApi,
} from '../../src/protocol/messages/index.js';
import { startTestBroker, type TestBroker } from '../support/broker.js';
import { freePort, spawnBroker } from '../support/broker-process.js';
import { RawClient } from '../support/raw-client.js';

const GROUPS = Array.from({ length: 40 }, (_, i) => `coord-group-${i}`);
let first: TestBroker;
let second: TestBroker;
let secondStopped = false;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function coordinators(broker: TestBroker, keys: string[]) {
  const client = await RawClient.connect(broker.bootstrap);
  try {
    const res = await client.request(FindCoordinatorApi, 4, { keyType: 0, coordinatorKeys: keys });
    return new Map(res.coordinators.map((c) => [c.key, { nodeId: c.nodeId, port: c.port, errorCode: c.errorCode }]));
  } finally {
    client.close();
  }
}

/** Waits until both brokers name the same coordinator for every group and that broker serves it. */
async function settled(brokers: TestBroker[], deadlineMs = 10_000) {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const answers = await Promise.all(brokers.map((b) => coordinators(b, GROUPS)));
    const agreed = GROUPS.every((g) => {
      const nodes = answers.map((a) => a.get(g)!.nodeId);
      const owner = brokers.find((b) => b.context.nodeId === nodes[0]);
      return nodes.every((n) => n === nodes[0]) && owner !== undefined && owner.context.coordination.owns(g);
    });
    if (agreed) return answers[0]!;
    if (Date.now() > deadline) throw new Error('coordinators did not settle');
    await sleep(100);
  }
}

beforeAll(async () => {
  first = await startTestBroker({ nodeId: 1 });
  second = await startTestBroker({ schema: first.schema, nodeId: 2 });
});
afterAll(async () => {
  if (!secondStopped) await second?.stop();
  await first?.destroy();
});

describe('slots', () => {
  it("map keys as Kafka's partitionFor does and split them over the brokers", () => {
    // "hello".hashCode() is 99162322 in Java.
    expect(slotOf('hello')).toBe(99162322 % COORDINATOR_SLOTS);
    expect(slotOf('')).toBe(0);
    const owners = Array.from({ length: COORDINATOR_SLOTS }, (_, s) => desiredOwner(s, [1, 2, 3]));
    for (const node of [1, 2, 3]) expect(owners.filter((o) => o === node).length).toBeGreaterThan(5);
    // A node joining takes slots only from others, never moves slots between the others.
    const withFourth = Array.from({ length: COORDINATOR_SLOTS }, (_, s) => desiredOwner(s, [1, 2, 3, 4]));
    withFourth.forEach((o, s) => expect(o === 4 || o === owners[s]).toBe(true));
  });
});

describe('two brokers', () => {
  it('agree on one coordinator per group, split the groups, and refuse groups they do not coordinate', async () => {
    // Until the first broker, which took every slot alone, has handed the second its share.
    let answer = await settled([first, second]);
    for (const deadline = Date.now() + 10_000; new Set(GROUPS.map((g) => answer.get(g)!.nodeId)).size < 2 && Date.now() < deadline;) {
      await sleep(100);
      answer = await settled([first, second]);
    }
    const byNode = new Map<number, string[]>();
    for (const g of GROUPS) byNode.set(answer.get(g)!.nodeId, [...(byNode.get(answer.get(g)!.nodeId) ?? []), g]);
    expect([...byNode.keys()].sort()).toEqual([1, 2]);
    for (const g of GROUPS) expect(answer.get(g)!.port).toBe(answer.get(g)!.nodeId === 1 ? first.port : second.port);

    const onSecond = byNode.get(2)![0]!;
    const client = await RawClient.connect(first.bootstrap);
    try {
      const join = await client.request(JoinGroupApi, 7, {
        groupId: onSecond,
        sessionTimeoutMs: 10_000,
        rebalanceTimeoutMs: 10_000,
        memberId: '',
        groupInstanceId: null,
        protocolType: 'consumer',
        protocols: [{ name: 'range', metadata: Buffer.alloc(0) }],
      });
      expect(join.errorCode).toBe(ErrorCode.NOT_COORDINATOR);
      const commit = await client.request(OffsetCommitApi, 8, {
        groupId: onSecond,
        generationIdOrMemberEpoch: -1,
        memberId: '',
        groupInstanceId: null,
        topics: [{ name: 'anything', partitions: [{ partitionIndex: 0, committedOffset: 5n, committedLeaderEpoch: -1, committedMetadata: null }] }],
      });
      expect(commit.topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.NOT_COORDINATOR);
      // A transactional commit too, before its transaction is looked at (as Kafka routes it to the group's shard first).
      await client.request(CreateTopicsApi, 7, { topics: [{ name: 'coord-txn-topic', numPartitions: 1, replicationFactor: 1, configs: [] }], timeoutMs: 10_000, validateOnly: false });
      const txnCommit = await client.request(TxnOffsetCommitApi, 3, {
        transactionalId: 'coord-txn',
        groupId: onSecond,
        producerId: 4242n,
        producerEpoch: 0,
        generationId: -1,
        memberId: '',
        groupInstanceId: null,
        topics: [{ name: 'coord-txn-topic', partitions: [{ partitionIndex: 0, committedOffset: 5n, committedLeaderEpoch: -1, committedMetadata: null }] }],
      });
      expect(txnCommit.topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.NOT_COORDINATOR);
    } finally {
      client.close();
    }
    expect(await first.query('SELECT 1 FROM committed_offsets WHERE group_id = $1', [onSecond])).toHaveLength(0);
  });

  it('let kafkajs consumers bootstrapped to different brokers share one group: each partition to exactly one member', async () => {
    const topic = 'coord-topic';
    const admin = new Kafka({ brokers: [first.bootstrap], logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic, numPartitions: 4 }] });
    await admin.disconnect();
    const producer = new Kafka({ brokers: [first.bootstrap], logLevel: logLevel.NOTHING }).producer();
    await producer.connect();
    await producer.send({ topic, messages: Array.from({ length: 40 }, (_, i) => ({ partition: i % 4, value: `m${i}` })) });
    await producer.disconnect();

    const groupId = 'coord-shared';
    const seen: string[] = [];
    const assigned = new Map<string, number[]>();
    const consumers = [first, second].map((b, i) => {
      const consumer = new Kafka({ clientId: `c${i}`, brokers: [b.bootstrap], logLevel: logLevel.NOTHING }).consumer({
        groupId,
        sessionTimeout: 10_000,
        rebalanceTimeout: 10_000,
        heartbeatInterval: 500,
        maxWaitTimeInMs: 200,
      });
      // Keyed by consumer: each GROUP_JOIN replaces that consumer's previous assignment.
      consumer.on(consumer.events.GROUP_JOIN, (e) => assigned.set(`c${i}`, (e.payload.memberAssignment[topic] ?? []) as number[]));
      return consumer;
    });
    for (const c of consumers) {
      await c.connect();
      await c.subscribe({ topic, fromBeginning: true });
      await c.run({ eachMessage: async ({ message }) => void seen.push(message.value!.toString()) });
    }
    // Until both members hold partitions of one generation and every record was read.
    const deadline = Date.now() + 20_000;
    let partitions: number[] = [];
    while (Date.now() < deadline) {
      partitions = [...assigned.values()].flat().sort();
      if (assigned.size === 2 && [...assigned.values()].every((p) => p.length > 0) && partitions.length === 4 && seen.length >= 40) break;
      await sleep(100);
    }
    for (const c of consumers) await c.disconnect();
    expect(partitions).toEqual([0, 1, 2, 3]);
    expect(new Set(seen).size).toBe(40);
  });

  it("move a stopped broker's groups to the other, with their committed offsets", async () => {
    const answer = await settled([first, second]);
    const moved = GROUPS.find((g) => answer.get(g)!.nodeId === 2)!;
    const viaSecond = await RawClient.connect(second.bootstrap);
    const commit = await viaSecond.request(OffsetCommitApi, 8, {
      groupId: moved,
      generationIdOrMemberEpoch: -1,
      memberId: '',
      groupInstanceId: null,
      topics: [{ name: 'coord-topic', partitions: [{ partitionIndex: 1, committedOffset: 7n, committedLeaderEpoch: -1, committedMetadata: 'm' }] }],
    });
    expect(commit.topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.NONE);
    viaSecond.close();

    await second.stop();
    secondStopped = true;
    const after = await settled([first], 10_000);
    for (const g of GROUPS) expect(after.get(g)!.nodeId).toBe(1);
    const client = await RawClient.connect(first.bootstrap);
    try {
      const fetched = await client.request(OffsetFetchApi, 7, { groupId: moved, topics: [{ name: 'coord-topic', partitionIndexes: [1] }], requireStable: false });
      expect(fetched.errorCode).toBe(ErrorCode.NONE);
      expect(fetched.topics[0]!.partitions[0]!.committedOffset).toBe(7n);
    } finally {
      client.close();
    }
  });
});

describe('a killed broker', () => {
  it('hands its groups over once its leases expire, and a restart with its node id takes them back at once', { timeout: 60_000 }, async () => {
    const port = await freePort();
    const env = { DATABASE_URL: first.databaseUrl, PGKAFKA_SCHEMA: first.schema, PGKAFKA_NODE_ID: '3', PGKAFKA_PORT: String(port) };
    let child = await spawnBroker(env);
    const viaChild = { ...first, bootstrap: `127.0.0.1:${port}` } as TestBroker;
    try {
      // Both brokers agree and the child owns some groups.
      const deadline = Date.now() + 10_000;
      let owned: string[] = [];
      while (Date.now() < deadline) {
        const [a, b] = await Promise.all([coordinators(first, GROUPS), coordinators(viaChild, GROUPS)]);
        owned = GROUPS.filter((g) => a.get(g)!.nodeId === 3 && b.get(g)!.nodeId === 3);
        if (owned.length > 0 && GROUPS.every((g) => a.get(g)!.nodeId === b.get(g)!.nodeId)) break;
        await sleep(100);
      }
      expect(owned.length).toBeGreaterThan(0);

      child.child.kill('SIGKILL');
      await child.exited;
      const killedAt = Date.now();
      await settled([first], 30_000);
      const movedAfterMs = Date.now() - killedAt;
      process.stdout.write(`groups of the killed broker served again after ${movedAfterMs} ms\n`);
      expect(movedAfterMs).toBeLessThan(30_000);

      // Restarted with the same node id, it takes its share back at once (no lease to wait for).
      child = await spawnBroker(env);
      const back = Date.now() + 10_000;
      let ownsAgain = false;
      while (!ownsAgain && Date.now() < back) {
        const answer = await coordinators(viaChild, owned);
        ownsAgain = owned.every((g) => answer.get(g)!.nodeId === 3);
        if (!ownsAgain) await sleep(100);
      }
      expect(ownsAgain).toBe(true);
    } finally {
      child.child.kill('SIGTERM');
      await child.exited;
    }
  });
});

describe('a coordinator that lost its slot', () => {
  /** Waits until the first broker serves the key's slot (a group or a transactional id). */
  const servedByFirst = async (key: string) => {
    const deadline = Date.now() + 15_000;
    while (!first.context.coordination.owns(key)) {
      if (Date.now() > deadline) throw new Error(`${key} is not served by the first broker`);
      await sleep(100);
    }
  };

  it('cannot store offsets any more: the commit is refused NOT_COORDINATOR and nothing is written', async () => {
    const group = 'coord-fenced';
    await settled([first], 10_000);
    // Another instance takes the slot's lease behind the first broker's back (as after a pause past its lease).
    await first.query("UPDATE coordinator_slots SET instance_id = 'another-instance', node_id = 99, expires_at = now() + interval '3 seconds' WHERE slot = $1", [slotOf(group)]);
    const client = await RawClient.connect(first.bootstrap);
    try {
      const commit = await client.request(OffsetCommitApi, 8, {
        groupId: group,
        generationIdOrMemberEpoch: -1,
        memberId: '',
        groupInstanceId: null,
        topics: [{ name: 'coord-topic', partitions: [{ partitionIndex: 0, committedOffset: 3n, committedLeaderEpoch: -1, committedMetadata: null }] }],
      });
      expect(commit.topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.NOT_COORDINATOR);
    } finally {
      client.close();
    }
    expect(await first.query('SELECT 1 FROM committed_offsets WHERE group_id = $1', [group])).toHaveLength(0);
    // Once that lease lapses the first broker takes the slot back and serves the group again.
    await settled([first], 15_000);
  });

  it("cannot overwrite the new holder's group row: its members' SyncGroup is answered NOT_COORDINATOR, and so is their next request", async () => {
    const group = 'coord-fenced-sync';
    await servedByFirst(group);
    const client = await RawClient.connect(first.bootstrap);
    let generationId: number;
    try {
      const joining = {
        groupId: group,
        sessionTimeoutMs: 10_000,
        rebalanceTimeoutMs: 10_000,
        groupInstanceId: null,
        protocolType: 'consumer',
        protocols: [{ name: 'range', metadata: Buffer.alloc(0) }],
        reason: null,
      };
      const { memberId } = await client.request(JoinGroupApi, 7, { ...joining, memberId: '' });
      const join = await client.request(JoinGroupApi, 7, { ...joining, memberId });
      expect(join.errorCode).toBe(ErrorCode.NONE);
      expect(join.leader).toBe(memberId);
      generationId = join.generationId;

      // Another instance takes the slot's lease behind the first broker's back and stores the group as it sees it.
      await first.query("UPDATE coordinator_slots SET instance_id = 'another-instance', node_id = 99, expires_at = now() + interval '3 seconds' WHERE slot = $1", [slotOf(group)]);
      await first.query(
        "INSERT INTO groups (group_id, protocol_type, protocol_name, generation, leader_id, state, members) VALUES ($1, 'consumer', 'range', 7, 'new-holders-leader', 'Stable', '[]')",
        [group],
      );

      // The leader's assignment completes the rebalance on the first broker: its snapshot write is refused.
      const sync = await client.request(SyncGroupApi, 5, {
        groupId: group,
        generationId,
        memberId,
        groupInstanceId: null,
        protocolType: 'consumer',
        protocolName: 'range',
        assignments: [{ memberId, assignment: Buffer.from([1, 2, 3]) }],
      });
      expect(sync.errorCode).toBe(ErrorCode.NOT_COORDINATOR);
      const heartbeat = await client.request(HeartbeatApi, 4, { groupId: group, generationId, memberId, groupInstanceId: null });
      expect(heartbeat.errorCode).toBe(ErrorCode.NOT_COORDINATOR);
    } finally {
      client.close();
    }
    expect(await first.query('SELECT generation, leader_id, members FROM groups WHERE group_id = $1', [group])).toEqual([{ generation: 7, leader_id: 'new-holders-leader', members: [] }]);
    // Once that lease lapses the first broker takes the slot back and restores the group as the holder stored it.
    await servedByFirst(group);
    expect(first.context.groups.classicGroup(group)?.generationId).toBe(7);
  });

  it("cannot store a transaction's state change: EndTxn is answered NOT_COORDINATOR, the stored transaction stays as it was, and the id is dropped until the slot is taken back", async () => {
    const transactionalId = 'coord-fenced-txn';
    await servedByFirst(transactionalId);
    const client = await RawClient.connect(first.bootstrap);
    try {
      const init = await client.request(InitProducerIdApi, 4, { transactionalId, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1, enable2Pc: false, keepPreparedTxn: false });
      expect(init.errorCode).toBe(ErrorCode.NONE);
      const { producerId, producerEpoch } = init;
      const add = await client.request(AddPartitionsToTxnApi, 3, {
        transactions: [],
        v3AndBelowTransactionalId: transactionalId,
        v3AndBelowProducerId: producerId,
        v3AndBelowProducerEpoch: producerEpoch,
        v3AndBelowTopics: [{ name: 'coord-topic', partitions: [0] }],
      });
      expect(add.resultsByTopicV3AndBelow[0]!.resultsByPartition[0]!.partitionErrorCode).toBe(ErrorCode.NONE);

      // Another instance takes the slot's lease behind the first broker's back (its epoch moves), as after a pause past the lease.
      await first.query("UPDATE coordinator_slots SET instance_id = 'another-instance', node_id = 99, epoch = epoch + 1, expires_at = now() + interval '3 seconds' WHERE slot = $1", [
        slotOf(transactionalId),
      ]);
      const end = await client.request(EndTxnApi, 3, { transactionalId, producerId, producerEpoch, committed: true });
      expect(end.errorCode).toBe(ErrorCode.NOT_COORDINATOR);
      expect(first.context.transactions.describe(transactionalId)).toBeUndefined();
    } finally {
      client.close();
    }
    expect(await first.query('SELECT state, producer_epoch FROM transactions WHERE transactional_id = $1', [transactionalId])).toEqual([{ state: 'Ongoing', producer_epoch: 0 }]);
    // Once that lease lapses the first broker takes the slot back, at a newer epoch, and loads the transaction as stored.
    await servedByFirst(transactionalId);
    expect(first.context.transactions.describe(transactionalId)).toMatchObject({ state: 'Ongoing', producerEpoch: 0 });
  });
});
