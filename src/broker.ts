// The composition root: storage, domain, handlers and the listener, wired
// together and started; stop() shuts them down in reverse order.
import { randomBytes, randomUUID } from 'node:crypto';
import type { BrokerContext } from './broker-context.js';
import type { Config } from './config/schema.js';
import { systemClock } from './coordinator/clock.js';
import { GroupCoordinator } from './coordinator/group-coordinator.js';
import { TransactionCoordinator } from './coordinator/transaction-coordinator.js';
import { HandlerRegistry } from './handlers/registry.js';
import { Compactor } from './log/compactor.js';
import { LogCleaner } from './log/log-cleaner.js';
import { LogManager } from './log/log-manager.js';
import { TailCache } from './log/tail-cache.js';
import { TopicManager } from './log/topic-manager.js';
import type { Logger } from './observability/logger.js';
import { startMetricsServer } from './observability/metrics.js';
import { KafkaServer } from './server/server.js';
import { ClusterStore, type BrokerRow } from './storage/pg/cluster-store.js';
import { CompactionStore } from './storage/pg/compaction-store.js';
import { GroupStore } from './storage/pg/group-store.js';
import { openDatabase, type Database } from './storage/pg/database.js';
import { LagStore } from './storage/pg/lag-store.js';
import { LogStore } from './storage/pg/log-store.js';
import { migrate } from './storage/pg/migrate.js';
import { PartitionStore } from './storage/pg/partition-store.js';
import { ProducerStore } from './storage/pg/producer-store.js';
import { Notifications } from './storage/pg/notifications.js';
import { createPool } from './storage/pg/pool.js';
import { TopicStore } from './storage/pg/topic-store.js';
import { TransactionStore } from './storage/pg/transaction-store.js';

const BROKER_HEARTBEAT_MS = 3000;
const BROKER_LIVENESS_MS = 15000;

export interface RunningBroker {
  port: number;
  /** The retention cleaner and compactor (tests run passes on demand). */
  cleaner: LogCleaner;
  /** Port of the /metrics endpoint, if enabled. */
  metricsPort: number | null;
  context: BrokerContext;
  database: Database;
  stop(): Promise<void>;
}

/** Kafka cluster ids are 16 random bytes in URL-safe base64 without padding. */
function newClusterId(): string {
  return randomBytes(16).toString('base64url');
}

export async function startBroker(config: Config, log: Logger): Promise<RunningBroker> {
  const database = await openDatabase(config, log);
  const connection = { connectionString: database.connectionString, schema: config.schema };
  await migrate(database.connectionString, config.schema, log);
  const pool = createPool({ ...connection, max: config.poolSize });
  pool.on('error', (err) => log.warn({ err: err.message, code: 'PGKAFKA_POOL_CLIENT_ERROR' }, 'idle PostgreSQL connection failed'));

  const instanceId = randomUUID();
  const channels = { append: `${config.schema}_append`, topics: `${config.schema}_topics` };
  const clusterStore = new ClusterStore(pool);
  const clusterId = await clusterStore.ensureClusterId(newClusterId());
  const topics = new TopicManager(new TopicStore(pool, channels.topics), config);
  const producerStore = new ProducerStore(pool);
  const partitionStore = new PartitionStore(pool, channels.append, channels.topics);
  const logs = new LogManager(
    new LogStore(pool, channels.append),
    partitionStore,
    instanceId,
    config.produceFlushMaxBytes,
    config.logCleanerChunkBatches,
    new TailCache(config.fetchCacheMaxBytes),
    producerStore,
    log,
    config.producerIdExpirationMs,
  );

  const groups = new GroupCoordinator(new GroupStore(pool), topics, {
    initialRebalanceDelayMs: config.groupInitialRebalanceDelayMs,
    maxSize: config.groupMaxSize,
    minSessionTimeoutMs: config.groupMinSessionTimeoutMs,
    maxSessionTimeoutMs: config.groupMaxSessionTimeoutMs,
    offsetsRetentionMs: config.offsetsRetentionMinutes * 60_000,
    offsetsRetentionCheckIntervalMs: config.offsetsRetentionCheckIntervalMs,
    offsetMetadataMaxBytes: config.offsetMetadataMaxBytes,
  }, log);
  await groups.load();
  const transactions = new TransactionCoordinator(new TransactionStore(pool), logs, topics, log, systemClock, undefined, config.transactionalIdExpirationMs);
  await transactions.load();

  const notifications = new Notifications(connection, [channels.append, channels.topics], log);
  notifications.on('notification', (channel: string, payload: string) => {
    if (channel === channels.append) logs.onAppendNotification(payload);
    else if (channel === channels.topics) topics.invalidate(payload);
  });
  notifications.on('resync', () => {
    topics.invalidate();
    logs.resync().catch((err: Error) => log.warn({ err: err.message }, 'resync failed'));
  });
  await notifications.start();

  const registry = new HandlerRegistry();
  let live: BrokerRow[] = [];
  const context: BrokerContext = {
    config,
    nodeId: config.nodeId,
    clusterId,
    self: { nodeId: config.nodeId, host: config.advertisedHost, port: 0, rack: null },
    liveBrokers: () => {
      const others = live.filter((b) => b.nodeId !== config.nodeId);
      return [context.self, ...others].sort((a, b) => a.nodeId - b.nodeId);
    },
    topics,
    logs,
    groups,
    transactions,
    log,
    apiVersions: registry.apiVersions(),
    shuttingDown: false,
  };

  const server = new KafkaServer({ host: config.host, port: config.port, maxFrameBytes: config.socketRequestMaxBytes }, registry, context, log);
  const port = await server.listen();
  context.self.port = config.advertisedPort || port;
  await clusterStore.registerBroker(context.self, instanceId);
  live = await clusterStore.liveBrokers(BROKER_LIVENESS_MS);
  const heartbeat = setInterval(() => {
    clusterStore
      .heartbeat(config.nodeId, instanceId)
      .then(() => clusterStore.liveBrokers(BROKER_LIVENESS_MS))
      .then((brokers) => (live = brokers))
      .catch((err: Error) => log.warn({ err: err.message, code: 'PGKAFKA_HEARTBEAT_FAILED' }, 'broker heartbeat failed'));
  }, BROKER_HEARTBEAT_MS);
  heartbeat.unref();
  const compactor = new Compactor(new CompactionStore(pool), logs, config.logCleanerChunkBatches, log);
  const cleaner = new LogCleaner(topics, logs, config.logRetentionCheckIntervalMs, log, compactor);
  cleaner.start();
  transactions.start();
  const metrics = config.metricsEnabled
    ? await startMetricsServer({ host: config.metricsHost, port: config.metricsPort, lagStore: new LagStore(pool), log })
    : null;
  log.info({ port, metricsPort: metrics?.port, nodeId: config.nodeId, clusterId, database: database.kind, schema: config.schema }, 'pgkafka broker listening');

  let stopping: Promise<void> | null = null;
  const stop = () =>
    (stopping ??= (async () => {
      context.shuttingDown = true;
      clearInterval(heartbeat);
      logs.wakeAll();
      await server.close(config.shutdownTimeoutMs);
      groups.shutdown();
      transactions.shutdown();
      await cleaner.stop();
      await metrics?.close();
      await clusterStore.unregisterBroker(config.nodeId, instanceId).catch(() => {});
      await notifications.stop();
      await pool.end();
      await database.stop();
      log.info('pgkafka broker stopped');
    })());
  return { port, metricsPort: metrics?.port ?? null, cleaner, context, database, stop };
}
