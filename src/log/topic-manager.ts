import { randomUUID } from 'node:crypto';
import type { TopicRow, TopicStorage } from './topic-storage.js';
import { ErrorCode } from '../protocol/errors.js';
import type { BrokerDefaults } from './broker-configs.js';
import { resolveTopicConfig, validateTopicConfigs, type ConfigChange, type TopicConfig } from './topic-configs.js';
import { topicNameError, unifyCollisionChars } from './topic-name.js';

/** A topic; `configs` holds its explicitly set configs as the client sent them (see topicConfig for the values in force). */
export type Topic = TopicRow;

export interface CreateTopicRequest {
  name: string;
  numPartitions: number; // -1: broker default
  replicationFactor: number; // -1: broker default
  /** Explicit configs; a null value is refused with INVALID_CONFIG, as Kafka does. */
  configs: Record<string, string | null>;
  validateOnly: boolean;
}

export interface TopicOutcome {
  errorCode: number;
  errorMessage: string | null;
  topic?: Topic;
}

export interface TopicDefaults {
  numPartitions: number;
  autoCreateTopicsEnable: boolean;
}

const MAX_PARTITIONS = 100_000;

/** Kafka's internal topics (Topic.isInternal): Metadata flags them is_internal. */
const INTERNAL_TOPICS = new Set(['__consumer_offsets', '__transaction_state', '__share_group_state']);
export const isInternalTopic = (name: string): boolean => INTERNAL_TOPICS.has(name);

/**
 * Names whose state Kafka keeps in its own logs and pgkafka in PostgreSQL
 * tables (committed offsets, transactions; KRaft's __cluster_metadata): never
 * created as ordinary topics, by CreateTopics or auto-creation, since a client
 * reading them would find nothing of that state.
 */
const isBrokerStateTopic = (name: string): boolean => INTERNAL_TOPICS.has(name) || name === '__cluster_metadata';

/** Topics as this broker knows them: a cache over the topics table, invalidated by NOTIFY. */
export class TopicManager {
  private readonly byName = new Map<string, Topic>();
  private readonly byId = new Map<string, Topic>();
  private allLoaded = false;
  /** Grows whenever a topic may have been created, deleted or changed (here or, by NOTIFY, in another broker): regular-expression subscriptions are resolved again after it moves. */
  version = 0;
  /** Resolved configs per topic object (a changed topic is reloaded as a new object), for one generation of the broker defaults. */
  private readonly resolved = new WeakMap<Topic, { generation: number; config: TopicConfig }>();

  constructor(
    private readonly store: TopicStorage,
    private readonly defaults: TopicDefaults,
    /** The broker's defaults of topic configs (static and dynamic). */
    readonly brokerDefaults: BrokerDefaults,
  ) {}

  /** A topic changed in some broker process: forget what we cached about it. */
  invalidate(name?: string): void {
    this.version++;
    if (name === undefined) {
      this.byName.clear();
      this.byId.clear();
    } else {
      const t = this.byName.get(name);
      this.byName.delete(name);
      if (t) this.byId.delete(t.topicId);
    }
    this.allLoaded = false;
  }

  async get(name: string): Promise<Topic | null> {
    const cached = this.byName.get(name);
    if (cached) return cached;
    // No legal topic name holds a NUL (and PostgreSQL text cannot): unknown, without a query.
    if (name.includes('\0')) return null;
    const topic = await this.store.getByName(name);
    if (topic) this.remember(topic);
    return topic;
  }

  getById(topicId: string): Topic | null {
    return this.byId.get(topicId) ?? null;
  }

  async list(): Promise<Topic[]> {
    if (!this.allLoaded) {
      const topics = await this.store.list();
      this.byName.clear();
      this.byId.clear();
      for (const t of topics) this.remember(t);
      this.allLoaded = true;
    }
    return [...this.byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** Loads every topic so look-ups by id (Fetch v13+, Metadata by id) hit the cache. */
  async getByIdLoading(topicId: string): Promise<Topic | null> {
    const t = this.byId.get(topicId);
    if (t) return t;
    await this.list();
    return this.byId.get(topicId) ?? null;
  }

  async create(req: CreateTopicRequest): Promise<TopicOutcome> {
    const nameError = topicNameError(req.name);
    if (nameError) return { errorCode: ErrorCode.INVALID_TOPIC_EXCEPTION, errorMessage: nameError };
    // Kafka's answer for __cluster_metadata (ControllerApis), here for every name of broker state.
    if (isBrokerStateTopic(req.name)) return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `Creation of internal topic ${req.name} is prohibited.` };
    const partitions = req.numPartitions === -1 ? this.defaults.numPartitions : req.numPartitions;
    if (partitions <= 0 || partitions > MAX_PARTITIONS) {
      return { errorCode: ErrorCode.INVALID_PARTITIONS, errorMessage: `Number of partitions must be larger than 0 (and at most ${MAX_PARTITIONS}).` };
    }
    // One copy of every partition is kept (in PostgreSQL); any requested factor is accepted and reported as 1 replica.
    if (req.replicationFactor === 0 || req.replicationFactor < -1) {
      return { errorCode: ErrorCode.INVALID_REPLICATION_FACTOR, errorMessage: 'Replication factor must be larger than 0, or -1 to use the default value.' };
    }
    const existing = await this.get(req.name);
    if (existing) return { errorCode: ErrorCode.TOPIC_ALREADY_EXISTS, errorMessage: `Topic '${req.name}' already exists.` };
    const colliding = (await this.list()).find((t) => unifyCollisionChars(t.name) === unifyCollisionChars(req.name));
    // The name itself, created by a request that raced this one between the look-up above and the list.
    if (colliding?.name === req.name) return { errorCode: ErrorCode.TOPIC_ALREADY_EXISTS, errorMessage: `Topic '${req.name}' already exists.` };
    if (colliding) {
      return { errorCode: ErrorCode.INVALID_TOPIC_EXCEPTION, errorMessage: `Topic '${req.name}' collides with existing topic: ${colliding.name}` };
    }
    const invalid = validateTopicConfigs(req.configs, this.brokerDefaults);
    if (invalid) return { errorCode: ErrorCode.INVALID_CONFIG, errorMessage: invalid.message };
    const topic: Topic = { topicId: randomUUID(), name: req.name, partitionCount: partitions, configs: req.configs as Record<string, string> };
    if (req.validateOnly) return { errorCode: ErrorCode.NONE, errorMessage: null, topic };
    const created = await this.store.create(topic);
    if (!created) return { errorCode: ErrorCode.TOPIC_ALREADY_EXISTS, errorMessage: `Topic '${req.name}' already exists.` };
    this.remember(topic);
    this.version++;
    return { errorCode: ErrorCode.NONE, errorMessage: null, topic };
  }

  /** The topic, auto-created with the broker defaults when that is enabled. */
  async getOrCreate(name: string): Promise<TopicOutcome> {
    const topic = await this.get(name);
    if (topic) return { errorCode: ErrorCode.NONE, errorMessage: null, topic };
    if (!this.defaults.autoCreateTopicsEnable || topicNameError(name) || isBrokerStateTopic(name)) {
      return { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: null };
    }
    const outcome = await this.create({ name, numPartitions: -1, replicationFactor: -1, configs: {}, validateOnly: false });
    if (outcome.errorCode === ErrorCode.TOPIC_ALREADY_EXISTS) {
      const raced = await this.get(name);
      if (raced) return { errorCode: ErrorCode.NONE, errorMessage: null, topic: raced };
    }
    return outcome;
  }

  async delete(topic: Topic): Promise<boolean> {
    const deleted = await this.store.delete(topic.topicId);
    this.invalidate(topic.name);
    return deleted;
  }

  /** The configs in force for the topic: its explicit ones over the broker defaults (dynamic ones included). */
  topicConfig(topic: Topic): TopicConfig {
    const current = this.byName.get(topic.name);
    const source = current && current.topicId === topic.topicId ? current : topic;
    const generation = this.brokerDefaults.generation;
    const cached = this.resolved.get(source);
    if (cached?.generation === generation) return cached.config;
    const config = resolveTopicConfig(source.configs, this.brokerDefaults);
    this.resolved.set(source, { generation, config });
    return config;
  }

  /** Replaces the topic's explicit configs (already validated); every broker's cache drops the topic. False if it is gone. */
  async updateConfigs(topic: Topic, configs: Record<string, string>): Promise<boolean> {
    const updated = await this.store.updateConfigs(topic.topicId, () => configs);
    this.invalidate(topic.name);
    return updated;
  }

  /**
   * AlterConfigs and IncrementalAlterConfigs on a topic, checked in Kafka's
   * order: the topic name, then the altered config set (INVALID_CONFIG), then
   * that the topic exists. `change` maps the stored explicit configs to the
   * new ones; it runs under the topic row's lock.
   */
  async alterConfigs(name: string, change: (current: Record<string, string>) => ConfigChange, validateOnly: boolean): Promise<{ errorCode: number; errorMessage: string | null }> {
    const nameError = topicNameError(name);
    if (nameError) return { errorCode: ErrorCode.INVALID_TOPIC_EXCEPTION, errorMessage: nameError };
    const check = (current: Record<string, string>) => {
      const next = change(current);
      if ('errorCode' in next) return next;
      const invalid = validateTopicConfigs(next.configs, this.brokerDefaults);
      return invalid ? { errorCode: ErrorCode.INVALID_CONFIG, errorMessage: invalid.message } : next;
    };
    const missing = { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: `The topic '${name}' does not exist.` };
    const topic = await this.get(name);
    if (!topic || validateOnly) {
      const outcome = check(topic?.configs ?? {});
      if ('errorCode' in outcome) return outcome;
      return topic ? { errorCode: ErrorCode.NONE, errorMessage: null } : missing;
    }
    let failed: { errorCode: number; errorMessage: string } | null = null;
    const found = await this.store.updateConfigs(topic.topicId, (current) => {
      const outcome = check(current);
      if ('errorCode' in outcome) {
        failed = outcome;
        return null;
      }
      return outcome.configs;
    });
    this.invalidate(name);
    if (!found) return missing;
    return failed ?? { errorCode: ErrorCode.NONE, errorMessage: null };
  }

  private remember(topic: Topic): void {
    this.byName.set(topic.name, topic);
    this.byId.set(topic.topicId, topic);
  }
}
