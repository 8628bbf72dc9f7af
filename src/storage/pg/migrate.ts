import { fileURLToPath } from 'node:url';
import { runner } from 'node-pg-migrate';
import type { Logger } from '../../observability/logger.js';
import { oneOffClient } from './pool.js';

const migrationsDir = fileURLToPath(new URL('../../../migrations', import.meta.url));

/**
 * Applies the numbered SQL migrations in migrations/ that this database has
 * not seen, all in one transaction. Concurrent brokers wait on
 * node-pg-migrate's advisory lock, so exactly one applies each migration.
 */
export async function migrate(connectionString: string, schema: string, log: Logger): Promise<void> {
  const client = oneOffClient({ connectionString });
  await client.connect();
  try {
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`).catch((err: { code?: string }) => {
      // Another broker creating the schema at the same moment is harmless.
      if (err.code !== '23505' && err.code !== '42P06') throw err;
    });
    const applied = await runner({
      dbClient: client,
      dir: migrationsDir,
      direction: 'up',
      migrationsTable: 'schema_migrations',
      schema,
      checkOrder: true,
      singleTransaction: true,
      advisoryLockMode: 'wait',
      log: () => {},
    });
    if (applied.length > 0) log.info({ migrations: applied.map((m) => m.name), schema }, 'applied migrations');
  } finally {
    await client.end();
  }
}
