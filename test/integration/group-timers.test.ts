// Session timers through a rebalance, at the wire: each member on its own
// connection, as a client has, with real time and short session timeouts.
import { setTimeout as sleep } from 'node:timers/promises';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/protocol/errors.js';
import { CreateTopicsApi, HeartbeatApi, JoinGroupApi, SyncGroupApi } from '../../src/protocol/messages/index.js';
import { startTestBroker, type TestBroker } from '../support/broker.js';
import { subscription } from '../support/consumer-protocol.js';
import { RawClient } from '../support/raw-client.js';

const DELAY = 1500;
const SESSION = 1000;

let broker: TestBroker;
const clients: RawClient[] = [];

beforeAll(async () => {
  broker = await startTestBroker({ groupMinSessionTimeoutMs: 1000, groupInitialRebalanceDelayMs: DELAY });
  const admin = await member();
  await admin.request(CreateTopicsApi, 7, { topics: [{ name: 'timers', numPartitions: 2, replicationFactor: 1 }] });
});
afterAll(async () => {
  for (const c of clients) c.close();
  await broker?.destroy();
});

async function member(): Promise<RawClient> {
  const c = await RawClient.connect(broker.bootstrap);
  clients.push(c);
  return c;
}

const join = (c: RawClient, groupId: string, memberId: string, sessionTimeoutMs = SESSION) =>
  c.request(JoinGroupApi, 7, {
    groupId,
    sessionTimeoutMs,
    rebalanceTimeoutMs: 30_000,
    memberId,
    protocolType: 'consumer',
    protocols: [{ name: 'range', metadata: subscription(['timers']) }],
  });

/** KIP-394's two steps: the member id, then the join that waits for the join phase to end. */
async function joinNew(c: RawClient, groupId: string, sessionTimeoutMs = SESSION) {
  const first = await join(c, groupId, '', sessionTimeoutMs);
  expect(first.errorCode).toBe(ErrorCode.MEMBER_ID_REQUIRED);
  return { memberId: first.memberId, joined: join(c, groupId, first.memberId, sessionTimeoutMs) };
}

const sync = (c: RawClient, groupId: string, generationId: number, memberId: string, assignments: { memberId: string; assignment: Buffer }[] = []) =>
  c.request(SyncGroupApi, 5, { groupId, generationId, memberId, protocolType: 'consumer', protocolName: 'range', assignments });

describe('session timers through a rebalance', () => {
  it('keeps a new member waiting in JoinGroup through an initial delay longer than its session', async () => {
    const c = await member();
    const { memberId, joined } = await joinNew(c, 'first-join');
    const res = await joined;
    expect(res.errorCode).toBe(0);
    expect(res.generationId).toBe(1);
    expect(res.memberId).toBe(memberId);
    expect(res.members.map((m) => m.memberId)).toEqual([memberId]);
  });

  it('lets the followers rejoin when the leader dies between JoinGroup and SyncGroup', async () => {
    const [leaderConn, followerConn] = [await member(), await member()];
    const leader = await joinNew(leaderConn, 'leader-dies');
    const follower = await joinNew(followerConn, 'leader-dies');
    const [rl, rf] = await Promise.all([leader.joined, follower.joined]);
    expect(rl.leader).toBe(leader.memberId);
    expect(rf.generationId).toBe(rl.generationId);
    // The follower waits in SyncGroup; the leader never sends one and its session runs out.
    const synced = await sync(followerConn, 'leader-dies', rf.generationId, follower.memberId);
    expect(synced.errorCode).toBe(ErrorCode.REBALANCE_IN_PROGRESS);
    // A moment later (a client's back-off) the follower rejoins and leads the next generation alone.
    await sleep(SESSION / 3);
    const rejoined = await join(followerConn, 'leader-dies', follower.memberId);
    expect(rejoined.errorCode).toBe(0);
    expect(rejoined.generationId).toBe(rf.generationId + 1);
    expect(rejoined.leader).toBe(follower.memberId);
    expect(rejoined.members.map((m) => m.memberId)).toEqual([follower.memberId]);
  });

  it('answers the rejoin once a member id handed out but never used expires (KIP-394)', async () => {
    const pendingSession = 4000;
    const c = await member();
    // The client asked twice for a member id and lost the first answer.
    const lost = await join(c, 'lost-id', '', pendingSession);
    expect(lost.errorCode).toBe(ErrorCode.MEMBER_ID_REQUIRED);
    const lostAt = Date.now();
    const { memberId, joined } = await joinNew(c, 'lost-id', pendingSession);
    const first = await joined;
    expect(first.errorCode).toBe(0);
    expect((await sync(c, 'lost-id', first.generationId, memberId, [{ memberId, assignment: Buffer.from('a') }])).errorCode).toBe(0);
    // The leader rejoins while the lost id is still pending: the join phase waits for that id until its session ends.
    const rejoin = join(c, 'lost-id', memberId, pendingSession);
    const answered = await Promise.race([rejoin, sleep(lostAt + pendingSession + 2500 - Date.now()).then(() => 'unanswered' as const)]);
    expect(answered).not.toBe('unanswered');
    const res = await rejoin;
    expect(res.errorCode).toBe(0);
    expect(res.generationId).toBe(first.generationId + 1);
    expect(res.members.map((m) => m.memberId)).toEqual([memberId]);
    expect((await join(await member(), 'lost-id', lost.memberId, pendingSession)).errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
    expect((await c.request(HeartbeatApi, 4, { groupId: 'lost-id', generationId: res.generationId, memberId })).errorCode).toBe(0);
  });

  it('keeps a static member that heartbeats but does not rejoin in the next generation', async () => {
    const [ca, cb] = [await member(), await member()];
    const staticJoin = (c: RawClient, instance: string, memberId: string) =>
      c.request(JoinGroupApi, 7, {
        groupId: 'static-late',
        sessionTimeoutMs: SESSION,
        rebalanceTimeoutMs: 2000,
        memberId,
        groupInstanceId: instance,
        protocolType: 'consumer',
        protocols: [{ name: 'range', metadata: subscription(['timers']) }],
      });
    const [a, b] = await Promise.all([staticJoin(ca, 'instance-a', ''), staticJoin(cb, 'instance-b', '')]);
    expect(a.leader).toBe(a.memberId);
    const syncAs = (c: RawClient, memberId: string, instance: string, generationId: number) =>
      c.request(SyncGroupApi, 5, { groupId: 'static-late', generationId, memberId, groupInstanceId: instance, protocolType: 'consumer', protocolName: 'range', assignments: [] });
    await Promise.all([syncAs(ca, a.memberId, 'instance-a', 1), syncAs(cb, b.memberId, 'instance-b', 1)]);
    // The leader rejoins; instance-b goes on heartbeating (it is busy processing) without rejoining.
    let answered = false;
    const rejoin = staticJoin(ca, 'instance-a', a.memberId).finally(() => (answered = true));
    const beats: number[] = [];
    while (!answered) {
      beats.push((await cb.request(HeartbeatApi, 4, { groupId: 'static-late', generationId: 1, memberId: b.memberId, groupInstanceId: 'instance-b' })).errorCode);
      await sleep(SESSION / 4);
    }
    expect(new Set(beats)).toEqual(new Set([ErrorCode.REBALANCE_IN_PROGRESS]));
    const res = await rejoin;
    expect(res.generationId).toBe(2);
    expect(res.members.map((m) => m.memberId).sort()).toEqual([a.memberId, b.memberId].sort());
    const beat = await cb.request(HeartbeatApi, 4, { groupId: 'static-late', generationId: 1, memberId: b.memberId, groupInstanceId: 'instance-b' });
    expect(beat.errorCode).toBe(ErrorCode.ILLEGAL_GENERATION);
    const late = await staticJoin(cb, 'instance-b', b.memberId);
    expect([late.errorCode, late.generationId]).toEqual([0, 2]);
  });
});

describe('kafkajs with a session as short as the initial delay', () => {
  it('joins a new group on its first JoinGroup and consumes', async () => {
    const kafka = new Kafka({ brokers: [broker.bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 3 } });
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({
      topic: 'timers',
      messages: [
        { partition: 0, value: 'v0' },
        { partition: 1, value: 'v1' },
      ],
    });
    await producer.disconnect();
    // Session 1 s, initial delay 1.5 s: the member must outlive its session while it waits for the first generation.
    const consumer = kafka.consumer({ groupId: 'kafkajs-short-session', sessionTimeout: SESSION, heartbeatInterval: 300 });
    const joins: string[] = [];
    let crashed: unknown = null;
    consumer.on(consumer.events.GROUP_JOIN, (e) => joins.push(e.payload.memberId));
    consumer.on(consumer.events.CRASH, (e) => (crashed = e.payload.error));
    await consumer.connect();
    await consumer.subscribe({ topic: 'timers', fromBeginning: true });
    const seen: string[] = [];
    const done = new Promise<void>((resolve) => {
      void consumer.run({
        eachMessage: async ({ message }) => {
          seen.push(message.value!.toString());
          if (seen.length === 2) resolve();
        },
      });
    });
    await Promise.race([done, sleep(15_000)]);
    await consumer.disconnect();
    expect(crashed).toBeNull();
    expect(seen.sort()).toEqual(['v0', 'v1']);
    // One join: no UNKNOWN_MEMBER_ID round before it.
    expect(joins).toHaveLength(1);
  }, 30_000);
});
