// Records sent from SQL across a broker killed with SIGKILL: committed while
// no broker runs (their NOTIFY heard by nobody), and committed while the
// relay is appending when the broker dies. A restarted broker delivers each
// committed record exactly once, each key's in commit order.
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/protocol/errors.js';
import { CreateTopicsApi } from '../../src/protocol/messages/index.js';
import { scratchSchema, testDatabaseUrl } from '../support/broker.js';
import { freePort, spawnBroker, type BrokerProcess } from '../support/broker-process.js';
import { leadersOf, until } from '../support/cluster.js';
import { RawClient } from '../support/raw-client.js';
import { fetchRecords, inTransaction } from '../support/sql-send.js';
import { sleep } from '../support/wait.js';

const schema = scratchSchema();
const app = new pg.Pool({ connectionString: testDatabaseUrl(), max: 6 });
afterAll(() => app.end());

const PARTITIONS = 3;

async function kill(broker: BrokerProcess): Promise<void> {
  broker.child.kill('SIGKILL');
  await broker.exited;
}

/** Sends `value` keyed by `key` in a transaction of its own; resolves with the partition once committed. */
const sendOne = (key: string, value: string) =>
  inTransaction(app, (c) => c.query<{ partition: number }>(`SELECT ${schema}.send($1::text, $2::text, $3::text) AS partition`, [`outbox-crash`, key, value]).then((r) => r.rows[0]!.partition));

/** Every record of every partition, as `key=value` per partition in offset order. */
async function readAll(port: number, expected: number, deadline = Date.now() + 30_000): Promise<string[][]> {
  const client = await RawClient.connect(`127.0.0.1:${port}`);
  try {
    const out: string[][] = [];
    let total = 0;
    for (let p = 0; p < PARTITIONS; p++) {
      const records: string[] = [];
      for (let from = 0n; ;) {
        const fetched = await fetchRecords(client, 'outbox-crash', p, from);
        if (fetched.records.length === 0) break;
        records.push(...fetched.records.map((r) => `${r.key!.toString()}=${r.value!.toString()}`));
        from = fetched.records[fetched.records.length - 1]!.offset + 1n;
      }
      out.push(records);
      total += records.length;
    }
    if (total >= expected || Date.now() > deadline) return out;
    // Not all there yet: wait for the rest.
    await sleep(200);
    return readAll(port, expected, deadline);
  } finally {
    client.close();
  }
}

describe('producing from SQL across a broker SIGKILL', () => {
  it('delivers every committed record exactly once, in commit order per key, after a restart', async () => {
    const port = await freePort();
    const env = { DATABASE_URL: testDatabaseUrl(), PGKAFKA_SCHEMA: schema, PGKAFKA_PORT: String(port) };
    let broker = await spawnBroker(env);
    const admin = await RawClient.connect(`127.0.0.1:${port}`);
    const created = await admin.request(CreateTopicsApi, 7, { topics: [{ name: 'outbox-crash', numPartitions: PARTITIONS, replicationFactor: 1 }], timeoutMs: 1000 });
    admin.close();
    expect(created.topics[0]!.errorCode).toBe(ErrorCode.NONE);

    /** Committed values per key, in commit order (each key has one writer, so its commits are sequential). */
    const committed = new Map<string, string[]>();
    const record = (key: string, value: string) => committed.set(key, [...(committed.get(key) ?? []), value]);

    // 1. Committed while no broker runs: the NOTIFYs go unheard.
    await kill(broker);
    for (let i = 0; i < 30; i++) {
      await sendOne(`down-${i % 3}`, `v${i}`);
      record(`down-${i % 3}`, `v${i}`);
    }
    broker = await spawnBroker(env);

    // 2. Three rounds of writers committing while the broker is killed in the middle of relaying them.
    for (let round = 0; round < 3; round++) {
      let writing = true;
      const writer = async (w: number) => {
        for (let i = 0; writing; i++) {
          const key = `r${round}-w${w}`;
          await sendOne(key, `v${i}`);
          record(key, `v${i}`);
        }
      };
      const writers = [0, 1, 2, 3].map(writer);
      await sleep(300 + Math.random() * 300);
      await kill(broker);
      await sleep(100);
      broker = await spawnBroker(env);
      await sleep(200);
      writing = false;
      await Promise.all(writers);
    }

    try {
      const expected = [...committed.values()].reduce((n, v) => n + v.length, 0);
      expect(expected).toBeGreaterThan(30);
      const partitions = await readAll(port, expected);
      const delivered = partitions.flat();
      // Exactly once: as many records as commits, none twice.
      expect(delivered.length).toBe(expected);
      expect(new Set(delivered).size).toBe(expected);
      // Per key, in commit order.
      for (const [key, values] of committed) {
        const seen = partitions.find((p) => p.some((r) => r.startsWith(`${key}=`)))!;
        expect(seen.filter((r) => r.startsWith(`${key}=`)).map((r) => r.slice(key.length + 1))).toEqual(values);
      }
      const { rows } = await app.query<{ n: string }>(`SELECT (SELECT count(*) FROM ${schema}.outbox) + (SELECT count(*) FROM ${schema}.outbox_commits) AS n`);
      expect(rows[0]!.n).toBe('0');
    } finally {
      await kill(broker);
    }
  }, 180_000);
});

describe('producing from SQL with two brokers on one schema', () => {
  it('has each committed record appended once, in commit order per key, though both brokers relay', async () => {
    const shared = scratchSchema();
    const ports = [await freePort(), await freePort()];
    const brokers = await Promise.all(ports.map((port, i) => spawnBroker({ DATABASE_URL: testDatabaseUrl(), PGKAFKA_SCHEMA: shared, PGKAFKA_PORT: String(port), PGKAFKA_NODE_ID: String(i + 1) })));
    try {
      const admin = await RawClient.connect(`127.0.0.1:${ports[0]}`);
      const created = await admin.request(CreateTopicsApi, 7, { topics: [{ name: 'two-relays', numPartitions: 2, replicationFactor: 1 }], timeoutMs: 1000 });
      admin.close();
      expect(created.topics[0]!.errorCode).toBe(ErrorCode.NONE);
      const committed = new Map<string, string[]>();
      await Promise.all(
        [0, 1, 2, 3].map(async (w) => {
          for (let i = 0; i < 40; i++) {
            const key = `w${w}`;
            await inTransaction(app, (c) => c.query(`SELECT ${shared}.send('two-relays', $1::text, $2::text)`, [key, `v${i}`]));
            committed.set(key, [...(committed.get(key) ?? []), `v${i}`]);
          }
        }),
      );
      // Each partition read through its leader: what it serves includes the other broker's relayed appends.
      let leaders: { leader: number }[] = [];
      await until('both partitions have a leader', async () => (leaders = await leadersOf(`127.0.0.1:${ports[0]}`, 'two-relays')).every((l) => l.leader > 0));
      const clients = await Promise.all(ports.map((port) => RawClient.connect(`127.0.0.1:${port}`)));
      const byKey = new Map<string, string[]>();
      try {
        const deadline = Date.now() + 30_000;
        let total = 0;
        while (total < 160 && Date.now() < deadline) {
          byKey.clear();
          total = 0;
          for (let p = 0; p < 2; p++) {
            for (let from = 0n; ;) {
              const { records } = await fetchRecords(clients[leaders[p]!.leader - 1]!, 'two-relays', p, from);
              if (records.length === 0) break;
              for (const r of records) byKey.set(r.key!.toString(), [...(byKey.get(r.key!.toString()) ?? []), r.value!.toString()]);
              total += records.length;
              from = records[records.length - 1]!.offset + 1n;
            }
          }
          if (total < 160) await sleep(200);
        }
      } finally {
        for (const c of clients) c.close();
      }
      expect(Object.fromEntries(byKey)).toEqual(Object.fromEntries(committed));
      const { rows } = await app.query<{ n: string }>(`SELECT (SELECT count(*) FROM ${shared}.outbox) + (SELECT count(*) FROM ${shared}.outbox_commits) AS n`);
      expect(rows[0]!.n).toBe('0');
    } finally {
      await Promise.all(brokers.map(kill));
    }
  }, 120_000);
});
