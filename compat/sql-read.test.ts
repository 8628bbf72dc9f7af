// Reading the log with SQL (migrations/0014_sql_read.sql): records produced
// by kafkajs and kcat (librdkafka) come back from records() exactly as kcat
// and kafkajs consumers read them — offsets, timestamps, keys, values and
// headers, binary bytes and nulls included; read_committed stops at the last
// stable offset and skips aborted transactions and markers; DeleteRecords,
// compaction gaps, timestamps, compressed batches and the views.
import { CompressionTypes, Kafka, logLevel, type Producer } from 'kafkajs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../test/support/broker.js';
import { ProduceApi } from '../src/protocol/messages/index.js';
import { buildBatch } from '../src/protocol/records/index.js';
import { RawClient } from '../test/support/raw-client.js';
import { kcatConsume, kcatProduce } from './support/kcat.js';
import { BINARY } from './support/records.js';

let broker: TestBroker;
let kafka: Kafka;

beforeAll(async () => {
  broker = await startTestBroker({ logRetentionCheckIntervalMs: 3_600_000, logCleanerBackoffMs: 3_600_000 });
  kafka = new Kafka({ brokers: [broker.bootstrap], clientId: 'compat-sql-read', logLevel: logLevel.NOTHING, retry: { retries: 5, initialRetryTime: 100 } });
});
afterAll(async () => {
  await broker?.destroy();
});

async function createTopic(topic: string, configs: Record<string, string> = {}, numPartitions = 1) {
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.createTopics({ topics: [{ topic, numPartitions, configEntries: Object.entries(configs).map(([name, value]) => ({ name, value })) }] });
  } finally {
    await admin.disconnect();
  }
}

async function withProducer<T>(fn: (p: Producer) => Promise<T>, opts: Parameters<Kafka['producer']>[0] = {}): Promise<T> {
  const producer = kafka.producer(opts);
  await producer.connect();
  try {
    return await fn(producer);
  } finally {
    await producer.disconnect();
  }
}

interface SqlRecord {
  offset: number;
  timestamp: number | null;
  timestampType: string | null;
  key: Buffer | null;
  value: Buffer | null;
  headers: [string, Buffer | null][] | null;
  compression: string;
}

/** Calls records() with named arguments, as a user would. */
async function records(topic: string, partition = 0, args: Record<string, unknown> = {}): Promise<SqlRecord[]> {
  const names = Object.keys(args);
  const named = names.map((n, i) => `, ${n} => $${i + 3}`).join('');
  const rows = await broker.query<{
    offset: string;
    ts: string | null;
    timestamp_type: string | null;
    key: Buffer | null;
    value: Buffer | null;
    headers: [string, string | null][] | null;
    compression: string;
  }>(
    `SELECT r."offset"::text AS offset, (extract(epoch FROM r."timestamp") * 1000)::bigint::text AS ts, r.timestamp_type, r.key, r.value, r.compression,
            CASE WHEN r.headers IS NOT NULL THEN (SELECT coalesce(json_agg(json_build_array(h.key, encode(h.value, 'hex')) ORDER BY n), '[]') FROM unnest(r.headers) WITH ORDINALITY AS h(key, value, n)) END AS headers
     FROM records($1, $2${named}) r`,
    [topic, partition, ...names.map((n) => args[n])],
  );
  return rows.map((r) => ({
    offset: Number(r.offset),
    timestamp: r.ts === null ? null : Number(r.ts),
    timestampType: r.timestamp_type,
    key: r.key,
    value: r.value,
    headers: r.headers && r.headers.map(([k, v]) => [k, v === null ? null : Buffer.from(v, 'hex')]),
    compression: r.compression,
  }));
}

const offsets = (recs: { offset: number }[]) => recs.map((r) => r.offset);
const values = (recs: { value: Buffer | null }[]) => recs.map((r) => r.value?.toString() ?? null);

/** Every record of a partition as a kafkajs consumer reads it (read_committed unless told). */
async function kafkajsRead(topic: string, count: number, readUncommitted = false) {
  const consumer = kafka.consumer({ groupId: `sql-read-${topic}-${readUncommitted}`, readUncommitted, sessionTimeout: 6000, heartbeatInterval: 500 });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const seen: { offset: number; timestamp: number; key: Buffer | null; value: Buffer | null; headers: [string, Buffer | null][] }[] = [];
  await new Promise<void>((resolve) => {
    void consumer.run({
      eachMessage: async ({ message }) => {
        const headers = Object.entries(message.headers ?? {}).flatMap(([k, v]) =>
          Array.isArray(v) ? v.map((x) => [k, x as Buffer] as [string, Buffer]) : [[k, (v ?? null) as Buffer | null] as [string, Buffer | null]],
        );
        seen.push({ offset: Number(message.offset), timestamp: Number(message.timestamp), key: message.key, value: message.value, headers });
        if (seen.length === count) resolve();
      },
    });
  });
  await consumer.disconnect();
  return seen;
}

describe('records() decodes what real clients produced', () => {
  it('kafkajs and kcat records, byte for byte as kcat and kafkajs consumers read them', async () => {
    const topic = 'sql-read-bytes';
    await createTopic(topic);
    await withProducer(async (p) => {
      await p.send({
        topic,
        acks: -1,
        messages: [
          { key: 'k1', value: 'v1', headers: { h1: 'x', h2: BINARY }, timestamp: '1700000000123' },
          { key: null, value: BINARY, timestamp: '1700000000124' },
          { key: BINARY, value: null, headers: { empty: Buffer.alloc(0) }, timestamp: '1700000000001' },
          { key: 'long', value: 'z'.repeat(300), headers: { ['n'.repeat(70)]: 'w'.repeat(200) }, timestamp: '1700000000200' },
        ],
      });
    });
    await kcatProduce(broker.bootstrap, topic, [
      { partition: 0, key: Buffer.from('rdk'), value: Buffer.from('from librdkafka'), headers: [['trace', Buffer.from('abc')]] },
      { partition: 0, key: null, value: Buffer.from([0, 1, 2, 255]), headers: [['trace', Buffer.from('abc')]] },
      { partition: 0, key: Buffer.from('gone'), value: null, headers: [] },
    ]);

    const sql = await records(topic);
    const kcat = await kcatConsume(broker.bootstrap, topic);
    expect(sql).toHaveLength(7);
    expect(sql.map(({ offset, key, value }) => ({ offset, key, value }))).toEqual(kcat.map(({ offset, key, value }) => ({ offset, key, value })));
    // kcat prints headers as text: compare those that are text, and all of them with kafkajs below.
    expect(sql[4]!.headers).toEqual([['trace', Buffer.from('abc')]]);
    expect(sql[6]!.headers).toEqual([]);
    expect(sql.every((r) => r.compression === 'none' && r.timestampType === 'CreateTime')).toBe(true);

    const js = await kafkajsRead(topic, 7);
    expect(sql.map(({ offset, timestamp, key, value, headers }) => ({ offset, timestamp, key, value, headers }))).toEqual(js);
    expect(sql[0]!.timestamp).toBe(1700000000123);
    expect(sql[2]!.key).toEqual(BINARY);
    expect(sql[2]!.value).toBeNull();
    expect(sql[1]!.key).toBeNull();
    expect(sql[3]!.headers).toEqual([['n'.repeat(70), Buffer.from('w'.repeat(200))]]);

    // header_value(): the last header with that key, as Headers.lastHeader.
    const [h] = await broker.query<{ h2: Buffer; none: Buffer | null }>(`SELECT header_value(headers, 'h2') AS h2, header_value(headers, 'nope') AS none FROM records($1, 0) WHERE "offset" = 0`, [
      topic,
    ]);
    expect(h).toEqual({ h2: BINARY, none: null });
  });

  it('null and repeated headers, and values whose lengths take several varint bytes, as kcat reads them', async () => {
    // No client here sends a null header value or two headers of one key: a batch built by the project's encoder, sent as a Produce request.
    const topic = 'sql-read-raw';
    await createTopic(topic);
    const big = Buffer.alloc(70_000, 0x61);
    const recs = [
      {
        key: Buffer.from('a'),
        value: Buffer.from('v'),
        headers: [
          { key: 'h', value: null },
          { key: 'h', value: Buffer.from('second') },
          { key: 'é', value: Buffer.alloc(0) },
        ],
      },
      { key: null, value: big, timestampDelta: 123_456_789n },
    ];
    const client = await RawClient.connect(broker.bootstrap);
    try {
      const res = await client.request(ProduceApi, 9, {
        acks: -1,
        timeoutMs: 5000,
        topicData: [{ name: topic, partitionData: [{ index: 0, records: buildBatch({ baseTimestamp: 1_700_000_000_000n, records: recs }) }] }],
      });
      expect(res.responses[0]!.partitionResponses[0]!.errorCode).toBe(0);
    } finally {
      client.close();
    }
    const sql = await records(topic);
    expect(sql.map(({ offset, timestamp, key, headers }) => ({ offset, timestamp, key, headers }))).toEqual([
      {
        offset: 0,
        timestamp: 1_700_000_000_000,
        key: Buffer.from('a'),
        headers: [
          ['h', null],
          ['h', Buffer.from('second')],
          ['é', Buffer.alloc(0)],
        ],
      },
      { offset: 1, timestamp: 1_700_123_456_789, key: null, headers: [] },
    ]);
    expect(sql[1]!.value).toEqual(big);
    const [h] = await broker.query<{ h: Buffer }>(`SELECT header_value(headers, 'h') AS h FROM records($1, 0) WHERE "offset" = 0`, [topic]);
    expect(h!.h).toEqual(Buffer.from('second'));
    const kcat = await kcatConsume(broker.bootstrap, topic);
    expect(sql.map(({ offset, key, value }) => ({ offset, key, value }))).toEqual(kcat.map(({ offset, key, value }) => ({ offset, key, value })));
  });

  it('from_offset, from_timestamp and max_records; offsets below the log start are not returned', async () => {
    const topic = 'sql-read-range';
    await createTopic(topic);
    await withProducer(async (p) => {
      for (let b = 0; b < 4; b++) {
        await p.send({ topic, acks: -1, messages: [0, 1, 2].map((i) => ({ value: `r${b * 3 + i}`, timestamp: String(1_000_000 + (b * 3 + i) * 1000) })) });
      }
    });
    expect(offsets(await records(topic, 0, { from_offset: 4 }))).toEqual([4, 5, 6, 7, 8, 9, 10, 11]);
    expect(offsets(await records(topic, 0, { from_offset: 4, max_records: 3 }))).toEqual([4, 5, 6]);
    expect(await records(topic, 0, { from_offset: 12 })).toEqual([]);
    // The first record at or after the time (mid-batch), then everything after it.
    const t = new Date(1_000_000 + 7 * 1000 - 500);
    expect(offsets(await records(topic, 0, { from_timestamp: t }))).toEqual([7, 8, 9, 10, 11]);
    expect(offsets(await records(topic, 0, { from_timestamp: new Date(1_000_000 + 99_000) }))).toEqual([]);
    // The same time in the partition's first record: equal counts.
    expect((await records(topic, 0, { from_timestamp: new Date(1_000_000) }))[0]!.timestamp).toBe(1_000_000);

    const admin = kafka.admin();
    await admin.connect();
    try {
      await admin.fetchTopicMetadata({ topics: [topic] }); // kafkajs's deleteTopicRecords needs the topic's metadata loaded
      await admin.deleteTopicRecords({ topic, partitions: [{ partition: 0, offset: '5' }] });
    } finally {
      await admin.disconnect();
    }
    expect(offsets(await records(topic))).toEqual([5, 6, 7, 8, 9, 10, 11]);
    expect(offsets(await records(topic, 0, { from_offset: 1 }))).toEqual([5, 6, 7, 8, 9, 10, 11]);
    expect(offsets(await records(topic, 0, { from_timestamp: new Date(0) }))).toEqual([5, 6, 7, 8, 9, 10, 11]);
    const [po] = await broker.query(`SELECT log_start_offset::int, last_stable_offset::int, high_watermark::int FROM partition_offsets WHERE topic = $1`, [topic]);
    expect(po).toEqual({ log_start_offset: 5, last_stable_offset: 12, high_watermark: 12 });
  });

  it('read_committed stops at the last stable offset and skips aborted transactions; read_uncommitted does not', async () => {
    const topic = 'sql-read-txn';
    await createTopic(topic);
    const plain = kafka.producer();
    await plain.connect();
    const txProducer = kafka.producer({ transactionalId: 'sql-read-tx', idempotent: true, maxInFlightRequests: 1 });
    await txProducer.connect();
    const openProducer = kafka.producer({ transactionalId: 'sql-read-open', idempotent: true, maxInFlightRequests: 1 });
    await openProducer.connect();
    try {
      await plain.send({ topic, acks: -1, messages: [{ value: 'p0' }] }); // 0
      const committed = await txProducer.transaction();
      await committed.send({ topic, messages: [{ value: 'c1' }, { value: 'c2' }] }); // 1, 2
      await committed.commit(); // marker 3
      const aborted = await txProducer.transaction();
      await aborted.send({ topic, messages: [{ value: 'a4' }, { value: 'a5' }] }); // 4, 5
      await plain.send({ topic, acks: -1, messages: [{ value: 'p6' }] }); // 6, inside the aborted range but not the aborted producer's
      await aborted.abort(); // marker 7
      await plain.send({ topic, acks: -1, messages: [{ value: 'p8' }] }); // 8
      const open = await openProducer.transaction();
      await open.send({ topic, messages: [{ value: 'o9' }] }); // 9: the last stable offset
      await plain.send({ topic, acks: -1, messages: [{ value: 'p10' }] }); // 10, above the last stable offset

      const committedView = await records(topic);
      expect(values(committedView)).toEqual(['p0', 'c1', 'c2', 'p6', 'p8']);
      expect(offsets(committedView)).toEqual([0, 1, 2, 6, 8]);
      expect(values(await records(topic, 0, { isolation_level: 'read_uncommitted' }))).toEqual(['p0', 'c1', 'c2', 'a4', 'a5', 'p6', 'p8', 'o9', 'p10']);
      const [po] = await broker.query(`SELECT log_start_offset::int, last_stable_offset::int, high_watermark::int FROM partition_offsets WHERE topic = $1`, [topic]);
      expect(po).toEqual({ log_start_offset: 0, last_stable_offset: 9, high_watermark: 11 });
      // A read_committed kafkajs consumer sees the same records.
      expect(offsets(await kafkajsRead(topic, 5))).toEqual([0, 1, 2, 6, 8]);

      await open.commit(); // marker 11
      expect(values(await records(topic))).toEqual(['p0', 'c1', 'c2', 'p6', 'p8', 'o9', 'p10']);
      await expect(records(topic, 0, { isolation_level: 'serializable' })).rejects.toThrow(/isolation_level/);
    } finally {
      await plain.disconnect();
      await txProducer.disconnect();
      await openProducer.disconnect();
    }
  });

  it('LogAppendTime topics: every record has the append time of its batch, as consumers see it', async () => {
    const topic = 'sql-read-append-time';
    await createTopic(topic, { 'message.timestamp.type': 'LogAppendTime' });
    await withProducer(async (p) => {
      await p.send({
        topic,
        acks: -1,
        messages: [
          { value: 'a', timestamp: '1000' },
          { value: 'b', timestamp: '2000' },
        ],
      });
    });
    const sql = await records(topic);
    expect(sql.map((r) => r.timestampType)).toEqual(['LogAppendTime', 'LogAppendTime']);
    expect(sql[0]!.timestamp).toBeGreaterThan(Date.now() - 60_000);
    expect(sql.map(({ offset, timestamp }) => ({ offset, timestamp }))).toEqual((await kafkajsRead(topic, 2)).map(({ offset, timestamp }) => ({ offset, timestamp })));
  });

  it('compacted batches with offset gaps, tombstones as NULL values', async () => {
    const topic = 'sql-read-compact';
    await createTopic(topic, { 'cleanup.policy': 'compact', 'min.cleanable.dirty.ratio': '0.01', 'delete.retention.ms': '60000' });
    await withProducer(async (p) => {
      await p.send({ topic, acks: -1, messages: [1, 2, 3].map((i) => ({ key: `k${i}`, value: `a${i}` })) }); // 0..2
      await p.send({
        topic,
        acks: -1,
        messages: [
          { key: 'k1', value: 'b1' },
          { key: 'k2', value: null },
          { key: 'k4', value: 'b4' },
        ],
      }); // 3..5
      await p.send({ topic, acks: -1, messages: [{ key: 'k5', value: 'c5' }] }); // 6
    });
    await broker.cleaner.runOnce(Date.now());
    const kcat = await kcatConsume(broker.bootstrap, topic);
    const sql = await records(topic);
    expect(offsets(sql)).toEqual([2, 3, 4, 5, 6]);
    expect(sql.map(({ offset, key, value }) => ({ offset, key, value }))).toEqual(kcat.map(({ offset, key, value }) => ({ offset, key, value })));
    expect(sql[2]!.value).toBeNull();
    expect(offsets(await records(topic, 0, { from_offset: 1 }))).toEqual([2, 3, 4, 5, 6]);
  });
});

describe('compressed batches', () => {
  it('a gzip batch kept as sent is one marker row; compression.type=uncompressed has the broker store it decodable', async () => {
    await createTopic('sql-read-gzip');
    await createTopic('sql-read-plain', { 'compression.type': 'uncompressed' });
    for (const topic of ['sql-read-gzip', 'sql-read-plain']) {
      await withProducer(async (p) => {
        await p.send({ topic, acks: -1, messages: [{ key: 'u', value: 'uncompressed' }] }); // 0
        await p.send({ topic, acks: -1, compression: CompressionTypes.GZIP, messages: [1, 2, 3].map((i) => ({ key: `g${i}`, value: `gzip ${i}`, headers: { h: `${i}` } })) }); // 1..3
        await p.send({ topic, acks: -1, messages: [{ key: 'v', value: 'after' }] }); // 4
      });
    }
    const marked = await records('sql-read-gzip');
    expect(marked.map((r) => [r.offset, r.compression, r.value?.toString() ?? null])).toEqual([
      [0, 'none', 'uncompressed'],
      [1, 'gzip', null],
      [4, 'none', 'after'],
    ]);
    expect(marked[1]).toMatchObject({ key: null, headers: null, timestamp: null });
    expect(offsets(await records('sql-read-gzip', 0, { from_offset: 2 }))).toEqual([2, 4]);

    const plain = await records('sql-read-plain');
    expect(plain.map((r) => [r.offset, r.compression, r.key?.toString(), r.value?.toString()])).toEqual([
      [0, 'none', 'u', 'uncompressed'],
      [1, 'none', 'g1', 'gzip 1'],
      [2, 'none', 'g2', 'gzip 2'],
      [3, 'none', 'g3', 'gzip 3'],
      [4, 'none', 'v', 'after'],
    ]);
    expect(plain[2]!.headers).toEqual([['h', Buffer.from('2')]]);
  });
});

describe('the functions from outside the schema', () => {
  it('records() and the views work schema-qualified under any search_path; unknown partitions raise', async () => {
    const topic = 'sql-read-views';
    await createTopic(topic, {}, 2);
    await withProducer(async (p) => {
      await p.send({
        topic,
        acks: -1,
        messages: [
          { value: 'p0-a', partition: 0 },
          { value: 'p1-a', partition: 1 },
          { value: 'p0-b', partition: 0 },
        ],
      });
    });
    const client = new pg.Client({ connectionString: broker.databaseUrl });
    await client.connect();
    try {
      await client.query('SET search_path TO public');
      const s = broker.schema;
      const { rows } = await client.query(`SELECT convert_from(value, 'UTF8') AS v FROM ${s}.records('${topic}', 0) ORDER BY "offset" DESC LIMIT 1`);
      expect(rows).toEqual([{ v: 'p0-b' }]);
      const view = await client.query(`SELECT partition, "offset"::int, convert_from(value, 'UTF8') AS v FROM ${s}.topic_records WHERE topic = $1 ORDER BY partition, "offset"`, [topic]);
      expect(view.rows).toEqual([
        { partition: 0, offset: 0, v: 'p0-a' },
        { partition: 0, offset: 1, v: 'p0-b' },
        { partition: 1, offset: 0, v: 'p1-a' },
      ]);
      await expect(client.query(`SELECT * FROM ${s}.records('${topic}', 2)`)).rejects.toThrow(/unknown topic or partition sql-read-views-2/);
    } finally {
      await client.end();
    }
  });
});
