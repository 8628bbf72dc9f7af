// Group configs (KIP-848's config resource type GROUP), as Kafka 4.3's
// GroupConfig, ConfigHelper.createGroupConfigEntry and GroupConfigManager:
// the configs Kafka defines for a group, set per group with AlterConfigs and
// IncrementalAlterConfigs (stored in PostgreSQL, shared by every broker and
// reloaded on NOTIFY), described with the broker's group.* config as their
// synonym, and used by the consumer group: its session timeout, heartbeat
// interval and assignment interval come from its config when set, within the
// broker's current bounds (Kafka's GroupConfig.evaluate). pgkafka has no
// share or streams groups: their configs are accepted, checked against
// Kafka's default bounds, stored and described, and have no effect.
import { ErrorCode } from '../protocol/errors.js';
import type { BrokerDefaults } from '../log/broker-configs.js';
import {
  applyIncrementalOps,
  atLeast,
  ConfigSource,
  ConfigTypeId,
  oneOf,
  parseConfigValue,
  type Check,
  type ConfigType,
  type DescribedConfig,
  type DescribeOptions,
  type Synonym,
} from '../log/config-values.js';
import { LogCode } from '../observability/log-codes.js';
import type { Logger } from '../observability/logger.js';

/** What group configs need from storage. */
export interface GroupConfigStorage {
  /** Every group's configs. */
  load(): Promise<Map<string, Record<string, string>>>;
  /** Replaces a group's configs with what `change` makes of the stored ones ({} when none), atomically, and tells every broker; null leaves them. */
  update(groupId: string, change: (current: Record<string, string>) => Record<string, string> | null): Promise<void>;
}

/** The broker's bounds and defaults that group configs are checked against (Kafka's GroupCoordinatorConfig). */
export interface GroupConfigBounds {
  consumerSessionTimeoutMs: number;
  consumerMinSessionTimeoutMs: number;
  consumerMaxSessionTimeoutMs: number;
  consumerHeartbeatIntervalMs: number;
  consumerMinHeartbeatIntervalMs: number;
  consumerMaxHeartbeatIntervalMs: number;
  consumerAssignmentIntervalMs: number;
  consumerMinAssignmentIntervalMs: number;
  consumerMaxAssignmentIntervalMs: number;
}

interface GroupConfigDef {
  name: string;
  type: ConfigType;
  /** Kafka's default when the broker has no synonym in force. */
  kafkaDefault: string;
  check?: Check;
  /** The broker config that is its default (GroupConfig.ALL_GROUP_CONFIG_SYNONYMS). */
  brokerSynonym: string | null;
  /** The broker's bounds: [min, max] (null: none), with the names Kafka's messages give them; checked only when set for `onlyWhenSet`. */
  bounds?: { min: number | null; minName: string | null; max: number; maxName: string; onlyWhenSet?: boolean };
  doc: string;
}

const durationReset = /^by_duration:P(?:\d+D)?(?:T(?:\d+H)?(?:\d+M)?(?:\d+(?:\.\d+)?S)?)?$/i;
const shareAutoOffsetReset: Check = (v) =>
  /^(earliest|latest)$/i.test(v as string) || durationReset.test(v as string)
    ? null
    : `Invalid value \`${v as string}\` for configuration share.auto.offset.reset. The value must be either 'earliest', 'latest' or of the format 'by_duration:<PnDTnHnMn.nS>'.`;

/** Kafka's default bounds of the share and streams group configs (pgkafka serves no such groups, so they are not options). */
function groupConfigDefs(b: GroupConfigBounds): GroupConfigDef[] {
  const int = (name: string, kafkaDefault: number, min: number, brokerSynonym: string | null, bounds: GroupConfigDef['bounds'], doc: string): GroupConfigDef => ({
    name,
    type: 'int',
    kafkaDefault: String(kafkaDefault),
    check: atLeast(min),
    brokerSynonym,
    bounds,
    doc,
  });
  const range = (prefix: string, what: string, min: number, max: number, onlyWhenSet = false) => ({
    min,
    minName: `${prefix}.min.${what}`,
    max,
    maxName: `${prefix}.max.${what}`,
    onlyWhenSet,
  });
  return [
    int(
      'consumer.session.timeout.ms',
      45000,
      1,
      'group.consumer.session.timeout.ms',
      range('group.consumer', 'session.timeout.ms', b.consumerMinSessionTimeoutMs, b.consumerMaxSessionTimeoutMs),
      "Session timeout of the group's consumer-protocol members.",
    ),
    int(
      'consumer.heartbeat.interval.ms',
      5000,
      1,
      'group.consumer.heartbeat.interval.ms',
      range('group.consumer', 'heartbeat.interval.ms', b.consumerMinHeartbeatIntervalMs, b.consumerMaxHeartbeatIntervalMs),
      "Heartbeat interval of the group's consumer-protocol members.",
    ),
    int(
      'consumer.assignment.interval.ms',
      1000,
      0,
      'group.consumer.assignment.interval.ms',
      range('group.consumer', 'assignment.interval.ms', b.consumerMinAssignmentIntervalMs, b.consumerMaxAssignmentIntervalMs, true),
      'Least time between two target assignments of the group.',
    ),
    int('share.session.timeout.ms', 45000, 1, 'group.share.session.timeout.ms', range('group.share', 'session.timeout.ms', 45000, 60000), 'Share groups: inert here.'),
    int('share.heartbeat.interval.ms', 5000, 1, 'group.share.heartbeat.interval.ms', range('group.share', 'heartbeat.interval.ms', 5000, 15000), 'Share groups: inert here.'),
    int('share.record.lock.duration.ms', 30000, 1000, 'group.share.record.lock.duration.ms', range('group.share', 'record.lock.duration.ms', 15000, 60000), 'Share groups: inert here.'),
    int('share.delivery.count.limit', 5, 2, 'group.share.delivery.count.limit', range('group.share', 'delivery.count.limit', 2, 10), 'Share groups: inert here.'),
    int('share.partition.max.record.locks', 2000, 100, 'group.share.partition.max.record.locks', range('group.share', 'partition.max.record.locks', 100, 4000), 'Share groups: inert here.'),
    { name: 'share.auto.offset.reset', type: 'string', kafkaDefault: 'latest', check: shareAutoOffsetReset, brokerSynonym: null, doc: 'Share groups: inert here.' },
    { name: 'share.isolation.level', type: 'string', kafkaDefault: 'read_uncommitted', check: oneOf('read_committed', 'read_uncommitted'), brokerSynonym: null, doc: 'Share groups: inert here.' },
    { name: 'share.renew.acknowledge.enable', type: 'boolean', kafkaDefault: 'true', brokerSynonym: null, doc: 'Share groups: inert here.' },
    int('share.assignment.interval.ms', 1000, 0, 'group.share.assignment.interval.ms', range('group.share', 'assignment.interval.ms', 0, 15000, true), 'Share groups: inert here.'),
    int('streams.session.timeout.ms', 45000, 1, 'group.streams.session.timeout.ms', range('group.streams', 'session.timeout.ms', 45000, 60000), 'Streams groups: inert here.'),
    int('streams.heartbeat.interval.ms', 5000, 1, 'group.streams.heartbeat.interval.ms', range('group.streams', 'heartbeat.interval.ms', 5000, 15000), 'Streams groups: inert here.'),
    int('streams.num.standby.replicas', 0, 0, 'group.streams.num.standby.replicas', { min: null, minName: null, max: 2, maxName: 'group.streams.max.standby.replicas' }, 'Streams groups: inert here.'),
    int('streams.initial.rebalance.delay.ms', 3000, 0, 'group.streams.initial.rebalance.delay.ms', undefined, 'Streams groups: inert here.'),
    int('streams.assignment.interval.ms', 1000, 0, 'group.streams.assignment.interval.ms', range('group.streams', 'assignment.interval.ms', 0, 15000, true), 'Streams groups: inert here.'),
  ];
}

/** Kafka's GroupConfig checks: session timeouts above heartbeat intervals, per group kind. */
const SESSION_OVER_HEARTBEAT: [string, string][] = [
  ['consumer.session.timeout.ms', 'consumer.heartbeat.interval.ms'],
  ['share.session.timeout.ms', 'share.heartbeat.interval.ms'],
  ['streams.session.timeout.ms', 'streams.heartbeat.interval.ms'],
];

/** Configs the broker's defaults always take part in validation for (Kafka's extractGroupConfigMap). */
const ALWAYS_CHECKED = new Set([
  'consumer.session.timeout.ms',
  'consumer.heartbeat.interval.ms',
  'share.session.timeout.ms',
  'share.heartbeat.interval.ms',
  'share.record.lock.duration.ms',
  'share.delivery.count.limit',
  'share.partition.max.record.locks',
  'streams.session.timeout.ms',
  'streams.heartbeat.interval.ms',
  'streams.num.standby.replicas',
  'streams.initial.rebalance.delay.ms',
]);

export type GroupConfigEdit = { replace: Record<string, string> } | { ops: { name: string; configOperation: number; value: string | null }[] };

export interface GroupConfigOutcome {
  errorCode: number;
  errorMessage: string | null;
}

export class GroupConfigs {
  private readonly defs: GroupConfigDef[];
  private readonly byName: Map<string, GroupConfigDef>;
  private configs = new Map<string, Record<string, string>>();

  constructor(
    private readonly bounds: GroupConfigBounds,
    private readonly brokerDefaults: BrokerDefaults,
    private readonly store?: GroupConfigStorage,
    private readonly log?: Logger,
  ) {
    this.defs = groupConfigDefs(bounds);
    this.byName = new Map(this.defs.map((d) => [d.name, d]));
  }

  async load(): Promise<void> {
    if (this.store) this.configs = await this.store.load();
  }

  /** Another broker changed a group's configs (NOTIFY), or notifications may have been missed. */
  reload(): void {
    this.load().catch((err: Error) => this.log?.warn({ err: err.message, code: LogCode.GROUP_CONFIGS_RELOAD_FAILED }, 'reloading group configs failed'));
  }

  /** The configs set on the group (none: {}). */
  setOn(groupId: string): Record<string, string> {
    return this.configs.get(groupId) ?? {};
  }

  /** The groups with configs set, existing or not (Kafka's GroupConfigManager.groupIds): the GROUP resources ListConfigResources lists. */
  groupIds(): string[] {
    return [...this.configs.keys()];
  }

  /** A group left with no configs is forgotten, as Kafka's GroupConfigManager forgets it. */
  private remember(groupId: string, configs: Record<string, string>): void {
    if (Object.keys(configs).length === 0) this.configs.delete(groupId);
    else this.configs.set(groupId, configs);
  }

  /** The broker-side synonyms of a group config, highest first, ending in Kafka's default when the broker lists none. */
  private brokerSynonyms(def: GroupConfigDef): Synonym[] {
    const name = def.brokerSynonym ?? def.name;
    const layered = def.brokerSynonym ? this.brokerDefaults.synonyms(def.brokerSynonym) : [];
    return layered.length > 0 ? layered : [{ name, value: def.kafkaDefault, source: ConfigSource.DEFAULT_CONFIG }];
  }

  /** DescribeConfigs of a GROUP resource (ConfigHelper.createGroupConfigEntry), sorted by name. */
  describe(groupId: string, opts: DescribeOptions): DescribedConfig[] {
    const set = this.setOn(groupId);
    const wanted = opts.names === null || opts.names.length === 0 ? null : new Set(opts.names);
    return [...this.defs]
      .sort((a, b) => (a.name < b.name ? -1 : 1))
      .filter((def) => !wanted || wanted.has(def.name))
      .map((def) => {
        const synonyms = [...(def.name in set ? [{ name: def.name, value: set[def.name]!, source: ConfigSource.GROUP_CONFIG }] : []), ...this.brokerSynonyms(def)];
        return {
          name: def.name,
          value: synonyms[0]!.value,
          readOnly: false,
          source: synonyms[0]!.source,
          isSensitive: false,
          synonyms: opts.includeSynonyms ? synonyms : [],
          configType: ConfigTypeId[def.type],
          documentation: opts.includeDocumentation ? def.doc : null,
        };
      });
  }

  /** Kafka's GroupConfig.validate: names, then values (parsed in definition order), the broker's bounds, then sessions above heartbeats. */
  validate(configs: Record<string, string>): string | null {
    for (const name of Object.keys(configs)) if (!this.byName.has(name)) return `Unknown group config name: ${name}`;
    const values = new Map<string, number>();
    for (const def of this.defs) {
      const raw = configs[def.name] ?? (ALWAYS_CHECKED.has(def.name) ? (this.brokerSynonyms(def)[0]!.value ?? def.kafkaDefault) : def.kafkaDefault);
      const parsed = parseConfigValue(def, raw);
      if ('error' in parsed) return parsed.error;
      if (def.type === 'int') values.set(def.name, Number(parsed.value));
    }
    for (const def of this.defs) {
      const b = def.bounds;
      if (!b || (b.onlyWhenSet && !(def.name in configs))) continue;
      const v = values.get(def.name)!;
      if (b.min !== null && v < b.min) return `${def.name} must be greater than or equal to ${b.minName}`;
      if (v > b.max) return `${def.name} must be less than or equal to ${b.maxName}`;
    }
    for (const [session, heartbeat] of SESSION_OVER_HEARTBEAT) if (values.get(session)! <= values.get(heartbeat)!) return `${session} must be greater than ${heartbeat}`;
    return null;
  }

  /**
   * AlterConfigs (replace) or IncrementalAlterConfigs (ops) on a group, as
   * Kafka's controller checks them: the group name, the operations, then the
   * resulting set. validateOnly checks without storing.
   */
  async alter(groupId: string, edit: GroupConfigEdit, validateOnly: boolean): Promise<GroupConfigOutcome> {
    if (groupId === '') return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Default group resources are not allowed.' };
    let outcome: GroupConfigOutcome = { errorCode: ErrorCode.NONE, errorMessage: null };
    const change = (current: Record<string, string>): Record<string, string> | null => {
      const next = 'replace' in edit ? { configs: edit.replace } : applyIncrementalOps(current, edit.ops, () => null);
      if ('errorCode' in next) {
        outcome = next;
        return null;
      }
      const invalid = this.validate(next.configs);
      if (invalid !== null) {
        outcome = { errorCode: ErrorCode.INVALID_CONFIG, errorMessage: invalid };
        return null;
      }
      return validateOnly ? null : next.configs;
    };
    if (validateOnly || !this.store) {
      const next = change(this.setOn(groupId));
      if (next && !validateOnly) this.remember(groupId, next);
      return outcome;
    }
    let stored: Record<string, string> | null = null;
    await this.store.update(groupId, (current) => (stored = change(current)));
    if (stored !== null) this.remember(groupId, stored);
    return outcome;
  }

  /** The group's value of an int config within the broker's current bounds (Kafka's GroupConfig.evaluate), else `fallback`. */
  private intIn(groupId: string, name: string, fallback: number): number {
    const raw = this.configs.get(groupId)?.[name];
    if (raw === undefined) return fallback;
    const b = this.byName.get(name)!.bounds!;
    return Math.min(Math.max(Number(raw), b.min ?? Number(raw)), b.max);
  }

  consumerSessionTimeoutMs(groupId: string): number {
    return this.intIn(groupId, 'consumer.session.timeout.ms', this.bounds.consumerSessionTimeoutMs);
  }

  consumerHeartbeatIntervalMs(groupId: string): number {
    return this.intIn(groupId, 'consumer.heartbeat.interval.ms', this.bounds.consumerHeartbeatIntervalMs);
  }

  consumerAssignmentIntervalMs(groupId: string): number {
    return this.intIn(groupId, 'consumer.assignment.interval.ms', this.bounds.consumerAssignmentIntervalMs);
  }
}
