// Kafka's internal topic names (__consumer_offsets, __transaction_state,
// __share_group_state) are never auto-created as ordinary topics: what they
// hold lives in PostgreSQL tables here, not in a log a client could read.
// Metadata answers them UNKNOWN_TOPIC_OR_PARTITION with is_internal set (as
// Kafka answers an internal topic it has not created), and CreateTopics
// refuses them, and __cluster_metadata, with INVALID_REQUEST as Kafka refuses
// __cluster_metadata. __consumer_offsets is the exception Metadata and Produce
// make: a read-only topic served from the committed offsets
// (consumer-offsets-topic.test.ts).
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/protocol/errors.js';
import { CreateTopicsApi, MetadataApi, ProduceApi } from '../../src/protocol/messages/index.js';
import { buildBatch } from '../../src/protocol/records/index.js';
import { startTestBroker, type TestBroker } from '../support/broker.js';
import { RawClient } from '../support/raw-client.js';

const INTERNAL = ['__consumer_offsets', '__transaction_state', '__share_group_state'];
/** Internal topics this broker has no topic for. */
const ABSENT = ['__transaction_state', '__share_group_state'];

let broker: TestBroker;
let client: RawClient;

beforeAll(async () => {
  broker = await startTestBroker({ autoCreateTopicsEnable: true });
  client = await RawClient.connect(broker.bootstrap);
});
afterAll(async () => {
  client?.close();
  await broker?.destroy();
});

const storedNames = async () => (await broker.query<{ name: string }>('SELECT name FROM topics ORDER BY name')).map((r) => r.name);

describe('internal topic names', () => {
  it('Metadata answers them UNKNOWN_TOPIC_OR_PARTITION, is_internal, and creates nothing, while auto-creating an ordinary topic', async () => {
    for (const version of [1, 4, 9, 12]) {
      const res = await client.request(MetadataApi, version, { topics: [...INTERNAL, `ordinary-${version}`].map((name) => ({ name })), allowAutoTopicCreation: true });
      expect(res.topics.map((t) => [t.name, t.errorCode, t.isInternal, t.partitions.length])).toEqual([
        ['__consumer_offsets', ErrorCode.NONE, true, 50],
        ...ABSENT.map((name) => [name, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, true, 0]),
        [`ordinary-${version}`, 0, false, 1],
      ]);
    }
    expect(await storedNames()).toEqual(['ordinary-1', 'ordinary-12', 'ordinary-4', 'ordinary-9']);
  });

  it('Produce to them answers UNKNOWN_TOPIC_OR_PARTITION (INVALID_TOPIC_EXCEPTION for the read-only __consumer_offsets) and creates nothing', async () => {
    const res = await client.request(ProduceApi, 9, {
      acks: -1,
      timeoutMs: 1000,
      topicData: INTERNAL.map((name) => ({ name, partitionData: [{ index: 0, records: buildBatch({ records: [{ key: null, value: Buffer.from('v') }] }) }] })),
    });
    expect(res.responses.map((r) => r.partitionResponses[0]!.errorCode)).toEqual([ErrorCode.INVALID_TOPIC_EXCEPTION, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]);
    expect(await storedNames()).not.toContain('__consumer_offsets');
  });

  it('CreateTopics refuses them and __cluster_metadata with INVALID_REQUEST, validate_only too', async () => {
    for (const validateOnly of [false, true]) {
      const names = [...INTERNAL, '__cluster_metadata'];
      const res = await client.request(CreateTopicsApi, 7, { topics: names.map((name) => ({ name, numPartitions: 1, replicationFactor: 1 })), validateOnly });
      expect(res.topics.map((t) => [t.name, t.errorCode, t.errorMessage])).toEqual(names.map((name) => [name, ErrorCode.INVALID_REQUEST, `Creation of internal topic ${name} is prohibited.`]));
    }
    expect(await storedNames()).toEqual(['ordinary-1', 'ordinary-12', 'ordinary-4', 'ordinary-9']);
  });

  it('kafkajs admin: createTopics is refused, fetchTopicMetadata reports the topic unknown', async () => {
    const admin = new Kafka({ clientId: 'internal-topics', brokers: [broker.bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 0 } }).admin();
    await admin.connect();
    try {
      await expect(admin.createTopics({ topics: [{ topic: '__consumer_offsets', numPartitions: 50 }] })).rejects.toMatchObject({ errors: [{ type: 'INVALID_REQUEST' }] });
      await expect(admin.fetchTopicMetadata({ topics: ['__transaction_state'] })).rejects.toMatchObject({ type: 'UNKNOWN_TOPIC_OR_PARTITION' });
      expect(await admin.listTopics()).not.toContain('__consumer_offsets');
    } finally {
      await admin.disconnect();
    }
  });
});
