// Topic configs: every name Kafka 4's LogConfig defines, and the two Kafka
// 4.0 removed that Kafka 3.9 still knew (message.format.version, KIP-724;
// message.timestamp.difference.max.ms, KIP-937), so that an application
// written for Kafka 3.x creates its topics unchanged. Each with its type,
// default, validator and broker synonym, parsed and validated as Kafka's
// ConfigDef does (same error messages), resolved against the broker's
// defaults (static or dynamic, see broker-configs.ts), and described as
// DescribeConfigs answers.
//
// A topic's explicit configs are stored as the strings the client sent.
// Some configs change what pgkafka does ("effective"); the others are
// accepted, stored and described but have no effect here ("inert"), each
// with the reason in `inert`. Names Kafka does not define are refused.
import type { BrokerDefaults } from './broker-configs.js';
import {
  applyIncrementalOps,
  atLeast,
  between,
  ConfigSource,
  ConfigTypeId,
  eachOneOf,
  LONG_MAX,
  oneOf,
  parseConfigValue,
  type Check,
  type ConfigType,
  type DescribedConfig,
  type DescribeOptions,
  type Parsed,
  type Synonym,
} from './config-values.js';

/** What pgkafka acts on, resolved from a topic's explicit configs and the broker defaults. */
export interface TopicConfig {
  cleanupPolicy: { delete: boolean; compact: boolean };
  retentionMs: number; // -1 = forever
  retentionBytes: number; // -1 = unlimited
  deleteRetentionMs: number;
  minCleanableDirtyRatio: number;
  minCompactionLagMs: number;
  maxCompactionLagMs: number;
  maxMessageBytes: number;
  messageTimestampType: 'CreateTime' | 'LogAppendTime';
  messageTimestampBeforeMaxMs: number;
  messageTimestampAfterMaxMs: number;
  compressionType: 'uncompressed' | 'zstd' | 'lz4' | 'snappy' | 'gzip' | 'producer';
  /** Whether Fetch v0-3 may read the topic (its batches down-converted to magic 0 or 1), as in Kafka 3.9. */
  messageDownconversionEnable: boolean;
}

interface TopicConfigDef {
  name: string;
  type: ConfigType;
  /** Kafka's default, as Kafka prints it. */
  default: string;
  check?: Check;
  /** The broker config that supplies the default (Kafka's first synonym), if any. */
  synonym?: string;
  /** Why it has no effect here; absent when pgkafka acts on it. */
  inert?: string;
  /** Kafka 3.9 defined it; Kafka 4.0 removed it. */
  removedIn4?: boolean;
  doc: string;
}

const COMPRESSION_TYPES = ['uncompressed', 'zstd', 'lz4', 'snappy', 'gzip', 'producer'];
const NO_SEGMENTS = 'pgkafka stores one PostgreSQL row per batch; there are no segment or index files';
const NO_REPLICAS = 'every partition has one copy, in PostgreSQL; there are no follower replicas';
const NO_TIERING = 'pgkafka has no tiered storage; PostgreSQL holds the whole log';
const throttledReplicas = (name: string) => (v: Parsed) => {
  const parts = (v as string[]).map((s) => s.trim());
  return parts.every((s) => /^([0-9]+:[0-9]+)?$/.test(s)) || parts.join('') === '*'
    ? null
    : `${name} must be the literal '*' or a list of replicas in the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],...`;
};

/** Kafka 3.9's MetadataVersion releases and their sub-versions: what message.format.version accepts. */
const METADATA_VERSIONS: [string, number][] = [
  ['0.8.0', 0],
  ['0.8.1', 0],
  ['0.8.2', 0],
  ['0.9.0', 0],
  ['0.10.0', 2],
  ['0.10.1', 3],
  ['0.10.2', 1],
  ['0.11.0', 3],
  ['1.0', 1],
  ['1.1', 1],
  ['2.0', 2],
  ['2.1', 3],
  ['2.2', 2],
  ['2.3', 2],
  ['2.4', 2],
  ['2.5', 1],
  ['2.6', 1],
  ['2.7', 3],
  ['2.8', 2],
  ['3.0', 2],
  ['3.1', 1],
  ['3.2', 1],
  ['3.3', 4],
  ['3.4', 1],
  ['3.5', 3],
  ['3.6', 3],
  ['3.7', 5],
  ['3.8', 1],
  ['3.9', 1],
  ['4.0', 2],
];
/** Kafka 3.9's MetadataVersion.fromVersionString keys: every "release-IVn", and the bare release of those production-ready in 3.9 (all up to 3.9). */
const VERSION_KEYS = new Set(METADATA_VERSIONS.flatMap(([release, ivs]) => [...(ivs === 0 || release !== '4.0' ? [release] : []), ...Array.from({ length: ivs }, (_, i) => `${release}-IV${i}`)]));
/** MetadataVersionValidator: "2.8.1" is read as 2.8, "0.10.0.1" as 0.10.0. */
const metadataVersion = (v: Parsed) => {
  const s = v as string;
  const segments = s.split('.');
  const n = s.startsWith('0.') ? 3 : 2;
  const key = segments.length <= n ? s : segments.slice(0, n).join('.');
  return VERSION_KEYS.has(key) ? null : `Version ${s} is not a valid version`;
};

const DEFS: TopicConfigDef[] = [
  { name: 'segment.bytes', type: 'int', default: '1073741824', check: atLeast(1048576), synonym: 'log.segment.bytes', inert: NO_SEGMENTS, doc: 'Size at which Kafka rolls a log segment file.' },
  { name: 'segment.ms', type: 'long', default: '604800000', check: atLeast(1), synonym: 'log.roll.ms', inert: NO_SEGMENTS, doc: 'Time after which Kafka rolls a log segment even if it is not full.' },
  { name: 'segment.jitter.ms', type: 'long', default: '0', check: atLeast(0), synonym: 'log.roll.jitter.ms', inert: NO_SEGMENTS, doc: 'Largest random jitter subtracted from the segment roll time.' },
  {
    name: 'segment.index.bytes',
    type: 'int',
    default: '10485760',
    check: atLeast(4),
    synonym: 'log.index.size.max.bytes',
    inert: NO_SEGMENTS,
    doc: 'Size of the offset index file preallocated per segment.',
  },
  {
    name: 'flush.messages',
    type: 'long',
    default: LONG_MAX,
    check: atLeast(1),
    synonym: 'log.flush.interval.messages',
    inert: 'every acknowledged batch is already committed (and fsynced) by PostgreSQL',
    doc: 'Number of records after which Kafka forces an fsync of the log.',
  },
  {
    name: 'flush.ms',
    type: 'long',
    default: LONG_MAX,
    check: atLeast(0),
    synonym: 'log.flush.interval.ms',
    inert: 'every acknowledged batch is already committed (and fsynced) by PostgreSQL',
    doc: 'Time after which Kafka forces an fsync of the log.',
  },
  {
    name: 'retention.bytes',
    type: 'long',
    default: '-1',
    synonym: 'log.retention.bytes',
    doc: 'Largest size a partition may grow to before its oldest batches are deleted (delete policy); -1 means no limit.',
  },
  {
    name: 'retention.ms',
    type: 'long',
    default: '604800000',
    check: atLeast(-1),
    synonym: 'log.retention.ms',
    doc: 'How long records are kept before they are deleted (delete policy); -1 means no time limit.',
  },
  { name: 'max.message.bytes', type: 'int', default: '1048588', check: atLeast(0), synonym: 'message.max.bytes', doc: 'Largest record batch (after compression) the topic accepts.' },
  {
    name: 'index.interval.bytes',
    type: 'int',
    default: '4096',
    check: atLeast(0),
    synonym: 'log.index.interval.bytes',
    inert: NO_SEGMENTS,
    doc: 'How many bytes Kafka appends between offset index entries.',
  },
  { name: 'delete.retention.ms', type: 'long', default: '86400000', check: atLeast(0), synonym: 'log.cleaner.delete.retention.ms', doc: 'How long tombstones are kept in a compacted topic.' },
  { name: 'min.compaction.lag.ms', type: 'long', default: '0', check: atLeast(0), synonym: 'log.cleaner.min.compaction.lag.ms', doc: 'Least time a record stays uncompacted.' },
  { name: 'max.compaction.lag.ms', type: 'long', default: LONG_MAX, check: atLeast(1), synonym: 'log.cleaner.max.compaction.lag.ms', doc: 'Most time a record stays ineligible for compaction.' },
  {
    name: 'file.delete.delay.ms',
    type: 'long',
    default: '60000',
    check: atLeast(0),
    synonym: 'log.segment.delete.delay.ms',
    inert: 'expired batches are deleted by SQL; there are no files to delete later',
    doc: 'How long Kafka waits before deleting a file from the filesystem.',
  },
  {
    name: 'min.cleanable.dirty.ratio',
    type: 'double',
    default: '0.5',
    check: between(0, 1),
    synonym: 'log.cleaner.min.cleanable.ratio',
    doc: 'Share of the log that must be uncompacted before compaction runs.',
  },
  {
    name: 'cleanup.policy',
    type: 'list',
    default: 'delete',
    check: eachOneOf('compact', 'delete'),
    synonym: 'log.cleanup.policy',
    doc: '"delete" (drop old batches by retention.ms/retention.bytes), "compact" (keep the latest record per key), or both.',
  },
  {
    name: 'unclean.leader.election.enable',
    type: 'boolean',
    default: 'false',
    synonym: 'unclean.leader.election.enable',
    inert: NO_REPLICAS,
    doc: 'Whether a replica outside the ISR may become leader.',
  },
  { name: 'min.insync.replicas', type: 'int', default: '1', check: atLeast(1), synonym: 'min.insync.replicas', inert: NO_REPLICAS, doc: 'Replicas that must acknowledge an acks=all write.' },
  {
    name: 'compression.type',
    type: 'string',
    default: 'producer',
    check: oneOf(...COMPRESSION_TYPES),
    synonym: 'compression.type',
    doc: "Final codec of stored batches: uncompressed, gzip, snappy, lz4, zstd, or producer (keep the producer's codec).",
  },
  {
    name: 'compression.gzip.level',
    type: 'int',
    default: '-1',
    check: (v) => ((Number(v) < 1 || Number(v) > 9) && Number(v) !== -1 ? 'Value must be between 1 and 9 or equal to -1' : null),
    synonym: 'compression.gzip.level',
    inert: "batches are recompressed with the codec library's default level",
    doc: 'Compression level used when compression.type is gzip.',
  },
  {
    name: 'compression.lz4.level',
    type: 'int',
    default: '9',
    check: between(1, 17),
    synonym: 'compression.lz4.level',
    inert: "batches are recompressed with the codec library's default level",
    doc: 'Compression level used when compression.type is lz4.',
  },
  {
    name: 'compression.zstd.level',
    type: 'int',
    default: '3',
    check: between(-131072, 22),
    synonym: 'compression.zstd.level',
    inert: "batches are recompressed with the codec library's default level",
    doc: 'Compression level used when compression.type is zstd.',
  },
  { name: 'preallocate', type: 'boolean', default: 'false', synonym: 'log.preallocate', inert: NO_SEGMENTS, doc: 'Whether Kafka preallocates segment files on disk.' },
  {
    name: 'message.format.version',
    type: 'string',
    default: '3.0-IV1',
    check: metadataVersion,
    synonym: 'log.message.format.version',
    removedIn4: true,
    inert: 'batches are stored in magic v2 (magic 0/1 message sets converted on append); Kafka 3.x also ignored it with inter.broker.protocol.version 3.0 or later',
    doc: '[DEPRECATED] The message format version Kafka 3.x would append in.',
  },
  {
    name: 'message.timestamp.type',
    type: 'string',
    default: 'CreateTime',
    check: oneOf('CreateTime', 'LogAppendTime'),
    synonym: 'log.message.timestamp.type',
    doc: "Whether record timestamps are the producer's (CreateTime) or the broker's append time (LogAppendTime).",
  },
  {
    name: 'message.timestamp.difference.max.ms',
    type: 'long',
    default: LONG_MAX,
    check: atLeast(0),
    synonym: 'log.message.timestamp.difference.max.ms',
    removedIn4: true,
    doc: "[DEPRECATED] How far a CreateTime timestamp may be from the broker's clock; the limit before and after where message.timestamp.before.max.ms or message.timestamp.after.max.ms is not set.",
  },
  {
    name: 'message.timestamp.before.max.ms',
    type: 'long',
    default: LONG_MAX,
    check: atLeast(0),
    synonym: 'log.message.timestamp.before.max.ms',
    doc: 'How far in the past a CreateTime timestamp may be.',
  },
  {
    name: 'message.timestamp.after.max.ms',
    type: 'long',
    default: '3600000',
    check: atLeast(0),
    synonym: 'log.message.timestamp.after.max.ms',
    doc: 'How far in the future a CreateTime timestamp may be.',
  },
  {
    name: 'leader.replication.throttled.replicas',
    type: 'list',
    default: '',
    check: throttledReplicas('leader.replication.throttled.replicas'),
    inert: NO_REPLICAS,
    doc: 'Replicas whose log replication is throttled on the leader side.',
  },
  {
    name: 'follower.replication.throttled.replicas',
    type: 'list',
    default: '',
    check: throttledReplicas('follower.replication.throttled.replicas'),
    inert: NO_REPLICAS,
    doc: 'Replicas whose log replication is throttled on the follower side.',
  },
  {
    name: 'message.downconversion.enable',
    type: 'boolean',
    default: 'true',
    synonym: 'log.message.downconversion.enable',
    removedIn4: true,
    doc: 'Whether Fetch v0-3 (clients before Kafka 0.11) may read the topic, its batches down-converted to their message format; false answers them UNSUPPORTED_VERSION.',
  },
  {
    name: 'remote.storage.enable',
    type: 'boolean',
    default: 'false',
    inert: NO_TIERING + ' (true is refused, as by a Kafka broker without tiered storage)',
    doc: 'Whether the topic uses tiered storage.',
  },
  {
    name: 'local.retention.ms',
    type: 'long',
    default: '-2',
    check: atLeast(-2),
    synonym: 'log.local.retention.ms',
    inert: NO_TIERING,
    doc: 'How long tiered-storage segments stay on local disk; -2 means retention.ms.',
  },
  {
    name: 'local.retention.bytes',
    type: 'long',
    default: '-2',
    check: atLeast(-2),
    synonym: 'log.local.retention.bytes',
    inert: NO_TIERING,
    doc: 'Local size limit of a tiered-storage partition; -2 means retention.bytes.',
  },
  { name: 'remote.log.copy.disable', type: 'boolean', default: 'false', inert: NO_TIERING, doc: 'Stop copying segments to tiered storage.' },
  { name: 'remote.log.delete.on.disable', type: 'boolean', default: 'false', inert: NO_TIERING, doc: 'Delete tiered data when tiered storage is disabled for the topic.' },
];
const BY_NAME = new Map(DEFS.map((d) => [d.name, d]));

/** Every topic config name pgkafka accepts: Kafka 4's, and Kafka 3.9's two that 4.0 removed. */
export const TOPIC_CONFIG_NAMES: readonly string[] = DEFS.map((d) => d.name);
/** The names Kafka 3.9 knew and Kafka 4.0 removed. */
export const REMOVED_IN_KAFKA_4: readonly string[] = DEFS.filter((d) => d.removedIn4).map((d) => d.name);
/** The configs pgkafka acts on. */
export const EFFECTIVE_TOPIC_CONFIGS: readonly string[] = DEFS.filter((d) => !d.inert).map((d) => d.name);
/** The configs that are stored and described but have no effect, with the reason. */
export const INERT_TOPIC_CONFIGS: ReadonlyMap<string, string> = new Map(DEFS.filter((d) => d.inert).map((d) => [d.name, d.inert!]));

/**
 * The broker's default of a topic config: the synonyms Kafka lists for it
 * (its broker config across the dynamic, static and default layers) and the
 * value in force as Kafka prints it; `fromBroker` when a broker layer above
 * Kafka's own default sets it.
 */
function brokerDefault(def: TopicConfigDef, defaults: BrokerDefaults | undefined): { text: string; synonyms: Synonym[]; fromBroker: boolean } {
  const synonyms = def.synonym && defaults ? defaults.synonyms(def.synonym) : [];
  const first = synonyms[0];
  if (!first || first.value === null) return { text: def.default, synonyms, fromBroker: false };
  const p = parseConfigValue(def, first.value);
  return { text: 'error' in p ? def.default : p.text, synonyms, fromBroker: first.source !== ConfigSource.DEFAULT_CONFIG };
}

/** The parsed value of raw, or of the broker default (or Kafka's) when raw does not parse. */
function valueOr(def: TopicConfigDef, raw: string | undefined, defaults?: BrokerDefaults): Parsed {
  for (const candidate of [raw, brokerDefault(def, defaults).text, def.default]) {
    if (candidate === undefined) continue;
    const p = parseConfigValue(def, candidate);
    if (!('error' in p)) return p.value;
  }
  throw new Error(`Kafka's default of ${def.name} does not parse`);
}

const MAX = BigInt(LONG_MAX);

export function resolveTopicConfig(explicit: Record<string, string>, brokerDefaults: BrokerDefaults): TopicConfig {
  const get = (name: string) => valueOr(BY_NAME.get(name)!, explicit[name], brokerDefaults);
  const num = (name: string) => Number(get(name) as bigint | number);
  /** Set by the topic or by the broker, rather than left at Kafka's default. */
  const isSet = (name: string) => explicit[name] !== undefined || brokerDefault(BY_NAME.get(name)!, brokerDefaults).fromBroker;
  const policies = (get('cleanup.policy') as string[]).map((p) => p.toLowerCase());
  // Kafka 3.9's LogConfig: message.timestamp.difference.max.ms stands in for
  // a before/after limit left at Long.MAX_VALUE. Kafka 4 lowered the after
  // default to one hour, so here the difference applies to the after limit
  // wherever that is not set by the topic or the broker.
  const difference = get('message.timestamp.difference.max.ms') as bigint;
  const before = get('message.timestamp.before.max.ms') as bigint;
  const after = get('message.timestamp.after.max.ms') as bigint;
  const beforeMs = before !== MAX ? before : difference;
  const afterMs = isSet('message.timestamp.after.max.ms') ? (after !== MAX ? after : difference) : isSet('message.timestamp.difference.max.ms') ? difference : after;
  return {
    cleanupPolicy: { delete: policies.includes('delete'), compact: policies.includes('compact') },
    retentionMs: num('retention.ms'),
    retentionBytes: num('retention.bytes'),
    deleteRetentionMs: num('delete.retention.ms'),
    minCleanableDirtyRatio: num('min.cleanable.dirty.ratio'),
    minCompactionLagMs: num('min.compaction.lag.ms'),
    maxCompactionLagMs: num('max.compaction.lag.ms'),
    maxMessageBytes: num('max.message.bytes'),
    messageTimestampType: get('message.timestamp.type') as TopicConfig['messageTimestampType'],
    messageTimestampBeforeMaxMs: Number(beforeMs),
    messageTimestampAfterMaxMs: Number(afterMs),
    compressionType: get('compression.type') as TopicConfig['compressionType'],
    messageDownconversionEnable: get('message.downconversion.enable') as boolean,
  };
}

/**
 * Kafka's validation of a topic's complete explicit config set (creation, or
 * the result of an alteration): null values, unknown names, each value in
 * definition order, then the cross-config rules. The first failure, as
 * INVALID_CONFIG's message, or null.
 */
export function validateTopicConfigs(configs: Record<string, string | null>, brokerDefaults?: BrokerDefaults): { name: string; message: string } | null {
  const nulls = Object.keys(configs).filter((k) => configs[k] === null);
  if (nulls.length > 0) return { name: nulls[0]!, message: `Null value not supported for topic configs: ${nulls.join(',')}` };
  const unknown = Object.keys(configs).find((k) => !BY_NAME.has(k));
  if (unknown !== undefined) return { name: unknown, message: `Unknown topic config name: ${unknown}` };
  const parsed = new Map<string, Parsed>();
  for (const def of DEFS) {
    const raw = configs[def.name];
    if (raw === undefined || raw === null) continue;
    const p = parseConfigValue(def, raw);
    if ('error' in p) return { name: def.name, message: p.error };
    parsed.set(def.name, p.value);
  }
  const value = (name: string): Parsed => parsed.get(name) ?? valueOr(BY_NAME.get(name)!, undefined, brokerDefaults);
  const minLag = value('min.compaction.lag.ms') as bigint;
  const maxLag = value('max.compaction.lag.ms') as bigint;
  if (minLag > maxLag) {
    return { name: 'min.compaction.lag.ms', message: `conflict topic config setting min.compaction.lag.ms (${minLag}) > max.compaction.lag.ms (${maxLag})` };
  }
  if (value('remote.storage.enable') === true) {
    return { name: 'remote.storage.enable', message: 'Tiered Storage functionality is disabled in the broker. Topic cannot be configured with remote log storage.' };
  }
  return null;
}

export type ConfigChange = { configs: Record<string, string> } | { errorCode: number; errorMessage: string };

/**
 * IncrementalAlterConfigs on a topic's explicit configs, as Kafka's controller
 * applies it. APPEND and SUBTRACT work on list configs only; on a config not
 * set explicitly they start from the value in force (the broker default).
 * The result still has to pass validateTopicConfigs.
 */
export function applyIncrementalAlter(current: Record<string, string>, ops: { name: string; configOperation: number; value: string | null }[], brokerDefaults: BrokerDefaults): ConfigChange {
  return applyIncrementalOps(current, ops, (name) => {
    const def = BY_NAME.get(name);
    return def?.type === 'list' ? brokerDefault(def, brokerDefaults).text : null;
  });
}

/** The configs of a topic as DescribeConfigs (and CreateTopics v5+) report them, sorted by name. */
export function describeTopicConfigs(explicit: Record<string, string>, brokerDefaults: BrokerDefaults, opts: DescribeOptions): DescribedConfig[] {
  const wanted = opts.names === null || opts.names.length === 0 ? null : new Set(opts.names);
  const out: DescribedConfig[] = [];
  for (const def of [...DEFS].sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (wanted && !wanted.has(def.name)) continue;
    const raw = explicit[def.name];
    // Kafka 4 lists none of the configs it removed; an application written for 3.x sees one it set, or names.
    if (def.removedIn4 && raw === undefined && !wanted) continue;
    const broker = brokerDefault(def, brokerDefaults);
    const synonyms: Synonym[] = [];
    if (raw !== undefined) {
      const p = parseConfigValue(def, raw);
      synonyms.push({ name: def.name, value: 'error' in p ? raw : p.text, source: ConfigSource.TOPIC_CONFIG });
    }
    synonyms.push(...broker.synonyms);
    const first = synonyms[0];
    out.push({
      name: def.name,
      value: first?.source === ConfigSource.TOPIC_CONFIG ? first.value : broker.text,
      readOnly: false,
      source: first?.source ?? ConfigSource.DEFAULT_CONFIG,
      isSensitive: false,
      synonyms: opts.includeSynonyms ? synonyms : [],
      configType: ConfigTypeId[def.type],
      documentation: opts.includeDocumentation ? documentation(def) : null,
    });
  }
  return out;
}

function documentation(def: TopicConfigDef): string {
  const removed = def.removedIn4 ? ' Removed in Kafka 4.0; accepted as Kafka 3.9 accepted it.' : '';
  return def.inert ? `${def.doc}${removed} Inert in pgkafka: ${def.inert}.` : `${def.doc}${removed}`;
}
