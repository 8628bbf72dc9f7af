// The broker's whole configuration: one zod schema, fed by environment
// variables and an optional JSON file. A bad value stops start-up with a
// message that names the option and its environment variable.
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { parseDatabaseUrl, type DatabaseHost } from './database-url.js';
import { listenersError, parseListeners, SASL_MECHANISMS } from './listeners.js';

const bool = z.union([z.boolean(), z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1')]);
const int = (min: number, max = Number.MAX_SAFE_INTEGER) => z.coerce.number().int().min(min).max(max);
/** A comma-separated subset of {delete, compact}, as Kafka's `log.cleanup.policy` (normalised to `a,b`). */
const cleanupPolicy = z
  .string()
  .transform((v) =>
    v
      .trim()
      .split(/\s*,\s*/)
      .filter((p) => p !== '')
      .join(','),
  )
  .refine((v) => v.split(',').every((p) => p === 'delete' || p === 'compact'), 'a comma-separated list of delete and compact');

/** Kafka's GroupType names, as `group.coordinator.rebalance.protocols` lists them. */
export const REBALANCE_PROTOCOLS = ['classic', 'consumer', 'share', 'streams'] as const;
/** A non-empty comma-separated subset of the rebalance protocols (normalised to lower case, `a,b`). */
const rebalanceProtocols = z
  .string()
  .transform((v) =>
    v
      .split(',')
      .map((p) => p.trim().toLowerCase())
      .filter((p) => p !== '')
      .join(','),
  )
  .refine((v) => v !== '' && v.split(',').every((p) => (REBALANCE_PROTOCOLS as readonly string[]).includes(p)), `a comma-separated list of ${REBALANCE_PROTOCOLS.join(', ')}`);

/** A listener list as Kafka's `listeners`. */
const listenerList = z
  .string()
  .transform((v) => v.trim())
  .superRefine((v, ctx) => {
    const error = listenersError(v);
    if (error) ctx.addIssue({ code: 'custom', message: error });
  });
/** A comma-separated subset of the SASL mechanisms served (normalised to `A,B`). */
const saslMechanisms = z
  .string()
  .transform((v) =>
    v
      .split(',')
      .map((m) => m.trim().toUpperCase())
      .filter((m) => m !== '')
      .join(','),
  )
  .refine((v) => v !== '' && v.split(',').every((m) => (SASL_MECHANISMS as readonly string[]).includes(m)), `a comma-separated list of ${SASL_MECHANISMS.join(', ')}`);

/** A PostgreSQL URL (one host, or several with target_session_attrs): anything else would reach the driver as a host name (`getaddrinfo ENOTFOUND`). */
const URL_EXPECTED = 'a URL postgresql://user:password@host:5432/database (unset it to use the embedded PostgreSQL)';
const databaseUrl = z
  .string()
  .min(1)
  .superRefine((v, ctx) => {
    if (!/^postgres(ql)?:\/\//.test(v)) return ctx.addIssue({ code: 'custom', message: URL_EXPECTED });
    let hosts: DatabaseHost[];
    try {
      hosts = parseDatabaseUrl(v).hosts;
    } catch (err) {
      return ctx.addIssue({ code: 'custom', message: (err as Error).message });
    }
    const valid = hosts.every(({ url }) => {
      try {
        const parsed = new URL(url);
        return parsed.hostname !== '' || parsed.searchParams.has('host');
      } catch {
        return false;
      }
    });
    if (!valid) ctx.addIssue({ code: 'custom', message: URL_EXPECTED });
  });

/** Each option: its schema, its environment variable, its default and what it does (the README table is built from this). */
export const options = {
  host: { env: 'PGKAFKA_HOST', schema: z.string().min(1), default: '0.0.0.0', doc: 'Address the Kafka listener binds to.' },
  port: { env: 'PGKAFKA_PORT', schema: int(0, 65535), default: 9092, doc: 'Kafka listener port (0 picks a free port).' },
  advertisedHost: { env: 'PGKAFKA_ADVERTISED_HOST', schema: z.string().min(1), default: 'localhost', doc: 'Host name clients are told to connect to in Metadata.' },
  advertisedPort: { env: 'PGKAFKA_ADVERTISED_PORT', schema: int(0, 65535), default: 0, doc: 'Port clients are told to connect to; 0 means the listening port.' },
  nodeId: { env: 'PGKAFKA_NODE_ID', schema: int(0, 2147483647), default: 1, doc: "This broker's node id (Kafka's `node.id`)." },
  databaseUrl: {
    env: 'DATABASE_URL',
    schema: databaseUrl.optional(),
    default: undefined,
    doc: 'PostgreSQL connection string; several hosts (`h1:5432,h2:5432`) with `target_session_attrs=read-write` for a primary and its standbys. Unset: start an embedded PostgreSQL in `dataDir`.',
  },
  schema: { env: 'PGKAFKA_SCHEMA', schema: z.string().regex(/^[a-z_][a-z0-9_]*$/, 'a lower-case SQL identifier'), default: 'pgkafka', doc: 'PostgreSQL schema that holds all pgkafka tables.' },
  dataDir: { env: 'PGKAFKA_DATA_DIR', schema: z.string().min(1), default: '.pgkafka-data', doc: 'Directory of the embedded PostgreSQL (used only without `DATABASE_URL`).' },
  // dx-embedded: the embedded PostgreSQL's port, start-up time-out, log format.
  embeddedPgPort: {
    env: 'PGKAFKA_EMBEDDED_PG_PORT',
    schema: int(1, 65535).optional(),
    default: undefined,
    doc: 'Loopback port of the embedded PostgreSQL; unset, a free port is picked at each start (logged, and in `dataDir`/pg/postmaster.pid).',
  },
  databaseConnectTimeoutMs: {
    env: 'PGKAFKA_DATABASE_CONNECT_TIMEOUT_MS',
    schema: int(100),
    default: 10000,
    doc: 'How long start-up waits for PostgreSQL to accept a connection and answer a query before it gives up with a message (and exit code 1); afterwards, how long each new connection to PostgreSQL may take.',
  },
  databaseStallProbeMs: {
    env: 'PGKAFKA_DATABASE_STALL_PROBE_MS',
    schema: int(0).refine((v) => v === 0 || v >= 100, '0 (off) or at least 100'),
    default: 5000,
    doc: "A statement that has waited this long for PostgreSQL makes the broker check, on a new connection, that the server still answers (within `databaseConnectTimeoutMs`); if it does not, the broker drops its connections to it, their statements fail as after a restart, and new connections look for the primary again. 0 turns the check off (a vanished server's connections then wait for the system's TCP time-out).",
  },
  logFormat: {
    env: 'PGKAFKA_LOG_FORMAT',
    schema: z.enum(['auto', 'json', 'pretty']),
    default: 'auto',
    doc: 'Log lines as JSON (one object a line, for collectors) or pretty (coloured, for people); `auto` is pretty when standard output is a terminal, else JSON.',
  },
  poolSize: { env: 'PGKAFKA_PG_POOL_SIZE', schema: int(2, 1000), default: 10, doc: 'Maximum PostgreSQL connections in the pool (one more is used for LISTEN).' },
  autoCreateTopicsEnable: { env: 'PGKAFKA_AUTO_CREATE_TOPICS_ENABLE', schema: bool, default: true, doc: "Create unknown topics on Metadata/Produce (Kafka's `auto.create.topics.enable`)." },
  numPartitions: { env: 'PGKAFKA_NUM_PARTITIONS', schema: int(1, 100000), default: 1, doc: "Partitions of auto-created topics and of CreateTopics with -1 (Kafka's `num.partitions`)." },
  socketRequestMaxBytes: {
    env: 'PGKAFKA_SOCKET_REQUEST_MAX_BYTES',
    schema: int(1024, 2147483647),
    default: 104857600,
    doc: "Largest request frame accepted; a larger one closes the connection (Kafka's `socket.request.max.bytes`).",
  },
  maxConnections: { env: 'PGKAFKA_MAX_CONNECTIONS', schema: int(1, 2147483647), default: 2147483647, doc: "Most client connections at once; more are closed on arrival (Kafka's `max.connections`)." },
  maxConnectionsPerIp: { env: 'PGKAFKA_MAX_CONNECTIONS_PER_IP', schema: int(1, 2147483647), default: 2147483647, doc: "Most client connections from one address (Kafka's `max.connections.per.ip`)." },
  connectionsMaxIdleMs: {
    env: 'PGKAFKA_CONNECTIONS_MAX_IDLE_MS',
    schema: int(0),
    default: 600000,
    doc: "A connection without traffic or a request in flight for this long is closed; 0 never (Kafka's `connections.max.idle.ms`).",
  },
  messageMaxBytes: {
    env: 'PGKAFKA_MESSAGE_MAX_BYTES',
    schema: int(0, 2147483647),
    default: 1048588,
    doc: "Largest record batch accepted by Produce, else MESSAGE_TOO_LARGE (Kafka's `message.max.bytes`).",
  },
  produceFlushMaxBytes: {
    env: 'PGKAFKA_PRODUCE_FLUSH_MAX_BYTES',
    schema: int(1024),
    default: 16777216,
    doc: 'Most bytes of batches coalesced into one PostgreSQL transaction per partition (group commit).',
  },
  produceSharedAppendMaxBytes: {
    env: 'PGKAFKA_PRODUCE_SHARED_APPEND_MAX_BYTES',
    schema: int(0, 2147483647),
    default: 65536,
    doc: "Flushes of a partition up to this many bytes may share one PostgreSQL statement (one commit) with other partitions' flushes; larger ones go alone (0: none share).",
  },
  produceSharedStatementMaxBytes: {
    env: 'PGKAFKA_PRODUCE_SHARED_STATEMENT_MAX_BYTES',
    schema: int(1024, 2147483647),
    default: 1048576,
    doc: "Most bytes of partitions' flushes in one shared statement.",
  },
  produceSharedStatementsInFlight: {
    env: 'PGKAFKA_PRODUCE_SHARED_STATEMENTS_IN_FLIGHT',
    schema: int(1, 1000),
    default: 2,
    doc: 'Shared statements committing at once; flushes that become ready meanwhile wait and go together in the next.',
  },
  fetchCacheMaxBytes: {
    env: 'PGKAFKA_FETCH_CACHE_MAX_BYTES',
    schema: int(0),
    default: 67108864,
    doc: 'Memory for the newest batches of each partition, so consumers that keep up are served without a query; each batch counts its bytes plus 600 for what holding it costs (0 turns it off).',
  },
  fetchReadAheadMaxBytes: {
    env: 'PGKAFKA_FETCH_READ_AHEAD_MAX_BYTES',
    schema: int(0),
    default: 67108864,
    doc: 'Memory for reading the next range of a partition ahead of a consumer catching up from PostgreSQL, while its previous response travels (0 turns it off).',
  },
  connectionMaxInFlightRequests: {
    env: 'PGKAFKA_CONNECTION_MAX_IN_FLIGHT_REQUESTS',
    schema: int(1, 100000),
    default: 256,
    doc: 'Pipelined Produce requests of one connection whose responses may be outstanding at once; more wait until the earliest are answered.',
  },
  connectionMaxInFlightBytes: {
    env: 'PGKAFKA_CONNECTION_MAX_IN_FLIGHT_BYTES',
    schema: int(1024, 2147483647),
    default: 16777216,
    doc: 'Bytes of pipelined Produce requests of one connection outstanding at once (bounds its memory).',
  },
  maxIncrementalFetchSessionCacheSlots: {
    env: 'PGKAFKA_MAX_INCREMENTAL_FETCH_SESSION_CACHE_SLOTS',
    schema: int(0, 2147483647),
    default: 1000,
    doc: "Most incremental fetch sessions (KIP-227) the broker keeps at once; 0 serves every fetch in full (Kafka's `max.incremental.fetch.session.cache.slots`).",
  },
  fetchMaxWaitMsCap: { env: 'PGKAFKA_FETCH_MAX_WAIT_MS_CAP', schema: int(0), default: 30000, doc: 'Upper bound on a Fetch long-poll, whatever the client asks.' },
  shutdownTimeoutMs: { env: 'PGKAFKA_SHUTDOWN_TIMEOUT_MS', schema: int(0), default: 10000, doc: 'How long graceful shutdown waits for in-flight requests.' },
  metricsPort: { env: 'PGKAFKA_METRICS_PORT', schema: int(0, 65535), default: 9308, doc: 'Port of the Prometheus `/metrics` HTTP endpoint (0 picks a free port).' },
  metricsHost: { env: 'PGKAFKA_METRICS_HOST', schema: z.string().min(1), default: '0.0.0.0', doc: 'Address the metrics endpoint binds to.' },
  metricsEnabled: { env: 'PGKAFKA_METRICS_ENABLED', schema: bool, default: true, doc: 'Serve the Prometheus `/metrics` endpoint.' },
  groupMinSessionTimeoutMs: {
    env: 'PGKAFKA_GROUP_MIN_SESSION_TIMEOUT_MS',
    schema: int(1),
    default: 6000,
    doc: "Smallest session timeout a member may ask for (Kafka's `group.min.session.timeout.ms`).",
  },
  groupMaxSessionTimeoutMs: {
    env: 'PGKAFKA_GROUP_MAX_SESSION_TIMEOUT_MS',
    schema: int(1),
    default: 1800000,
    doc: "Largest session timeout a member may ask for (Kafka's `group.max.session.timeout.ms`).",
  },
  groupInitialRebalanceDelayMs: {
    env: 'PGKAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS',
    schema: int(0),
    default: 3000,
    doc: "How long the first rebalance of an empty group waits for more members (Kafka's `group.initial.rebalance.delay.ms`).",
  },
  groupMaxSize: { env: 'PGKAFKA_GROUP_MAX_SIZE', schema: int(1), default: 2147483647, doc: "Most members one group may have (Kafka's `group.max.size`)." },
  // KIP-848 consumer groups (ConsumerGroupHeartbeat), with Kafka's defaults and bounds.
  groupConsumerSessionTimeoutMs: {
    env: 'PGKAFKA_GROUP_CONSUMER_SESSION_TIMEOUT_MS',
    schema: int(1, 2147483647),
    default: 45000,
    doc: "How long a consumer-protocol member may go without a heartbeat before it is fenced (Kafka's `group.consumer.session.timeout.ms`; between the min and max below).",
  },
  groupConsumerMinSessionTimeoutMs: {
    env: 'PGKAFKA_GROUP_CONSUMER_MIN_SESSION_TIMEOUT_MS',
    schema: int(1, 2147483647),
    default: 45000,
    doc: "Smallest consumer-protocol session timeout (Kafka's `group.consumer.min.session.timeout.ms`).",
  },
  groupConsumerMaxSessionTimeoutMs: {
    env: 'PGKAFKA_GROUP_CONSUMER_MAX_SESSION_TIMEOUT_MS',
    schema: int(1, 2147483647),
    default: 60000,
    doc: "Largest consumer-protocol session timeout (Kafka's `group.consumer.max.session.timeout.ms`).",
  },
  groupConsumerHeartbeatIntervalMs: {
    env: 'PGKAFKA_GROUP_CONSUMER_HEARTBEAT_INTERVAL_MS',
    schema: int(1, 2147483647),
    default: 5000,
    doc: "Heartbeat interval the coordinator gives consumer-protocol members (Kafka's `group.consumer.heartbeat.interval.ms`; between the min and max below, less than the session timeout).",
  },
  groupConsumerMinHeartbeatIntervalMs: {
    env: 'PGKAFKA_GROUP_CONSUMER_MIN_HEARTBEAT_INTERVAL_MS',
    schema: int(1, 2147483647),
    default: 5000,
    doc: "Smallest consumer-protocol heartbeat interval (Kafka's `group.consumer.min.heartbeat.interval.ms`).",
  },
  groupConsumerMaxHeartbeatIntervalMs: {
    env: 'PGKAFKA_GROUP_CONSUMER_MAX_HEARTBEAT_INTERVAL_MS',
    schema: int(1, 2147483647),
    default: 15000,
    doc: "Largest consumer-protocol heartbeat interval (Kafka's `group.consumer.max.heartbeat.interval.ms`).",
  },
  groupConsumerAssignmentIntervalMs: {
    env: 'PGKAFKA_GROUP_CONSUMER_ASSIGNMENT_INTERVAL_MS',
    schema: int(0, 2147483647),
    default: 1000,
    doc: "Least time between two target assignments of a consumer-protocol group; 0 computes one on every epoch bump (Kafka's `group.consumer.assignment.interval.ms`, between the min and max below).",
  },
  groupConsumerMinAssignmentIntervalMs: {
    env: 'PGKAFKA_GROUP_CONSUMER_MIN_ASSIGNMENT_INTERVAL_MS',
    schema: int(0, 2147483647),
    default: 0,
    doc: "Smallest consumer-protocol assignment interval (Kafka's `group.consumer.min.assignment.interval.ms`).",
  },
  groupConsumerMaxAssignmentIntervalMs: {
    env: 'PGKAFKA_GROUP_CONSUMER_MAX_ASSIGNMENT_INTERVAL_MS',
    schema: int(0, 2147483647),
    default: 15000,
    doc: "Largest consumer-protocol assignment interval (Kafka's `group.consumer.max.assignment.interval.ms`).",
  },
  groupConsumerRegexRefreshIntervalMs: {
    env: 'PGKAFKA_GROUP_CONSUMER_REGEX_REFRESH_INTERVAL_MS',
    schema: int(10000, 2147483647),
    default: 600000,
    doc: "Longest time a consumer-protocol group's regular-expression subscriptions go without being resolved again, for topics whose ACLs changed (Kafka's `group.consumer.regex.refresh.interval.ms`); created and deleted topics are picked up sooner, at most every 10 s.",
  },
  groupConsumerMaxSize: {
    env: 'PGKAFKA_GROUP_CONSUMER_MAX_SIZE',
    schema: int(1, 2147483647),
    default: 2147483647,
    doc: "Most members one consumer-protocol group may have (Kafka's `group.consumer.max.size`).",
  },
  groupConsumerMigrationPolicy: {
    env: 'PGKAFKA_GROUP_CONSUMER_MIGRATION_POLICY',
    schema: z
      .string()
      .transform((v) => v.trim().toLowerCase())
      .pipe(z.enum(['disabled', 'upgrade', 'downgrade', 'bidirectional'])),
    default: 'bidirectional',
    doc: "Whether a classic group becomes a consumer-protocol group when a consumer-protocol member joins it (`upgrade`), goes back when its last consumer-protocol member leaves (`downgrade`), both (`bidirectional`) or neither (`disabled`, which also keeps classic members out of consumer-protocol groups) (Kafka's `group.consumer.migration.policy`).",
  },
  groupCoordinatorRebalanceProtocols: {
    env: 'PGKAFKA_GROUP_COORDINATOR_REBALANCE_PROTOCOLS',
    schema: rebalanceProtocols,
    default: 'classic,consumer,streams',
    doc: "Rebalance protocols the broker serves, comma-separated among classic, consumer, share, streams; without `consumer`, ConsumerGroupHeartbeat and ConsumerGroupDescribe are answered UNSUPPORTED_VERSION as on Kafka; `classic` is always served, and pgkafka serves no share or streams groups (Kafka's `group.coordinator.rebalance.protocols`).",
  },
  offsetsRetentionMinutes: {
    env: 'PGKAFKA_OFFSETS_RETENTION_MINUTES',
    schema: int(1),
    default: 10080,
    doc: "How long committed offsets of an empty group are kept (Kafka's `offsets.retention.minutes`).",
  },
  offsetsRetentionCheckIntervalMs: {
    env: 'PGKAFKA_OFFSETS_RETENTION_CHECK_INTERVAL_MS',
    schema: int(100),
    default: 600000,
    doc: "How often expired offsets are removed (Kafka's `offsets.retention.check.interval.ms`).",
  },
  offsetMetadataMaxBytes: { env: 'PGKAFKA_OFFSET_METADATA_MAX_BYTES', schema: int(0), default: 4096, doc: "Largest metadata string an offset commit may carry (Kafka's `offset.metadata.max.bytes`)." },
  logRetentionMs: { env: 'PGKAFKA_LOG_RETENTION_MS', schema: int(-1), default: 604800000, doc: "Default `retention.ms` of topics; -1 keeps records forever (Kafka's `log.retention.ms`)." },
  logRetentionBytes: {
    env: 'PGKAFKA_LOG_RETENTION_BYTES',
    schema: z.coerce.number().int().min(Number.MIN_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER),
    default: -1,
    doc: "Default `retention.bytes` of topics (per partition); negative means no size limit (Kafka's `log.retention.bytes`).",
  },
  logCleanupPolicy: {
    env: 'PGKAFKA_LOG_CLEANUP_POLICY',
    schema: cleanupPolicy,
    default: 'delete',
    doc: "Default `cleanup.policy` of topics: `delete`, `compact` or both, comma-separated (Kafka's `log.cleanup.policy`).",
  },
  logCleanerDeleteRetentionMs: {
    env: 'PGKAFKA_LOG_CLEANER_DELETE_RETENTION_MS',
    schema: int(0),
    default: 86400000,
    doc: "Default `delete.retention.ms`: how long tombstones survive compaction (Kafka's `log.cleaner.delete.retention.ms`).",
  },
  logCleanerMinCleanableRatio: {
    env: 'PGKAFKA_LOG_CLEANER_MIN_CLEANABLE_RATIO',
    schema: z.coerce.number().min(0).max(1),
    default: 0.5,
    doc: "Default `min.cleanable.dirty.ratio` of compacted topics (Kafka's `log.cleaner.min.cleanable.ratio`).",
  },
  logCleanerMinCompactionLagMs: { env: 'PGKAFKA_LOG_CLEANER_MIN_COMPACTION_LAG_MS', schema: int(0), default: 0, doc: "Default `min.compaction.lag.ms` (Kafka's `log.cleaner.min.compaction.lag.ms`)." },
  logMessageTimestampType: {
    env: 'PGKAFKA_LOG_MESSAGE_TIMESTAMP_TYPE',
    schema: z.enum(['CreateTime', 'LogAppendTime']),
    default: 'CreateTime',
    doc: "Default `message.timestamp.type` of topics (Kafka's `log.message.timestamp.type`).",
  },
  compressionType: {
    env: 'PGKAFKA_COMPRESSION_TYPE',
    schema: z.enum(['uncompressed', 'zstd', 'lz4', 'snappy', 'gzip', 'producer']),
    default: 'producer',
    doc: "Default `compression.type` of topics; `producer` keeps the producer's codec (Kafka's `compression.type`).",
  },
  logRetentionCheckIntervalMs: {
    env: 'PGKAFKA_LOG_RETENTION_CHECK_INTERVAL_MS',
    schema: int(100),
    default: 300000,
    doc: "How often the retention cleaner looks for batches to delete (Kafka's `log.retention.check.interval.ms`).",
  },
  logCleanerBackoffMs: {
    env: 'PGKAFKA_LOG_CLEANER_BACKOFF_MS',
    schema: int(0),
    default: 15000,
    doc: "How often the cleaner looks for compacted topics' partitions due for compaction, independently of retention (Kafka's `log.cleaner.backoff.ms`).",
  },
  logCleanerChunkBatches: {
    env: 'PGKAFKA_LOG_CLEANER_CHUNK_BATCHES',
    schema: int(1),
    default: 1000,
    doc: 'Most batches one cleaner statement deletes or compacts, so cleaning never holds up produce or fetch for long.',
  },
  producerIdExpirationMs: {
    env: 'PGKAFKA_PRODUCER_ID_EXPIRATION_MS',
    schema: int(1),
    default: 86400000,
    doc: "How long an idempotent producer's sequence state is kept after its last append (Kafka's `producer.id.expiration.ms`).",
  },
  transactionalIdExpirationMs: {
    env: 'PGKAFKA_TRANSACTIONAL_ID_EXPIRATION_MS',
    schema: int(1),
    default: 604800000,
    doc: "How long an idle transactional id (no transaction open) is kept (Kafka's `transactional.id.expiration.ms`).",
  },
  transactionVersion: {
    env: 'PGKAFKA_TRANSACTION_VERSION',
    schema: int(0, 2),
    default: 2,
    doc: "The `transaction.version` feature level ApiVersions finalizes (Kafka's feature, 2 in Kafka 4): at 2, Kafka 4 clients use transactions version 2 (KIP-890 part 2); 0 or 1 keep them on the earlier protocol. Requests are served by their version either way, as Kafka does.",
  },
  listeners: {
    env: 'PGKAFKA_LISTENERS',
    schema: listenerList.optional(),
    default: undefined,
    doc: "Kafka listeners, `NAME://host:port` comma-separated, NAME one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL (Kafka's `listeners`); unset means one PLAINTEXT listener on `host`:`port`.",
  },
  advertisedListeners: {
    env: 'PGKAFKA_ADVERTISED_LISTENERS',
    schema: listenerList.optional(),
    default: undefined,
    doc: "Host and port clients are told to use, per listener, same syntax (Kafka's `advertised.listeners`); a listener not named here advertises `advertisedHost` and its own port.",
  },
  sslCertFile: { env: 'PGKAFKA_SSL_CERT_FILE', schema: z.string().min(1).optional(), default: undefined, doc: 'PEM certificate (chain) of the SSL and SASL_SSL listeners.' },
  sslKeyFile: { env: 'PGKAFKA_SSL_KEY_FILE', schema: z.string().min(1).optional(), default: undefined, doc: 'PEM private key of the SSL and SASL_SSL listeners (unencrypted).' },
  sslCaFile: { env: 'PGKAFKA_SSL_CA_FILE', schema: z.string().min(1).optional(), default: undefined, doc: 'PEM CA certificates that client certificates must chain to (used with `sslClientAuth`).' },
  sslClientAuth: {
    env: 'PGKAFKA_SSL_CLIENT_AUTH',
    schema: z.enum(['none', 'requested', 'required']),
    default: 'none',
    doc: "Client certificates on SSL listeners: `none`, `requested` or `required`; a verified certificate's subject becomes the principal (Kafka's `ssl.client.auth`; SASL_SSL clients authenticate with SASL).",
  },
  saslEnabledMechanisms: {
    env: 'PGKAFKA_SASL_ENABLED_MECHANISMS',
    schema: saslMechanisms,
    default: 'PLAIN,SCRAM-SHA-256,SCRAM-SHA-512',
    doc: "SASL mechanisms offered on SASL listeners, comma-separated: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 (Kafka's `sasl.enabled.mechanisms`).",
  },
  connectionsMaxReauthMs: {
    env: 'PGKAFKA_CONNECTIONS_MAX_REAUTH_MS',
    schema: int(0),
    default: 0,
    doc: "SASL session lifetime: clients re-authenticate before it ends or their connection is closed; 0 never expires (Kafka's `connections.max.reauth.ms`, KIP-368).",
  },
  authorizerEnabled: {
    env: 'PGKAFKA_AUTHORIZER_ENABLED',
    schema: bool,
    default: false,
    doc: "Check every request against Kafka ACLs (CreateAcls/DescribeAcls/DeleteAcls) — Kafka's `authorizer.class.name` set to its StandardAuthorizer; off, everything is allowed and the ACL APIs answer SECURITY_DISABLED.",
  },
  superUsers: {
    env: 'PGKAFKA_SUPER_USERS',
    schema: z
      .string()
      .transform((v) =>
        v
          .split(';')
          .map((p) => p.trim())
          .filter((p) => p !== '')
          .join(';'),
      )
      .refine((v) => v === '' || v.split(';').every((p) => /^[^:]+:.+$/.test(p)), 'principals as Type:name separated by semicolons')
      .optional(),
    default: undefined,
    doc: "Principals allowed everything whatever the ACLs say, `User:alice;User:bob` (Kafka's `super.users`).",
  },
  allowEveryoneIfNoAclFound: {
    env: 'PGKAFKA_ALLOW_EVERYONE_IF_NO_ACL_FOUND',
    schema: bool,
    default: false,
    doc: "With the authorizer on, allow any principal on a resource no ACL applies to (Kafka's `allow.everyone.if.no.acl.found`).",
  },
  // Request versions Kafka 4.0 removed (docs/apis.md#old-versions).
  kafka4VersionsOnly: {
    env: 'PGKAFKA_KAFKA4_VERSIONS_ONLY',
    schema: bool,
    default: false,
    doc: 'Serve only the request versions Kafka 4.x defines: ApiVersions advertises its ranges and an older version gets its answer (the connection closes; ApiVersions answers UNSUPPORTED_VERSION). Off: also serve the versions Kafka 3.9 served.',
  },
  logLevel: { env: 'PGKAFKA_LOG_LEVEL', schema: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']), default: 'info', doc: 'pino log level; `debug` logs every request.' },
} as const;

export type OptionName = keyof typeof options;
export type Config = { [K in OptionName]: z.output<(typeof options)[K]['schema']> | (typeof options)[K]['default'] };

const fileSchema = z.object(Object.fromEntries(Object.entries(options).map(([k, o]) => [k, o.schema.optional()]))).strict();

export class ConfigError extends Error {}

/** Builds the config: defaults, overridden by the JSON file named in PGKAFKA_CONFIG, overridden by environment variables, overridden by `overrides`. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Record<OptionName, unknown>> = {}): Config {
  let fromFile: Record<string, unknown> = {};
  if (env.PGKAFKA_CONFIG) {
    let raw: unknown;
    try {
      raw = JSON.parse(readFileSync(env.PGKAFKA_CONFIG, 'utf8'));
    } catch (err) {
      throw new ConfigError(`config file ${env.PGKAFKA_CONFIG}: ${(err as Error).message}`);
    }
    const parsed = fileSchema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new ConfigError(`config file ${env.PGKAFKA_CONFIG}: option ${issue.path.join('.') || '(top level)'}: ${issue.message}`);
    }
    fromFile = parsed.data;
  }
  const config: Record<string, unknown> = {};
  for (const [name, option] of Object.entries(options) as [OptionName, (typeof options)[OptionName]][]) {
    let value: unknown = option.default;
    let source = 'default';
    if (fromFile[name] !== undefined) [value, source] = [fromFile[name], 'config file'];
    if (env[option.env] !== undefined && env[option.env] !== '') [value, source] = [env[option.env], option.env];
    if (overrides[name] !== undefined) [value, source] = [overrides[name], 'override'];
    if (value === undefined) continue;
    const parsed = (option.schema as z.ZodType).safeParse(value);
    if (!parsed.success) {
      throw new ConfigError(`option ${name} (${option.env}, from ${source}): ${parsed.error.issues[0]!.message}; got ${JSON.stringify(value)}`);
    }
    config[name] = parsed.data;
  }
  checkListeners(config as Config);
  checkConsumerGroupTimeouts(config as Config);
  return config as Config;
}

/** What one option alone cannot check: TLS listeners need a certificate and key; advertised listeners must name configured ones. */
function checkListeners(config: Config): void {
  const listeners = parseListeners(config.listeners ?? '');
  const tls = listeners.filter((l) => l.name === 'SSL' || l.name === 'SASL_SSL');
  if (tls.length > 0 && (!config.sslCertFile || !config.sslKeyFile)) {
    throw new ConfigError(`option listeners: ${tls[0]!.name} needs sslCertFile (PGKAFKA_SSL_CERT_FILE) and sslKeyFile (PGKAFKA_SSL_KEY_FILE)`);
  }
  const names = listeners.length > 0 ? listeners.map((l) => l.name) : ['PLAINTEXT'];
  for (const a of parseListeners(config.advertisedListeners ?? '')) {
    if (!names.includes(a.name)) throw new ConfigError(`option advertisedListeners: ${a.name} is not in listeners (${names.join(', ')})`);
  }
}

/** Kafka's GroupCoordinatorConfig requirements between the consumer-group session timeouts and heartbeat intervals. */
function checkConsumerGroupTimeouts(c: Config): void {
  const require = (ok: boolean, message: string) => {
    if (!ok) throw new ConfigError(message);
  };
  require(c.groupConsumerMaxHeartbeatIntervalMs >=
    c.groupConsumerMinHeartbeatIntervalMs, 'group.consumer.max.heartbeat.interval.ms must be greater than or equal to group.consumer.min.heartbeat.interval.ms');
  require(c.groupConsumerHeartbeatIntervalMs >=
    c.groupConsumerMinHeartbeatIntervalMs, 'group.consumer.heartbeat.interval.ms must be greater than or equal to group.consumer.min.heartbeat.interval.ms');
  require(c.groupConsumerHeartbeatIntervalMs <= c.groupConsumerMaxHeartbeatIntervalMs, 'group.consumer.heartbeat.interval.ms must be less than or equal to group.consumer.max.heartbeat.interval.ms');
  require(c.groupConsumerMaxSessionTimeoutMs >= c.groupConsumerMinSessionTimeoutMs, 'group.consumer.max.session.timeout.ms must be greater than or equal to group.consumer.min.session.timeout.ms');
  require(c.groupConsumerSessionTimeoutMs >= c.groupConsumerMinSessionTimeoutMs, 'group.consumer.session.timeout.ms must be greater than or equal to group.consumer.min.session.timeout.ms');
  require(c.groupConsumerSessionTimeoutMs <= c.groupConsumerMaxSessionTimeoutMs, 'group.consumer.session.timeout.ms must be less than or equal to group.consumer.max.session.timeout.ms');
  require(c.groupConsumerHeartbeatIntervalMs < c.groupConsumerSessionTimeoutMs, 'group.consumer.heartbeat.interval.ms must be less than group.consumer.session.timeout.ms');
  require(c.groupConsumerMaxAssignmentIntervalMs >=
    c.groupConsumerMinAssignmentIntervalMs, 'group.consumer.max.assignment.interval.ms must be greater than or equal to group.consumer.min.assignment.interval.ms');
  require(c.groupConsumerAssignmentIntervalMs >=
    c.groupConsumerMinAssignmentIntervalMs, 'group.consumer.assignment.interval.ms must be greater than or equal to group.consumer.min.assignment.interval.ms');
  require(c.groupConsumerAssignmentIntervalMs <=
    c.groupConsumerMaxAssignmentIntervalMs, 'group.consumer.assignment.interval.ms must be less than or equal to group.consumer.max.assignment.interval.ms');
}
