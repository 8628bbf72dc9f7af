// The Kafka broker configs that mean something in pgkafka, as Kafka's
// KafkaConfig defines them (name, type, default, validator), with the value
// pgkafka runs with (from its options, or fixed by how pgkafka works) and
// whether pgkafka applies a dynamic value (AlterConfigs and
// IncrementalAlterConfigs). The dynamic ones are the topic defaults (Kafka's
// DynamicLogConfig: the first broker synonym of each topic config): every
// topic without its own value takes them. Kafka can change a few others
// dynamically (listeners, max.connections, producer.id.expiration.ms …);
// pgkafka reads those once at start-up, so they are read-only here.
import type { Config } from '../config/schema.js';
import { atLeast, between, eachOneOf, javaDouble, LONG_MAX, oneOf, type Check, type ConfigType } from './config-values.js';

export interface BrokerConfigDef {
  name: string;
  type: ConfigType;
  /** Kafka's default as Kafka prints it; null when Kafka has none (log.retention.ms: log.retention.hours supplies it). */
  kafkaDefault: string | null;
  /** What Kafka uses when nothing sets it, where that is not kafkaDefault (log.retention.ms: 168 hours). */
  inForce?: string;
  /** The value pgkafka runs with, when an option sets it or pgkafka fixes it; absent: Kafka's default. */
  value?: (c: Config) => string | null;
  /** pgkafka applies a dynamic value of it (per broker or cluster-wide). */
  dynamic?: boolean;
  check?: Check;
  doc: string;
}

const COMPRESSION_TYPES = ['uncompressed', 'zstd', 'lz4', 'snappy', 'gzip', 'producer'];
const topicDefault = (topicConfig: string, extra = '') => `Default ${topicConfig} of topics${extra}.`;

/** Kafka's definitions, sorted by name (the order DescribeConfigs lists them in). */
export const BROKER_CONFIG_DEFS: readonly BrokerConfigDef[] = (
  [
    {
      name: 'advertised.listeners',
      type: 'string',
      kafkaDefault: null,
      value: (c) => c.advertisedListeners ?? null,
      doc: 'Listeners clients are told to use; unset, each listener advertises advertisedHost and its own port.',
    },
    {
      name: 'authorizer.class.name',
      type: 'string',
      kafkaDefault: '',
      value: (c) => (c.authorizerEnabled ? 'org.apache.kafka.metadata.authorizer.StandardAuthorizer' : ''),
      doc: "Set when pgkafka checks requests against ACLs, as with Kafka's StandardAuthorizer.",
    },
    { name: 'auto.create.topics.enable', type: 'boolean', kafkaDefault: 'true', value: (c) => String(c.autoCreateTopicsEnable), doc: 'Create unknown topics on Metadata and Produce.' },
    { name: 'broker.id', type: 'int', kafkaDefault: '-1', value: (c) => String(c.nodeId), doc: "This broker's id (node.id)." },
    {
      name: 'compression.gzip.level',
      type: 'int',
      kafkaDefault: '-1',
      dynamic: true,
      check: (v) => ((Number(v) < 1 || Number(v) > 9) && Number(v) !== -1 ? 'Value must be between 1 and 9 or equal to -1' : null),
      doc: topicDefault('compression.gzip.level'),
    },
    { name: 'compression.lz4.level', type: 'int', kafkaDefault: '9', dynamic: true, check: between(1, 17), doc: topicDefault('compression.lz4.level') },
    { name: 'compression.type', type: 'string', kafkaDefault: 'producer', value: (c) => c.compressionType, dynamic: true, check: oneOf(...COMPRESSION_TYPES), doc: topicDefault('compression.type') },
    { name: 'compression.zstd.level', type: 'int', kafkaDefault: '3', dynamic: true, check: between(-131072, 22), doc: topicDefault('compression.zstd.level') },
    { name: 'connections.max.idle.ms', type: 'long', kafkaDefault: '600000', value: (c) => String(c.connectionsMaxIdleMs), doc: 'Idle connections are closed after this long.' },
    { name: 'connections.max.reauth.ms', type: 'long', kafkaDefault: '0', value: (c) => String(c.connectionsMaxReauthMs), doc: 'SASL session lifetime (KIP-368); 0 never expires.' },
    { name: 'default.replication.factor', type: 'int', kafkaDefault: '1', value: () => '1', doc: 'Replication factor of auto-created topics: every partition has one copy, in PostgreSQL.' },
    { name: 'delete.topic.enable', type: 'boolean', kafkaDefault: 'true', doc: 'DeleteTopics deletes topics.' },
    // KIP-848 consumer groups.
    {
      name: 'group.consumer.assignment.interval.ms',
      type: 'int',
      kafkaDefault: '1000',
      value: (c) => String(c.groupConsumerAssignmentIntervalMs),
      doc: 'Least time between two target assignments of a consumer-protocol group.',
    },
    {
      name: 'group.consumer.max.assignment.interval.ms',
      type: 'int',
      kafkaDefault: '15000',
      value: (c) => String(c.groupConsumerMaxAssignmentIntervalMs),
      doc: 'Largest consumer-protocol assignment interval.',
    },
    {
      name: 'group.consumer.min.assignment.interval.ms',
      type: 'int',
      kafkaDefault: '0',
      value: (c) => String(c.groupConsumerMinAssignmentIntervalMs),
      doc: 'Smallest consumer-protocol assignment interval.',
    },
    {
      name: 'group.consumer.heartbeat.interval.ms',
      type: 'int',
      kafkaDefault: '5000',
      value: (c) => String(c.groupConsumerHeartbeatIntervalMs),
      doc: 'Heartbeat interval of consumer-protocol members.',
    },
    {
      name: 'group.consumer.max.heartbeat.interval.ms',
      type: 'int',
      kafkaDefault: '15000',
      value: (c) => String(c.groupConsumerMaxHeartbeatIntervalMs),
      doc: 'Largest consumer-protocol heartbeat interval.',
    },
    { name: 'group.consumer.max.session.timeout.ms', type: 'int', kafkaDefault: '60000', value: (c) => String(c.groupConsumerMaxSessionTimeoutMs), doc: 'Largest consumer-protocol session timeout.' },
    {
      name: 'group.coordinator.rebalance.protocols',
      type: 'list',
      kafkaDefault: 'classic,consumer,streams',
      value: (c) => c.groupCoordinatorRebalanceProtocols,
      check: eachOneOf('classic', 'consumer', 'share', 'streams'),
      doc: 'Rebalance protocols served; without consumer, the KIP-848 APIs answer UNSUPPORTED_VERSION.',
    },
    {
      name: 'group.consumer.migration.policy',
      type: 'string',
      kafkaDefault: 'bidirectional',
      value: (c) => c.groupConsumerMigrationPolicy,
      check: oneOf('disabled', 'upgrade', 'downgrade', 'bidirectional'),
      doc: 'Whether classic groups are upgraded to, and consumer-protocol groups downgraded from, the consumer protocol online.',
    },
    { name: 'group.consumer.max.size', type: 'int', kafkaDefault: '2147483647', value: (c) => String(c.groupConsumerMaxSize), doc: 'Most members one consumer-protocol group may have.' },
    {
      name: 'group.consumer.min.heartbeat.interval.ms',
      type: 'int',
      kafkaDefault: '5000',
      value: (c) => String(c.groupConsumerMinHeartbeatIntervalMs),
      doc: 'Smallest consumer-protocol heartbeat interval.',
    },
    { name: 'group.consumer.min.session.timeout.ms', type: 'int', kafkaDefault: '45000', value: (c) => String(c.groupConsumerMinSessionTimeoutMs), doc: 'Smallest consumer-protocol session timeout.' },
    { name: 'group.consumer.session.timeout.ms', type: 'int', kafkaDefault: '45000', value: (c) => String(c.groupConsumerSessionTimeoutMs), doc: 'Session timeout of consumer-protocol members.' },
    {
      name: 'group.initial.rebalance.delay.ms',
      type: 'int',
      kafkaDefault: '3000',
      value: (c) => String(c.groupInitialRebalanceDelayMs),
      doc: 'How long the first rebalance of an empty group waits for more members.',
    },
    { name: 'group.max.session.timeout.ms', type: 'int', kafkaDefault: '1800000', value: (c) => String(c.groupMaxSessionTimeoutMs), doc: 'Largest session timeout a member may ask for.' },
    { name: 'group.max.size', type: 'int', kafkaDefault: '2147483647', value: (c) => String(c.groupMaxSize), doc: 'Most members one group may have.' },
    { name: 'group.min.session.timeout.ms', type: 'int', kafkaDefault: '6000', value: (c) => String(c.groupMinSessionTimeoutMs), doc: 'Smallest session timeout a member may ask for.' },
    { name: 'listeners', type: 'string', kafkaDefault: 'PLAINTEXT://:9092', value: (c) => c.listeners ?? `PLAINTEXT://${c.host}:${c.port}`, doc: 'The listeners the broker binds.' },
    {
      name: 'log.cleaner.delete.retention.ms',
      type: 'long',
      kafkaDefault: '86400000',
      value: (c) => String(c.logCleanerDeleteRetentionMs),
      dynamic: true,
      check: atLeast(0),
      doc: topicDefault('delete.retention.ms'),
    },
    { name: 'log.cleaner.enable', type: 'boolean', kafkaDefault: 'true', doc: 'Compacted topics are compacted.' },
    { name: 'log.cleaner.max.compaction.lag.ms', type: 'long', kafkaDefault: LONG_MAX, dynamic: true, check: atLeast(1), doc: topicDefault('max.compaction.lag.ms') },
    {
      name: 'log.cleaner.min.cleanable.ratio',
      type: 'double',
      kafkaDefault: '0.5',
      value: (c) => javaDouble(c.logCleanerMinCleanableRatio),
      dynamic: true,
      check: between(0, 1),
      doc: topicDefault('min.cleanable.dirty.ratio'),
    },
    {
      name: 'log.cleaner.min.compaction.lag.ms',
      type: 'long',
      kafkaDefault: '0',
      value: (c) => String(c.logCleanerMinCompactionLagMs),
      dynamic: true,
      check: atLeast(0),
      doc: topicDefault('min.compaction.lag.ms'),
    },
    { name: 'log.cleanup.policy', type: 'list', kafkaDefault: 'delete', value: (c) => c.logCleanupPolicy, dynamic: true, check: eachOneOf('compact', 'delete'), doc: topicDefault('cleanup.policy') },
    { name: 'log.flush.interval.messages', type: 'long', kafkaDefault: LONG_MAX, dynamic: true, check: atLeast(1), doc: topicDefault('flush.messages', ' (inert)') },
    { name: 'log.flush.interval.ms', type: 'long', kafkaDefault: null, inForce: LONG_MAX, dynamic: true, doc: topicDefault('flush.ms', ' (inert)') },
    { name: 'log.flush.scheduler.interval.ms', type: 'long', kafkaDefault: LONG_MAX, doc: "Kafka's log flusher interval; the default of log.flush.interval.ms (inert)." },
    { name: 'log.index.interval.bytes', type: 'int', kafkaDefault: '4096', dynamic: true, check: atLeast(0), doc: topicDefault('index.interval.bytes', ' (inert)') },
    { name: 'log.index.size.max.bytes', type: 'int', kafkaDefault: '10485760', dynamic: true, check: atLeast(4), doc: topicDefault('segment.index.bytes', ' (inert)') },
    { name: 'log.local.retention.bytes', type: 'long', kafkaDefault: '-2', dynamic: true, check: atLeast(-2), doc: topicDefault('local.retention.bytes', ' (inert: no tiered storage)') },
    { name: 'log.local.retention.ms', type: 'long', kafkaDefault: '-2', dynamic: true, check: atLeast(-2), doc: topicDefault('local.retention.ms', ' (inert: no tiered storage)') },
    // Kafka 3.9's: kept so that topics created for Kafka 3.x describe as they did there.
    { name: 'log.message.format.version', type: 'string', kafkaDefault: '3.0-IV1', doc: topicDefault('message.format.version', ' (Kafka 3.x; removed in 4.0; inert)') },
    { name: 'log.message.timestamp.after.max.ms', type: 'long', kafkaDefault: '3600000', dynamic: true, check: atLeast(0), doc: topicDefault('message.timestamp.after.max.ms') },
    { name: 'log.message.timestamp.before.max.ms', type: 'long', kafkaDefault: LONG_MAX, dynamic: true, check: atLeast(0), doc: topicDefault('message.timestamp.before.max.ms') },
    {
      name: 'log.message.timestamp.difference.max.ms',
      type: 'long',
      kafkaDefault: LONG_MAX,
      dynamic: true,
      check: atLeast(0),
      doc: topicDefault('message.timestamp.difference.max.ms', ' (Kafka 3.x, removed in 4.0; used for the before and after limits not set otherwise)'),
    },
    {
      name: 'log.message.timestamp.type',
      type: 'string',
      kafkaDefault: 'CreateTime',
      value: (c) => c.logMessageTimestampType,
      dynamic: true,
      check: oneOf('CreateTime', 'LogAppendTime'),
      doc: topicDefault('message.timestamp.type'),
    },
    { name: 'log.message.downconversion.enable', type: 'boolean', kafkaDefault: 'true', dynamic: true, doc: topicDefault('message.downconversion.enable', ' (inert)') },
    { name: 'log.preallocate', type: 'boolean', kafkaDefault: 'false', dynamic: true, doc: topicDefault('preallocate', ' (inert)') },
    { name: 'log.retention.bytes', type: 'long', kafkaDefault: '-1', value: (c) => String(c.logRetentionBytes), dynamic: true, doc: topicDefault('retention.bytes') },
    {
      name: 'log.retention.check.interval.ms',
      type: 'long',
      kafkaDefault: '300000',
      value: (c) => String(c.logRetentionCheckIntervalMs),
      doc: 'How often the retention cleaner and the compactor run.',
    },
    { name: 'log.retention.hours', type: 'int', kafkaDefault: '168', doc: 'Default retention of topics in hours, when neither log.retention.ms nor log.retention.minutes is set.' },
    { name: 'log.retention.minutes', type: 'int', kafkaDefault: null, doc: 'Default retention of topics in minutes, when log.retention.ms is not set.' },
    { name: 'log.retention.ms', type: 'long', kafkaDefault: null, inForce: '604800000', value: (c) => String(c.logRetentionMs), dynamic: true, check: atLeast(-1), doc: topicDefault('retention.ms') },
    { name: 'log.roll.hours', type: 'int', kafkaDefault: '168', check: atLeast(1), doc: 'Default segment.ms of topics in hours (inert).' },
    { name: 'log.roll.jitter.hours', type: 'int', kafkaDefault: '0', check: atLeast(0), doc: 'Default segment.jitter.ms of topics in hours (inert).' },
    { name: 'log.roll.jitter.ms', type: 'long', kafkaDefault: null, inForce: '0', dynamic: true, doc: topicDefault('segment.jitter.ms', ' (inert)') },
    { name: 'log.roll.ms', type: 'long', kafkaDefault: null, inForce: '604800000', dynamic: true, doc: topicDefault('segment.ms', ' (inert)') },
    { name: 'log.segment.bytes', type: 'int', kafkaDefault: '1073741824', dynamic: true, check: atLeast(14), doc: topicDefault('segment.bytes', ' (inert)') },
    { name: 'log.segment.delete.delay.ms', type: 'long', kafkaDefault: '60000', dynamic: true, check: atLeast(0), doc: topicDefault('file.delete.delay.ms', ' (inert)') },
    { name: 'max.connections', type: 'int', kafkaDefault: '2147483647', value: (c) => String(c.maxConnections), doc: 'Most client connections at once.' },
    { name: 'max.connections.per.ip', type: 'int', kafkaDefault: '2147483647', value: (c) => String(c.maxConnectionsPerIp), doc: 'Most client connections from one address.' },
    {
      name: 'max.incremental.fetch.session.cache.slots',
      type: 'int',
      kafkaDefault: '1000',
      value: (c) => String(c.maxIncrementalFetchSessionCacheSlots),
      check: atLeast(0),
      doc: 'Most incremental fetch sessions kept at once.',
    },
    {
      name: 'message.max.bytes',
      type: 'int',
      kafkaDefault: '1048588',
      value: (c) => String(c.messageMaxBytes),
      dynamic: true,
      check: atLeast(0),
      doc: 'Largest record batch accepted; the default max.message.bytes of topics.',
    },
    { name: 'min.insync.replicas', type: 'int', kafkaDefault: '1', dynamic: true, check: atLeast(1), doc: topicDefault('min.insync.replicas', ' (inert: one copy per partition)') },
    { name: 'node.id', type: 'int', kafkaDefault: null, value: (c) => String(c.nodeId), doc: "This broker's node id." },
    { name: 'num.partitions', type: 'int', kafkaDefault: '1', value: (c) => String(c.numPartitions), doc: 'Partitions of auto-created topics and of CreateTopics with -1.' },
    { name: 'offset.metadata.max.bytes', type: 'int', kafkaDefault: '4096', value: (c) => String(c.offsetMetadataMaxBytes), doc: 'Largest metadata string an offset commit may carry.' },
    { name: 'offsets.retention.check.interval.ms', type: 'long', kafkaDefault: '600000', value: (c) => String(c.offsetsRetentionCheckIntervalMs), doc: 'How often expired offsets are removed.' },
    { name: 'offsets.retention.minutes', type: 'int', kafkaDefault: '10080', value: (c) => String(c.offsetsRetentionMinutes), doc: 'How long committed offsets of an empty group are kept.' },
    { name: 'offsets.topic.num.partitions', type: 'int', kafkaDefault: '50', doc: 'Groups are spread over the brokers in 50 coordinator slots, as over the partitions of __consumer_offsets.' },
    {
      name: 'producer.id.expiration.ms',
      type: 'int',
      kafkaDefault: '86400000',
      value: (c) => String(c.producerIdExpirationMs),
      doc: "How long an idempotent producer's state is kept after its last append.",
    },
    { name: 'remote.log.storage.system.enable', type: 'boolean', kafkaDefault: 'false', doc: 'pgkafka has no tiered storage.' },
    { name: 'sasl.enabled.mechanisms', type: 'list', kafkaDefault: 'GSSAPI', value: (c) => c.saslEnabledMechanisms, doc: 'SASL mechanisms offered on SASL listeners.' },
    { name: 'socket.request.max.bytes', type: 'int', kafkaDefault: '104857600', value: (c) => String(c.socketRequestMaxBytes), doc: 'Largest request frame accepted.' },
    { name: 'ssl.client.auth', type: 'string', kafkaDefault: 'none', value: (c) => c.sslClientAuth, doc: 'Client certificates on SSL listeners.' },
    {
      name: 'transaction.abort.timed.out.transaction.cleanup.interval.ms',
      type: 'int',
      kafkaDefault: '10000',
      value: () => '1000',
      doc: 'How often open transactions are checked against their timeout.',
    },
    { name: 'transaction.max.timeout.ms', type: 'int', kafkaDefault: '900000', doc: 'Largest transaction timeout a producer may ask for.' },
    { name: 'transactional.id.expiration.ms', type: 'int', kafkaDefault: '604800000', value: (c) => String(c.transactionalIdExpirationMs), doc: 'How long an idle transactional id is kept.' },
    { name: 'unclean.leader.election.enable', type: 'boolean', kafkaDefault: 'false', dynamic: true, doc: topicDefault('unclean.leader.election.enable', ' (inert: one copy per partition)') },
  ] satisfies BrokerConfigDef[]
).sort((a, b) => (a.name < b.name ? -1 : 1));

export const BROKER_CONFIG_BY_NAME: ReadonlyMap<string, BrokerConfigDef> = new Map(BROKER_CONFIG_DEFS.map((d) => [d.name, d]));

/** Kafka's DynamicBrokerConfig.brokerConfigSynonyms: the names that set one config, in precedence order. */
export function brokerConfigSynonyms(name: string): string[] {
  switch (name) {
    case 'log.roll.ms':
    case 'log.roll.hours':
      return ['log.roll.ms', 'log.roll.hours'];
    case 'log.roll.jitter.ms':
    case 'log.roll.jitter.hours':
      return ['log.roll.jitter.ms', 'log.roll.jitter.hours'];
    case 'log.flush.interval.ms':
      return ['log.flush.interval.ms', 'log.flush.scheduler.interval.ms'];
    case 'log.retention.ms':
    case 'log.retention.minutes':
    case 'log.retention.hours':
      return ['log.retention.ms', 'log.retention.minutes', 'log.retention.hours'];
    default:
      return [name];
  }
}
