// The composition root: storage, domain, handlers and the listener, wired
// together and started; stop() shuts them down in reverse order.
import { randomBytes, randomUUID } from 'node:crypto';
import type { BrokerContext } from './broker-context.js';
import type { Config } from './config/schema.js';
import { systemClock } from './clock.js';
import { GroupCoordinator } from './coordinator/group-coordinator.js';
import { ConsumerOffsetsTopic } from './coordinator/consumer-offsets-topic.js';
import { Coordination, type LiveBroker } from './coordinator/coordination.js';
import { PartitionLeadership } from './coordinator/partition-leadership.js';
import { TransactionCoordinator } from './coordinator/transaction-coordinator.js';
import { TxnAddRequests } from './coordinator/txn-add-requests.js';
import { logMarkerWriter } from './coordinator/txn-markers.js';
import { HandlerRegistry } from './handlers/registry.js';
import { BrokerConfigs } from './log/broker-configs.js';
import { Compactor } from './log/compactor.js';
import { FetchSessionCache } from './log/fetch-sessions.js';
import { LogCleaner } from './log/log-cleaner.js';
import { LogManager } from './log/log-manager.js';
import { TailCache } from './log/tail-cache.js';
import { TopicManager } from './log/topic-manager.js';
import type { Logger } from './observability/logger.js';
import { createBrokerMetrics, startMetricsServer } from './observability/metrics.js';
import { awaitNodeId, DuplicateNodeIdError } from './node-id.js';
import { parseSuperUsers } from './security/acl.js';
import { Authorizer } from './security/authorizer.js';
import { parseListeners, type ListenerSpec } from './config/listeners.js';
import { tlsServerOptions } from './security/tls.js';
import { KafkaServer } from './server/server.js';
import { AclStore } from './storage/pg/acl-store.js';
import { BrokerConfigStore } from './storage/pg/broker-config-store.js';
import { GroupConfigStore } from './storage/pg/group-config-store.js';
import { GroupConfigs } from './coordinator/group-configs.js';
import { brokerApplicationName, ClusterStore, type BrokerRow } from './storage/pg/cluster-store.js';
import { CompactionStore } from './storage/pg/compaction-store.js';
import { CoordinatorStore } from './storage/pg/coordinator-store.js';
import { GroupStore } from './storage/pg/group-store.js';
import { ConsumerOffsetsStore } from './storage/pg/consumer-offsets-store.js';
import { databaseUnreachable, openDatabase, type Database } from './storage/pg/database.js';
import { LagStore } from './storage/pg/lag-store.js';
import { AppendAnnouncer } from './storage/pg/append-announcer.js';
import { LeadershipStore } from './storage/pg/leadership-store.js';
import { LogStore } from './storage/pg/log-store.js';
import { OutboxStore } from './storage/pg/outbox-store.js';
import { OutboxRelay } from './log/outbox-relay.js';
import { migrate } from './storage/pg/migrate.js';
import { PartitionStore } from './storage/pg/partition-store.js';
import { ProducerStore } from './storage/pg/producer-store.js';
import { Notifications } from './storage/pg/notifications.js';
import { TxnAddChannel } from './storage/pg/txn-add-channel.js';
import { createPool } from './storage/pg/pool.js';
import { ServerWatch } from './storage/pg/server-watch.js';
import { TopicStore } from './storage/pg/topic-store.js';
import { TransactionStore } from './storage/pg/transaction-store.js';
import { UserStore } from './storage/pg/user-store.js';
import { LogCode } from './observability/log-codes.js';

const BROKER_HEARTBEAT_MS = 3000;
const BROKER_LIVENESS_MS = 9000;
/** A coordinator slot lease, renewed with every heartbeat: a dead broker's groups move within this long (or its liveness timeout). */
const COORDINATOR_LEASE_MS = 9000;
/** How long /ready waits for PostgreSQL to answer before it reports the broker not ready. */
const READY_DATABASE_TIMEOUT_MS = 2000;

export interface RunningBroker {
  /** The port of the first listener (the only one by default). */
  port: number;
  /** The bound port of each listener, by name (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL). */
  ports: Record<string, number>;
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
  // What has started, undone last first when start-up fails part-way (a library caller's process lives on: src/index.ts).
  const started: (() => Promise<unknown>)[] = [() => database.stop()];
  try {
    return await startOnDatabase(database, config, log, started);
  } catch (err) {
    for (const undo of started.reverse()) await undo().catch(() => {});
    throw err;
  }
}

async function startOnDatabase(database: Database, config: Config, log: Logger, started: (() => Promise<unknown>)[]): Promise<RunningBroker> {
  await migrate(database.connectionString, config.schema, log);
  // A server that stops answering without closing its connections (its machine vanished) is found by probing.
  const serverWatch = new ServerWatch({
    connectionString: database.connectionString,
    stallMs: config.databaseStallProbeMs,
    probeTimeoutMs: config.databaseConnectTimeoutMs,
    log,
  });
  started.push(async () => serverWatch.stop());
  const connection = { connectionString: database.connectionString, schema: config.schema, connectTimeoutMs: config.databaseConnectTimeoutMs, watch: serverWatch };
  const instanceId = randomUUID();
  // Named by instance: a broker restarted after a crash sees at once that the instance it replaces has no session left.
  const pool = createPool({ ...connection, max: config.poolSize, applicationName: brokerApplicationName(instanceId) });
  started.push(() => pool.end());
  /** Set once stop() ends the pool: its connections may then see the embedded server's shutdown before their own goodbye reaches it (pool.end() does not wait for their sockets). */
  let poolEnded = false;
  pool.on('error', (err) => {
    if (poolEnded) log.debug({ err: err.message }, 'PostgreSQL connection closed during shutdown');
    else log.warn({ err: err.message, code: LogCode.POOL_CLIENT_ERROR }, 'idle PostgreSQL connection failed');
  });

  const channels = {
    append: `${config.schema}_append`,
    topics: `${config.schema}_topics`,
    acls: `${config.schema}_acls`,
    coordinators: `${config.schema}_coordinators`,
    brokerConfigs: `${config.schema}_broker_configs`,
    groupConfigs: `${config.schema}_group_configs`,
    // Records sent from SQL (send(), migration 0013) NOTIFY here at commit.
    outbox: `${config.schema}_outbox`,
    // Transactions version 2's implicit adds sent to the transaction's coordinator, and its answers.
    txnAdds: `${config.schema}_txn_adds`,
  };
  const clusterStore = new ClusterStore(pool);
  const clusterId = await clusterStore.ensureClusterId(newClusterId());
  // Before anything is claimed under the node id: refused while another live broker holds it.
  await awaitNodeId(clusterStore, config.nodeId, instanceId, BROKER_LIVENESS_MS, log);
  const brokerConfigs = new BrokerConfigs(config, new BrokerConfigStore(pool, channels.brokerConfigs), log);
  await brokerConfigs.load();
  const topics = new TopicManager(new TopicStore(pool, channels.topics), config, brokerConfigs);
  const groupConfigs = new GroupConfigs(
    {
      consumerSessionTimeoutMs: config.groupConsumerSessionTimeoutMs,
      consumerMinSessionTimeoutMs: config.groupConsumerMinSessionTimeoutMs,
      consumerMaxSessionTimeoutMs: config.groupConsumerMaxSessionTimeoutMs,
      consumerHeartbeatIntervalMs: config.groupConsumerHeartbeatIntervalMs,
      consumerMinHeartbeatIntervalMs: config.groupConsumerMinHeartbeatIntervalMs,
      consumerMaxHeartbeatIntervalMs: config.groupConsumerMaxHeartbeatIntervalMs,
      consumerAssignmentIntervalMs: config.groupConsumerAssignmentIntervalMs,
      consumerMinAssignmentIntervalMs: config.groupConsumerMinAssignmentIntervalMs,
      consumerMaxAssignmentIntervalMs: config.groupConsumerMaxAssignmentIntervalMs,
    },
    brokerConfigs,
    new GroupConfigStore(pool, channels.groupConfigs),
    log,
  );
  await groupConfigs.load();
  const producerStore = new ProducerStore(pool);
  const partitionStore = new PartitionStore(pool, channels.append, channels.topics);
  const announcer = new AppendAnnouncer(pool, channels.append, log);
  started.push(() => announcer.close());
  const logs = new LogManager({
    store: new LogStore(pool),
    announcer,
    partitionStore,
    producerStore,
    tail: new TailCache(config.fetchCacheMaxBytes),
    instanceId,
    appendQueue: {
      flushMaxBytes: config.produceFlushMaxBytes,
      sharedAppendMaxBytes: config.produceSharedAppendMaxBytes,
      sharedStatementMaxBytes: config.produceSharedStatementMaxBytes,
      sharedStatementsInFlight: config.produceSharedStatementsInFlight,
    },
    cleanerChunkBatches: config.logCleanerChunkBatches,
    producerIdExpirationMs: config.producerIdExpirationMs,
    readAheadMaxBytes: config.fetchReadAheadMaxBytes,
    clock: systemClock,
    log,
  });

  // Request and commit histograms, fed as the broker serves; nothing is measured when metrics are off.
  const brokerMetrics = config.metricsEnabled ? createBrokerMetrics() : null;
  if (brokerMetrics) logs.commitObserver = brokerMetrics.observeCommit;
  const fetchSessions = new FetchSessionCache({ maxEntries: config.maxIncrementalFetchSessionCacheSlots, clock: systemClock });
  brokerMetrics?.observeFetchSessions(() => ({
    sessions: fetchSessions.size,
    partitions: fetchSessions.totalPartitions,
    evictions: fetchSessions.evictions,
    incrementalFetches: fetchSessions.incrementalFetches,
  }));

  const groups = new GroupCoordinator({
    store: new GroupStore(pool),
    topics,
    settings: {
      initialRebalanceDelayMs: config.groupInitialRebalanceDelayMs,
      maxSize: config.groupMaxSize,
      minSessionTimeoutMs: config.groupMinSessionTimeoutMs,
      maxSessionTimeoutMs: config.groupMaxSessionTimeoutMs,
      offsetsRetentionMs: config.offsetsRetentionMinutes * 60_000,
      offsetsRetentionCheckIntervalMs: config.offsetsRetentionCheckIntervalMs,
      offsetMetadataMaxBytes: config.offsetMetadataMaxBytes,
      consumerSessionTimeoutMs: config.groupConsumerSessionTimeoutMs,
      consumerHeartbeatIntervalMs: config.groupConsumerHeartbeatIntervalMs,
      consumerMaxSize: config.groupConsumerMaxSize,
      consumerAssignmentIntervalMs: config.groupConsumerAssignmentIntervalMs,
      consumerMigrationPolicy: config.groupConsumerMigrationPolicy,
      consumerProtocolEnabled: config.groupCoordinatorRebalanceProtocols.split(',').includes('consumer'),
      consumerRegexRefreshIntervalMs: config.groupConsumerRegexRefreshIntervalMs,
    },
    log,
    instanceId,
    groupConfigs,
  });
  const coordinatorStore = new CoordinatorStore(pool, channels.coordinators);
  const coordination = new Coordination({
    store: coordinatorStore,
    nodeId: config.nodeId,
    instanceId,
    leaseMs: COORDINATOR_LEASE_MS,
    livenessMs: BROKER_LIVENESS_MS,
    log,
  });
  coordination.addOwner(groups);
  // Partition leadership: released leadership is announced on the coordinators' channel, which every broker rebalances on.
  const leadership = new PartitionLeadership({
    store: new LeadershipStore(pool, channels.coordinators),
    logs,
    nodeId: config.nodeId,
    instanceId,
    livenessMs: BROKER_LIVENESS_MS,
    log,
  });
  // Transactional ids share the groups' slots: their leases, their failover.
  const transactions = new TransactionCoordinator({
    store: new TransactionStore(pool),
    producerIds: producerStore,
    markers: logMarkerWriter(logs),
    topics,
    log,
    clock: systemClock,
    transactionalIdExpirationMs: config.transactionalIdExpirationMs,
    instanceId,
    leaseHeld: (transactionalId) => coordination.owns(transactionalId),
  });
  coordination.addOwner(transactions);
  const txnAdds = new TxnAddRequests({
    notifier: new TxnAddChannel(pool, channels.txnAdds),
    transactions,
    coordinatorOf: (transactionalId) => coordination.coordinatorOf(transactionalId),
    nodeId: config.nodeId,
    instanceId,
    log,
    clock: systemClock,
  });

  const authorizer = new Authorizer(
    config.authorizerEnabled,
    { superUsers: parseSuperUsers(config.superUsers ?? ''), allowEveryoneIfNoAclFound: config.allowEveryoneIfNoAclFound },
    new AclStore(pool, channels.acls),
    log,
  );
  await authorizer.load();

  // Producing from SQL: appends the outbox's committed records (docs/sql.md).
  const outboxRelay = new OutboxRelay({ store: new OutboxStore(pool), logs, topics, clock: systemClock, log });
  /** Set once this broker is registered: it takes partitions only then (its leases are its registration). */
  let joined = false;

  const registry = new HandlerRegistry(undefined, { kafka4VersionsOnly: config.kafka4VersionsOnly });
  const users = new UserStore(pool);
  const listeners: ListenerSpec[] = config.listeners ? parseListeners(config.listeners) : [{ name: 'PLAINTEXT', host: config.host, port: config.port }];
  const advertisedListeners = new Map(parseListeners(config.advertisedListeners ?? '').map((l) => [l.name as string, l]));
  /** The live brokers as last read, each with the monotonic time its registration lapses at (never later than in the database). */
  let live: (BrokerRow & LiveBroker)[] = [];
  const isLive = (b: LiveBroker) => b.nodeId === config.nodeId || performance.now() < b.until;
  /** Re-reads the registry when another broker's registration lapses, so Metadata and the coordinator slots follow at once. */
  let lapseTimer: NodeJS.Timeout | null = null;
  let closing = false;
  /**
   * Reads the brokers. A live broker that is gone may have committed
   * appends it never announced (it died in between), so this broker re-reads
   * the partitions it has loaded. Appends are announced while any other
   * broker is registered, live or not: one that missed heartbeats (say,
   * through a PostgreSQL outage) still listens.
   */
  const readLive = async () => {
    const asked = performance.now();
    const brokers = await clusterStore.liveBrokers(BROKER_LIVENESS_MS);
    const next = brokers.live.map((b) => ({ ...b, until: asked + (b.expiresInMs ?? 0) }));
    const gone = live.some((b) => b.nodeId !== config.nodeId && !next.some((n) => n.nodeId === b.nodeId && isLive(n)));
    live = next;
    logs.setOthersListening(brokers.registered.some((nodeId) => nodeId !== config.nodeId));
    if (gone) logs.resync().catch((err: Error) => log.warn({ err: err.message }, 'resync failed'));
    // A broker gone in the middle of relaying leaves its records pending.
    if (gone) outboxRelay.sweep();
    if (lapseTimer) clearTimeout(lapseTimer);
    const others = live.filter((b) => b.nodeId !== config.nodeId).map((b) => b.until);
    lapseTimer = others.length > 0 && !closing ? setTimeout(rebalanceCoordinators, Math.max(0, Math.min(...others) - performance.now()) + 20) : null;
    lapseTimer?.unref();
    return live.map((b) => ({ nodeId: b.nodeId, until: b.until }));
  };
  /** Another broker joined, handed slots over or lapsed: re-read the live brokers and take or give slots now rather than at the next heartbeat. */
  const rebalanceCoordinators = () => {
    readLive()
      .then((brokers) => coordination.rebalance(brokers))
      .catch((err: Error) => log.warn({ err: err.message }, 'coordinator rebalance failed'));
    rebalanceLeadership();
  };
  /** Partitions appeared or went, a broker joined, left or handed partitions over: take or give partitions now. */
  function rebalanceLeadership(): void {
    if (joined) leadership.rebalance().catch(() => {});
  }
  // Subscribed only now: an announcement can arrive while LISTEN is under way, and its handlers must exist by then.
  const notifications = new Notifications(
    connection,
    [channels.append, channels.topics, channels.acls, channels.coordinators, channels.brokerConfigs, channels.groupConfigs, channels.outbox, channels.txnAdds],
    log,
  );
  notifications.on('notification', (channel: string, payload: string) => {
    if (channel === channels.append) logs.onAppendNotification(payload);
    else if (channel === channels.topics) {
      topics.invalidate(payload);
      rebalanceLeadership();
    } else if (channel === channels.acls) authorizer.reload();
    else if (channel === channels.coordinators) rebalanceCoordinators();
    else if (channel === channels.brokerConfigs) brokerConfigs.reload();
    else if (channel === channels.groupConfigs) groupConfigs.reload();
    else if (channel === channels.outbox) outboxRelay.notified(payload);
    else if (channel === channels.txnAdds) txnAdds.onNotification(payload);
  });
  notifications.on('resync', () => {
    txnAdds.failPending();
    topics.invalidate();
    authorizer.reload();
    brokerConfigs.reload();
    groupConfigs.reload();
    rebalanceCoordinators();
    logs.resync().catch((err: Error) => log.warn({ err: err.message }, 'resync failed'));
    outboxRelay.sweep();
  });
  started.push(() => notifications.stop());
  await notifications.start();
  /** A broker's endpoint on a listener: its registered one, or (registered before listeners existed) its only one. */
  const onListener = (b: BrokerRow, listener: string): BrokerRow | null => {
    if (!b.listeners) return b;
    const endpoint = b.listeners[listener];
    return endpoint ? { ...b, host: endpoint.host, port: endpoint.port } : null;
  };
  const context: BrokerContext = {
    config,
    nodeId: config.nodeId,
    clusterId,
    self: { nodeId: config.nodeId, host: config.advertisedHost, port: 0, rack: null },
    liveBrokers: (listener) => {
      // A broker whose registration lapsed is not named, even before the registry is read again.
      const others = live.filter((b) => b.nodeId !== config.nodeId && isLive(b)).map(({ until: _until, expiresInMs: _expires, ...b }) => b);
      const all = [context.self, ...others].sort((a, b) => a.nodeId - b.nodeId);
      return listener === undefined ? all : all.flatMap((b) => onListener(b, listener) ?? []);
    },
    advertised: (listener) => onListener(context.self, listener) ?? context.self,
    users,
    authorizer,
    brokerConfigs,
    groupConfigs,
    coordination,
    leadership,
    topics,
    logs,
    fetchSessions,
    groups,
    transactions,
    txnAdds,
    consumerOffsets: new ConsumerOffsetsTopic(new ConsumerOffsetsStore(pool)),
    log,
    apiVersions: registry.apiVersions(),
    shuttingDown: false,
  };

  const tls =
    config.sslCertFile && config.sslKeyFile ? tlsServerOptions({ certFile: config.sslCertFile, keyFile: config.sslKeyFile, caFile: config.sslCaFile, clientAuth: config.sslClientAuth }) : undefined;
  // Take this broker's coordinator slots before clients arrive (others hand theirs over once it has registered).
  started.push(() => coordination.stop());
  await coordination.rebalance(await readLive());

  const server = new KafkaServer(
    {
      listeners,
      maxFrameBytes: config.socketRequestMaxBytes,
      maxConnections: config.maxConnections,
      maxConnectionsPerIp: config.maxConnectionsPerIp,
      connectionsMaxIdleMs: config.connectionsMaxIdleMs,
      pipeline: { maxInFlightRequests: config.connectionMaxInFlightRequests, maxInFlightBytes: config.connectionMaxInFlightBytes },
      observeRequest: brokerMetrics?.observeRequest,
      tls,
      security: {
        enabledMechanisms: config.saslEnabledMechanisms.split(','),
        maxReauthMs: config.connectionsMaxReauthMs,
        lookupCredential: (user, mechanism) => users.credential(user, mechanism),
      },
    },
    registry,
    context,
    log,
  );
  started.push(() => server.close(0));
  const ports = Object.fromEntries(await server.listen());
  const port = ports[listeners[0]!.name]!;
  context.self.listeners = Object.fromEntries(
    listeners.map((l, i) => {
      const advertised = advertisedListeners.get(l.name);
      const boundPort = ports[l.name]!;
      return [
        l.name,
        {
          host: advertised?.host || config.advertisedHost,
          port: advertised?.port || (i === 0 && !config.listeners && config.advertisedPort) || boundPort,
        },
      ];
    }),
  );
  // The first listener is also the broker's registered host and port (what brokers predating listeners read).
  Object.assign(context.self, context.self.listeners[listeners[0]!.name]!);
  if (!(await clusterStore.registerBroker(context.self, instanceId, BROKER_LIVENESS_MS))) {
    // Another broker took the node id while this one started.
    const holder = await clusterStore.registration(config.nodeId, BROKER_LIVENESS_MS);
    closing = true;
    if (lapseTimer) clearTimeout(lapseTimer);
    await coordination.stop();
    await server.close(0);
    await announcer.close();
    await notifications.stop();
    await pool.end();
    throw new DuplicateNodeIdError(config.nodeId, holder ?? { instanceId: 'unknown', host: '?', port: 0, startedAt: new Date() });
  }
  await readLive();
  // Its share of the partitions, before the others are told it joined (they hand theirs over then).
  joined = true;
  started.push(() => leadership.stop());
  await leadership.rebalance();
  leadership.start();
  await coordinatorStore.announce();
  database.announce(port);
  /** A heartbeat that finds the node id registered by another instance (this one lapsed, say through a long pause): registered again if that one lapsed too, else logged. */
  const reRegister = async () => {
    if (await clusterStore.registerBroker(context.self, instanceId, BROKER_LIVENESS_MS)) return;
    const holder = await clusterStore.registration(config.nodeId, BROKER_LIVENESS_MS);
    log.error(
      { nodeId: config.nodeId, instance: holder?.instanceId, host: holder?.host, port: holder?.port, code: LogCode.DUPLICATE_NODE_ID },
      'node id registered by another live broker: give every broker its own node id (PGKAFKA_NODE_ID)',
    );
  };
  const heartbeat = setInterval(() => {
    clusterStore
      .heartbeat(config.nodeId, instanceId)
      .then((registered) => (registered ? undefined : reRegister()))
      .then(readLive)
      .then((brokers) => Promise.all([coordination.rebalance(brokers), leadership.rebalance()]))
      .catch((err: Error) => log.warn({ err: err.message, code: LogCode.HEARTBEAT_FAILED }, 'broker heartbeat failed'));
  }, BROKER_HEARTBEAT_MS);
  heartbeat.unref();
  const compactor = new Compactor(new CompactionStore(pool), logs, config.logCleanerChunkBatches, log);
  const cleaner = new LogCleaner({
    topics,
    logs,
    retentionCheckIntervalMs: config.logRetentionCheckIntervalMs,
    compactor,
    cleanerBackoffMs: config.logCleanerBackoffMs,
    clock: systemClock,
    log,
  });
  cleaner.start();
  transactions.start();
  outboxRelay.start();
  // dx-embedded: /ready — the Kafka listener accepts (it is bound until shutdown begins) and PostgreSQL answers.
  const readiness = async () => (context.shuttingDown ? 'shutting down' : databaseUnreachable(pool, READY_DATABASE_TIMEOUT_MS));
  const metrics = config.metricsEnabled
    ? await startMetricsServer({
        host: config.metricsHost,
        port: config.metricsPort,
        lagStore: new LagStore(pool),
        log,
        registry: brokerMetrics?.registry,
        readiness,
        leaderOf: (topicId, partition) => leadership.leaderOf(topicId, partition).nodeId,
      })
    : null;
  log.info({ port, listeners: ports, metricsPort: metrics?.port, nodeId: config.nodeId, clusterId, database: database.kind, schema: config.schema }, 'pgkafka broker listening');

  let stopping: Promise<void> | null = null;
  const stop = () =>
    (stopping ??= (async () => {
      context.shuttingDown = true;
      clearInterval(heartbeat);
      closing = true;
      if (lapseTimer) clearTimeout(lapseTimer);
      logs.wakeAll();
      await server.close(config.shutdownTimeoutMs);
      await coordination.stop();
      await leadership.stop();
      groups.shutdown();
      transactions.shutdown();
      await cleaner.stop();
      await outboxRelay.stop();
      await metrics?.close();
      await announcer.close();
      await clusterStore.unregisterBroker(config.nodeId, instanceId).catch(() => {});
      await notifications.stop();
      poolEnded = true;
      serverWatch.stop();
      await pool.end();
      // Last: requests drained above may still have needed it.
      await database.stop();
      log.info('pgkafka broker stopped');
    })());
  return { port, ports, metricsPort: metrics?.port ?? null, cleaner, context, database, stop };
}
