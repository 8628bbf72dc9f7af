// Starts a real broker on a free port, storing into its own fresh schema of
// the tests' PostgreSQL, so test files never see each other's topics.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, inject } from 'vitest';
import { startBroker, type RunningBroker } from '../../src/broker.js';
import { loadConfig, type OptionName } from '../../src/config/schema.js';
import { createLogger } from '../../src/observability/logger.js';

export interface TestBroker extends RunningBroker {
  bootstrap: string;
  databaseUrl: string;
  schema: string;
  /** Runs SQL against the broker's schema (for assertions on what is stored). */
  query<T extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params?: unknown[]): Promise<T[]>;
  /** Stops the broker and drops its schema. */
  destroy(): Promise<void>;
}

export function testDatabaseUrl(): string {
  return inject('databaseUrl');
}

/**
 * A fresh schema name for brokers that a test file starts itself (as child
 * processes); the schema is dropped after the file's tests.
 */
export function scratchSchema(): string {
  const schema = `test_${randomBytes(6).toString('hex')}`;
  afterAll(async () => {
    const client = new pg.Client({ connectionString: testDatabaseUrl() });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await client.end();
  });
  return schema;
}

export async function startTestBroker(overrides: Partial<Record<OptionName, unknown>> = {}): Promise<TestBroker> {
  const databaseUrl = testDatabaseUrl();
  const schema = (overrides.schema as string | undefined) ?? `test_${randomBytes(6).toString('hex')}`;
  const config = loadConfig(
    {},
    {
      databaseUrl,
      schema,
      port: 0,
      host: '127.0.0.1',
      advertisedHost: '127.0.0.1',
      metricsPort: 0,
      metricsHost: '127.0.0.1',
      groupInitialRebalanceDelayMs: 100,
      logLevel: process.env.PGKAFKA_TEST_LOG_LEVEL ?? 'warn',
      ...overrides,
    },
  );
  const running = await startBroker(config, createLogger(config.logLevel, process.stderr));
  const admin = new pg.Pool({ connectionString: databaseUrl, max: 2, options: `-c search_path=${schema}` });
  return {
    ...running,
    bootstrap: `127.0.0.1:${running.port}`,
    databaseUrl,
    schema,
    async query(sql, params) {
      return (await admin.query(sql, params as unknown[])).rows;
    },
    async destroy() {
      await running.stop();
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.end();
    },
  };
}
