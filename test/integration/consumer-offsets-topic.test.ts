// __consumer_offsets as Kafka presents it to consumers (lag tools such as
// Burrow read it): the groups' commits in Kafka's record schemas, in the
// partition Kafka puts the group in, newest commit of each key only, and
// tombstones for deleted offsets; read-only and internal.
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/protocol/errors.js';
import { DeleteGroupsApi, FetchApi, ListOffsetsApi, MetadataApi, OffsetCommitApi, ProduceApi } from '../../src/protocol/messages/index.js';
import { buildBatch, decodeRecords, parseBatches } from '../../src/protocol/records/index.js';
import { consumerOffsetsPartition } from '../../src/storage/pg/group-store.js';
import { startTestBroker, type TestBroker } from '../support/broker.js';
import { RawClient } from '../support/raw-client.js';

let broker: TestBroker;
let client: RawClient;
let kafka: Kafka;

beforeAll(async () => {
  broker = await startTestBroker();
  client = await RawClient.connect(broker.bootstrap);
  kafka = new Kafka({ clientId: 'offsets-topic', brokers: [broker.bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 2 } });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: 'orders', numPartitions: 2 }] });
  await admin.disconnect();
});
afterAll(async () => {
  client?.close();
  await broker?.destroy();
});

// Partitions Kafka 4.3 puts these groups in (Utils.abs(String.hashCode) % 50, checked with the JDK): my-group's hash is negative.
const PARTITION = { 'my-group': 12, 'offsets-topic-a': 36 } as const;

interface Entry {
  offset: bigint;
  key: string;
  value: string | null;
}

/** The records of one partition of __consumer_offsets from `from`, key and value as hex. */
async function readPartition(partition: number, from = 0n, version = 12): Promise<{ errorCode: number; highWatermark: bigint; entries: Entry[] }> {
  const res = await client.request(FetchApi, version, {
    replicaId: -1,
    maxWaitMs: 0,
    minBytes: 1,
    maxBytes: 1 << 20,
    sessionEpoch: -1,
    topics: [{ topic: '__consumer_offsets', partitions: [{ partition, fetchOffset: from, partitionMaxBytes: 1 << 20 }] }],
  });
  const p = res.responses[0]!.partitions[0]!;
  const buf = p.records as Buffer;
  const entries: Entry[] = [];
  for (const h of parseBatches(buf).batches) {
    for (const r of decodeRecords(buf, h).records) {
      entries.push({ offset: h.baseOffset + BigInt(r.offsetDelta), key: r.key!.toString('hex'), value: r.value?.toString('hex') ?? null });
    }
  }
  return { errorCode: p.errorCode, highWatermark: p.highWatermark, entries };
}

const str = (s: string) => Buffer.concat([Buffer.from([s.length >> 8, s.length & 0xff]), Buffer.from(s)]).toString('hex');
const int = (n: number, bytes: number) => Buffer.from(n.toString(16).padStart(bytes * 2, '0'), 'hex').toString('hex');
/** OffsetCommitKey v1, as Kafka writes it. */
const keyOf = (group: string, topic: string, partition: number) => int(1, 2) + str(group) + str(topic) + int(partition, 4);

/** A commit of a group without members (generation -1), as admin tools commit. */
async function commit(groupId: string, partitions: { partition: number; offset: string }[]): Promise<void> {
  const res = await client.request(OffsetCommitApi, 8, {
    groupId,
    generationIdOrMemberEpoch: -1,
    memberId: '',
    topics: [{ name: 'orders', partitions: partitions.map((p) => ({ partitionIndex: p.partition, committedOffset: BigInt(p.offset), committedMetadata: null })) }],
  });
  expect(res.topics[0]!.partitions.map((p) => p.errorCode)).toEqual(partitions.map(() => ErrorCode.NONE));
}

describe('__consumer_offsets', () => {
  it("puts a group in Kafka's partition, computed alike by the broker and by SQL (for rows written without it)", async () => {
    const groups = ['my-group', 'offsets-topic-a', '', 'console-consumer-12345', '\u{1F600}x'];
    // Kafka 4.3.1's partitionFor, run in the JDK.
    const kafka = [12, 36, 0, 6, 39];
    expect(groups.map(consumerOffsetsPartition)).toEqual(kafka);
    const rows = await broker.query<{ p: number }>('SELECT consumer_offsets_partition(g) AS p FROM unnest($1::text[]) WITH ORDINALITY AS u(g, i) ORDER BY i', [groups]);
    expect(rows.map((r) => r.p)).toEqual(kafka);
  });

  it('holds each commit in the group partition, OffsetCommitKey v1 / OffsetCommitValue v3, newest commit of a key only', async () => {
    await commit('my-group', [
      { partition: 0, offset: '5' },
      { partition: 1, offset: '7' },
    ]);
    await commit('my-group', [{ partition: 0, offset: '6' }]);
    const read = await readPartition(PARTITION['my-group']);
    expect(read.errorCode).toBe(ErrorCode.NONE);
    expect(read.entries.map((e) => e.key)).toEqual([keyOf('my-group', 'orders', 1), keyOf('my-group', 'orders', 0)]);
    const [p1, p0] = read.entries;
    expect(read.highWatermark).toBe(p0!.offset + 1n);
    expect(p1!.offset).toBeLessThan(p0!.offset);
    // v3: version, offset, leader epoch (-1: kafkajs sends none), metadata "" (kafkajs sends null), commit timestamp.
    expect(p0!.value!.slice(0, 2 * (2 + 8 + 4 + 2))).toBe(int(3, 2) + int(6, 8) + 'ffffffff' + str(''));
    const commitTs = Number(BigInt('0x' + p0!.value!.slice(2 * 16)));
    expect(Math.abs(commitTs - Date.now())).toBeLessThan(10 * 60_000);
    // From a later position only the newer entries come.
    expect((await readPartition(PARTITION['my-group'], p0!.offset)).entries.map((e) => e.offset)).toEqual([p0!.offset]);
    // Other partitions hold nothing of it.
    expect((await readPartition(PARTITION['offsets-topic-a'])).entries).toEqual([]);
  });

  it('leaves a tombstone when offsets are deleted, and a new commit replaces it', async () => {
    await commit('offsets-topic-a', [{ partition: 0, offset: '1' }]);
    const deleted = await client.request(DeleteGroupsApi, 2, { groupsNames: ['offsets-topic-a'] });
    expect(deleted.results[0]!.errorCode).toBe(ErrorCode.NONE);
    const read = await readPartition(PARTITION['offsets-topic-a']);
    expect(read.entries).toEqual([{ offset: read.highWatermark - 1n, key: keyOf('offsets-topic-a', 'orders', 0), value: null }]);
    await commit('offsets-topic-a', [{ partition: 0, offset: '2' }]);
    const again = await readPartition(PARTITION['offsets-topic-a']);
    expect(again.entries.map((e) => [e.key, e.value?.slice(4, 20)])).toEqual([[keyOf('offsets-topic-a', 'orders', 0), int(2, 8)]]);
  });

  it('answers ListOffsets earliest 0 and latest the high watermark; a fetch past it is OFFSET_OUT_OF_RANGE', async () => {
    const partition = PARTITION['my-group'];
    const { highWatermark } = await readPartition(partition);
    const res = await client.request(ListOffsetsApi, 7, {
      replicaId: -1,
      isolationLevel: 0,
      topics: [{ name: '__consumer_offsets', partitions: [-2n, -1n].map((timestamp) => ({ partitionIndex: partition, timestamp, currentLeaderEpoch: -1 })) }],
    });
    expect(res.topics[0]!.partitions.map((p) => [p.errorCode, p.offset])).toEqual([
      [0, 0n],
      [0, highWatermark],
    ]);
    expect((await readPartition(partition, highWatermark + 1n)).errorCode).toBe(ErrorCode.OFFSET_OUT_OF_RANGE);
    expect((await readPartition(50)).errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  });

  it('is internal in Metadata, listed with its 50 partitions, fetched by topic id, and refuses Produce with INVALID_TOPIC_EXCEPTION', async () => {
    const all = await client.request(MetadataApi, 12, { topics: null, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
    const topic = all.topics.find((t) => t.name === '__consumer_offsets')!;
    expect([topic.errorCode, topic.isInternal, topic.partitions.length]).toEqual([0, true, 50]);
    const byId = await client.request(FetchApi, 13, {
      replicaId: -1,
      maxWaitMs: 0,
      minBytes: 1,
      maxBytes: 1 << 20,
      sessionEpoch: -1,
      topics: [{ topicId: topic.topicId, partitions: [{ partition: PARTITION['my-group'], fetchOffset: 0n, partitionMaxBytes: 1 << 20 }] }],
    });
    expect((byId.responses[0]!.partitions[0]!.records as Buffer).length).toBeGreaterThan(0);
    const res = await client.request(ProduceApi, 9, {
      acks: -1,
      timeoutMs: 1000,
      topicData: [{ name: '__consumer_offsets', partitionData: [{ index: 0, records: buildBatch({ records: [{ key: null, value: Buffer.from('v') }] }) }] }],
    });
    expect(res.responses[0]!.partitionResponses[0]!.errorCode).toBe(ErrorCode.INVALID_TOPIC_EXCEPTION);
  });

  it('a kafkajs consumer reads it', async () => {
    // kafkajs only consumes in groups: consuming __consumer_offsets in a group adds that group's own commits to it, as in Kafka.
    const consumer = kafka.consumer({ groupId: 'reader-of-offsets' });
    const keys = new Set<string>();
    const wanted = [keyOf('my-group', 'orders', 0), keyOf('my-group', 'orders', 1), keyOf('offsets-topic-a', 'orders', 0)];
    await consumer.connect();
    await consumer.subscribe({ topic: '__consumer_offsets', fromBeginning: true });
    const done = new Promise<void>((resolve) => {
      void consumer.run({
        eachMessage: async ({ message }) => {
          keys.add(message.key!.toString('hex'));
          if (wanted.every((k) => keys.has(k))) resolve();
        },
      });
    });
    await done;
    await consumer.disconnect();
    expect(wanted.filter((k) => !keys.has(k))).toEqual([]);
  });
});
