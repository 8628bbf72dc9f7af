// Kafka 4.x topic configs: every name Kafka's LogConfig defines, with its
// type, default, validator and broker synonym, parsed and validated as
// Kafka's ConfigDef does (same error messages), resolved against the
// broker-wide defaults, and described as DescribeConfigs answers.
//
// A topic's explicit configs are stored as the strings the client sent.
// Some configs change what pgkafka does ("effective"); the others are
// accepted, stored and described but have no effect here ("inert"), each
// with the reason in `inert`. Names Kafka 4 does not define are refused:
// message.format.version and message.timestamp.difference.max.ms were
// removed in Kafka 4.0 (KIP-724, KIP-937).
import type { Config } from '../config/schema.js';
import { ErrorCode } from '../protocol/errors.js';

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
}

/** The broker-wide defaults of topic configs (a subset of the broker Config, named as in src/config/schema.ts). */
export interface BrokerTopicDefaults {
  logRetentionMs: number;
  logRetentionBytes: number;
  logCleanupPolicy: string;
  logCleanerDeleteRetentionMs: number;
  logCleanerMinCleanableRatio: number;
  logCleanerMinCompactionLagMs: number;
  logMessageTimestampType: 'CreateTime' | 'LogAppendTime';
  compressionType: TopicConfig['compressionType'];
  messageMaxBytes: number;
}

/** DescribeConfigs' ConfigSource values. */
export const ConfigSource = { TOPIC_CONFIG: 1, DYNAMIC_BROKER_CONFIG: 2, DYNAMIC_DEFAULT_BROKER_CONFIG: 3, STATIC_BROKER_CONFIG: 4, DEFAULT_CONFIG: 5 } as const;
/** DescribeConfigs' ConfigType values (v3+). */
export const ConfigTypeId = { boolean: 1, string: 2, int: 3, short: 4, long: 5, double: 6, list: 7, class: 8, password: 9 } as const;
/** IncrementalAlterConfigs operations. */
export const AlterConfigOp = { SET: 0, DELETE: 1, APPEND: 2, SUBTRACT: 3 } as const;

type ConfigType = 'boolean' | 'string' | 'int' | 'long' | 'double' | 'list';
type Parsed = boolean | string | bigint | number | string[];

export interface Synonym { name: string; value: string | null; source: number }
export interface DescribedConfig {
  name: string;
  value: string | null;
  readOnly: boolean;
  source: number;
  isSensitive: boolean;
  synonyms: Synonym[];
  configType: number;
  documentation: string | null;
}

interface ConfigDef {
  name: string;
  type: ConfigType;
  /** Kafka's default, as Kafka prints it. */
  default: string;
  /** An error message for a parsed value outside the valid range, or null. */
  check?: (v: Parsed) => string | null;
  /** The broker config that supplies the default (Kafka's first synonym), if any. */
  synonym?: string;
  /** Kafka lists the synonym's DEFAULT_CONFIG entry only where that broker config has a default of its own (log.retention.ms, log.roll.ms … have none). */
  synonymHasDefault?: boolean;
  /** The pgkafka option that sets the broker-wide default. */
  option?: keyof BrokerTopicDefaults;
  /** Why it has no effect here; absent when pgkafka acts on it. */
  inert?: string;
  doc: string;
}

const LONG_MAX = '9223372036854775807';
const atLeast = (min: number) => (v: Parsed) => (Number(v) < min ? `Value must be at least ${min}` : null);
const between = (min: number, max: number) => (v: Parsed) => (Number(v) < min ? `Value must be at least ${min}` : Number(v) > max ? `Value must be no more than ${max}` : null);
const oneOf = (...values: string[]) => (v: Parsed) => (values.includes(v as string) ? null : `String must be one of: ${values.join(', ')}`);
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

/** In Kafka's definition order, which is the order Kafka validates in. */
const DEFS: ConfigDef[] = [
  { name: 'segment.bytes', type: 'int', default: '1073741824', check: atLeast(1048576), synonym: 'log.segment.bytes', inert: NO_SEGMENTS, doc: 'Size at which Kafka rolls a log segment file.' },
  { name: 'segment.ms', type: 'long', default: '604800000', check: atLeast(1), synonym: 'log.roll.ms', synonymHasDefault: false, inert: NO_SEGMENTS, doc: 'Time after which Kafka rolls a log segment even if it is not full.' },
  { name: 'segment.jitter.ms', type: 'long', default: '0', check: atLeast(0), synonym: 'log.roll.jitter.ms', synonymHasDefault: false, inert: NO_SEGMENTS, doc: 'Largest random jitter subtracted from the segment roll time.' },
  { name: 'segment.index.bytes', type: 'int', default: '10485760', check: atLeast(4), synonym: 'log.index.size.max.bytes', inert: NO_SEGMENTS, doc: 'Size of the offset index file preallocated per segment.' },
  { name: 'flush.messages', type: 'long', default: LONG_MAX, check: atLeast(1), synonym: 'log.flush.interval.messages', inert: 'every acknowledged batch is already committed (and fsynced) by PostgreSQL', doc: 'Number of records after which Kafka forces an fsync of the log.' },
  { name: 'flush.ms', type: 'long', default: LONG_MAX, check: atLeast(0), synonym: 'log.flush.interval.ms', synonymHasDefault: false, inert: 'every acknowledged batch is already committed (and fsynced) by PostgreSQL', doc: 'Time after which Kafka forces an fsync of the log.' },
  { name: 'retention.bytes', type: 'long', default: '-1', synonym: 'log.retention.bytes', option: 'logRetentionBytes', doc: 'Largest size a partition may grow to before its oldest batches are deleted (delete policy); -1 means no limit.' },
  { name: 'retention.ms', type: 'long', default: '604800000', check: atLeast(-1), synonym: 'log.retention.ms', synonymHasDefault: false, option: 'logRetentionMs', doc: 'How long records are kept before they are deleted (delete policy); -1 means no time limit.' },
  { name: 'max.message.bytes', type: 'int', default: '1048588', check: atLeast(0), synonym: 'message.max.bytes', option: 'messageMaxBytes', doc: 'Largest record batch (after compression) the topic accepts.' },
  { name: 'index.interval.bytes', type: 'int', default: '4096', check: atLeast(0), synonym: 'log.index.interval.bytes', inert: NO_SEGMENTS, doc: 'How many bytes Kafka appends between offset index entries.' },
  { name: 'delete.retention.ms', type: 'long', default: '86400000', check: atLeast(0), synonym: 'log.cleaner.delete.retention.ms', option: 'logCleanerDeleteRetentionMs', doc: 'How long tombstones are kept in a compacted topic.' },
  { name: 'min.compaction.lag.ms', type: 'long', default: '0', check: atLeast(0), synonym: 'log.cleaner.min.compaction.lag.ms', option: 'logCleanerMinCompactionLagMs', doc: 'Least time a record stays uncompacted.' },
  { name: 'max.compaction.lag.ms', type: 'long', default: LONG_MAX, check: atLeast(1), synonym: 'log.cleaner.max.compaction.lag.ms', doc: 'Most time a record stays ineligible for compaction.' },
  { name: 'file.delete.delay.ms', type: 'long', default: '60000', check: atLeast(0), synonym: 'log.segment.delete.delay.ms', inert: 'expired batches are deleted by SQL; there are no files to delete later', doc: 'How long Kafka waits before deleting a file from the filesystem.' },
  { name: 'min.cleanable.dirty.ratio', type: 'double', default: '0.5', check: between(0, 1), synonym: 'log.cleaner.min.cleanable.ratio', option: 'logCleanerMinCleanableRatio', doc: 'Share of the log that must be uncompacted before compaction runs.' },
  { name: 'cleanup.policy', type: 'list', default: 'delete', check: (v) => (v as string[]).map(oneOf('compact', 'delete')).find((m) => m !== null) ?? null, synonym: 'log.cleanup.policy', option: 'logCleanupPolicy', doc: '"delete" (drop old batches by retention.ms/retention.bytes), "compact" (keep the latest record per key), or both.' },
  { name: 'unclean.leader.election.enable', type: 'boolean', default: 'false', synonym: 'unclean.leader.election.enable', inert: NO_REPLICAS, doc: 'Whether a replica outside the ISR may become leader.' },
  { name: 'min.insync.replicas', type: 'int', default: '1', check: atLeast(1), synonym: 'min.insync.replicas', inert: NO_REPLICAS, doc: 'Replicas that must acknowledge an acks=all write.' },
  { name: 'compression.type', type: 'string', default: 'producer', check: oneOf(...COMPRESSION_TYPES), synonym: 'compression.type', option: 'compressionType', doc: 'Final codec of stored batches: uncompressed, gzip, snappy, lz4, zstd, or producer (keep the producer\'s codec).' },
  { name: 'compression.gzip.level', type: 'int', default: '-1', check: (v) => ((Number(v) < 1 || Number(v) > 9) && Number(v) !== -1 ? 'Value must be between 1 and 9 or equal to -1' : null), synonym: 'compression.gzip.level', inert: 'batches are recompressed with the codec library\'s default level', doc: 'Compression level used when compression.type is gzip.' },
  { name: 'compression.lz4.level', type: 'int', default: '9', check: between(1, 17), synonym: 'compression.lz4.level', inert: 'batches are recompressed with the codec library\'s default level', doc: 'Compression level used when compression.type is lz4.' },
  { name: 'compression.zstd.level', type: 'int', default: '3', check: between(-131072, 22), synonym: 'compression.zstd.level', inert: 'batches are recompressed with the codec library\'s default level', doc: 'Compression level used when compression.type is zstd.' },
  { name: 'preallocate', type: 'boolean', default: 'false', synonym: 'log.preallocate', inert: NO_SEGMENTS, doc: 'Whether Kafka preallocates segment files on disk.' },
  { name: 'message.timestamp.type', type: 'string', default: 'CreateTime', check: oneOf('CreateTime', 'LogAppendTime'), synonym: 'log.message.timestamp.type', option: 'logMessageTimestampType', doc: 'Whether record timestamps are the producer\'s (CreateTime) or the broker\'s append time (LogAppendTime).' },
  { name: 'message.timestamp.before.max.ms', type: 'long', default: LONG_MAX, check: atLeast(0), synonym: 'log.message.timestamp.before.max.ms', doc: 'How far in the past a CreateTime timestamp may be.' },
  { name: 'message.timestamp.after.max.ms', type: 'long', default: '3600000', check: atLeast(0), synonym: 'log.message.timestamp.after.max.ms', doc: 'How far in the future a CreateTime timestamp may be.' },
  { name: 'leader.replication.throttled.replicas', type: 'list', default: '', check: throttledReplicas('leader.replication.throttled.replicas'), inert: NO_REPLICAS, doc: 'Replicas whose log replication is throttled on the leader side.' },
  { name: 'follower.replication.throttled.replicas', type: 'list', default: '', check: throttledReplicas('follower.replication.throttled.replicas'), inert: NO_REPLICAS, doc: 'Replicas whose log replication is throttled on the follower side.' },
  { name: 'message.downconversion.enable', type: 'boolean', default: 'true', synonym: 'log.message.downconversion.enable', inert: 'a no-op in Kafka 4 too: no client old enough to need down-conversion is served', doc: 'Deprecated; down-conversion no longer exists.' },
  { name: 'remote.storage.enable', type: 'boolean', default: 'false', inert: NO_TIERING + ' (true is refused, as by a Kafka broker without tiered storage)', doc: 'Whether the topic uses tiered storage.' },
  { name: 'local.retention.ms', type: 'long', default: '-2', check: atLeast(-2), synonym: 'log.local.retention.ms', inert: NO_TIERING, doc: 'How long tiered-storage segments stay on local disk; -2 means retention.ms.' },
  { name: 'local.retention.bytes', type: 'long', default: '-2', check: atLeast(-2), synonym: 'log.local.retention.bytes', inert: NO_TIERING, doc: 'Local size limit of a tiered-storage partition; -2 means retention.bytes.' },
  { name: 'remote.log.copy.disable', type: 'boolean', default: 'false', inert: NO_TIERING, doc: 'Stop copying segments to tiered storage.' },
  { name: 'remote.log.delete.on.disable', type: 'boolean', default: 'false', inert: NO_TIERING, doc: 'Delete tiered data when tiered storage is disabled for the topic.' },
];
const BY_NAME = new Map(DEFS.map((d) => [d.name, d]));

/** Every topic config name Kafka 4 defines. */
export const TOPIC_CONFIG_NAMES: readonly string[] = DEFS.map((d) => d.name);
/** The configs pgkafka acts on. */
export const EFFECTIVE_TOPIC_CONFIGS: readonly string[] = DEFS.filter((d) => !d.inert).map((d) => d.name);
/** The configs that are stored and described but have no effect, with the reason. */
export const INERT_TOPIC_CONFIGS: ReadonlyMap<string, string> = new Map(DEFS.filter((d) => d.inert).map((d) => [d.name, d.inert!]));

/** Java's Double.toString, for values Kafka prints (0.5, 1.0, 1.0E-4). */
export function javaDouble(x: number): string {
  if (!Number.isFinite(x)) return Number.isNaN(x) ? 'NaN' : x > 0 ? 'Infinity' : '-Infinity';
  const abs = Math.abs(x);
  if (abs === 0 || (abs >= 1e-3 && abs < 1e7)) return Number.isInteger(x) ? x.toFixed(1) : String(x);
  const [mantissa, exponent] = x.toExponential().split('e');
  return `${mantissa!.includes('.') ? mantissa : `${mantissa}.0`}E${Number(exponent)}`;
}

const INT_RANGE = [-(2n ** 31n), 2n ** 31n - 1n] as const;
const LONG_RANGE = [-(2n ** 63n), 2n ** 63n - 1n] as const;

type ParseResult = { value: Parsed; text: string; shown: string } | { error: string };

/** ConfigDef.parseType followed by the config's validator: the parsed value, its canonical text, or Kafka's message. */
function parse(def: ConfigDef, raw: string): ParseResult {
  const invalid = (shown: string, why: string) => ({ error: `Invalid value ${shown} for configuration ${def.name}: ${why}` });
  const trimmed = raw.trim();
  let value: Parsed;
  let text: string;
  let shown: string; // how Java prints the parsed value in a validator's message
  switch (def.type) {
    case 'boolean':
      if (!/^(true|false)$/i.test(trimmed)) return invalid(raw, 'Expected value to be either true or false');
      value = trimmed.toLowerCase() === 'true';
      text = shown = String(value);
      break;
    case 'string':
      value = text = shown = trimmed;
      break;
    case 'int':
    case 'long': {
      const [min, max] = def.type === 'int' ? INT_RANGE : LONG_RANGE;
      const n = /^[+-]?\d+$/.test(trimmed) ? BigInt(trimmed) : null;
      if (n === null || n < min || n > max) return invalid(raw, `Not a number of type ${def.type.toUpperCase()}`);
      value = n;
      text = shown = n.toString();
      break;
    }
    case 'double': {
      if (!/^[+-]?(Infinity|(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?[fFdD]?)$/.test(trimmed)) return invalid(raw, 'Not a number of type DOUBLE');
      value = Number(trimmed.replace(/[fFdD]$/, ''));
      text = shown = javaDouble(value);
      break;
    }
    case 'list':
      value = trimmed === '' ? [] : trimmed.split(/\s*,\s*/);
      text = value.join(',');
      shown = `[${value.join(', ')}]`;
      break;
  }
  const why = def.check?.(value) ?? null;
  if (why !== null) {
    // A list validator names the one bad element; the others name the parsed value.
    const bad = def.type === 'list' && !def.name.endsWith('.throttled.replicas') ? (value as string[]).find((s) => oneOf('compact', 'delete')(s) !== null) ?? '' : shown;
    return invalid(bad, why);
  }
  return { value, text, shown };
}

/** The broker-wide default of a config as Kafka would print it, and whether the operator changed it from Kafka's. */
function brokerDefault(def: ConfigDef, defaults: BrokerTopicDefaults): { text: string; overridden: boolean } {
  if (!def.option) return { text: def.default, overridden: false };
  const v = defaults[def.option];
  const text = def.type === 'double' ? javaDouble(Number(v)) : def.type === 'list' ? String(v).trim().split(/\s*,\s*/).filter((p) => p !== '').join(',') : String(v);
  return { text, overridden: text !== def.default };
}

/** The value in force: the explicit one if it parses, else the broker default. */
function effective(def: ConfigDef, explicit: Record<string, string>, defaults: BrokerTopicDefaults): Parsed {
  const raw = explicit[def.name];
  return valueOr(def, raw ?? brokerDefault(def, defaults).text, defaults);
}

/** The parsed value of raw, or of the broker default (or Kafka's) when raw does not parse. */
function valueOr(def: ConfigDef, raw: string, defaults?: BrokerTopicDefaults): Parsed {
  for (const candidate of [raw, defaults ? brokerDefault(def, defaults).text : def.default, def.default]) {
    const p = parse(def, candidate);
    if (!('error' in p)) return p.value;
  }
  throw new Error(`Kafka's default of ${def.name} does not parse`);
}

export function resolveTopicConfig(explicit: Record<string, string>, brokerDefaults: BrokerTopicDefaults): TopicConfig {
  const get = (name: string) => effective(BY_NAME.get(name)!, explicit, brokerDefaults);
  const num = (name: string) => Number(get(name) as bigint | number);
  const policies = (get('cleanup.policy') as string[]).map((p) => p.toLowerCase());
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
    messageTimestampBeforeMaxMs: num('message.timestamp.before.max.ms'),
    messageTimestampAfterMaxMs: num('message.timestamp.after.max.ms'),
    compressionType: get('compression.type') as TopicConfig['compressionType'],
  };
}

/**
 * Kafka's validation of a topic's complete explicit config set (creation, or
 * the result of an alteration): null values, unknown names, each value in
 * definition order, then the cross-config rules. The first failure, as
 * INVALID_CONFIG's message, or null.
 */
export function validateTopicConfigs(configs: Record<string, string | null>, brokerDefaults?: BrokerTopicDefaults): { name: string; message: string } | null {
  const nulls = Object.keys(configs).filter((k) => configs[k] === null);
  if (nulls.length > 0) return { name: nulls[0]!, message: `Null value not supported for topic configs: ${nulls.join(',')}` };
  const unknown = Object.keys(configs).find((k) => !BY_NAME.has(k));
  if (unknown !== undefined) return { name: unknown, message: `Unknown topic config name: ${unknown}` };
  const parsed = new Map<string, Parsed>();
  for (const def of DEFS) {
    const raw = configs[def.name];
    if (raw === undefined || raw === null) continue;
    const p = parse(def, raw);
    if ('error' in p) return { name: def.name, message: p.error };
    parsed.set(def.name, p.value);
  }
  const value = (name: string): Parsed => {
    const def = BY_NAME.get(name)!;
    return parsed.get(name) ?? valueOr(def, brokerDefaults ? brokerDefault(def, brokerDefaults).text : def.default, brokerDefaults);
  };
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
export function applyIncrementalAlter(
  current: Record<string, string>,
  ops: { name: string; configOperation: number; value: string | null }[],
  brokerDefaults: BrokerTopicDefaults,
): ConfigChange {
  const next: Record<string, string> = { ...current };
  for (const op of ops) {
    switch (op.configOperation) {
      case AlterConfigOp.SET:
        next[op.name] = op.value!;
        break;
      case AlterConfigOp.DELETE:
        delete next[op.name];
        break;
      case AlterConfigOp.APPEND:
      case AlterConfigOp.SUBTRACT: {
        const def = BY_NAME.get(op.name);
        const opName = op.configOperation === AlterConfigOp.APPEND ? 'APPEND' : 'SUBTRACT';
        if (def?.type !== 'list') return { errorCode: ErrorCode.INVALID_CONFIG, errorMessage: `Can't ${opName} to key ${op.name} because its type is not LIST.` };
        const base = next[op.name] ?? brokerDefault(def, brokerDefaults).text;
        let parts = base.split(',').filter((p) => p !== '');
        for (const v of (op.value ?? '').split(',')) {
          if (op.configOperation === AlterConfigOp.APPEND) {
            if (!parts.includes(v)) parts.push(v);
          } else {
            const i = parts.indexOf(v);
            if (i >= 0) parts = [...parts.slice(0, i), ...parts.slice(i + 1)];
          }
        }
        next[op.name] = parts.join(',');
        break;
      }
      default:
        return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `Unknown operations type ${op.configOperation}` };
    }
  }
  return { configs: next };
}

/** The configs of a topic as DescribeConfigs (and CreateTopics v5+) report them, sorted by name. */
export function describeTopicConfigs(
  explicit: Record<string, string>,
  brokerDefaults: BrokerTopicDefaults,
  opts: { names: string[] | null; includeSynonyms: boolean; includeDocumentation: boolean },
): DescribedConfig[] {
  const wanted = opts.names === null || opts.names.length === 0 ? null : new Set(opts.names);
  const out: DescribedConfig[] = [];
  for (const def of [...DEFS].sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (wanted && !wanted.has(def.name)) continue;
    const broker = brokerDefault(def, brokerDefaults);
    const synonyms: Synonym[] = [];
    const raw = explicit[def.name];
    if (raw !== undefined) {
      const p = parse(def, raw);
      synonyms.push({ name: def.name, value: 'error' in p ? raw : p.text, source: ConfigSource.TOPIC_CONFIG });
    }
    if (def.synonym && broker.overridden) synonyms.push({ name: def.synonym, value: broker.text, source: ConfigSource.STATIC_BROKER_CONFIG });
    if (def.synonym && def.synonymHasDefault !== false) synonyms.push({ name: def.synonym, value: def.default, source: ConfigSource.DEFAULT_CONFIG });
    const first = synonyms[0];
    const fromTopicOrBroker = first && first.source !== ConfigSource.DEFAULT_CONFIG;
    out.push({
      name: def.name,
      value: fromTopicOrBroker ? first.value : broker.text,
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

function documentation(def: ConfigDef): string {
  return def.inert ? `${def.doc} Inert in pgkafka: ${def.inert}.` : def.doc;
}

/** The broker configs DescribeConfigs reports for this broker: all static (read-only), from src/config/schema.ts. */
const BROKER_CONFIGS: { name: string; option: keyof Config; type: ConfigType; kafkaDefault: string; doc: string }[] = [
  { name: 'auto.create.topics.enable', option: 'autoCreateTopicsEnable', type: 'boolean', kafkaDefault: 'true', doc: 'Create unknown topics on Metadata and Produce.' },
  { name: 'compression.type', option: 'compressionType', type: 'string', kafkaDefault: 'producer', doc: 'Default compression.type of topics.' },
  { name: 'group.initial.rebalance.delay.ms', option: 'groupInitialRebalanceDelayMs', type: 'int', kafkaDefault: '3000', doc: 'How long the first rebalance of an empty group waits for more members.' },
  { name: 'group.max.session.timeout.ms', option: 'groupMaxSessionTimeoutMs', type: 'int', kafkaDefault: '1800000', doc: 'Largest session timeout a member may ask for.' },
  { name: 'group.max.size', option: 'groupMaxSize', type: 'int', kafkaDefault: '2147483647', doc: 'Most members one group may have.' },
  { name: 'group.min.session.timeout.ms', option: 'groupMinSessionTimeoutMs', type: 'int', kafkaDefault: '6000', doc: 'Smallest session timeout a member may ask for.' },
  { name: 'log.cleaner.delete.retention.ms', option: 'logCleanerDeleteRetentionMs', type: 'long', kafkaDefault: '86400000', doc: 'Default delete.retention.ms of topics.' },
  { name: 'log.cleaner.min.cleanable.ratio', option: 'logCleanerMinCleanableRatio', type: 'double', kafkaDefault: '0.5', doc: 'Default min.cleanable.dirty.ratio of topics.' },
  { name: 'log.cleaner.min.compaction.lag.ms', option: 'logCleanerMinCompactionLagMs', type: 'long', kafkaDefault: '0', doc: 'Default min.compaction.lag.ms of topics.' },
  { name: 'log.cleanup.policy', option: 'logCleanupPolicy', type: 'list', kafkaDefault: 'delete', doc: 'Default cleanup.policy of topics.' },
  { name: 'log.message.timestamp.type', option: 'logMessageTimestampType', type: 'string', kafkaDefault: 'CreateTime', doc: 'Default message.timestamp.type of topics.' },
  { name: 'log.retention.bytes', option: 'logRetentionBytes', type: 'long', kafkaDefault: '-1', doc: 'Default retention.bytes of topics.' },
  { name: 'log.retention.ms', option: 'logRetentionMs', type: 'long', kafkaDefault: '604800000', doc: 'Default retention.ms of topics.' },
  { name: 'message.max.bytes', option: 'messageMaxBytes', type: 'int', kafkaDefault: '1048588', doc: 'Largest record batch accepted; default max.message.bytes of topics.' },
  { name: 'node.id', option: 'nodeId', type: 'int', kafkaDefault: '', doc: "This broker's node id." },
  { name: 'num.partitions', option: 'numPartitions', type: 'int', kafkaDefault: '1', doc: 'Partitions of auto-created topics and of CreateTopics with -1.' },
  { name: 'offset.metadata.max.bytes', option: 'offsetMetadataMaxBytes', type: 'int', kafkaDefault: '4096', doc: 'Largest metadata string an offset commit may carry.' },
  { name: 'offsets.retention.check.interval.ms', option: 'offsetsRetentionCheckIntervalMs', type: 'long', kafkaDefault: '600000', doc: 'How often expired offsets are removed.' },
  { name: 'offsets.retention.minutes', option: 'offsetsRetentionMinutes', type: 'int', kafkaDefault: '10080', doc: 'How long committed offsets of an empty group are kept.' },
  { name: 'socket.request.max.bytes', option: 'socketRequestMaxBytes', type: 'int', kafkaDefault: '104857600', doc: 'Largest request frame accepted.' },
];

/**
 * This broker's configs as DescribeConfigs reports them for resource name
 * "<node id>": all read-only (pgkafka has no dynamic broker configs), source
 * STATIC_BROKER_CONFIG where the operator's value differs from Kafka's
 * default, else DEFAULT_CONFIG.
 */
export function describeBrokerConfigs(config: Config, opts: { names: string[] | null; includeSynonyms: boolean; includeDocumentation: boolean }): DescribedConfig[] {
  const wanted = opts.names === null || opts.names.length === 0 ? null : new Set(opts.names);
  return BROKER_CONFIGS.filter((b) => !wanted || wanted.has(b.name)).map((b) => {
    const v = config[b.option];
    const value = b.type === 'double' ? javaDouble(Number(v)) : String(v);
    const synonyms: Synonym[] = [];
    if (value !== b.kafkaDefault) synonyms.push({ name: b.name, value, source: ConfigSource.STATIC_BROKER_CONFIG });
    if (b.kafkaDefault !== '') synonyms.push({ name: b.name, value: b.kafkaDefault, source: ConfigSource.DEFAULT_CONFIG });
    return {
      name: b.name, value, readOnly: true, source: synonyms[0]?.source ?? ConfigSource.DEFAULT_CONFIG, isSensitive: false,
      synonyms: opts.includeSynonyms ? synonyms : [], configType: ConfigTypeId[b.type], documentation: opts.includeDocumentation ? b.doc : null,
    };
  });
}

/** DescribeConfigs/AlterConfigs resource types pgkafka serves. */
export const ConfigResourceType = { TOPIC: 2, BROKER: 4, BROKER_LOGGER: 8 } as const;

/**
 * Kafka's first checks on one resource of AlterConfigs/IncrementalAlterConfigs
 * (INVALID_REQUEST): duplicate config names, null values (allowed only for
 * DELETE). The message, or null.
 */
export function alterResourceError(configs: { name: string; value: string | null; configOperation?: number }[]): string | null {
  if (new Set(configs.map((c) => c.name)).size !== configs.length) return 'Error due to duplicate config keys';
  const nulls = configs.filter((c) => c.value === null && c.configOperation !== AlterConfigOp.DELETE).map((c) => c.name);
  return nulls.length > 0 ? `Null value not supported for : ${nulls.join(', ')}` : null;
}

/**
 * The request-level error of each resource of an AlterConfigs or
 * IncrementalAlterConfigs request: a resource named twice, or
 * alterResourceError. One entry per resource, null when it is well formed.
 */
export function alterRequestErrors(resources: { resourceType: number; resourceName: string; configs: { name: string; value: string | null; configOperation?: number }[] }[]): (string | null)[] {
  const key = (r: { resourceType: number; resourceName: string }) => `${r.resourceType}:${r.resourceName}`;
  const seen = new Map<string, number>();
  for (const r of resources) seen.set(key(r), (seen.get(key(r)) ?? 0) + 1);
  return resources.map((r) => (seen.get(key(r))! > 1 ? 'Each resource must appear at most once.' : alterResourceError(r.configs)));
}

/**
 * An alteration of this broker's configs: the resource name must be empty
 * (cluster default) or this node's id, and every pgkafka broker config is
 * static, so any change is refused as Kafka refuses a non-dynamic config
 * (INVALID_REQUEST). The message, or null for an empty change.
 */
export function brokerAlterError(resourceName: string, nodeId: number, names: string[]): string | null {
  if (resourceName !== '') {
    if (!/^[+-]?\d+$/.test(resourceName)) return `Node id must be an integer, but it is: ${resourceName}`;
    if (Number(resourceName) !== nodeId) return `Unexpected broker id, expected ${nodeId}, but received ${resourceName}`;
  }
  return names.length > 0 ? `Cannot update these configs dynamically: Set(${names.join(', ')})` : null;
}
