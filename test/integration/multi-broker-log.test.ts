// Brokers sharing one database see each other's appends: a long poll parked
// on a partition's leader is answered when another broker appends to it (as
// its transaction coordinator's markers or its outbox relay do), the
// announcements of a busy partition are coalesced to its newest position,
// and when a broker disappears — perhaps after committing appends it never
// announced — the others re-read the partitions they serve. A broker alone
// announces nothing until another registers, then what it has loaded.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/observability/logger.js';
import { CreateTopicsApi, FetchApi, ProduceApi } from '../../src/protocol/messages/index.js';
import { buildBatch, decodeRecords, parseBatches, readBatchHeaderAt } from '../../src/protocol/records/index.js';
import { AppendAnnouncer } from '../../src/storage/pg/append-announcer.js';
import { LogStore } from '../../src/storage/pg/log-store.js';
import { createPool } from '../../src/storage/pg/pool.js';
import { startTestBroker, type TestBroker } from '../support/broker.js';
import { leadersOf, until } from '../support/cluster.js';
import { RawClient } from '../support/raw-client.js';

let first: TestBroker;
let second: TestBroker;
let toFirst: RawClient;
let toSecond: RawClient;

beforeAll(async () => {
  first = await startTestBroker({ nodeId: 1 });
  second = await startTestBroker({ schema: first.schema, nodeId: 2 });
  toFirst = await RawClient.connect(first.bootstrap);
  toSecond = await RawClient.connect(second.bootstrap);
});
afterAll(async () => {
  toFirst?.close();
  toSecond?.close();
  await second?.stop();
  await first?.destroy();
});

async function createTopic(name: string) {
  const res = await toFirst.request(CreateTopicsApi, 7, { topics: [{ name, numPartitions: 1, replicationFactor: 1 }], timeoutMs: 1000 });
  expect(res.topics[0]!.errorCode).toBe(0);
}

async function produce(client: RawClient, topic: string, value: string) {
  const records = buildBatch({ records: [{ key: null, value: Buffer.from(value) }] });
  const res = await client.request(ProduceApi, 9, { acks: -1, timeoutMs: 1000, topicData: [{ name: topic, partitionData: [{ index: 0, records }] }] });
  const p = res.responses[0]!.partitionResponses[0]!;
  expect(p.errorCode).toBe(0);
  return p.baseOffset;
}

/** The broker leading the topic's one partition, a client of it, and the other broker. */
async function roles(topic: string): Promise<{ toLeader: RawClient; other: TestBroker; topicId: string }> {
  let leaderId = -1;
  await until(`${topic} has a leader`, async () => (leaderId = (await leadersOf(first.bootstrap, topic))[0]!.leader) >= 0);
  const [{ topic_id: topicId }] = await first.query<{ topic_id: string }>('SELECT topic_id FROM topics WHERE name = $1', [topic]);
  return leaderId === 1 ? { toLeader: toFirst, other: second, topicId } : { toLeader: toSecond, other: first, topicId };
}

/** A Fetch from `offset` that the broker parks for up to `maxWaitMs` while nothing is there. */
async function fetchValues(client: RawClient, topic: string, offset: bigint, maxWaitMs: number) {
  const res = await client.request(FetchApi, 12, {
    replicaId: -1,
    maxWaitMs,
    minBytes: 1,
    maxBytes: 1 << 20,
    sessionEpoch: -1,
    topics: [{ topic, partitions: [{ partition: 0, fetchOffset: offset, partitionMaxBytes: 1 << 20 }] }],
  });
  const p = res.responses[0]!.partitions[0]!;
  const buf = (p.records as Buffer | null) ?? Buffer.alloc(0);
  const values = parseBatches(buf, { mode: 'log', verifyCrc: true }).batches.flatMap((h) => decodeRecords(buf, h).records.map((r) => r.value!.toString()));
  return { highWatermark: p.highWatermark, values };
}

describe('appends across brokers', () => {
  it('answers a long poll parked on the leader when another broker appends', async () => {
    await createTopic('across');
    const { toLeader, other, topicId } = await roles('across');
    await produce(toLeader, 'across', 'before');
    expect((await fetchValues(toLeader, 'across', 0n, 0)).values).toEqual(['before']);
    // Parked on the leader well past the test's own timeout unless the other broker's append wakes it.
    const parked = fetchValues(toLeader, 'across', 1n, 60_000);
    await new Promise((r) => setTimeout(r, 200));
    const data = buildBatch({ records: [{ key: null, value: Buffer.from('after') }] });
    await other.context.logs.append((await other.context.logs.partition(topicId, 0))!, [{ data, header: readBatchHeaderAt(data, 0)! }]);
    const got = await parked;
    expect(got.values).toEqual(['after']);
    expect(got.highWatermark).toBe(2n);
  }, 20_000);

  it('re-reads partitions when a broker disappears, so an append it committed but never announced is served', async () => {
    await createTopic('orphaned');
    const { toLeader, topicId } = await roles('orphaned');
    const leader = toLeader === toFirst ? first : second;
    await produce(toLeader, 'orphaned', 'announced');
    expect((await fetchValues(toLeader, 'orphaned', 0n, 0)).values).toEqual(['announced']);
    // A third broker registers, appends straight into the log without announcing it, and dies.
    await first.query("INSERT INTO brokers (node_id, host, port, instance_id) VALUES (3, '127.0.0.1', 1, $1)", [randomUUID()]);
    for (let i = 0; !leader.context.liveBrokers().some((b) => b.nodeId === 3); i++) {
      if (i > 100) throw new Error('the second broker never saw the third');
      await new Promise((r) => setTimeout(r, 100));
    }
    const pool = createPool({ connectionString: first.databaseUrl, schema: first.schema, max: 1 });
    try {
      const data = buildBatch({ records: [{ key: null, value: Buffer.from('unannounced') }] });
      const ts = BigInt(Date.now());
      await new LogStore(pool).append(topicId, 0, 1n, [
        {
          data,
          relativeOffset: 0n,
          lastOffsetDelta: 0,
          recordCount: 1,
          firstTimestamp: ts,
          maxTimestamp: ts,
          producerId: -1n,
          producerEpoch: -1,
          baseSequence: -1,
          isTransactional: false,
          isControl: false,
        },
      ]);
    } finally {
      await pool.end();
    }
    // The leader has not heard of it: its view ends before the record.
    expect((await fetchValues(toLeader, 'orphaned', 1n, 0)).highWatermark).toBe(1n);
    const parked = fetchValues(toLeader, 'orphaned', 1n, 60_000);
    await first.query('DELETE FROM brokers WHERE node_id = 3');
    const got = await parked;
    expect(got.values).toEqual(['unannounced']);
  }, 30_000);
});

describe('a broker alone on its database', () => {
  it('announces its partitions as they stand once another broker registers, and its appends from then on', async () => {
    const alone = await startTestBroker();
    const client = await RawClient.connect(alone.bootstrap);
    const listener = new pg.Client({ connectionString: alone.databaseUrl });
    try {
      const created = await client.request(CreateTopicsApi, 7, { topics: [{ name: 'lonely', numPartitions: 1, replicationFactor: 1 }], timeoutMs: 1000 });
      expect(created.topics[0]!.errorCode).toBe(0);
      await produce(client, 'lonely', 'one');
      await produce(client, 'lonely', 'two');
      const [{ topic_id: topicId }] = await alone.query<{ topic_id: string }>("SELECT topic_id FROM topics WHERE name = 'lonely'");
      await listener.connect();
      const heard: string[] = [];
      listener.on('notification', (n) => heard.push(n.payload ?? ''));
      await listener.query(`LISTEN ${alone.schema}_append`);
      const heardPosition = async (hw: bigint) => {
        for (let i = 0; !heard.some((h) => h.endsWith(`:${topicId}:0:${hw}:0`)); i++) {
          if (i > 100) throw new Error(`no announcement of ${hw}: ${heard.join(' ')}`);
          await new Promise((r) => setTimeout(r, 100));
        }
      };
      // Another broker registers (it never heartbeats: the lone one sees it for one liveness period).
      await alone.query("INSERT INTO brokers (node_id, host, port, instance_id) VALUES (7, '127.0.0.1', 1, $1)", [randomUUID()]);
      await heardPosition(2n);
      await produce(client, 'lonely', 'three');
      await heardPosition(3n);
    } finally {
      client.close();
      await listener.end();
      await alone.destroy();
    }
  }, 30_000);
});

describe('AppendAnnouncer', () => {
  it("sends a partition's newest position, coalescing what was announced while a statement was in flight", async () => {
    const channel = `announce_${randomUUID().replaceAll('-', '')}`;
    const listener = new pg.Client({ connectionString: first.databaseUrl });
    await listener.connect();
    const heard: string[] = [];
    listener.on('notification', (n) => heard.push(n.payload ?? ''));
    await listener.query(`LISTEN ${channel}`);
    const pool = createPool({ connectionString: first.databaseUrl, schema: first.schema, max: 2 });
    const announcer = new AppendAnnouncer(pool, channel, createLogger('silent'));
    try {
      for (let hw = 1; hw <= 100; hw++) {
        announcer.announce('topic:0', `i:topic:0:${hw}:0`);
        announcer.announce('topic:1', `i:topic:1:${hw * 2}:0`);
      }
      await announcer.close();
      for (let i = 0; !heard.includes('i:topic:1:200:0') || !heard.includes('i:topic:0:100:0'); i++) {
        if (i > 100) throw new Error(`not heard: ${heard.join(' ')}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      // The first statement went out at the first announcement; everything announced meanwhile went out once, newest only.
      expect(heard.sort()).toEqual(['i:topic:0:100:0', 'i:topic:0:1:0', 'i:topic:1:200:0']);
    } finally {
      await pool.end();
      await listener.end();
    }
  });
});
