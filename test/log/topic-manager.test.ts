import { describe, expect, it } from 'vitest';
import { TopicManager } from '../../src/log/topic-manager.js';
import { MemoryDatabase } from '../../src/storage/memory/database.js';
import { MemoryTopicStore } from '../../src/storage/memory/topic-store.js';
import { ErrorCode } from '../../src/protocol/errors.js';

const manager = (autoCreateTopicsEnable: boolean, store = new MemoryTopicStore(new MemoryDatabase())) =>
  new TopicManager(store, { numPartitions: 1, autoCreateTopicsEnable }, { generation: 0, synonyms: () => [] });

/** Answers a look-up by name with what it found when asked, a moment later: a PostgreSQL snapshot taken before another request's topic committed. */
class SlowLookupTopicStore extends MemoryTopicStore {
  override async getByName(name: string) {
    const found = await super.getByName(name);
    await new Promise((resolve) => setTimeout(resolve, 20));
    return found;
  }
}

describe('TopicManager', () => {
  it('auto-creates a topic once for many producers racing on its first use, and hands each the topic', async () => {
    const topics = manager(true, new SlowLookupTopicStore(new MemoryDatabase()));
    const first = topics.getOrCreate('raced');
    // The others look the name up before the first has created it, and list the topics after it has.
    await new Promise((resolve) => setTimeout(resolve, 5));
    const outcomes = await Promise.all([first, ...Array.from({ length: 7 }, () => topics.getOrCreate('raced'))]);
    expect(outcomes.map((o) => o.errorCode)).toEqual(Array(8).fill(ErrorCode.NONE));
    expect(new Set(outcomes.map((o) => o.topic?.topicId)).size).toBe(1);
  });

  it('answers TOPIC_ALREADY_EXISTS, not a collision with itself, to a CreateTopics that loses a race for the same name', async () => {
    const topics = manager(false);
    const request = { name: 'twice', numPartitions: 1, replicationFactor: -1, configs: {}, validateOnly: false };
    const outcomes = await Promise.all([topics.create(request), topics.create(request)]);
    expect(outcomes.map((o) => o.errorCode).sort()).toEqual([ErrorCode.NONE, ErrorCode.TOPIC_ALREADY_EXISTS]);
  });

  it('still refuses a name that differs only by . and _ from an existing topic', async () => {
    const topics = manager(false);
    const request = { name: 'a.b', numPartitions: 1, replicationFactor: -1, configs: {}, validateOnly: false };
    expect((await topics.create(request)).errorCode).toBe(ErrorCode.NONE);
    expect((await topics.create({ ...request, name: 'a_b' })).errorCode).toBe(ErrorCode.INVALID_TOPIC_EXCEPTION);
  });
});
