// Producing from SQL (docs/sql.md): send() inside the application's own
// transaction, on its own connection, and what consumers then read over the
// Kafka protocol.
import { randomBytes } from 'node:crypto';
import { Partitioners } from 'kafkajs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/protocol/errors.js';
import { CreateAclsApi, CreateTopicsApi, ProduceApi } from '../../src/protocol/messages/index.js';
import { buildBatch } from '../../src/protocol/records/index.js';
import { send } from '../../src/sql/send.js';
import { startTestBroker, type TestBroker } from '../support/broker.js';
import { RawClient } from '../support/raw-client.js';
import { awaitRecords, fetchRecords, inTransaction } from '../support/sql-send.js';
import { sleep } from '../support/wait.js';

let broker: TestBroker;
let client: RawClient;
/** The application's connections. */
let app: pg.Pool;

beforeAll(async () => {
  broker = await startTestBroker({ autoCreateTopicsEnable: false, authorizerEnabled: true, superUsers: 'User:ANONYMOUS' });
  client = await RawClient.connect(broker.bootstrap);
  app = new pg.Pool({ connectionString: broker.databaseUrl, max: 8 });
});
afterAll(async () => {
  client?.close();
  await app?.end();
  await broker?.destroy();
});

async function createTopic(name: string, numPartitions = 1, configs: { name: string; value: string }[] = []) {
  const res = await client.request(CreateTopicsApi, 7, { topics: [{ name, numPartitions, replicationFactor: 1, configs }], timeoutMs: 1000 });
  expect(res.topics[0]!.errorCode).toBe(ErrorCode.NONE);
}

const sqlSend = (c: pg.ClientBase, topic: string, key: string | null, value: string, partition: number | null = null) =>
  c.query<{ partition: number }>(`SELECT ${broker.schema}.send($1::text, $2::text, $3::text, NULL, $4::int4) AS partition`, [topic, key, value, partition]).then((r) => r.rows[0]!.partition);

const text = (b: Buffer | null) => b?.toString() ?? null;

async function outboxEmpty(): Promise<boolean> {
  const [row] = await broker.query<{ n: string }>('SELECT (SELECT count(*) FROM outbox) + (SELECT count(*) FROM outbox_commits) AS n');
  return row!.n === '0';
}

describe('producing from SQL', () => {
  it('delivers a record when its transaction commits, never before, once; a rolled-back one never', async () => {
    await createTopic('commit-only');
    const open = await app.connect();
    try {
      await open.query('BEGIN');
      await sqlSend(open, 'commit-only', 'k', 'committed');
      await inTransaction(app, async (c) => {
        await sqlSend(c, 'commit-only', 'k', 'rolled back');
        throw new Error('roll back');
      }).catch((err: Error) => expect(err.message).toBe('roll back'));
      // A long poll parked across the open transaction wakes for nothing.
      const before = await fetchRecords(client, 'commit-only', 0, 0n, 500);
      expect(before.records).toEqual([]);
      expect(before.highWatermark).toBe(0n);
      await open.query('COMMIT');
    } finally {
      await open.query('ROLLBACK').catch(() => {}); // after a failure: no open transaction back into the pool
      open.release();
    }
    const records = await awaitRecords(client, 'commit-only', 0, 1);
    expect(records.map((r) => text(r.value))).toEqual(['committed']);
    // Nothing more comes (no second copy, nothing of the rolled-back one), and the outbox is empty.
    const after = await fetchRecords(client, 'commit-only', 0, 1n, 1000);
    expect(after.records).toEqual([]);
    expect(after.highWatermark).toBe(1n);
    expect(await outboxEmpty()).toBe(true);
  });

  it('wakes a parked long poll at the commit rather than at max_wait_ms', async () => {
    await createTopic('wake');
    const started = Date.now();
    const parked = fetchRecords(client, 'wake', 0, 0n, 30_000);
    await sleep(200);
    await inTransaction(app, (c) => sqlSend(c, 'wake', 'k', 'now'));
    const { records } = await parked;
    expect(records.map((r) => text(r.value))).toEqual(['now']);
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it('wakes a parked long poll at each commit, whether the relay is polling the outbox or has stopped (sends a moment apart and after a pause)', async () => {
    await createTopic('wake-again');
    for (let i = 0; i < 6; i++) {
      const started = Date.now();
      const parked = fetchRecords(client, 'wake-again', 0, BigInt(i), 30_000);
      // 400 ms: the relay has stopped polling and the transaction must NOTIFY; 20 ms: it still polls.
      await sleep(i % 2 === 0 ? 400 : 20);
      await inTransaction(app, (c) => sqlSend(c, 'wake-again', 'k', `v${i}`));
      const { records } = await parked;
      expect(records.map((r) => text(r.value))).toEqual([`v${i}`]);
      expect(Date.now() - started).toBeLessThan(5_000); // not by the relay's 10 s sweep
    }
  });

  it('picks the partition kafkajs and the Java client pick for a key; the one given; one per transaction without a key', async () => {
    await createTopic('routed', 6);
    const partitioner = Partitioners.DefaultPartitioner();
    const partitionMetadata = Array.from({ length: 6 }, (_, partitionId) => ({ partitionId, leader: 1, replicas: [1], isr: [1], partitionErrorCode: 0 }));
    const keys = Array.from({ length: 40 }, (_, i) => `customer-${i}-${randomBytes(3).toString('hex')}`);
    const picked = await inTransaction(app, async (c) => {
      const out: number[] = [];
      for (const key of keys) out.push(await sqlSend(c, 'routed', key, 'v'));
      return out;
    });
    expect(picked).toEqual(keys.map((key) => partitioner({ topic: 'routed', partitionMetadata, message: { key, value: 'v' } })));
    expect(new Set(picked).size).toBeGreaterThan(1);
    expect(await inTransaction(app, (c) => sqlSend(c, 'routed', keys[0]!, 'v', 5))).toBe(5);
    // Keyless: one partition for the whole transaction; transactions spread.
    const perTxn: number[][] = [];
    for (let t = 0; t < 12; t++)
      perTxn.push(await inTransaction(app, async (c) => [await sqlSend(c, 'routed', null, 'a'), await sqlSend(c, 'routed', null, 'b'), await sqlSend(c, 'routed', null, 'c')]));
    for (const ps of perTxn) expect(new Set(ps).size).toBe(1);
    expect(new Set(perTxn.map((ps) => ps[0])).size).toBeGreaterThan(1);
    // Each record is where send() said.
    const counts = new Map<number, number>();
    for (const p of [...picked, 5, ...perTxn.flat()]) counts.set(p, (counts.get(p) ?? 0) + 1);
    for (const [p, n] of counts) expect((await awaitRecords(client, 'routed', p, n)).length).toBe(n);
  });

  it('refuses an unknown topic or partition, and a record without key on a compacted topic', async () => {
    await createTopic('compacted', 1, [{ name: 'cleanup.policy', value: 'compact' }]);
    const code = (p: Promise<unknown>) =>
      p.then(
        () => 'sent',
        (err: { code?: string; message: string }) => `${err.code}: ${err.message.split(':')[0]}`,
      );
    expect(await code(inTransaction(app, (c) => sqlSend(c, 'no-such-topic', 'k', 'v')))).toBe('42704: UNKNOWN_TOPIC_OR_PARTITION');
    expect(await code(inTransaction(app, (c) => sqlSend(c, 'compacted', 'k', 'v', 1)))).toBe('42704: UNKNOWN_TOPIC_OR_PARTITION');
    expect(await code(inTransaction(app, (c) => sqlSend(c, 'compacted', null, 'v')))).toBe('22004: INVALID_RECORD');
    expect(await code(inTransaction(app, (c) => sqlSend(c, 'compacted', 'k', 'v')))).toBe('sent');
  });

  it('keeps keys, values, headers and the send call time byte for byte (bytea, text and jsonb forms, and the Node.js API)', async () => {
    await createTopic('exact');
    const binary = Buffer.from([0, 255, 1, 254, 0]);
    const before = BigInt(Date.now());
    await inTransaction(app, async (c) => {
      await send(
        c,
        {
          topic: 'exact',
          key: binary,
          value: null,
          headers: [
            ['bin', binary],
            ['dup', 'one'],
            ['dup', null],
            ['dup', 'two'],
          ],
          partition: 0,
        },
        { schema: broker.schema },
      );
      await c.query(`SELECT ${broker.schema}.send('exact', 'text key', 'text värde', '{"h": "x", "n": null, "num": 7}', 0)`);
      await c.query(`SELECT ${broker.schema}.send('exact', 'json key', '{"order": 42, "items": ["a"]}'::jsonb, '[["b", "2"], ["a", "1"]]', 0)`);
      await c.query(`SELECT ${broker.schema}.send('exact', NULL::bytea, ''::bytea, NULL, 0)`);
      await send(c, { topic: 'exact', key: 'kafkajs-style', value: 'v', headers: { a: 'x', skipped: undefined, b: Buffer.from('y') }, partition: 0 }, { schema: broker.schema });
    });
    const after = BigInt(Date.now());
    const records = await awaitRecords(client, 'exact', 0, 5);
    expect(records.map((r) => r.offset)).toEqual([0n, 1n, 2n, 3n, 4n]);
    expect(records[0]!.key).toEqual(binary);
    expect(records[0]!.value).toBeNull();
    expect(records[0]!.headers).toEqual([
      { key: 'bin', value: binary },
      { key: 'dup', value: Buffer.from('one') },
      { key: 'dup', value: null },
      { key: 'dup', value: Buffer.from('two') },
    ]);
    expect([text(records[1]!.key), text(records[1]!.value)]).toEqual(['text key', 'text värde']);
    // A JSON object's names come in jsonb's order; other JSON values are their text.
    expect(records[1]!.headers).toEqual([
      { key: 'h', value: Buffer.from('x') },
      { key: 'n', value: null },
      { key: 'num', value: Buffer.from('7') },
    ]);
    expect(JSON.parse(text(records[2]!.value)!)).toEqual({ order: 42, items: ['a'] });
    expect(records[2]!.headers.map((h) => [h.key, text(h.value)])).toEqual([
      ['b', '2'],
      ['a', '1'],
    ]);
    expect(records[3]!.key).toBeNull();
    expect(records[3]!.value).toEqual(Buffer.alloc(0));
    expect(records[4]!.headers.map((h) => [h.key, text(h.value)])).toEqual([
      ['a', 'x'],
      ['b', 'y'],
    ]);
    for (const r of records) {
      expect(r.timestampType).toBe(0);
      expect(r.timestamp).toBeGreaterThanOrEqual(before);
      expect(r.timestamp).toBeLessThanOrEqual(after);
    }
    // In call order within the transaction: the send calls' clocks do not go back.
    expect([...records.map((r) => r.timestamp)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))).toEqual(records.map((r) => r.timestamp));
  });

  it('orders the records of a key by the commit of their transactions, not by when send() was called', async () => {
    await createTopic('commit-order');
    await broker.query('CREATE TABLE accounts (id int PRIMARY KEY, balance int NOT NULL)');
    await broker.query('INSERT INTO accounts VALUES (1, 0)');
    const early = await app.connect();
    try {
      // A sends first but commits last; B sends and commits in between.
      await early.query('BEGIN');
      await sqlSend(early, 'commit-order', 'account-1', 'A: first send');
      await inTransaction(app, async (c) => {
        await c.query(`UPDATE ${broker.schema}.accounts SET balance = balance + 1 WHERE id = 1`);
        await sqlSend(c, 'commit-order', 'account-1', 'B');
      });
      await early.query(`UPDATE ${broker.schema}.accounts SET balance = balance + 1 WHERE id = 1`);
      await sqlSend(early, 'commit-order', 'account-1', 'A: second send');
      await early.query('COMMIT');
    } finally {
      await early.query('ROLLBACK').catch(() => {}); // after a failure: no open transaction back into the pool
      early.release();
    }
    expect((await awaitRecords(client, 'commit-order', 0, 3)).map((r) => text(r.value))).toEqual(['B', 'A: first send', 'A: second send']);

    // Two connections updating the same row: each record carries the balance its transaction wrote, so commit order is balance order.
    const writer = async () => {
      for (let i = 0; i < 25; i++) {
        await inTransaction(app, async (c) => {
          const { rows } = await c.query<{ balance: number }>(`UPDATE ${broker.schema}.accounts SET balance = balance + 1 WHERE id = 1 RETURNING balance`);
          await sleep(Math.random() * 4);
          await sqlSend(c, 'commit-order', 'account-1', String(rows[0]!.balance));
          await sleep(Math.random() * 4);
        });
      }
    };
    await Promise.all([writer(), writer()]);
    const records = await awaitRecords(client, 'commit-order', 0, 50, 20_000, 3n);
    expect(records.map((r) => Number(text(r.value)))).toEqual(Array.from({ length: 50 }, (_, i) => i + 3));
  });

  it('does not hold the partition while a sending transaction stays open: producers and other sending transactions go ahead', async () => {
    // Why this needs no 30 s wait: send() takes no lock a producer or another sender needs (the outbox row
    // is the transaction's own; the partition's ordering lock is taken by the deferred trigger at COMMIT).
    // So nothing an open transaction holds grows with its length. The transaction stays open here across 20
    // acknowledged produces and another sender's whole commit and delivery. Latency figures with a 30 s open
    // transaction are in the benchmark (bench/sql-send.ts).
    await createTopic('long-txn');
    const long = await app.connect();
    try {
      await long.query('BEGIN');
      await sqlSend(long, 'long-txn', 'k', 'long transaction', 0);
      // Kafka producers append and are acknowledged while it is open.
      for (let i = 0; i < 20; i++) {
        const batch = buildBatch({ records: [{ key: Buffer.from('p'), value: Buffer.from(`produced ${i}`) }] });
        const res = await client.request(ProduceApi, 9, { acks: -1, timeoutMs: 5000, transactionalId: null, topicData: [{ name: 'long-txn', partitionData: [{ index: 0, records: batch }] }] });
        expect(res.responses[0]!.partitionResponses[0]!.errorCode).toBe(0);
      }
      // Another sending transaction on the same partition commits and is delivered.
      await inTransaction(app, (c) => sqlSend(c, 'long-txn', 'k', 'short transaction', 0));
      const meanwhile = await awaitRecords(client, 'long-txn', 0, 21);
      expect(meanwhile.map((r) => text(r.value))).toEqual([...Array.from({ length: 20 }, (_, i) => `produced ${i}`), 'short transaction']);
      await long.query('COMMIT');
    } finally {
      await long.query('ROLLBACK').catch(() => {}); // after a failure: no open transaction back into the pool
      long.release();
    }
    const all = await awaitRecords(client, 'long-txn', 0, 22);
    expect(text(all[21]!.value)).toBe('long transaction');
  });

  it('lets a PostgreSQL role send only to topics its Kafka ACLs allow it to write (User:<role>)', async () => {
    await createTopic('acl-orders');
    await createTopic('acl-secret');
    const role = `sqlsend_${randomBytes(4).toString('hex')}`;
    await broker.query(`CREATE ROLE ${role} NOLOGIN`);
    await broker.query(`GRANT USAGE ON SCHEMA ${broker.schema} TO ${role}; GRANT INSERT ON ${broker.schema}.outbox TO ${role}`);
    const asRole = (topic: string) =>
      inTransaction(app, async (c) => {
        await c.query(`SET LOCAL ROLE ${role}`);
        return sqlSend(c, topic, 'k', 'v');
      }).then(
        () => 'sent',
        (err: { code?: string }) => `refused ${err.code}`,
      );
    const acl = async (resourceName: string, resourcePatternType: number, permissionType: number) => {
      const res = await client.request(CreateAclsApi, 3, {
        creations: [{ resourceType: 2, resourceName, resourcePatternType, principal: `User:${role}`, host: '*', operation: 4, permissionType }],
      });
      expect(res.results[0]!.errorCode).toBe(0);
    };
    try {
      expect(await asRole('acl-orders')).toBe('refused 42501');
      await acl('acl-', 4, 3); // ALLOW WRITE on the prefix acl-
      expect(await asRole('acl-orders')).toBe('sent');
      expect(await asRole('acl-secret')).toBe('sent');
      await acl('acl-secret', 3, 2); // DENY WRITE on acl-secret wins
      expect(await asRole('acl-secret')).toBe('refused 42501');
      expect(await asRole('acl-orders')).toBe('sent');
      expect((await awaitRecords(client, 'acl-orders', 0, 2)).length).toBe(2);
      expect((await awaitRecords(client, 'acl-secret', 0, 1)).length).toBe(1);
    } finally {
      await broker.query(`DROP OWNED BY ${role}; DROP ROLE ${role}`);
    }
  });

  it('delivers 10,000 records of one transaction in call order', async () => {
    await createTopic('bulk');
    await inTransaction(app, (c) => c.query(`SELECT ${broker.schema}.send('bulk', NULL::text, 'record ' || i, NULL, 0) FROM generate_series(0, 9999) AS i ORDER BY i`));
    const records = await awaitRecords(client, 'bulk', 0, 10_000, 30_000);
    expect(records.length).toBe(10_000);
    expect(records.every((r, i) => text(r.value) === `record ${i}` && r.offset === BigInt(i))).toBe(true);
    expect(await outboxEmpty()).toBe(true);
  });
});
