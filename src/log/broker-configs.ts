// This broker's configs in Kafka's four layers, highest first: dynamic for
// this broker (DYNAMIC_BROKER_CONFIG), dynamic cluster-wide default (resource
// "", DYNAMIC_DEFAULT_BROKER_CONFIG), pgkafka's options (STATIC_BROKER_CONFIG
// where they differ from Kafka's default) and Kafka's defaults
// (DEFAULT_CONFIG). The dynamic layers live in PostgreSQL, shared by every
// broker, and are reloaded on NOTIFY. DescribeConfigs of a broker, its
// alteration (checked as Kafka's ConfigAdminManager and DynamicBrokerConfig
// check it) and the defaults of topic configs all read from here.
import { ErrorCode } from '../protocol/errors.js';
import type { Config } from '../config/schema.js';
import type { Logger } from '../observability/logger.js';
import type { BrokerConfigStorage } from './broker-config-storage.js';
import { BROKER_CONFIG_BY_NAME, BROKER_CONFIG_DEFS, brokerConfigSynonyms } from './broker-config-defs.js';
import { AlterConfigOp, canonical, ConfigSource, ConfigTypeId, parseConfigValue, javaSet, type DescribedConfig, type DescribeOptions, type Synonym } from './config-values.js';
import { LogCode } from '../observability/log-codes.js';

/** Where topic configs find their broker defaults. */
export interface BrokerDefaults {
  /** Grows whenever a dynamic config changes, so resolved topic configs can be cached. */
  readonly generation: number;
  /**
   * Kafka's synonyms of a broker config across the layers, highest first,
   * from the config's own name on (DescribeConfigs lists them so). The first
   * is the value in force; none means Kafka's built-in default applies.
   */
  synonyms(name: string): Synonym[];
}

export type BrokerConfigEdit = { replace: Record<string, string> } | { ops: { name: string; configOperation: number; value: string | null }[] };

export interface AlterOutcome {
  errorCode: number;
  errorMessage: string | null;
}

const OK: AlterOutcome = { errorCode: ErrorCode.NONE, errorMessage: null };

/** Unknown names (Kafka's custom configs) and passwords are sensitive: Kafka describes them without their value. */
const isSensitive = (name: string) => {
  const def = BROKER_CONFIG_BY_NAME.get(name);
  return !def || def.type === 'password';
};

export class BrokerConfigs implements BrokerDefaults {
  generation = 0;
  private dynamicBroker: Record<string, string> = {};
  private dynamicDefault: Record<string, string> = {};
  private readonly staticConfigs = new Map<string, string>();
  private readonly defaultConfigs = new Map<string, string>();

  constructor(
    private readonly config: Config,
    private readonly store?: BrokerConfigStorage,
    private readonly log?: Logger,
  ) {
    for (const def of BROKER_CONFIG_DEFS) {
      if (def.kafkaDefault !== null) this.defaultConfigs.set(def.name, def.kafkaDefault);
      const v = def.value?.(config);
      if (v !== undefined && v !== null && v !== (def.inForce ?? def.kafkaDefault)) this.staticConfigs.set(def.name, v);
    }
  }

  /** Reads the dynamic configs from PostgreSQL. */
  async load(): Promise<void> {
    if (!this.store) return;
    const { clusterDefault, broker } = await this.store.load(this.config.nodeId);
    this.setDynamic(clusterDefault, broker);
  }

  /** Another broker changed them (NOTIFY), or notifications may have been missed. */
  reload(): void {
    this.load().catch((err: Error) => this.log?.warn({ err: err.message, code: LogCode.BROKER_CONFIGS_RELOAD_FAILED }, 'reloading dynamic broker configs failed'));
  }

  /** Takes the dynamic layers as stored; values Kafka would not accept are ignored, as Kafka ignores them. */
  setDynamic(clusterDefault: Record<string, string>, broker: Record<string, string>): void {
    const valid = (configs: Record<string, string>, resource: string) =>
      Object.fromEntries(
        Object.entries(configs).filter(([name, value]) => {
          const def = BROKER_CONFIG_BY_NAME.get(name);
          const ok = !def || (def.dynamic === true && !('error' in parseConfigValue(def, value)));
          if (!ok) this.log?.warn({ resource, config: name, code: LogCode.BROKER_CONFIG_IGNORED }, 'stored dynamic broker config ignored: not dynamic or not valid');
          return ok;
        }),
      );
    this.dynamicDefault = valid(clusterDefault, '');
    this.dynamicBroker = valid(broker, String(this.config.nodeId));
    this.generation++;
  }

  synonyms(name: string): Synonym[] {
    return this.layeredSynonyms(name, false);
  }

  private layeredSynonyms(name: string, redact: boolean): Synonym[] {
    const names = brokerConfigSynonyms(name);
    const layers: [ReadonlyMap<string, string> | Record<string, string>, number][] = [
      [this.dynamicBroker, ConfigSource.DYNAMIC_BROKER_CONFIG],
      [this.dynamicDefault, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG],
      [this.staticConfigs, ConfigSource.STATIC_BROKER_CONFIG],
      [this.defaultConfigs, ConfigSource.DEFAULT_CONFIG],
    ];
    const out: Synonym[] = [];
    for (const [layer, source] of layers) {
      for (const n of names) {
        const value = layer instanceof Map ? layer.get(n) : (layer as Record<string, string>)[n];
        if (value !== undefined) out.push({ name: n, value: redact && isSensitive(n) ? null : value, source });
      }
    }
    // Kafka drops the synonyms of higher precedence than the config itself (listener overrides, log.retention.hours for log.retention.minutes).
    const own = out.findIndex((s) => s.name === name);
    return own < 0 ? [] : out.slice(own);
  }

  /** The value in force here, as Kafka prints it. */
  value(name: string): string | null {
    const def = BROKER_CONFIG_BY_NAME.get(name);
    const first = this.synonyms(name)[0];
    if (first) return def ? canonical(def, first.value!) : first.value;
    return def ? (def.value?.(this.config) ?? def.inForce ?? def.kafkaDefault) : null;
  }

  /**
   * DescribeConfigs of resource "" (the cluster-wide dynamic configs that are
   * set, as the client sent them) or of this broker (every config, with the
   * value in force), sorted by name.
   */
  describe(resourceName: string, opts: DescribeOptions): DescribedConfig[] {
    const perBroker = resourceName !== '';
    const names = perBroker ? new Set([...BROKER_CONFIG_DEFS.map((d) => d.name), ...Object.keys(this.dynamicDefault), ...Object.keys(this.dynamicBroker)]) : new Set(Object.keys(this.dynamicDefault));
    const wanted = opts.names === null || opts.names.length === 0 ? null : new Set(opts.names);
    return [...names]
      .filter((n) => !wanted || wanted.has(n))
      .sort()
      .map((name) => {
        const def = BROKER_CONFIG_BY_NAME.get(name);
        const sensitive = isSensitive(name);
        const synonyms = this.layeredSynonyms(name, true).filter((s) => perBroker || s.source === ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG);
        // A config set nowhere shows Kafka's own default, even where a synonym decides what is in force
        // (log.retention.ms unset reads null beside log.retention.hours=168, as on Kafka).
        const setItself = synonyms[0]?.name === name && synonyms[0].source !== ConfigSource.DEFAULT_CONFIG;
        const value = sensitive ? null : !perBroker ? this.dynamicDefault[name]! : setItself || !def ? this.value(name) : def.kafkaDefault;
        return {
          name,
          value,
          readOnly: def?.dynamic !== true,
          source: synonyms[0]?.source ?? ConfigSource.DEFAULT_CONFIG,
          isSensitive: sensitive,
          synonyms: opts.includeSynonyms ? synonyms : [],
          configType: def ? ConfigTypeId[def.type] : 0,
          documentation: opts.includeDocumentation ? (def?.doc ?? null) : null,
        };
      });
  }

  /**
   * AlterConfigs (replace) or IncrementalAlterConfigs (ops) on resource ""
   * or this broker's id (the handler has checked the name). Refused as Kafka
   * refuses: configs pgkafka cannot change at run time, values that do not
   * parse (INVALID_REQUEST), APPEND or SUBTRACT on a config that is not a
   * list (INVALID_CONFIG). Stored, and in force here, before it answers.
   */
  async alter(resourceName: string, edit: BrokerConfigEdit, validateOnly: boolean): Promise<AlterOutcome> {
    const current = resourceName === '' ? this.dynamicDefault : this.dynamicBroker;
    const first = this.edited(current, edit);
    if ('errorCode' in first) return first;
    if (validateOnly || !this.store) return OK;
    let failed: AlterOutcome | null = null;
    await this.store.update(resourceName, (stored) => {
      const next = this.edited(stored, edit);
      if ('errorCode' in next) {
        failed = next;
        return null;
      }
      return next.configs;
    });
    if (failed) return failed;
    await this.load();
    return OK;
  }

  private edited(current: Record<string, string>, edit: BrokerConfigEdit): { configs: Record<string, string> } | AlterOutcome {
    const next = 'replace' in edit ? { configs: edit.replace } : prepareIncremental(current, edit.ops);
    if ('errorCode' in next) return next;
    const error = validateDynamic(next.configs);
    return error ? { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: error } : next;
  }
}

/** ConfigAdminManager.prepareIncrementalConfigs for a broker resource. */
function prepareIncremental(current: Record<string, string>, ops: { name: string; configOperation: number; value: string | null }[]): { configs: Record<string, string> } | AlterOutcome {
  const unknownOp = ops.find((op) => !Object.values(AlterConfigOp).includes(op.configOperation as 0));
  if (unknownOp) return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `Unknown operations type ${unknownOp.configOperation}` };
  const next = { ...current };
  for (const op of ops) {
    if (op.configOperation === AlterConfigOp.SET) next[op.name] = op.value!;
    else if (op.configOperation === AlterConfigOp.DELETE) delete next[op.name];
    else {
      const def = BROKER_CONFIG_BY_NAME.get(op.name);
      // Kafka looks the name up in KafkaConfig's definitions without a check: an unknown one is an internal error there.
      if (!def) return { errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: null };
      const append = op.configOperation === AlterConfigOp.APPEND;
      if (def.type !== 'list') return { errorCode: ErrorCode.INVALID_CONFIG, errorMessage: `Config value ${append ? 'append' : 'subtract'} is not allowed for config key: ${op.name}` };
      const values = (op.value ?? '').split(',');
      if (append) {
        const old = (next[op.name] ?? def.kafkaDefault ?? '').split(',').filter((s) => s !== '');
        next[op.name] = [...old, ...values.filter((v) => !old.includes(v))].join(',');
      } else {
        next[op.name] = (next[op.name] ?? def.kafkaDefault ?? '')
          .split(',')
          .filter((s) => !values.includes(s))
          .join(',');
      }
    }
  }
  return { configs: next };
}

/** DynamicBrokerConfig.validateConfigs: non-dynamic names first, then each known value's type and range. The message, or null. */
function validateDynamic(configs: Record<string, string>): string | null {
  // Names Kafka does not define here are custom configs, which Kafka stores too.
  const nonDynamic = Object.keys(configs).filter((n) => BROKER_CONFIG_BY_NAME.has(n) && BROKER_CONFIG_BY_NAME.get(n)!.dynamic !== true);
  if (nonDynamic.length > 0) return `Cannot update these configs dynamically: ${javaSet(nonDynamic)}`;
  for (const def of BROKER_CONFIG_DEFS) {
    const raw = configs[def.name];
    if (raw === undefined) continue;
    const p = parseConfigValue(def, raw);
    if ('error' in p) return p.error;
  }
  return null;
}
