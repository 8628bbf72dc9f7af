// Records sent from SQL (send() in the application's transaction, docs/sql.md)
// read by kafkajs 2 and by librdkafka (@confluentinc/kafka-javascript's
// KafkaConsumer): keys, values, headers and timestamps byte for byte, each
// record at the partition send() named; and keyed records from SQL and from
// kafkajs's default partitioner, and librdkafka's murmur2_random, on the
// same partition.
import ck from '@confluentinc/kafka-javascript';
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { send } from '../src/sql/send.js';
import { startTestBroker, type TestBroker } from '../test/support/broker.js';
import { RawClient } from '../test/support/raw-client.js';
import { fetchRecords, inTransaction } from '../test/support/sql-send.js';

let broker: TestBroker;
let app: pg.Pool;
let kafka: Kafka;

beforeAll(async () => {
  broker = await startTestBroker({ autoCreateTopicsEnable: false });
  app = new pg.Pool({ connectionString: broker.databaseUrl, max: 2 });
  kafka = new Kafka({ brokers: [broker.bootstrap], clientId: 'compat-sql-send', logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({
    topics: [
      { topic: 'sql-sent', numPartitions: 3 },
      { topic: 'sql-keys', numPartitions: 5 },
    ],
  });
  await admin.disconnect();
});
afterAll(async () => {
  await app?.end();
  await broker?.destroy();
});

interface Sent {
  partition: number;
  key: Buffer | null;
  value: Buffer | null;
  headers: [string, Buffer][];
  timestamp: string;
}

interface Read extends Sent {
  offset: string;
}

const order = <T extends { partition: number; offset?: string }>(rs: T[]): T[] => [...rs].sort((a, b) => a.partition - b.partition || Number(a.offset) - Number(b.offset));

/** Sends the dataset in two transactions; what was sent, with the CreateTime each record carries (read from the outbox before the commit). */
async function sendDataset(): Promise<Sent[]> {
  const sent: Sent[] = [];
  const records: { key: Buffer | string | null; value: Buffer | string | null; headers: [string, Buffer | string][]; partition?: number }[][] = [
    [
      { key: Buffer.from([0, 1, 2, 255]), value: Buffer.from([0xde, 0xad, 0xbe, 0xef, 0]), headers: [['bin', Buffer.from([0, 255])]] },
      {
        key: 'order-1',
        value: JSON.stringify({ order: 1, total: '12.50' }),
        headers: [
          ['type', 'OrderCreated'],
          ['trace', 'a'],
          ['trace', 'b'],
        ],
      },
      { key: null, value: 'no key', headers: [], partition: 2 },
      { key: 'order-1', value: null, headers: [] }, // a tombstone
    ],
    [
      { key: 'ünïcode-ключ', value: 'värde ✓', headers: [['empty', '']] },
      { key: 'order-1', value: '', headers: [] },
    ],
  ];
  for (const txn of records) {
    await inTransaction(app, async (c) => {
      const partitions: number[] = [];
      for (const r of txn) partitions.push(await send(c, { topic: 'sql-sent', key: r.key, value: r.value, headers: r.headers, partition: r.partition }, { schema: broker.schema }));
      const { rows } = await c.query<{ timestamp_ms: string }>(`SELECT timestamp_ms::text FROM ${broker.schema}.outbox WHERE xact = txid_current() ORDER BY id`);
      txn.forEach((r, i) =>
        sent.push({
          partition: partitions[i]!,
          key: r.key === null ? null : Buffer.from(r.key),
          value: r.value === null ? null : Buffer.from(r.value),
          headers: r.headers.map(([k, v]) => [k, Buffer.from(v)]),
          timestamp: rows[i]!.timestamp_ms,
        }),
      );
    });
  }
  return sent;
}

/** Records in offset order per partition, without offsets, for comparing with what was sent. */
const withoutOffsets = (rs: Read[]): Sent[] => order(rs).map(({ offset: _offset, ...r }) => r);

describe('records sent from SQL, read by third-party consumers', () => {
  let sent: Sent[];
  beforeAll(async () => {
    sent = await sendDataset();
  });

  it('kafkajs reads keys, values, headers and timestamps byte for byte', async () => {
    const consumer = kafka.consumer({ groupId: 'compat-sql-send-kafkajs' });
    await consumer.connect();
    await consumer.subscribe({ topic: 'sql-sent', fromBeginning: true });
    const read: Read[] = [];
    const all = new Promise<void>((resolve) => {
      void consumer.run({
        eachMessage: async ({ partition, message }) => {
          const headers = Object.entries(message.headers ?? {}).flatMap(([k, v]) => (Array.isArray(v) ? v : [v]).map((x) => [k, Buffer.from(x as Buffer)] as [string, Buffer]));
          read.push({ partition, offset: message.offset, key: message.key, value: message.value, headers, timestamp: message.timestamp });
          if (read.length === sent.length) resolve();
        },
      });
    });
    await all;
    await consumer.disconnect();
    // kafkajs groups repeated header names into an array after the first occurrence; order within a name is kept.
    const byName = (hs: [string, Buffer][]) => [...hs].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    expect(withoutOffsets(read).map((r) => ({ ...r, headers: byName(r.headers) }))).toEqual(order(sent).map((r) => ({ ...r, headers: byName(r.headers) })));
  });

  it('librdkafka reads keys, values, headers and timestamps byte for byte', async () => {
    const c = new ck.KafkaConsumer({ 'bootstrap.servers': broker.bootstrap, 'group.id': 'compat-unused', 'enable.auto.commit': false, 'enable.partition.eof': true }, {});
    await new Promise<void>((res, rej) => c.connect({ timeout: 10_000 }, (e) => (e ? rej(e) : res())));
    const read: Read[] = [];
    try {
      const eof = new Set<number>();
      c.on('partition.eof', (e: { partition: number }) => eof.add(e.partition));
      c.assign([0, 1, 2].map((partition) => ({ topic: 'sql-sent', partition, offset: 0 })));
      for (let round = 0; round < 100 && eof.size < 3; round++) {
        const msgs = await new Promise<ck.Message[]>((res, rej) => c.consume(100, (e, m) => (e ? rej(e) : res(m))));
        for (const m of msgs) {
          read.push({
            partition: m.partition,
            offset: String(m.offset),
            key: (m.key as Buffer | null | undefined) ?? null,
            value: m.value ?? null,
            headers: (m.headers ?? []).flatMap((h) => Object.entries(h).map(([k, v]) => [k, Buffer.from(v as Buffer)] as [string, Buffer])),
            timestamp: String(m.timestamp),
          });
        }
      }
    } finally {
      await new Promise<void>((res) => c.disconnect(() => res()));
    }
    // librdkafka hands a zero-length value as an empty Buffer and no value as null: both as sent.
    expect(withoutOffsets(read)).toEqual(order(sent));
  });

  it('puts a key on the partition kafkajs and librdkafka (murmur2_random, the Java default) pick', async () => {
    const keys = Array.from({ length: 30 }, (_, i) => `customer-${i}`);
    const fromSql = await inTransaction(app, async (c) => {
      const out: number[] = [];
      for (const key of keys) out.push(await send(c, { topic: 'sql-keys', key, value: 'sql' }, { schema: broker.schema }));
      return out;
    });
    const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
    await producer.connect();
    await producer.send({ topic: 'sql-keys', acks: -1, messages: keys.map((key) => ({ key, value: 'kafkajs' })) });
    await producer.disconnect();
    const rd = new ck.HighLevelProducer({ 'bootstrap.servers': broker.bootstrap, partitioner: 'murmur2_random' });
    await new Promise<void>((res, rej) => rd.connect({}, (e) => (e ? rej(e) : res())));
    for (const key of keys) {
      await new Promise<void>((res, rej) => rd.produce('sql-keys', null, Buffer.from('librdkafka'), key, Date.now(), (err: unknown) => (err ? rej(err as Error) : res())));
    }
    await new Promise<void>((res) => rd.disconnect(() => res()));
    // Where each key's three records landed, read back over the Kafka protocol.
    const client = await RawClient.connect(broker.bootstrap);
    const landed = new Map<string, { partition: number; value: string }[]>();
    try {
      for (let partition = 0; partition < 5; partition++) {
        for (const r of (await fetchRecords(client, 'sql-keys', partition)).records) {
          const key = r.key!.toString();
          landed.set(key, [...(landed.get(key) ?? []), { partition, value: r.value!.toString() }]);
        }
      }
    } finally {
      client.close();
    }
    expect(new Set(fromSql).size).toBeGreaterThan(1);
    keys.forEach((key, i) => {
      // Any order: the relay may append the SQL record after kafkajs's (nothing orders records of different producers).
      expect(landed.get(key)?.sort((a, b) => a.value.localeCompare(b.value))).toEqual([
        { partition: fromSql[i], value: 'kafkajs' },
        { partition: fromSql[i], value: 'librdkafka' },
        { partition: fromSql[i], value: 'sql' },
      ]);
    });
  });
});
