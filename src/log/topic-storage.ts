// What the topic manager needs from storage: topics, their partitions and
// explicit configs. Implemented by storage/pg and storage/memory, held to the
// same behaviour by test/storage/contract; they match it structurally, so
// storage never imports the domain.
import type { TopicRow } from '../storage/topic-types.js';

export type { TopicRow } from '../storage/topic-types.js';

export interface TopicStorage {
  /** Every topic, by name. */
  list(): Promise<TopicRow[]>;
  getByName(name: string): Promise<TopicRow | null>;
  /** Creates the topic and its partitions at once; false if the name is taken. */
  create(topic: TopicRow): Promise<boolean>;
  /**
   * Replaces the topic's explicit configs with what `change` makes of the
   * stored ones, atomically (concurrent alterations keep each other's
   * changes), and tells every broker. `change` returns null to leave them.
   * False if the topic does not exist.
   */
  updateConfigs(topicId: string, change: (current: Record<string, string>) => Record<string, string> | null): Promise<boolean>;
  /** Deletes the topic with its partitions, their records and its committed offsets; false if it did not exist. */
  delete(topicId: string): Promise<boolean>;
}
