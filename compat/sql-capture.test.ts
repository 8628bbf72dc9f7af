// Capturing table changes (capture() in migrations/0014_sql_read_capture.sql):
// inserts, updates and deletes of an application table reach a topic through
// send() in the transaction that makes them, keyed by the primary key, as
// Debezium's PostgreSQL connector writes them through JsonConverter with
// schemas disabled. A kafkajs consumer reads the key and value bytes exactly
// as Debezium's documented format spells them, and a consumer written for
// Debezium's envelope rebuilds the table from the topic.
import { Kafka, logLevel, type KafkaMessage } from 'kafkajs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../test/support/broker.js';

let broker: TestBroker;
let kafka: Kafka;
let app: pg.Client;

beforeAll(async () => {
  broker = await startTestBroker();
  kafka = new Kafka({ brokers: [broker.bootstrap], clientId: 'compat-sql-capture', logLevel: logLevel.NOTHING, retry: { retries: 5, initialRetryTime: 100 } });
  // The application's own connection: its tables in their own schema, the broker's functions schema-qualified.
  app = new pg.Client({ connectionString: broker.databaseUrl });
  await app.connect();
  await app.query(`CREATE SCHEMA ${broker.schema}_app`);
  await app.query(`SET search_path TO ${broker.schema}_app`);
});
afterAll(async () => {
  await app?.query(`DROP SCHEMA IF EXISTS ${broker.schema}_app CASCADE`);
  await app?.end();
  await broker?.destroy();
});

async function createTopic(topic: string, numPartitions = 3) {
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.createTopics({ topics: [{ topic, numPartitions }] });
  } finally {
    await admin.disconnect();
  }
}

/** Reads `count` records of the topic from the beginning, ordered per partition by offset. */
async function consume(topic: string, count: number): Promise<(KafkaMessage & { partition: number })[]> {
  const consumer = kafka.consumer({ groupId: `capture-${topic}-${Math.random()}`, sessionTimeout: 6000, heartbeatInterval: 500 });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  // By partition and offset: a rebalance of the new group may deliver a record again.
  const seen = new Map<string, KafkaMessage & { partition: number }>();
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`read ${seen.size} of ${count} records of ${topic}`)), 20_000);
    void consumer.run({
      eachMessage: async ({ partition, message }) => {
        seen.set(`${partition}/${message.offset}`, { ...message, partition });
        if (seen.size === count) {
          clearTimeout(timer);
          resolve();
        }
      },
    });
  });
  await consumer.disconnect();
  return [...seen.values()];
}

const s = (b: Buffer | null) => (b === null ? null : b.toString('utf8'));

describe('capture(): Debezium change events through send()', () => {
  it('insert, update, primary key change and delete: key and value bytes as Debezium writes them, one transaction, tombstones', async () => {
    const topic = 'cdc.customers';
    await createTopic(topic);
    await app.query(`CREATE TABLE customers (id int PRIMARY KEY, name text NOT NULL, balance numeric(10,2), score float8, note text, data bytea, born date, seen timestamptz, doc jsonb, tags text[])`);
    await app.query(`SELECT ${broker.schema}.capture('customers', $1)`, [topic]);

    await app.query('BEGIN');
    const { rows } = await app.query<{ txid: string }>(`SELECT (txid_current() % 4294967296)::text AS txid`);
    const txId = rows[0]!.txid;
    await app.query(`INSERT INTO customers VALUES (1, 'Ann "A"', 12.5, 1, NULL, '\\x0102ff', '2024-02-29', '2024-03-01 10:00:00.5+00', '{"b": [1, 2], "a": null}', '{x,y}')`);
    await app.query(`UPDATE customers SET name = 'Ann', balance = -0.01, score = 1e7 WHERE id = 1`);
    await app.query(`UPDATE customers SET id = 2 WHERE id = 1`);
    await app.query(`DELETE FROM customers WHERE id = 2`);
    await app.query('COMMIT');

    // 1 and 2 hash to their partitions by murmur2 of the key bytes, as Kafka Connect's producer sends them.
    const records = await consume(topic, 7);
    const byKey = (k: string) => records.filter((r) => s(r.key) === k).sort((a, b) => Number(a.offset) - Number(b.offset));
    const one = byKey('{"id":1}');
    const two = byKey('{"id":2}');
    expect(one).toHaveLength(4);
    expect(two).toHaveLength(3);

    // Everything that depends on the moment or the WAL is taken from the event; the rest is spelled out as Debezium's documentation and code write it.
    const expected = (value: Buffer | null, before: string, after: string, op: string) => {
      const v = JSON.parse(s(value)!);
      const src = v.source;
      expect(String(src.txId)).toBe(txId);
      expect(src.sequence).toBe(`[null,"${src.lsn}"]`);
      expect(src.ts_us).toBe(src.ts_ms * 1000 + (src.ts_us % 1000));
      return (
        `{"before":${before},"after":${after},"source":{"version":"1.0","connector":"pgkafka","name":"test","ts_ms":${src.ts_ms},"snapshot":"false","db":"test",` +
        `"sequence":${JSON.stringify(src.sequence)},"ts_us":${src.ts_us},"ts_ns":${src.ts_us}000,"schema":"${broker.schema}_app","table":"customers","txId":${txId},` +
        `"lsn":${src.lsn},"xmin":null,"origin":null,"origin_lsn":null},"op":"${op}","ts_ms":${v.ts_ms},"ts_us":${v.ts_us},"ts_ns":${v.ts_us}000,"transaction":null}`
      );
    };
    // numeric(10,2) 12.50 → unscaled 1250 = 0x04e2; -0.01 → -1 = 0xff; bytea base64; date as days since the epoch; timestamptz as ZonedTimestamp; jsonb as a string.
    const rest = `"note":null,"data":"AQL/","born":19782,"seen":"2024-03-01T10:00:00.500000Z","doc":"{\\"a\\": null, \\"b\\": [1, 2]}","tags":["x","y"]}`;
    const v1 = `{"id":1,"name":"Ann \\"A\\"","balance":"BOI=","score":1.0,${rest}`;
    const v2 = `{"id":1,"name":"Ann","balance":"/w==","score":1.0E7,${rest}`;
    const v3 = `{"id":2,"name":"Ann","balance":"/w==","score":1.0E7,${rest}`;
    expect(s(one[0]!.value)).toBe(expected(one[0]!.value, 'null', v1, 'c'));
    expect(s(one[1]!.value)).toBe(expected(one[1]!.value, v1, v2, 'u'));
    expect(s(one[2]!.value)).toBe(expected(one[2]!.value, v2, 'null', 'd'));
    expect(one[2]!.headers).toEqual({ '__debezium.newkey': Buffer.from('{"id":2}') });
    expect(one[3]!.value).toBeNull();
    expect(s(two[0]!.value)).toBe(expected(two[0]!.value, 'null', v3, 'c'));
    expect(two[0]!.headers).toEqual({ '__debezium.oldkey': Buffer.from('{"id":1}') });
    expect(s(two[1]!.value)).toBe(expected(two[1]!.value, v3, 'null', 'd'));
    expect(two[2]!.value).toBeNull();
    // Every event of one key on one partition, in the order of the changes.
    expect(new Set(one.map((r) => r.partition)).size).toBe(1);
  });

  it('a consumer built for Debezium envelopes rebuilds the table; a rollback sends nothing; uncapture stops', async () => {
    const topic = 'cdc.orders';
    await createTopic(topic);
    await app.query(`CREATE TABLE orders (region text, id bigint, amount numeric, status text, PRIMARY KEY (region, id))`);
    await app.query(`SELECT ${broker.schema}.capture('orders', $1, name => 'shop')`, [topic]);
    const { rows: cap } = await app.query(`SELECT source::text, topic, tombstones, name, decimal_handling_mode FROM ${broker.schema}.captures`);
    expect(cap).toContainEqual({ source: 'orders', topic, tombstones: true, name: 'shop', decimal_handling_mode: 'precise' });

    let events = 0;
    for (let i = 0; i < 20; i++) {
      await app.query(`INSERT INTO orders VALUES ($1, $2, $3, 'new')`, [i % 2 ? 'eu' : 'us', i, `${i}.5`]);
      events++;
    }
    await app.query(`UPDATE orders SET status = 'paid', amount = amount * 2 WHERE id % 3 = 0`);
    events += 7;
    await app.query('BEGIN');
    await app.query(`DELETE FROM orders WHERE id >= 10`);
    await app.query('ROLLBACK');
    await app.query(`DELETE FROM orders WHERE id >= 15`);
    events += 5 * 2; // each delete and its tombstone
    expect(await app.query(`SELECT ${broker.schema}.uncapture('orders') AS done`).then((r) => r.rows[0].done)).toBe(true);
    await app.query(`INSERT INTO orders VALUES ('us', 100, 1, 'not captured')`);
    expect(await app.query(`SELECT ${broker.schema}.uncapture('orders') AS done`).then((r) => r.rows[0].done)).toBe(false);

    // What a Debezium sink does: upsert the after image by key, delete on op d, ignore tombstones.
    const table = new Map<string, { region: string; id: number; amount: { scale: number; value: string }; status: string }>();
    const records = await consume(topic, events);
    const ordered = [...records].sort((a, b) => a.partition - b.partition || Number(a.offset) - Number(b.offset));
    for (const r of ordered) {
      const key = JSON.stringify(JSON.parse(s(r.key)!));
      if (r.value === null) continue;
      const env = JSON.parse(s(r.value)!);
      expect(env.source).toMatchObject({ connector: 'pgkafka', name: 'shop', table: 'orders' });
      if (env.op === 'd') table.delete(key);
      else table.set(key, env.after);
    }
    const { rows } = await app.query<{ region: string; id: string; amount: string; status: string }>(
      `SELECT region, id::text, amount::text, status FROM orders WHERE status <> 'not captured' ORDER BY orders.id`,
    );
    const rebuilt = [...table.values()].sort((a, b) => a.id - b.id);
    // amount (numeric without a scale) arrives as io.debezium.data.VariableScaleDecimal: {scale, value: base64 of the unscaled two's complement}.
    const decimal = (d: { scale: number; value: string }) => {
      const bytes = Buffer.from(d.value, 'base64');
      let unscaled = BigInt.asIntN(bytes.length * 8, BigInt(`0x${bytes.toString('hex')}`));
      const neg = unscaled < 0n;
      if (neg) unscaled = -unscaled;
      const digits = unscaled.toString().padStart(d.scale + 1, '0');
      return `${neg ? '-' : ''}${d.scale ? `${digits.slice(0, -d.scale)}.${digits.slice(-d.scale)}` : digits}`;
    };
    expect(rebuilt.map((r) => ({ region: r.region, id: String(r.id), amount: decimal(r.amount), status: r.status }))).toEqual(rows);
    expect(rows).toHaveLength(15);
    // Nothing else reached the topic: not the rolled-back deletes, not the insert after uncapture.
    const [stored] = await broker.query<{ n: number }>(`SELECT count(*)::int AS n FROM partition_offsets o, records(o.topic, o.partition) r WHERE o.topic = $1`, [topic]);
    expect(stored!.n).toBe(events);
    // The key: the primary key's columns in column order.
    expect(s(records.find((r) => r.value !== null && JSON.parse(s(r.value)!).after?.id === 3)!.key)).toBe('{"region":"eu","id":3}');
  });

  it('options: no tombstones, decimals as strings; a table without a primary key has null keys', async () => {
    const topic = 'cdc.options';
    await createTopic(topic, 1);
    await app.query(`CREATE TABLE prices (sku text PRIMARY KEY, price numeric(8,3))`);
    await app.query(`CREATE TABLE audit (at_ms bigint, what text)`);
    await app.query(`SELECT ${broker.schema}.capture('prices', $1, tombstones => false, decimal_handling_mode => 'string')`, [topic]);
    await app.query(`SELECT ${broker.schema}.capture('audit', $1)`, [topic]);
    await app.query(`INSERT INTO prices VALUES ('a', 1.5)`);
    await app.query(`DELETE FROM prices`);
    await app.query(`INSERT INTO audit VALUES (1, 'x')`);
    await app.query(`DELETE FROM audit`);
    const records = await consume(topic, 4);
    expect(records.map((r) => [s(r.key), JSON.parse(s(r.value)!).op])).toEqual([
      ['{"sku":"a"}', 'c'],
      ['{"sku":"a"}', 'd'],
      [null, 'c'],
      [null, 'd'],
    ]);
    expect(JSON.parse(s(records[0]!.value)!).after).toEqual({ sku: 'a', price: '1.500' });
    await expect(app.query(`SELECT ${broker.schema}.capture('prices', 'no-such-topic')`)).rejects.toThrow(/UNKNOWN_TOPIC_OR_PARTITION/);
    await expect(app.query(`SELECT ${broker.schema}.capture('prices', $1, decimal_handling_mode => 'exact')`, [topic])).rejects.toThrow(/decimal_handling_mode/);
  });

  it('snapshot => true: the rows already there as Debezium snapshot events (op r, first/true/last), then the changes', async () => {
    const topic = 'cdc.snapshot';
    await createTopic(topic, 1);
    await app.query(`CREATE TABLE items (id int PRIMARY KEY, label text)`);
    await app.query(`INSERT INTO items VALUES (3, 'c'), (1, 'a'), (2, 'b')`);
    const { rows } = await app.query(`SELECT ${broker.schema}.capture('items', $1, snapshot => true)::int AS sent`, [topic]);
    expect(rows[0].sent).toBe(3);
    await app.query(`INSERT INTO items VALUES (4, 'd')`);
    const events = (await consume(topic, 4)).sort((a, b) => Number(a.offset) - Number(b.offset));
    expect(events.map((r) => [s(r.key), JSON.parse(s(r.value)!).op, JSON.parse(s(r.value)!).source.snapshot, JSON.stringify(JSON.parse(s(r.value)!).after)])).toEqual([
      ['{"id":1}', 'r', 'first', '{"id":1,"label":"a"}'],
      ['{"id":2}', 'r', 'true', '{"id":2,"label":"b"}'],
      ['{"id":3}', 'r', 'last', '{"id":3,"label":"c"}'],
      ['{"id":4}', 'c', 'false', '{"id":4,"label":"d"}'],
    ]);
    expect(s(events[0]!.value)).toMatch(/^\{"before":null,"after":\{"id":1,"label":"a"\},"source":\{"version":"1\.0","connector":"pgkafka","name":"test","ts_ms":\d+,"snapshot":"first","db":"test",/);
  });

  it('two transactions updating the same row: their events in commit order, each before image the previous after image', async () => {
    const topic = 'cdc.accounts';
    await createTopic(topic, 1);
    await app.query(`CREATE TABLE accounts (id int PRIMARY KEY, balance int NOT NULL)`);
    await app.query(`SELECT ${broker.schema}.capture('accounts', $1)`, [topic]);
    await app.query(`INSERT INTO accounts VALUES (1, 100)`);
    const other = new pg.Client({ connectionString: broker.databaseUrl });
    await other.connect();
    try {
      await other.query(`SET search_path TO ${broker.schema}_app`);
      // The later transaction changes the row first but commits second: it waits on the row lock of the first.
      await app.query('BEGIN');
      await other.query('BEGIN');
      await other.query(`UPDATE accounts SET balance = balance + 1 WHERE id = 1`); // 101, commits first
      const blocked = app.query(`UPDATE accounts SET balance = balance * 2 WHERE id = 1`); // 202 once the other commits
      await new Promise((r) => setTimeout(r, 200));
      await other.query('COMMIT');
      await blocked;
      await app.query('COMMIT');
    } finally {
      await other.end();
    }
    const events = (await consume(topic, 3)).sort((a, b) => Number(a.offset) - Number(b.offset)).map((r) => JSON.parse(s(r.value)!));
    expect(events.map((e) => [e.op, e.before?.balance ?? null, e.after.balance])).toEqual([
      ['c', null, 100],
      ['u', 100, 101],
      ['u', 101, 202],
    ]);
  });

  it('doubles as Java writes them (Jackson, float64): the 10^-3..10^7 range in plain notation, the rest in E notation', async () => {
    const cases: [string, string][] = [
      ['1', '1.0'],
      ['-0', '-0.0'],
      ['0.001', '0.001'],
      ['0.0001', '1.0E-4'],
      ['9999999', '9999999.0'],
      ['1e7', '1.0E7'],
      ['123456.789', '123456.789'],
      ['-2.5e-10', '-2.5E-10'],
      ['1.5e300', '1.5E300'],
      ['100', '100.0'],
      ['NaN', 'NaN'],
    ];
    const got = await broker.query<{ v: string }>(`SELECT debezium_float(x::float8::text) AS v FROM unnest($1::text[]) WITH ORDINALITY AS t(x, n) ORDER BY n`, [cases.map((c) => c[0])]);
    expect(got.map((g) => g.v)).toEqual(cases.map((c) => c[1]));
  });
});
