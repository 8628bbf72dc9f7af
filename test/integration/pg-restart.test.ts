// PostgreSQL itself restarted under load. The test owns a PostgreSQL server
// (never the shared one), runs two broker processes on it, keeps several
// idempotent producers at acks=all (and plain ones, without producer ids),
// each topic's requests sent to its partition's leader (looked up again when
// a broker answers NOT_LEADER_OR_FOLLOWER, as a restart can move
// leadership), and stops PostgreSQL in the
// middle of it (fast shutdown, then immediate shutdown, which is a crash as
// far as the data is concerned), keeps it down, starts it again. Meanwhile a
// consumer group member heartbeats and commits, and long-poll fetches stay
// parked across the outage on both brokers (a two-partition topic, one
// partition led by each). Afterwards every acknowledged
// offset holds its value, offsets are dense, no record is stored twice, no
// broker exited, every error clients saw was retriable, and the brokers served
// again (produce, commit, LISTEN wake-ups) within a bounded time after
// PostgreSQL came back.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode, errorName, isRetriable } from '../../src/protocol/errors.js';
import {
  CreateTopicsApi,
  FetchApi,
  FindCoordinatorApi,
  HeartbeatApi,
  InitProducerIdApi,
  JoinGroupApi,
  OffsetCommitApi,
  OffsetFetchApi,
  ProduceApi,
  SyncGroupApi,
} from '../../src/protocol/messages/index.js';
import { buildBatch, decodeRecords, parseBatches } from '../../src/protocol/records/index.js';
import { freePort, spawnBroker, type BrokerProcess } from '../support/broker-process.js';
import { leadersOf, until } from '../support/cluster.js';
import { startOwnedPostgres, type OwnedPostgres, type ShutdownMode } from '../support/postgres-server.js';
import { compareWithLog, produceIdempotent, readLog } from '../support/durability.js';
import { RawClient } from '../support/raw-client.js';
import { mulberry32 } from '../protocol/messages/spec.js';
import { sleep, within } from '../support/wait.js';

const RESTARTS: ShutdownMode[] = ['fast', 'immediate', 'fast'];
const WRITERS = 4;
const TOPIC = 'restart';
/** Producers without producer ids write here. */
const PLAIN_TOPIC = 'restart-plain';
const PLAIN_WRITERS = 2;
/** Nobody produces here during an outage, so fetches parked on it stay parked across the restart; two partitions, one led by each broker. */
const PARKED_TOPIC = 'parked';
const PARKED_PARTITIONS = [0, 1];
const GROUP = 'restart-group';
/** How long PostgreSQL stays down each time. */
const DOWN_MS = 2000;
/** PostgreSQL back → the broker acknowledges produce requests, commits offsets, and its LISTEN wakes parked fetches, within this. */
const RECOVERY_BOUND_MS = 10_000;
const SEED = Number(process.env.PG_RESTART_SEED ?? Math.floor(Math.random() * 2 ** 31));

const fetchRequest = (topic: string, fetchOffset: bigint, maxWaitMs: number, partition = 0) => ({
  replicaId: -1,
  maxWaitMs,
  minBytes: 1,
  maxBytes: 1 << 24,
  sessionEpoch: -1,
  topics: [{ topic, partitions: [{ partition, fetchOffset, partitionMaxBytes: 1 << 24 }] }],
});

function recordsOf(buf: Buffer): { offset: bigint; value: string }[] {
  const out: { offset: bigint; value: string }[] = [];
  for (const h of parseBatches(buf, { mode: 'log' }).batches) {
    for (const r of decodeRecords(buf, h).records) out.push({ offset: h.baseOffset + BigInt(r.offsetDelta), value: r.value!.toString() });
  }
  return out;
}

/** The records of one partition, read at `bootstrap` with one fetch (the parked topic holds a few). */
async function readPartition(bootstrap: string, topic: string, partition: number) {
  const client = await RawClient.connect(bootstrap);
  try {
    const p = (await client.request(FetchApi, 11, fetchRequest(topic, 0n, 0, partition))).responses[0]!.partitions[0]!;
    expect(p.errorCode).toBe(0);
    return recordsOf(p.records as Buffer);
  } finally {
    client.close();
  }
}

let server: OwnedPostgres;
const brokers: BrokerProcess[] = [];
beforeAll(async () => {
  server = await startOwnedPostgres();
});
afterAll(async () => {
  for (const b of brokers) {
    if (b.child.exitCode === null && b.child.signalCode === null) {
      b.child.kill('SIGKILL');
      await b.exited;
    }
  }
  await server?.destroy();
});

describe('PostgreSQL restart', () => {
  it(`loses nothing acknowledged, duplicates nothing and recovers by itself across ${RESTARTS.length} PostgreSQL restarts under load (PG_RESTART_SEED=${SEED})`, { timeout: 110_000 }, async () => {
    const rnd = mulberry32(SEED);
    const started = Date.now();
    const [portA, portB] = [await freePort(), await freePort()];
    const common = { DATABASE_URL: server.url, PGKAFKA_SCHEMA: 'pgkafka', PGKAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS: '0' };
    // Both share the database; each serves the partitions it leads.
    const brokerA = await spawnBroker({ ...common, PGKAFKA_PORT: String(portA), PGKAFKA_NODE_ID: '1' });
    brokers.push(brokerA);
    const brokerB = await spawnBroker({ ...common, PGKAFKA_PORT: String(portB), PGKAFKA_NODE_ID: '2' });
    brokers.push(brokerB);
    const [bootstrapA, bootstrapB] = [`127.0.0.1:${portA}`, `127.0.0.1:${portB}`];
    const bootstrapOf = new Map([
      [1, bootstrapA],
      [2, bootstrapB],
    ]);
    {
      const admin = await RawClient.connect(bootstrapA);
      const created = await admin.request(CreateTopicsApi, 7, {
        topics: [TOPIC, PARKED_TOPIC, PLAIN_TOPIC].map((name) => ({ name, numPartitions: name === PARKED_TOPIC ? PARKED_PARTITIONS.length : 1, replicationFactor: 1 })),
        timeoutMs: 5000,
      });
      expect(created.topics.map((t) => t.errorCode)).toEqual([0, 0, 0]);
      admin.close();
    }

    // Each partition's leader (node id) as Metadata last named it; looked up again when a broker says it does not lead.
    const leaders = new Map<string, number>();
    const lookingUp = new Map<string, Promise<void>>();
    const lookUpLeaders = (topic: string): Promise<void> => {
      const pending =
        lookingUp.get(topic) ??
        (async () => {
          for (const bootstrap of [bootstrapA, bootstrapB]) {
            try {
              const found = await leadersOf(bootstrap, topic);
              if (found.length > 0 && found.every((l) => bootstrapOf.has(l.leader))) {
                found.forEach((l, partition) => leaders.set(`${topic}-${partition}`, l.leader));
                return;
              }
            } catch {
              // That broker cannot answer now (PostgreSQL down, or connection refused): ask the other, or later.
            }
          }
        })().finally(() => lookingUp.delete(topic));
      lookingUp.set(topic, pending);
      return pending;
    };
    /** The address of the partition's leader as last looked up. */
    const leaderOf = (topic: string, partition = 0) => bootstrapOf.get(leaders.get(`${topic}-${partition}`)!)!;
    await until('every partition has a leader', async () => {
      await Promise.all([TOPIC, PARKED_TOPIC, PLAIN_TOPIC].map(lookUpLeaders));
      return leaders.size === 2 + PARKED_PARTITIONS.length;
    });
    // Long-poll fetches park on both brokers: one parked partition is led by each.
    expect(new Set(PARKED_PARTITIONS.map((partition) => leaders.get(`${PARKED_TOPIC}-${partition}`)))).toEqual(new Set([1, 2]));

    // What clients saw, by phase and kind; every error code must be retriable.
    let phase = 'before';
    const errors: Record<string, number> = {};
    const nonRetriable: string[] = [];
    const count = (kind: string) => (errors[`${phase}: ${kind}`] = (errors[`${phase}: ${kind}`] ?? 0) + 1);
    const sawCode = (api: string, code: number, what: string, topic?: string) => {
      count(`${api} ${errorName(code)}`);
      if (code === ErrorCode.NOT_LEADER_OR_FOLLOWER && topic) void lookUpLeaders(topic);
      if (!isRetriable(code)) nonRetriable.push(`${phase}: ${api} ${errorName(code)} (${what})`);
    };
    const sawFailure = (api: string, err: unknown) => {
      // A closed connection or a refused one is a network error, which every client retries.
      const msg = (err as Error).message;
      count(`${api} ${/ECONNREFUSED/.test(msg) ? 'connection refused' : /closed/.test(msg) ? 'connection closed' : `other: ${msg}`}`);
      if (!/ECONNREFUSED|closed|ECONNRESET/.test(msg)) nonRetriable.push(`${phase}: ${api} ${msg}`);
    };
    let stop = false;

    // Idempotent producers at the topic's leader, one record per request; an unacknowledged batch is retried with the same sequence.
    const acknowledged = new Map<bigint, string>();
    const ackedValues = new Set<string>();
    let acks = 0;
    const writer = async (w: number) => {
      let client: RawClient | null = null;
      let connectedTo = '';
      let producerId = -1n;
      let producerEpoch = -1;
      let sequence = 0;
      while (!stop) {
        let api = 'Produce';
        try {
          if (!client || client.closed || connectedTo !== leaderOf(TOPIC)) {
            client?.close();
            client = null;
            connectedTo = leaderOf(TOPIC);
            client = await RawClient.connect(connectedTo);
          }
          if (producerId < 0n) {
            api = 'InitProducerId';
            const init = await client.request(InitProducerIdApi, 4, { transactionalId: null, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
            if (init.errorCode !== 0) {
              sawCode('InitProducerId', init.errorCode, `writer ${w}`);
              await sleep(20);
              continue;
            }
            producerId = init.producerId;
            producerEpoch = init.producerEpoch;
            api = 'Produce';
          }
          const value = `w${w}-p${producerId}-s${sequence}`;
          const p = await produceIdempotent(client, TOPIC, producerId, producerEpoch, sequence, value);
          if (p.errorCode === ErrorCode.NONE) {
            acknowledged.set(p.baseOffset, value);
            ackedValues.add(value);
            acks++;
            sequence++;
          } else if (p.errorCode === ErrorCode.DUPLICATE_SEQUENCE_NUMBER) {
            // Stored by an earlier attempt: acknowledged, offset unknown (checked by value below).
            count('Produce DUPLICATE_SEQUENCE_NUMBER');
            ackedValues.add(value);
            acks++;
            sequence++;
          } else {
            sawCode('Produce', p.errorCode, value, TOPIC);
            await sleep(20);
          }
        } catch (err) {
          sawFailure(api, err);
          client?.close();
          client = null;
          await sleep(25);
        }
      }
      client?.close();
    };

    // Plain producers at the topic's leader (no producer id), one record per request, every attempt a new value.
    const plainAcknowledged = new Map<bigint, string>();
    const plainWriter = async (w: number) => {
      let client: RawClient | null = null;
      let connectedTo = '';
      for (let attempt = 0; !stop; attempt++) {
        try {
          if (!client || client.closed || connectedTo !== leaderOf(PLAIN_TOPIC)) {
            client?.close();
            client = null;
            connectedTo = leaderOf(PLAIN_TOPIC);
            client = await RawClient.connect(connectedTo);
          }
          const value = `plain-w${w}-a${attempt}`;
          const res = await client.request(ProduceApi, 9, {
            acks: -1,
            timeoutMs: 5000,
            topicData: [{ name: PLAIN_TOPIC, partitionData: [{ index: 0, records: buildBatch({ records: [{ key: null, value: Buffer.from(value) }] }) }] }],
          });
          const p = res.responses[0]!.partitionResponses[0]!;
          if (p.errorCode === ErrorCode.NONE) plainAcknowledged.set(p.baseOffset, value);
          else {
            sawCode('Produce (plain)', p.errorCode, value, PLAIN_TOPIC);
            await sleep(20);
          }
        } catch (err) {
          sawFailure('Produce (plain)', err);
          client?.close();
          client = null;
          await sleep(25);
        }
      }
      client?.close();
    };

    // A consumer group member at the group's coordinator: heartbeats and commits (a growing offset) all along.
    const coordinator = await (async () => {
      const c = await RawClient.connect(bootstrapA);
      try {
        const found = await c.request(FindCoordinatorApi, 3, { key: GROUP, keyType: 0 });
        expect(found.errorCode).toBe(0);
        return `${found.host}:${found.port}`;
      } finally {
        c.close();
      }
    })();
    const member = await RawClient.connect(coordinator);
    const join = (memberId: string) =>
      member.request(JoinGroupApi, 7, {
        groupId: GROUP,
        sessionTimeoutMs: 45_000,
        rebalanceTimeoutMs: 10_000,
        memberId,
        protocolType: 'consumer',
        protocols: [{ name: 'range', metadata: Buffer.from('m') }],
      });
    const first = await join('');
    expect(first.errorCode).toBe(ErrorCode.MEMBER_ID_REQUIRED);
    const joined = await join(first.memberId);
    expect(joined.errorCode).toBe(0);
    const { memberId, generationId } = joined;
    const synced = await member.request(SyncGroupApi, 5, {
      groupId: GROUP,
      generationId,
      memberId,
      protocolType: 'consumer',
      protocolName: 'range',
      assignments: [{ memberId, assignment: Buffer.from('a') }],
    });
    expect(synced.errorCode).toBe(0);
    let committed = -1n; // the last offset whose commit was acknowledged
    let commits = 0;
    const groupMember = async () => {
      let client: RawClient | null = member;
      let next = 1n;
      while (!stop) {
        let api = 'Heartbeat';
        try {
          if (!client || client.closed) {
            client?.close();
            client = null;
            client = await RawClient.connect(coordinator);
          }
          const hb = await client.request(HeartbeatApi, 4, { groupId: GROUP, generationId, memberId });
          if (hb.errorCode !== 0) sawCode('Heartbeat', hb.errorCode, memberId);
          api = 'OffsetCommit';
          const res = await client.request(OffsetCommitApi, 8, {
            groupId: GROUP,
            generationIdOrMemberEpoch: generationId,
            memberId,
            topics: [{ name: TOPIC, partitions: [{ partitionIndex: 0, committedOffset: next, committedLeaderEpoch: -1, committedMetadata: null }] }],
          });
          const code = res.topics[0]!.partitions[0]!.errorCode;
          if (code === 0) {
            committed = next++;
            commits++;
          } else sawCode('OffsetCommit', code, String(next));
        } catch (err) {
          sawFailure(api, err);
          client?.close();
          client = null;
        }
        await sleep(100);
      }
      client?.close();
    };

    // A consumer at the topic's leader reading it as it grows, across the outages: offsets follow each other with no gap.
    const consumed: { offset: bigint; value: string }[] = [];
    const gaps: string[] = [];
    const consumer = async () => {
      let client: RawClient | null = null;
      let connectedTo = '';
      while (!stop) {
        try {
          if (!client || client.closed || connectedTo !== leaderOf(TOPIC)) {
            client?.close();
            client = null;
            connectedTo = leaderOf(TOPIC);
            client = await RawClient.connect(connectedTo);
          }
          const position = consumed.length === 0 ? 0n : consumed.at(-1)!.offset + 1n;
          const res = await client.request(FetchApi, 11, fetchRequest(TOPIC, position, 200));
          const p = res.responses[0]!.partitions[0]!;
          if (p.errorCode !== 0) {
            sawCode('Fetch', p.errorCode, String(position), TOPIC);
            await sleep(20);
            continue;
          }
          for (const r of recordsOf(p.records as Buffer)) {
            if (r.offset < position) continue; // the batch holding the position starts before it
            const expected = consumed.length === 0 ? 0n : consumed.at(-1)!.offset + 1n;
            if (r.offset !== expected) gaps.push(`${phase}: offset ${r.offset} after ${expected - 1n}`);
            consumed.push(r);
          }
        } catch (err) {
          sawFailure('Fetch', err);
          client?.close();
          client = null;
          await sleep(25);
        }
      }
      client?.close();
    };

    const parkedAcks: string[][] = PARKED_PARTITIONS.map(() => []);
    /** Produces one record to a partition of the parked-fetch topic through its leader, retrying until it is acknowledged. */
    const produceParked = async (partition: number, value: string) => {
      const deadline = Date.now() + RECOVERY_BOUND_MS;
      while (Date.now() < deadline) {
        let client: RawClient | null = null;
        try {
          client = await RawClient.connect(leaderOf(PARKED_TOPIC, partition));
          const res = await client.request(ProduceApi, 9, {
            acks: -1,
            timeoutMs: 5000,
            topicData: [{ name: PARKED_TOPIC, partitionData: [{ index: partition, records: buildBatch({ records: [{ key: null, value: Buffer.from(value) }] }) }] }],
          });
          const code = res.responses[0]!.partitionResponses[0]!.errorCode;
          if (code === 0) {
            parkedAcks[partition]!.push(value);
            return Date.now();
          }
          sawCode('Produce', code, value, PARKED_TOPIC);
        } catch (err) {
          sawFailure('Produce', err);
        } finally {
          client?.close();
        }
        await sleep(50);
      }
      throw new Error(`no acknowledgement for ${value} within ${RECOVERY_BOUND_MS} ms`);
    };
    /** A long-poll fetch at the end of a partition of the parked topic at the broker `bootstrap`, sent now and answered when something is appended (or after maxWait). */
    const park = async (bootstrap: string, partition: number) => {
      const client = await RawClient.connect(bootstrap);
      const end = await client.request(FetchApi, 11, fetchRequest(PARKED_TOPIC, 0n, 0, partition));
      const parked = end.responses[0]!.partitions[0]!.errorCode === ErrorCode.NONE;
      if (!parked) sawCode('Fetch', end.responses[0]!.partitions[0]!.errorCode, `park on ${partition}`, PARKED_TOPIC);
      const highWatermark = end.responses[0]!.partitions[0]!.highWatermark;
      const answered = (parked ? client.request(FetchApi, 11, fetchRequest(PARKED_TOPIC, highWatermark, 25_000, partition)) : Promise.reject(new Error('not parked'))).then(
        (res) => ({ at: Date.now(), errorCode: res.responses[0]!.partitions[0]!.errorCode, values: recordsOf(res.responses[0]!.partitions[0]!.records as Buffer).map((r) => r.value) }),
        (err: Error) => ({ at: Date.now(), errorCode: -1, values: [err.message] }),
      );
      return { parked, answered, close: () => client.close() };
    };

    const admin = async <T>(work: (c: pg.Client) => Promise<T>): Promise<T> => {
      const c = new pg.Client({ connectionString: server.url });
      await c.connect();
      try {
        return await work(c);
      } finally {
        await c.end();
      }
    };
    const listenConnections = () => admin(async (c) => Number((await c.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'pgkafka-listen'`)).rows[0].n));
    expect(await listenConnections()).toBe(2);

    const tasks = [...Array.from({ length: WRITERS }, (_, w) => writer(w)), ...Array.from({ length: PLAIN_WRITERS }, (_, w) => plainWriter(w)), groupMember(), consumer()];
    const figures: { mode: ShutdownMode; stopMs: number; downMs: number; startMs: number; produceMs: number; commitMs: number; listenMs: number; wakeA: number; wakeB: number }[] = [];
    try {
      await within(5000, () => acks >= 50);
      for (const [i, mode] of RESTARTS.entries()) {
        await sleep(500 + Math.floor(rnd() * 1000));
        phase = `restart ${i + 1} (${mode})`;
        // One fetch parked on each broker, at the parked partition it leads (leadership may still be settling after the last restart).
        let parked: readonly [Awaited<ReturnType<typeof park>>, Awaited<ReturnType<typeof park>>] | null = null;
        let [partitionA, partitionB] = [-1, -1];
        await until(`a fetch parked on each broker (restart ${i + 1})`, async () => {
          await lookUpLeaders(PARKED_TOPIC);
          const partitionOn = (node: number) => PARKED_PARTITIONS.find((p) => leaders.get(`${PARKED_TOPIC}-${p}`) === node) ?? -1;
          [partitionA, partitionB] = [partitionOn(1), partitionOn(2)];
          if (partitionA < 0 || partitionB < 0) return false;
          const both = [await park(bootstrapA, partitionA), await park(bootstrapB, partitionB)] as const;
          if (both.every((b) => b.parked)) parked = both;
          else both.forEach((b) => b.close());
          return parked !== null;
        });
        const [parkedA, parkedB] = parked!;
        const t0 = Date.now();
        await server.stop(mode);
        const stopMs = Date.now() - t0;
        // A producer that starts while PostgreSQL is down: its InitProducerId waits out the outage too.
        tasks.push(writer(WRITERS + i));
        await sleep(DOWN_MS);
        const downMs = Date.now() - t0;
        const t1 = Date.now();
        await server.start();
        const up = Date.now();
        const startMs = up - t1;
        const [acksAtUp, commitsAtUp] = [acks, commits];
        const produceMs = await within(RECOVERY_BOUND_MS, () => acks > acksAtUp);
        const commitMs = await within(RECOVERY_BOUND_MS, () => commits > commitsAtUp);
        const listenMs = await within(RECOVERY_BOUND_MS, async () => (await listenConnections()) === 2);
        // The fetches parked before the outage are still parked, and wake when a record arrives on their partition (each at its leader).
        // A restart can move leadership; a parked fetch then ends with NOT_LEADER_OR_FOLLOWER (retriable) and is not a wake-up.
        await lookUpLeaders(PARKED_TOPIC);
        const ackedAtA = await produceParked(partitionA!, `parked-${i + 1}-a`);
        const ackedAtB = await produceParked(partitionB!, `parked-${i + 1}-b`);
        const wakeDeadline = sleep(RECOVERY_BOUND_MS).then(() => ({ at: -1, errorCode: -2, values: ['still parked'] }));
        const [a, b] = await Promise.all([Promise.race([parkedA.answered, wakeDeadline]), Promise.race([parkedB.answered, wakeDeadline])]);
        parkedA.close();
        parkedB.close();
        expect({ broker: 'A', restart: i + 1, errorCode: a.errorCode, values: a.values }).toEqual({ broker: 'A', restart: i + 1, errorCode: 0, values: [`parked-${i + 1}-a`] });
        expect({ broker: 'B', restart: i + 1, errorCode: b.errorCode, values: b.values }).toEqual({ broker: 'B', restart: i + 1, errorCode: 0, values: [`parked-${i + 1}-b`] });
        figures.push({ mode, stopMs, downMs, startMs, produceMs, commitMs, listenMs, wakeA: Math.max(0, a.at - ackedAtA), wakeB: Math.max(0, b.at - ackedAtB) });
        process.stdout.write(
          `pg restart ${i + 1} (${mode}): stopped in ${stopMs} ms, down ${downMs} ms, started in ${startMs} ms; after start: produce acked in ${produceMs} ms, ` +
            `offset commit in ${commitMs} ms, LISTEN back in ${listenMs} ms, parked fetch woken ${figures.at(-1)!.wakeA} ms (A) / ${figures.at(-1)!.wakeB} ms (B) after its record\n`,
        );
        expect(produceMs).toBeGreaterThanOrEqual(0);
        expect(commitMs).toBeGreaterThanOrEqual(0);
        expect(listenMs).toBeGreaterThanOrEqual(0);
        phase = `after restart ${i + 1}`;
      }
      const acksAtEnd = acks;
      // Enough plain records to judge (a loaded machine produces fewer per second): load, not a speed, is what the end waits for.
      await within(30_000, () => acks >= acksAtEnd + 50 && plainAcknowledged.size > 200);
    } finally {
      stop = true;
      await Promise.all(tasks);
    }

    // Read back through each partition's leader as it stands now.
    await Promise.all([TOPIC, PARKED_TOPIC, PLAIN_TOPIC].map(lookUpLeaders));
    const stored = await readLog(leaderOf(TOPIC), TOPIC);
    const { lost, lostValues, duplicates } = compareWithLog(stored, acknowledged, ackedValues);
    const parkedStored = await Promise.all(PARKED_PARTITIONS.map(async (partition) => (await readPartition(leaderOf(PARKED_TOPIC, partition), PARKED_TOPIC, partition)).map((r) => r.value)));
    const plainStored = await readLog(leaderOf(PLAIN_TOPIC), PLAIN_TOPIC);
    const plain = compareWithLog(plainStored, plainAcknowledged, new Set());
    const offsets = await (async () => {
      const c = await RawClient.connect(coordinator);
      try {
        return await c.request(OffsetFetchApi, 8, { groups: [{ groupId: GROUP, topics: [{ name: TOPIC, partitionIndexes: [0] }] }] });
      } finally {
        c.close();
      }
    })();
    const committedStored = offsets.groups[0]!.topics[0]!.partitions[0]!.committedOffset;
    const failures = [brokerA, brokerB].flatMap((b, i) =>
      /uncaught exception|unhandled rejection/.test(b.output())
        ? [
            `broker ${'AB'[i]} logged: ${b
              .output()
              .split('\n')
              .filter((l) => /uncaught exception|unhandled rejection/.test(l))
              .slice(0, 3)
              .join(' | ')}`,
          ]
        : [],
    );
    const exits = [brokerA, brokerB].map((b) => b.child.exitCode ?? b.child.signalCode);

    process.stdout.write(
      `pg restart (PG_RESTART_SEED=${SEED}): ${RESTARTS.length} restarts (${RESTARTS.join(', ')}), ${acknowledged.size} records acknowledged with offsets ` +
        `(${ackedValues.size} in all), ${stored.length} stored, lost ${lost.length + lostValues.length}, duplicates ${duplicates.length}; ` +
        `plain: ${plainAcknowledged.size} acknowledged, ${plainStored.length} stored, lost ${plain.lost.length}; ` +
        `${commits} offset commits (last ${committed}, stored ${committedStored}), ${consumed.length} consumed, ${((Date.now() - started) / 1000).toFixed(1)} s\n` +
        `served again after each restart (produce acknowledged): ${figures.map((f) => `${f.produceMs} ms`).join(', ')}\n` +
        `errors seen: ${JSON.stringify(errors)}\n`,
    );
    const context = `PG_RESTART_SEED=${SEED}`;
    expect(exits, context).toEqual([null, null]);
    expect(failures, context).toEqual([]);
    expect(nonRetriable, context).toEqual([]);
    expect(acknowledged.size, context).toBeGreaterThan(200);
    expect(lost, context).toEqual([]);
    expect(lostValues, context).toEqual([]);
    expect(duplicates, context).toEqual([]);
    expect(
      stored.map((r) => r.offset),
      context,
    ).toEqual(stored.map((_, i) => BigInt(i)));
    expect(plainAcknowledged.size, context).toBeGreaterThan(200);
    expect(plain.lost, context).toEqual([]);
    expect(plain.duplicates, context).toEqual([]);
    expect(
      plainStored.map((r) => r.offset),
      context,
    ).toEqual(plainStored.map((_, i) => BigInt(i)));
    expect(parkedStored, context).toEqual(parkedAcks);
    expect(gaps, context).toEqual([]);
    expect(consumed.length, context).toBeGreaterThan(acknowledged.size / 4);
    expect(consumed, context).toEqual(stored.slice(0, consumed.length));
    expect(committedStored, context).toBe(committed);
    for (const b of [brokerA, brokerB]) {
      b.child.kill('SIGTERM');
      expect(await b.exited, context).toBe(0);
    }
  });
});
