import type pg from 'pg';
import { inTransaction, Rollback } from './pool.js';
import type { TopicRow } from '../topic-types.js';

export type { TopicRow } from '../topic-types.js';

interface TopicRecord {
  topic_id: string;
  name: string;
  partition_count: number;
  configs: Record<string, string>;
}

const toTopic = (r: TopicRecord): TopicRow => ({ topicId: r.topic_id, name: r.name, partitionCount: r.partition_count, configs: r.configs });

/** Topics and their partitions' rows. */
export class TopicStore {
  constructor(
    private readonly pool: pg.Pool,
    private readonly topicsChannel: string,
  ) {}

  async list(): Promise<TopicRow[]> {
    const { rows } = await this.pool.query<TopicRecord>('SELECT topic_id, name, partition_count, configs FROM topics ORDER BY name');
    return rows.map(toTopic);
  }

  async getByName(name: string): Promise<TopicRow | null> {
    const { rows } = await this.pool.query<TopicRecord>('SELECT topic_id, name, partition_count, configs FROM topics WHERE name = $1', [name]);
    return rows[0] ? toTopic(rows[0]) : null;
  }

  /** Creates the topic and its partitions in one transaction; false if the name is taken. */
  async create(topic: TopicRow): Promise<boolean> {
    const { rows } = await this.pool.query<{ created: boolean }>(
      `WITH t AS (
         INSERT INTO topics (topic_id, name, partition_count, configs) VALUES ($1, $2, $3, $4)
         ON CONFLICT (name) DO NOTHING RETURNING topic_id
       ), p AS (
         INSERT INTO partitions (topic_id, partition) SELECT t.topic_id, g FROM t, generate_series(0, $3 - 1) g
       )
       SELECT count(*) > 0 AS created, pg_notify($5, $2) FROM t`,
      [topic.topicId, topic.name, topic.partitionCount, JSON.stringify(topic.configs), this.topicsChannel],
    );
    return rows[0]?.created ?? false;
  }

  /**
   * Replaces a topic's explicit configs with what `change` makes of the stored
   * ones, under the topic row's lock (concurrent incremental alterations do
   * not lose each other's changes), and NOTIFYs the topics channel so every
   * broker drops its cached copy. `change` returns null to leave them as they
   * are. False if the topic does not exist.
   */
  async updateConfigs(topicId: string, change: (current: Record<string, string>) => Record<string, string> | null): Promise<boolean> {
    return inTransaction(this.pool, async (client) => {
      const { rows } = await client.query<{ name: string; configs: Record<string, string> }>('SELECT name, configs FROM topics WHERE topic_id = $1 FOR UPDATE', [topicId]);
      const next = rows[0] ? change(rows[0].configs) : null;
      if (!rows[0] || next === null) throw new Rollback(rows.length > 0);
      await client.query('UPDATE topics SET configs = $2 WHERE topic_id = $1', [topicId, JSON.stringify(next)]);
      await client.query('SELECT pg_notify($1, $2)', [this.topicsChannel, rows[0].name]);
      return true;
    });
  }

  /** Deletes the topic, its partitions and every stored batch; false if it did not exist. */
  async delete(topicId: string): Promise<boolean> {
    return inTransaction(this.pool, async (client) => {
      const { rows } = await client.query<{ name: string }>('DELETE FROM topics WHERE topic_id = $1 RETURNING name', [topicId]);
      if (rows.length === 0) throw new Rollback(false);
      await client.query('DELETE FROM batches WHERE topic_id = $1', [topicId]);
      await client.query('DELETE FROM open_txns WHERE topic_id = $1', [topicId]);
      await client.query('DELETE FROM aborted_txns WHERE topic_id = $1', [topicId]);
      // Kafka drops a deleted topic's committed offsets too.
      await client.query('DELETE FROM committed_offsets WHERE topic = $1', [rows[0]!.name]);
      await client.query('SELECT pg_notify($1, $2)', [this.topicsChannel, rows[0]!.name]);
      return true;
    });
  }
}
