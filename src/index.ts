// The package's library API, for test suites: `import { startBroker } from
// 'pgkafka'` starts a broker in this process on a free port, over a database
// of its own, and stop() takes down everything it made. (src/index.cts is the
// CommonJS entry; docs/testing-with-pgkafka.md the user's guide.)
import { mkdtempSync, chmodSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { startBroker as startComposedBroker } from './broker.js';
import { loadConfig, type Config, type OptionName } from './config/schema.js';
import { createLogger } from './observability/logger.js';
import { embeddedClusterDir } from './storage/pg/database.js';
import { defaultInitdbCacheDir, dropSchema, prepareEmbeddedCluster, stopStrayPostmaster } from './storage/pg/ephemeral.js';

export { ConfigError } from './config/schema.js';
export type { Config, OptionName } from './config/schema.js';

export interface StartBrokerOptions extends Partial<Config> {
  /**
   * The initdb template that ephemeral embedded databases are copied from:
   * `true` (the default) keeps it in the OS temp directory, a string names
   * another directory, `false` runs initdb for every broker. Only used without
   * `databaseUrl` and `dataDir`.
   */
  initdbCache?: boolean | string;
}

export interface Broker {
  /** `host:port` for the clients' `bootstrap.servers` / `brokers`. */
  bootstrapServers: string;
  /** The advertised host and port (the port the broker listens on unless `advertisedPort` says otherwise). */
  host: string;
  port: number;
  /** The PostgreSQL the broker stores into (the embedded one's while it runs), and its schema. */
  databaseUrl: string;
  schema: string;
  database: 'embedded' | 'external';
  /** Stops the broker and removes what startBroker made: the embedded database and its directory, or the scratch schema. */
  stop(): Promise<void>;
}

/**
 * Settings that make a broker quick to use from tests without changing what
 * any client observes: Kafka's own integration tests set the same (no initial
 * rebalance delay, small session timeouts allowed).
 */
const TEST_DEFAULTS: Partial<Record<OptionName, unknown>> = {
  host: '127.0.0.1',
  port: 0,
  advertisedHost: '127.0.0.1',
  metricsEnabled: false,
  metricsHost: '127.0.0.1',
  metricsPort: 0,
  groupInitialRebalanceDelayMs: 0,
  groupMinSessionTimeoutMs: 100,
  shutdownTimeoutMs: 2000,
  logLevel: 'warn',
};

/**
 * Starts a broker in this process. Environment variables and PGKAFKA_CONFIG
 * are not read: a test suite's DATABASE_URL is usually its application's.
 * Without `databaseUrl`, an embedded PostgreSQL in a temporary directory on a
 * free port; with it, a fresh schema there unless `schema` names one (a
 * schema named by the caller is kept, a generated one dropped on stop).
 */
export async function startBroker(options: StartBrokerOptions = {}): Promise<Broker> {
  const { initdbCache = true, ...overrides } = options;
  const cleanups: (() => Promise<void> | void)[] = [];
  /** Undoes what was made, last first; every step runs, and the first failure is thrown after the last. */
  const cleanUp = async () => {
    let failure: Error | null = null;
    for (const step of cleanups.splice(0).reverse()) {
      try {
        await step();
      } catch (err) {
        failure ??= err instanceof Error ? err : new Error(String(err));
      }
    }
    if (failure !== null) throw failure;
  };
  const settings: Partial<Record<OptionName, unknown>> = { ...TEST_DEFAULTS, ...withoutUndefined(overrides) };
  // A bad option is refused before anything is made.
  loadConfig({}, settings);
  try {
    if (settings.databaseUrl === undefined) {
      if (settings.dataDir === undefined) {
        const dataDir = mkdtempSync(join(tmpdir(), 'pgkafka-broker-'));
        cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
        // Runs only if the broker failed to start after its PostgreSQL did, or stopped without stopping it.
        cleanups.push(() => stopStrayPostmaster(embeddedClusterDir(dataDir)));
        // As root, PostgreSQL runs as user postgres, which must be able to enter the directory.
        if (process.getuid?.() === 0) chmodSync(dataDir, 0o755);
        if (initdbCache !== false) await prepareEmbeddedCluster(embeddedClusterDir(dataDir), initdbCache === true ? defaultInitdbCacheDir() : initdbCache);
        settings.dataDir = dataDir;
      }
    } else if (settings.schema === undefined) {
      const schema = `pgkafka_${randomBytes(6).toString('hex')}`;
      const databaseUrl = settings.databaseUrl as string;
      cleanups.push(() => dropSchema(databaseUrl, schema));
      settings.schema = schema;
    }
    const config = loadConfig({}, settings);
    const running = await startComposedBroker(config, createLogger(config.logLevel, process.stderr));
    cleanups.push(() => running.stop());
    let stopping: Promise<void> | null = null;
    return {
      bootstrapServers: `${running.context.self.host}:${running.context.self.port}`,
      host: running.context.self.host,
      port: running.context.self.port,
      databaseUrl: running.database.connectionString,
      schema: config.schema,
      database: running.database.kind,
      stop: () => (stopping ??= cleanUp()),
    };
  } catch (err) {
    await cleanUp().catch(() => {});
    throw err;
  }
}

function withoutUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
