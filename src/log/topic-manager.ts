import { randomUUID } from 'node:crypto';
import type { TopicRow, TopicStore } from '../storage/pg/topic-store.js';
import { ErrorCode } from '../protocol/errors.js';
import { topicNameError, unifyCollisionChars } from './topic-name.js';

export type Topic = TopicRow;

export interface CreateTopicRequest {
  name: string;
  numPartitions: number; // -1: broker default
  replicationFactor: number; // -1: broker default
  configs: Record<string, string>;
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

/** Topics as this broker knows them: a cache over the topics table, invalidated by NOTIFY. */
export class TopicManager {
  private readonly byName = new Map<string, Topic>();
  private readonly byId = new Map<string, Topic>();
  private allLoaded = false;

  constructor(
    private readonly store: TopicStore,
    private readonly defaults: TopicDefaults,
  ) {}

  /** A topic changed in some broker process: forget what we cached about it. */
  invalidate(name?: string): void {
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
    if (colliding) {
      return { errorCode: ErrorCode.INVALID_TOPIC_EXCEPTION, errorMessage: `Topic '${req.name}' collides with existing topic: ${colliding.name}` };
    }
    const topic: Topic = { topicId: randomUUID(), name: req.name, partitionCount: partitions, configs: req.configs };
    if (req.validateOnly) return { errorCode: ErrorCode.NONE, errorMessage: null, topic };
    const created = await this.store.create(topic);
    if (!created) return { errorCode: ErrorCode.TOPIC_ALREADY_EXISTS, errorMessage: `Topic '${req.name}' already exists.` };
    this.remember(topic);
    return { errorCode: ErrorCode.NONE, errorMessage: null, topic };
  }

  /** The topic, auto-created with the broker defaults when that is enabled. */
  async getOrCreate(name: string): Promise<TopicOutcome> {
    const topic = await this.get(name);
    if (topic) return { errorCode: ErrorCode.NONE, errorMessage: null, topic };
    if (!this.defaults.autoCreateTopicsEnable || topicNameError(name)) {
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

  private remember(topic: Topic): void {
    this.byName.set(topic.name, topic);
    this.byId.set(topic.topicId, topic);
  }
}
