import type { TopicRow } from '../topic-types.js';
import { compareText, key, MemoryStorageError, newPartition, text, type MemoryDatabase } from './database.js';

const copy = (t: TopicRow): TopicRow => ({ ...t, configs: { ...t.configs } });

/** Topics in memory (table topics), created and deleted with their partitions. */
export class MemoryTopicStore {
  constructor(private readonly db: MemoryDatabase) {}

  async list(): Promise<TopicRow[]> {
    return [...this.db.topics.values()].sort((a, b) => compareText(a.name, b.name)).map(copy);
  }

  async getByName(name: string): Promise<TopicRow | null> {
    const t = this.byName(text(name));
    return t ? copy(t) : null;
  }

  async create(topic: TopicRow): Promise<boolean> {
    text(topic.name);
    for (const [k, v] of Object.entries(topic.configs)) text(k + v);
    if (this.byName(topic.name)) {
      // As the PostgreSQL statement, which notifies whether or not its insert took place (harmless: brokers re-read the topic).
      this.db.notify('topics', topic.name);
      return false;
    }
    if (this.db.topics.has(topic.topicId)) throw new MemoryStorageError('duplicate key value violates unique constraint "topics_pkey"', '23505');
    this.db.topics.set(topic.topicId, copy(topic));
    for (let i = 0; i < topic.partitionCount; i++) this.db.partitions.set(key(topic.topicId, i), newPartition(topic.topicId, i));
    this.db.notify('topics', topic.name);
    return true;
  }

  async updateConfigs(topicId: string, change: (current: Record<string, string>) => Record<string, string> | null): Promise<boolean> {
    const t = this.db.topics.get(topicId);
    if (!t) return false;
    const next = change({ ...t.configs });
    if (next === null) return true;
    for (const [k, v] of Object.entries(next)) text(k + v);
    this.db.topics.set(topicId, { ...t, configs: { ...next } });
    this.db.notify('topics', t.name);
    return true;
  }

  async delete(topicId: string): Promise<boolean> {
    const t = this.db.topics.get(topicId);
    if (!t) return false;
    this.db.topics.delete(topicId);
    for (let i = 0; i < t.partitionCount; i++) this.db.partitions.delete(key(topicId, i));
    // Kafka drops a deleted topic's committed offsets too.
    for (const [k, o] of this.db.committedOffsets) if (o.topic === t.name) this.db.committedOffsets.delete(k);
    this.db.notify('topics', t.name);
    return true;
  }

  private byName(name: string): TopicRow | undefined {
    for (const t of this.db.topics.values()) if (t.name === name) return t;
    return undefined;
  }
}
