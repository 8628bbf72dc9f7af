// The library API (`import { startBroker } from 'pgkafka'`) as a test suite
// uses it: a broker on an ephemeral embedded PostgreSQL or in a scratch schema
// of an external one, reachable by a stock client, and stop() leaving no
// process, listening port, directory or schema behind.
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigResourceTypes, Kafka, logLevel } from 'kafkajs';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, startBroker, type Broker } from '../../src/index.js';
import { testDatabaseUrl } from '../support/broker.js';

const cacheDir = mkdtempSync(join(tmpdir(), 'pgkafka-initdb-cache-test-'));
// As root, the embedded server runs as "postgres" and must be able to enter the directory.
chmodSync(cacheDir, 0o755);
afterAll(() => rmSync(cacheDir, { recursive: true, force: true }));

/** The PostgreSQL server process listening on `port`, with its data directory, read from /proc. */
function postmasterOn(port: number): { pid: number; dataDir: string } | null {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
    } catch {
      continue; // exited meanwhile
    }
    if (!argv[0]?.endsWith('/postgres')) continue;
    const at = (flag: string) => argv[argv.indexOf(flag) + 1];
    if (argv.includes('-p') && at('-p') === String(port)) return { pid: Number(entry), dataDir: at('-D')! };
  }
  return null;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
}

/** Produces `count` records and reads them back through a consumer group that commits; answers the values read and the group's committed offset. */
async function roundTrip(broker: Broker, topic: string, count: number): Promise<{ values: string[]; committed: string }> {
  const kafka = new Kafka({ clientId: 'library-api', brokers: [broker.bootstrapServers], logLevel: logLevel.NOTHING });
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({ topic, acks: -1, messages: Array.from({ length: count }, (_, i) => ({ value: `v${i}` })) });
  await producer.disconnect();
  const consumer = kafka.consumer({ groupId: `${topic}-group` });
  const values: string[] = [];
  try {
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`read ${values.length} of ${count}`)), 30_000);
      void consumer.run({
        eachMessage: async ({ message }) => {
          values.push(message.value!.toString());
          if (values.length === count) {
            clearTimeout(timer);
            resolve();
          }
        },
      });
    });
  } finally {
    await consumer.disconnect();
  }
  const admin = kafka.admin();
  await admin.connect();
  const [offsets] = await admin.fetchOffsets({ groupId: `${topic}-group`, topics: [topic] });
  await admin.disconnect();
  return { values, committed: offsets!.partitions[0]!.offset };
}

async function schemaExists(schema: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: testDatabaseUrl() });
  await client.connect();
  try {
    return (await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema])).rowCount === 1;
  } finally {
    await client.end();
  }
}

describe('startBroker() with the embedded database', () => {
  it('serves a stock client, and stop() leaves no process, port or directory behind', async () => {
    const broker = await startBroker({ initdbCache: cacheDir });
    expect(broker.database).toBe('embedded');
    expect(broker.bootstrapServers).toBe(`127.0.0.1:${broker.port}`);
    const pgPort = Number(new URL(broker.databaseUrl).port);
    const postmaster = postmasterOn(pgPort);
    expect(postmaster).not.toBeNull();
    expect(postmaster!.dataDir.startsWith(tmpdir())).toBe(true);
    try {
      expect(await roundTrip(broker, 'embedded-topic', 5)).toEqual({ values: ['v0', 'v1', 'v2', 'v3', 'v4'], committed: '5' });
    } finally {
      await broker.stop();
    }
    expect(alive(postmaster!.pid)).toBe(false);
    expect(await refused(broker.port)).toBe(true);
    expect(await refused(pgPort)).toBe(true);
    expect(existsSync(postmaster!.dataDir)).toBe(false);
    // Stopping twice is harmless.
    await broker.stop();
  });

  it('copies later clusters from the initdb template, each its own', async () => {
    expect(existsSync(join(cacheDir, 'cluster', 'PG_VERSION'))).toBe(true);
    const [a, b] = await Promise.all([startBroker({ initdbCache: cacheDir }), startBroker({ initdbCache: cacheDir })]);
    try {
      expect(a.databaseUrl).not.toBe(b.databaseUrl);
      expect(postmasterOn(Number(new URL(a.databaseUrl).port))!.dataDir).not.toBe(postmasterOn(Number(new URL(b.databaseUrl).port))!.dataDir);
      expect((await roundTrip(a, 'copied', 2)).values).toEqual(['v0', 'v1']);
      // What a saw is not in b's database.
      const kafka = new Kafka({ brokers: [b.bootstrapServers], logLevel: logLevel.NOTHING });
      const admin = kafka.admin();
      await admin.connect();
      expect(await admin.listTopics()).not.toContain('copied');
      await admin.disconnect();
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it('without the template, runs initdb itself', async () => {
    const broker = await startBroker({ initdbCache: false });
    try {
      expect((await roundTrip(broker, 'no-cache', 1)).values).toEqual(['v0']);
    } finally {
      await broker.stop();
    }
  });

  it('cleans up after a start that fails once its PostgreSQL runs: a Kafka port already taken', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as { port: number }).port;
    const ours = () => ephemeralPostmasters().join(',');
    const before = ours();
    try {
      await expect(startBroker({ port, initdbCache: cacheDir })).rejects.toThrow(/EADDRINUSE/);
    } finally {
      taken.close();
    }
    expect(ours()).toBe(before);
    expect(readdirSync(tmpdir()).filter((e) => e.startsWith('pgkafka-broker-') && !before.includes(e))).toEqual([]);
  });
});

/** The PostgreSQL servers running on a data directory the library API made (pgkafka-broker-*), by directory. */
function ephemeralPostmasters(): string[] {
  const found: string[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    const dir = argv[argv.indexOf('-D') + 1];
    if (argv[0]?.endsWith('/postgres') && argv.includes('-D') && dir?.includes('pgkafka-broker-')) found.push(dir);
  }
  return found.sort();
}

describe('startBroker() with an external database', () => {
  it('stores into a fresh schema, dropped on stop', async () => {
    const broker = await startBroker({ databaseUrl: testDatabaseUrl() });
    expect(broker.database).toBe('external');
    expect(broker.schema).toMatch(/^pgkafka_[0-9a-f]{12}$/);
    try {
      expect(await schemaExists(broker.schema)).toBe(true);
      expect(await roundTrip(broker, 'external-topic', 3)).toEqual({ values: ['v0', 'v1', 'v2'], committed: '3' });
    } finally {
      await broker.stop();
    }
    expect(await schemaExists(broker.schema)).toBe(false);
    expect(await refused(broker.port)).toBe(true);
  });

  it('keeps a schema the caller named', async () => {
    const schema = `library_kept_${Date.now().toString(36)}`;
    const broker = await startBroker({ databaseUrl: testDatabaseUrl(), schema });
    await broker.stop();
    try {
      expect(await schemaExists(schema)).toBe(true);
    } finally {
      const client = new pg.Client({ connectionString: testDatabaseUrl() });
      await client.connect();
      await client.query(`DROP SCHEMA ${schema} CASCADE`);
      await client.end();
    }
  });

  it('applies the test defaults and any option of the configuration schema', async () => {
    const broker = await startBroker({ databaseUrl: testDatabaseUrl(), numPartitions: 3, groupMinSessionTimeoutMs: 250 });
    const kafka = new Kafka({ brokers: [broker.bootstrapServers], logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    try {
      await admin.connect();
      const described = await admin.describeConfigs({
        includeSynonyms: false,
        resources: [{ type: ConfigResourceTypes.BROKER, name: '1', configNames: ['group.initial.rebalance.delay.ms', 'group.min.session.timeout.ms', 'num.partitions'] }],
      });
      const configs = Object.fromEntries(described.resources[0]!.configEntries.map((e) => [e.configName, e.configValue]));
      expect(configs).toEqual({ 'group.initial.rebalance.delay.ms': '0', 'group.min.session.timeout.ms': '250', 'num.partitions': '3' });
    } finally {
      await admin.disconnect();
      await broker.stop();
    }
  });

  it('refuses a bad option with ConfigError before making anything', async () => {
    const before = readdirSync(tmpdir()).filter((e) => e.startsWith('pgkafka-broker-'));
    await expect(startBroker({ port: 70000 })).rejects.toThrow(ConfigError);
    await expect(startBroker({ port: 70000 })).rejects.toThrow(/option port/);
    expect(readdirSync(tmpdir()).filter((e) => e.startsWith('pgkafka-broker-') && !before.includes(e))).toEqual([]);
  });
});
