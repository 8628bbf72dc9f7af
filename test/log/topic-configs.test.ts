import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/schema.js';
import { BrokerConfigs } from '../../src/log/broker-configs.js';
import { javaDouble } from '../../src/log/config-values.js';
import {
  applyIncrementalAlter,
  describeTopicConfigs,
  EFFECTIVE_TOPIC_CONFIGS,
  INERT_TOPIC_CONFIGS,
  REMOVED_IN_KAFKA_4,
  resolveTopicConfig,
  TOPIC_CONFIG_NAMES,
  validateTopicConfigs,
} from '../../src/log/topic-configs.js';

const brokerWith = (overrides: Record<string, unknown>) => new BrokerConfigs(loadConfig({}, overrides));
const kafkaDefaults = brokerWith({});
const all = { names: null, includeSynonyms: true, includeDocumentation: false };
// Kafka's Long.MAX_VALUE (9223372036854775807) as a JavaScript number, which rounds it to 2^63.
const LONG_MAX = 2 ** 63;

describe('topic config definitions', () => {
  it('knows every Kafka 4 topic config and the three Kafka 3.9 configs that 4.0 removed', () => {
    expect(TOPIC_CONFIG_NAMES).toHaveLength(36);
    for (const n of ['cleanup.policy', 'compression.zstd.level', 'remote.log.delete.on.disable', 'follower.replication.throttled.replicas', 'message.timestamp.after.max.ms']) {
      expect(TOPIC_CONFIG_NAMES).toContain(n);
    }
    expect(REMOVED_IN_KAFKA_4).toEqual(['message.format.version', 'message.timestamp.difference.max.ms', 'message.downconversion.enable']);
    expect([...EFFECTIVE_TOPIC_CONFIGS].sort()).toEqual([
      'cleanup.policy',
      'compression.type',
      'delete.retention.ms',
      'max.compaction.lag.ms',
      'max.message.bytes',
      'message.downconversion.enable',
      'message.timestamp.after.max.ms',
      'message.timestamp.before.max.ms',
      'message.timestamp.difference.max.ms',
      'message.timestamp.type',
      'min.cleanable.dirty.ratio',
      'min.compaction.lag.ms',
      'retention.bytes',
      'retention.ms',
    ]);
    expect(EFFECTIVE_TOPIC_CONFIGS.length + INERT_TOPIC_CONFIGS.size).toBe(TOPIC_CONFIG_NAMES.length);
    for (const reason of INERT_TOPIC_CONFIGS.values()) expect(reason.length).toBeGreaterThan(10);
  });

  it('prints doubles as Java does', () => {
    expect([0.5, 1, 0, 0.25, 1e-4, 1e7].map(javaDouble)).toEqual(['0.5', '1.0', '0.0', '0.25', '1.0E-4', '1.0E7']);
  });
});

describe('validateTopicConfigs', () => {
  const error = (configs: Record<string, string | null>) => validateTopicConfigs(configs, kafkaDefaults);

  it("accepts every config at Kafka's own defaults, inert ones included", () => {
    const defaults = Object.fromEntries(describeTopicConfigs({}, kafkaDefaults, all).map((c) => [c.name, c.value!]));
    expect(error(defaults)).toBeNull();
    expect(error({ 'segment.ms': '3600000', 'index.interval.bytes': '8192', preallocate: 'TRUE', 'leader.replication.throttled.replicas': '0:1, 1:2' })).toBeNull();
    expect(error({ 'cleanup.policy': 'compact, delete', 'retention.ms': '-1', 'cleanup.policy ': '' })?.message).toBe('Unknown topic config name: cleanup.policy ');
  });

  it('refuses unknown names, and takes the names Kafka 4.0 removed as Kafka 3.9 did', () => {
    expect(error({ 'retention.ms': '1', 'retention.mss': '1' })).toEqual({ name: 'retention.mss', message: 'Unknown topic config name: retention.mss' });
    expect(error({ 'message.format.version': '3.0', 'message.timestamp.difference.max.ms': '1000' })).toBeNull();
    expect(error({ 'message.format.version': '0.10.0.1' })).toBeNull();
    expect(error({ 'message.format.version': '3.0-IV9' })?.message).toBe('Invalid value 3.0-IV9 for configuration message.format.version: Version 3.0-IV9 is not a valid version');
  });

  it("words value errors as Kafka's ConfigDef does", () => {
    expect(error({ 'retention.ms': 'abc' })?.message).toBe('Invalid value abc for configuration retention.ms: Not a number of type LONG');
    expect(error({ 'retention.ms': '-2' })?.message).toBe('Invalid value -2 for configuration retention.ms: Value must be at least -1');
    expect(error({ 'retention.ms': '9223372036854775808' })?.message).toBe('Invalid value 9223372036854775808 for configuration retention.ms: Not a number of type LONG');
    expect(error({ 'max.message.bytes': '2147483648' })?.message).toBe('Invalid value 2147483648 for configuration max.message.bytes: Not a number of type INT');
    expect(error({ 'segment.bytes': '1000' })?.message).toBe('Invalid value 1000 for configuration segment.bytes: Value must be at least 1048576');
    expect(error({ 'min.cleanable.dirty.ratio': '2' })?.message).toBe('Invalid value 2.0 for configuration min.cleanable.dirty.ratio: Value must be no more than 1');
    expect(error({ 'min.cleanable.dirty.ratio': 'x' })?.message).toBe('Invalid value x for configuration min.cleanable.dirty.ratio: Not a number of type DOUBLE');
    expect(error({ 'cleanup.policy': 'delete,compacted' })?.message).toBe('Invalid value compacted for configuration cleanup.policy: String must be one of: compact, delete');
    expect(error({ 'compression.type': 'brotli' })?.message).toBe('Invalid value brotli for configuration compression.type: String must be one of: uncompressed, zstd, lz4, snappy, gzip, producer');
    expect(error({ 'message.timestamp.type': 'createtime' })?.message).toBe('Invalid value createtime for configuration message.timestamp.type: String must be one of: CreateTime, LogAppendTime');
    expect(error({ preallocate: 'yes' })?.message).toBe('Invalid value yes for configuration preallocate: Expected value to be either true or false');
    expect(error({ 'compression.gzip.level': '0' })?.message).toBe('Invalid value 0 for configuration compression.gzip.level: Value must be between 1 and 9 or equal to -1');
    expect(error({ 'compression.zstd.level': '23' })?.message).toBe('Invalid value 23 for configuration compression.zstd.level: Value must be no more than 22');
    expect(error({ 'leader.replication.throttled.replicas': '0:1,x' })?.message).toBe(
      "Invalid value [0:1, x] for configuration leader.replication.throttled.replicas: leader.replication.throttled.replicas must be the literal '*' or a list of replicas in the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],...",
    );
  });

  it("checks in Kafka's definition order, then the rules across configs", () => {
    expect(error({ 'retention.ms': 'x', 'segment.bytes': 'y' })?.name).toBe('segment.bytes');
    expect(error({ 'min.compaction.lag.ms': '10', 'max.compaction.lag.ms': '5' })?.message).toBe('conflict topic config setting min.compaction.lag.ms (10) > max.compaction.lag.ms (5)');
    expect(validateTopicConfigs({ 'max.compaction.lag.ms': '5' }, brokerWith({ logCleanerMinCompactionLagMs: 10 }))?.name).toBe('min.compaction.lag.ms');
    expect(error({ 'remote.storage.enable': 'true' })?.message).toBe('Tiered Storage functionality is disabled in the broker. Topic cannot be configured with remote log storage.');
    expect(error({ 'remote.storage.enable': 'false', 'local.retention.ms': '-2' })).toBeNull();
    expect(error({ 'retention.ms': null })?.message).toBe('Null value not supported for topic configs: retention.ms');
  });
});

describe('resolveTopicConfig', () => {
  it("uses Kafka's defaults, then the broker's, then the topic's", () => {
    expect(resolveTopicConfig({}, kafkaDefaults)).toEqual({
      cleanupPolicy: { delete: true, compact: false },
      retentionMs: 604800000,
      retentionBytes: -1,
      deleteRetentionMs: 86400000,
      minCleanableDirtyRatio: 0.5,
      minCompactionLagMs: 0,
      maxCompactionLagMs: LONG_MAX,
      maxMessageBytes: 1048588,
      messageTimestampType: 'CreateTime',
      messageTimestampBeforeMaxMs: LONG_MAX,
      messageTimestampAfterMaxMs: 3600000,
      compressionType: 'producer',
      messageDownconversionEnable: true,
    });
    expect(resolveTopicConfig({ 'message.downconversion.enable': 'false' }, kafkaDefaults).messageDownconversionEnable).toBe(false);
    const broker = brokerWith({ logRetentionMs: 1000, logCleanupPolicy: 'compact', compressionType: 'zstd', messageMaxBytes: 500 });
    expect(resolveTopicConfig({}, broker)).toMatchObject({ retentionMs: 1000, cleanupPolicy: { delete: false, compact: true }, compressionType: 'zstd', maxMessageBytes: 500 });
    expect(resolveTopicConfig({ 'retention.ms': ' -1 ', 'cleanup.policy': 'delete, compact', 'min.cleanable.dirty.ratio': '0.1', 'message.timestamp.type': 'LogAppendTime' }, broker)).toMatchObject({
      retentionMs: -1,
      cleanupPolicy: { delete: true, compact: true },
      minCleanableDirtyRatio: 0.1,
      messageTimestampType: 'LogAppendTime',
    });
    expect(resolveTopicConfig({ 'cleanup.policy': '' }, broker).cleanupPolicy).toEqual({ delete: false, compact: false });
  });

  it('uses message.timestamp.difference.max.ms where the before/after limits are not set, as Kafka 3.9 did', () => {
    const at = (explicit: Record<string, string>, broker = kafkaDefaults) => {
      const c = resolveTopicConfig(explicit, broker);
      return [c.messageTimestampBeforeMaxMs, c.messageTimestampAfterMaxMs];
    };
    expect(at({})).toEqual([LONG_MAX, 3600000]);
    expect(at({ 'message.timestamp.difference.max.ms': '1000' })).toEqual([1000, 1000]);
    expect(at({ 'message.timestamp.difference.max.ms': '1000', 'message.timestamp.before.max.ms': '50' })).toEqual([50, 1000]);
    expect(at({ 'message.timestamp.difference.max.ms': '1000', 'message.timestamp.after.max.ms': '70' })).toEqual([1000, 70]);
    expect(at({ 'message.timestamp.difference.max.ms': '1000', 'message.timestamp.after.max.ms': '9223372036854775807' })).toEqual([1000, 1000]);
    const dynamic = brokerWith({});
    dynamic.setDynamic({ 'log.message.timestamp.difference.max.ms': '2000' }, {});
    expect(at({}, dynamic)).toEqual([2000, 2000]);
    expect(at({ 'message.timestamp.difference.max.ms': '1000' }, dynamic)).toEqual([1000, 1000]);
    dynamic.setDynamic({ 'log.message.timestamp.difference.max.ms': '2000', 'log.message.timestamp.after.max.ms': '300' }, {});
    expect(at({}, dynamic)).toEqual([2000, 300]);
  });

  it('falls back to the default for a stored value that does not parse', () => {
    expect(resolveTopicConfig({ 'retention.ms': 'junk' }, kafkaDefaults).retentionMs).toBe(604800000);
  });
});

describe('describeTopicConfigs', () => {
  it("reports every config, sorted, with Kafka's sources and types", () => {
    const described = describeTopicConfigs({}, kafkaDefaults, all);
    // As Kafka 4 lists them: the configs 4.0 removed only when set or named.
    expect(described.map((c) => c.name)).toEqual([...TOPIC_CONFIG_NAMES].filter((n) => !REMOVED_IN_KAFKA_4.includes(n)).sort());
    expect(describeTopicConfigs({ 'message.format.version': '2.8' }, kafkaDefaults, all).map((c) => c.name)).toContain('message.format.version');
    const byName = new Map(described.map((c) => [c.name, c]));
    expect(byName.get('cleanup.policy')).toEqual({
      name: 'cleanup.policy',
      value: 'delete',
      readOnly: false,
      source: 5,
      isSensitive: false,
      configType: 7,
      documentation: null,
      synonyms: [{ name: 'log.cleanup.policy', value: 'delete', source: 5 }],
    });
    // log.retention.ms has no default of its own in Kafka (log.retention.hours has), so Kafka lists no synonym.
    expect(describeTopicConfigs({}, kafkaDefaults, { ...all, names: ['message.format.version'] })[0]).toMatchObject({
      value: '3.0-IV1',
      source: 5,
      synonyms: [{ name: 'log.message.format.version', value: '3.0-IV1', source: 5 }],
      configType: 2,
    });
    expect(byName.get('retention.ms')).toMatchObject({ value: '604800000', source: 5, synonyms: [], configType: 5 });
    expect(byName.get('max.message.bytes')).toMatchObject({ value: '1048588', synonyms: [{ name: 'message.max.bytes', value: '1048588', source: 5 }], configType: 3 });
    expect(byName.get('remote.storage.enable')).toMatchObject({ value: 'false', source: 5, synonyms: [], configType: 1 });
    expect(byName.get('min.cleanable.dirty.ratio')).toMatchObject({ value: '0.5', configType: 6 });
    expect(byName.get('leader.replication.throttled.replicas')).toMatchObject({ value: '', configType: 7 });
  });

  it("lists the topic synonym, then the operator's broker default, then Kafka's", () => {
    const broker = brokerWith({ logCleanupPolicy: 'compact', logRetentionMs: 1000 });
    const [policy, retention] = describeTopicConfigs({ 'cleanup.policy': 'delete , compact' }, broker, { ...all, names: ['cleanup.policy', 'retention.ms', 'no.such'] });
    expect(policy).toMatchObject({
      value: 'delete,compact',
      source: 1,
      synonyms: [
        { name: 'cleanup.policy', value: 'delete,compact', source: 1 },
        { name: 'log.cleanup.policy', value: 'compact', source: 4 },
        { name: 'log.cleanup.policy', value: 'delete', source: 5 },
      ],
    });
    expect(retention).toMatchObject({
      value: '1000',
      source: 4,
      synonyms: [
        { name: 'log.retention.ms', value: '1000', source: 4 },
        { name: 'log.retention.hours', value: '168', source: 5 },
      ],
    });
  });

  it('lists dynamic broker values above the static ones', () => {
    const broker = brokerWith({ logCleanupPolicy: 'compact' });
    broker.setDynamic({ 'log.cleanup.policy': 'delete, compact', 'message.max.bytes': '100' }, { 'message.max.bytes': '200' });
    const [policy, maxBytes] = describeTopicConfigs({}, broker, { ...all, names: ['cleanup.policy', 'max.message.bytes'] });
    expect(policy).toMatchObject({
      value: 'delete,compact',
      source: 3,
      synonyms: [
        { name: 'log.cleanup.policy', value: 'delete, compact', source: 3 },
        { name: 'log.cleanup.policy', value: 'compact', source: 4 },
        { name: 'log.cleanup.policy', value: 'delete', source: 5 },
      ],
    });
    expect(maxBytes).toMatchObject({
      value: '200',
      source: 2,
      synonyms: [
        { name: 'message.max.bytes', value: '200', source: 2 },
        { name: 'message.max.bytes', value: '100', source: 3 },
        { name: 'message.max.bytes', value: '1048588', source: 5 },
      ],
    });
    expect(resolveTopicConfig({}, broker)).toMatchObject({ maxMessageBytes: 200, cleanupPolicy: { delete: true, compact: true } });
  });

  it('omits synonyms unless asked, and documents inert configs as such', () => {
    const [segment] = describeTopicConfigs({ 'segment.ms': '1000' }, kafkaDefaults, { names: ['segment.ms'], includeSynonyms: false, includeDocumentation: true });
    expect(segment).toMatchObject({ value: '1000', source: 1, synonyms: [] });
    expect(segment!.documentation).toMatch(/Inert in pgkafka/);
    const [retention] = describeTopicConfigs({}, kafkaDefaults, { names: ['retention.ms'], includeSynonyms: false, includeDocumentation: true });
    expect(retention!.documentation).not.toMatch(/Inert/);
  });
});

describe('applyIncrementalAlter', () => {
  const apply = (current: Record<string, string>, ...ops: [string, number, string | null][]) =>
    applyIncrementalAlter(
      current,
      ops.map(([name, configOperation, value]) => ({ name, configOperation, value })),
      kafkaDefaults,
    );

  it('sets, deletes, appends and subtracts', () => {
    expect(apply({ 'retention.ms': '1' }, ['segment.ms', 0, '5'], ['retention.ms', 1, null])).toEqual({ configs: { 'segment.ms': '5' } });
    expect(apply({}, ['cleanup.policy', 2, 'compact'])).toEqual({ configs: { 'cleanup.policy': 'delete,compact' } });
    expect(apply({ 'cleanup.policy': 'delete,compact' }, ['cleanup.policy', 2, 'compact'])).toEqual({ configs: { 'cleanup.policy': 'delete,compact' } });
    expect(apply({ 'cleanup.policy': 'delete,compact' }, ['cleanup.policy', 3, 'delete'])).toEqual({ configs: { 'cleanup.policy': 'compact' } });
    expect(apply({}, ['cleanup.policy', 3, 'delete'])).toEqual({ configs: { 'cleanup.policy': '' } });
  });

  it('appends only to list configs', () => {
    expect(apply({}, ['retention.ms', 2, '5'])).toEqual({ errorCode: 40, errorMessage: "Can't APPEND to key retention.ms because its type is not LIST." });
    expect(apply({}, ['segment.ms', 3, '5'])).toEqual({ errorCode: 40, errorMessage: "Can't SUBTRACT to key segment.ms because its type is not LIST." });
    expect(apply({}, ['segment.ms', 7, '5'])).toMatchObject({ errorCode: 42 });
  });
});

describe('BrokerConfigs.describe', () => {
  it("reports the broker options as static configs, Kafka's defaults as defaults, and only the topic defaults as writable", () => {
    const described = brokerWith({ logRetentionMs: 1000, numPartitions: 3 }).describe('1', {
      names: ['log.retention.ms', 'num.partitions', 'log.cleanup.policy', 'log.cleaner.min.cleanable.ratio'],
      includeSynonyms: true,
      includeDocumentation: false,
    });
    expect(described.map((c) => [c.name, c.value, c.source, c.readOnly])).toEqual([
      ['log.cleaner.min.cleanable.ratio', '0.5', 5, false],
      ['log.cleanup.policy', 'delete', 5, false],
      ['log.retention.ms', '1000', 4, false],
      ['num.partitions', '3', 4, true],
    ]);
    expect(described[2]!.synonyms).toEqual([
      { name: 'log.retention.ms', value: '1000', source: 4 },
      { name: 'log.retention.hours', value: '168', source: 5 },
    ]);
  });

  it('normalises the broker cleanup policy and refuses a bad one at start-up', () => {
    expect(loadConfig({ PGKAFKA_LOG_CLEANUP_POLICY: 'compact, delete' }).logCleanupPolicy).toBe('compact,delete');
    expect(() => loadConfig({ PGKAFKA_LOG_CLEANUP_POLICY: 'keep' })).toThrow(/logCleanupPolicy/);
  });
});
