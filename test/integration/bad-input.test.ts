// Bad input gets Kafka's answer (an error code, or a closed connection where
// Kafka closes it) and nothing else: the broker stays up, other connections
// keep working, nothing is stored.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Reader } from '../../src/protocol/codec/reader.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import {
  ApiVersionsApi,
  CreateTopicsApi,
  DescribeTopicPartitionsApi,
  ListOffsetsApi,
  MetadataApi,
  OffsetCommitApi,
  OffsetFetchApi,
  ProduceApi,
  readApiVersionsResponse,
  readResponseHeader,
} from '../../src/protocol/messages/index.js';
import { buildBatch } from '../../src/protocol/records/index.js';
import { startTestBroker, type TestBroker } from '../support/broker.js';
import { RawClient } from '../support/raw-client.js';

let broker: TestBroker;
let bystander: RawClient;

beforeAll(async () => {
  broker = await startTestBroker({ socketRequestMaxBytes: 64 * 1024 });
  bystander = await RawClient.connect(broker.bootstrap);
});
afterAll(async () => {
  bystander?.close();
  await broker?.destroy();
});

/** A request frame with an arbitrary header and body. */
function frame(apiKey: number, apiVersion: number, body: Buffer): Buffer {
  const header = Buffer.alloc(8 + 2);
  header.writeInt16BE(apiKey, 0);
  header.writeInt16BE(apiVersion, 2);
  header.writeInt32BE(7, 4);
  header.writeInt16BE(-1, 8); // null client id
  const size = Buffer.alloc(4);
  size.writeInt32BE(header.length + body.length);
  return Buffer.concat([size, header, body]);
}

async function expectClosed(bytes: Buffer): Promise<void> {
  const client = await RawClient.connect(broker.bootstrap);
  const answer = client.nextFrame();
  client.write(bytes);
  expect(await answer).toBeNull();
  // The broker is still serving everyone else.
  const md = await bystander.request(MetadataApi, 12, { topics: null });
  expect(md.brokers).toHaveLength(1);
}

describe('malformed and unsupported requests', () => {
  it('answers ApiVersions at an unknown version in the v0 format with UNSUPPORTED_VERSION and the supported ranges', async () => {
    const client = await RawClient.connect(broker.bootstrap);
    const answer = client.nextFrame();
    client.write(frame(18, 99, Buffer.from([0x00]))); // a flexible header's empty tagged fields, as newer clients send
    const bytes = (await answer)!;
    const r = new Reader(bytes);
    expect(readResponseHeader(r, 0).correlationId).toBe(7);
    const res = readApiVersionsResponse(r, 0);
    expect(res.errorCode).toBe(ErrorCode.UNSUPPORTED_VERSION);
    expect(res.apiKeys.find((k) => k.apiKey === 18)).toEqual({ apiKey: 18, minVersion: 0, maxVersion: 4 });
    // Produce is advertised from v0 so librdkafka enables compression (KAFKA-18659).
    expect(res.apiKeys.find((k) => k.apiKey === 0)).toMatchObject({ minVersion: 0, maxVersion: 13 });
    client.close();
  });

  it('closes the connection on an unknown API key', () => expectClosed(frame(9999, 0, Buffer.alloc(0))));

  it('closes the connection on an unsupported version of a known API', () => expectClosed(frame(3, 99, Buffer.alloc(0))));

  it('closes the connection on a truncated body', () => expectClosed(frame(19, 7, Buffer.from([0x05, 0x02]))));

  it('closes the connection on a frame larger than socket.request.max.bytes', () => {
    const size = Buffer.alloc(4);
    size.writeInt32BE(10 * 1024 * 1024);
    return expectClosed(size);
  });

  it('closes the connection on a negative frame size', () => expectClosed(Buffer.from([0xff, 0xff, 0xff, 0xfe])));

  it('survives random garbage on many connections and stores nothing', async () => {
    let seed = 42;
    const random = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    for (let i = 0; i < 50; i++) {
      const body = Buffer.from(Array.from({ length: Math.floor(random() * 200) }, () => Math.floor(random() * 256)));
      const apiKey = [0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 18, 19, 20][Math.floor(random() * 14)]!;
      const client = await RawClient.connect(broker.bootstrap);
      const answer = client.nextFrame();
      client.write(frame(apiKey, Math.floor(random() * 12), body));
      await Promise.race([answer, new Promise((r) => setTimeout(r, 200))]);
      client.close();
    }
    const md = await bystander.request(MetadataApi, 12, { topics: null });
    expect(md.topics).toEqual([]);
    expect(await broker.query('SELECT 1 FROM batches')).toHaveLength(0);
  });
});

describe('topic errors', () => {
  it('answers INVALID_TOPIC_EXCEPTION, TOPIC_ALREADY_EXISTS and INVALID_PARTITIONS, and validate_only creates nothing', async () => {
    const create = (name: string, numPartitions = 1, validateOnly = false) => bystander.request(CreateTopicsApi, 7, { topics: [{ name, numPartitions, replicationFactor: 3 }], validateOnly });
    expect((await create('bad/name')).topics[0]!.errorCode).toBe(ErrorCode.INVALID_TOPIC_EXCEPTION);
    expect((await create('x'.repeat(250))).topics[0]!.errorCode).toBe(ErrorCode.INVALID_TOPIC_EXCEPTION);
    expect((await create('zero', 0)).topics[0]!.errorCode).toBe(ErrorCode.INVALID_PARTITIONS);
    const dry = await create('dry-run', 2, true);
    expect(dry.topics[0]).toMatchObject({ errorCode: 0, numPartitions: 2, replicationFactor: 1 });
    expect((await bystander.request(MetadataApi, 12, { topics: [{ name: 'dry-run' }], allowAutoTopicCreation: false })).topics[0]!.errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    expect((await create('once')).topics[0]!.errorCode).toBe(0);
    expect((await create('once')).topics[0]!.errorCode).toBe(ErrorCode.TOPIC_ALREADY_EXISTS);
    // Names that differ only in '.' versus '_' collide in Kafka's metric names.
    expect((await create('dotted.name')).topics[0]!.errorCode).toBe(0);
    expect((await create('dotted_name')).topics[0]!.errorCode).toBe(ErrorCode.INVALID_TOPIC_EXCEPTION);
  });

  it('auto-creates a topic on Metadata and on Produce with num.partitions', async () => {
    const md = await bystander.request(MetadataApi, 4, { topics: [{ name: 'auto-md' }], allowAutoTopicCreation: true });
    expect(md.topics[0]).toMatchObject({ errorCode: 0, name: 'auto-md' });
    const res = await bystander.request(ProduceApi, 9, {
      acks: -1,
      timeoutMs: 1000,
      topicData: [{ name: 'auto-produce', partitionData: [{ index: 0, records: buildBatch({ records: [{ key: null, value: Buffer.from('v') }] }) }] }],
    });
    expect(res.responses[0]!.partitionResponses[0]!.errorCode).toBe(0);
  });

  it('lists every served API in ApiVersions v3 (flexible request, v0 response header)', async () => {
    const res = await bystander.request(ApiVersionsApi, 3, { clientSoftwareName: 'pgkafka-test', clientSoftwareVersion: '1.0' });
    expect(res.errorCode).toBe(0);
    expect(res.apiKeys.map((k) => k.apiKey)).toEqual(expect.arrayContaining([0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 15, 16, 18, 19, 20, 42, 47, 60]));
  });
});

describe('inputs the fuzzer found (answered, the connection stays open)', () => {
  it('refuses a group id holding a NUL character with INVALID_GROUP_ID', async () => {
    const res = await bystander.request(OffsetFetchApi, 8, { groups: [{ groupId: 'fuzz\u0000group', topics: null }] });
    expect(res.groups[0]!.errorCode).toBe(ErrorCode.INVALID_GROUP_ID);
    const commit = await bystander.request(OffsetCommitApi, 2, {
      groupId: 'a\u0000b',
      generationIdOrMemberEpoch: -1,
      memberId: '',
      topics: [{ name: 'x', partitions: [{ partitionIndex: 0, committedOffset: 1n, committedMetadata: '' }] }],
    });
    expect(commit.topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.INVALID_GROUP_ID);
  });

  it('answers a topic name holding a NUL character as unknown', async () => {
    const res = await bystander.request(ListOffsetsApi, 7, { replicaId: -1, topics: [{ name: 'bad\u0000topic', partitions: [{ partitionIndex: 0, timestamp: -1n }] }] });
    expect(res.topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  });

  it('takes the last entry when an offset commit names a partition twice', async () => {
    await bystander.request(CreateTopicsApi, 7, { topics: [{ name: 'twice', numPartitions: 1, replicationFactor: 1 }] });
    const res = await bystander.request(OffsetCommitApi, 2, {
      groupId: 'twice-group',
      generationIdOrMemberEpoch: -1,
      memberId: '',
      topics: [
        {
          name: 'twice',
          partitions: [
            { partitionIndex: 0, committedOffset: 1n, committedMetadata: '' },
            { partitionIndex: 0, committedOffset: 2n, committedMetadata: '' },
            { partitionIndex: 0, committedOffset: 3n, committedMetadata: 'last' },
          ],
        },
      ],
    });
    expect(res.topics[0]!.partitions.map((p) => p.errorCode)).toEqual([0, 0, 0]);
    const fetched = await bystander.request(OffsetFetchApi, 1, { groupId: 'twice-group', topics: [{ name: 'twice', partitionIndexes: [0] }] });
    expect(fetched.topics[0]!.partitions[0]!).toMatchObject({ committedOffset: 3n, metadata: 'last' });
  });

  it('treats a negative DescribeTopicPartitions cursor index as 0 instead of walking from it', async () => {
    await bystander.request(CreateTopicsApi, 7, { topics: [{ name: 'cursor', numPartitions: 2, replicationFactor: 1 }] });
    const res = await bystander.request(DescribeTopicPartitionsApi, 0, { topics: [{ name: 'cursor' }], responsePartitionLimit: 2000, cursor: { topicName: 'cursor', partitionIndex: -2147483648 } });
    expect(res.topics[0]!.partitions.map((p) => p.partitionIndex)).toEqual([0, 1]);
  });
});

describe('requests before a bad frame are still answered', () => {
  it('answers frames that precede a bad size prefix in the same write, then closes', async () => {
    const client = await RawClient.connect(broker.bootstrap);
    const answer = client.nextFrame();
    const closed = client.nextFrame();
    const negative = Buffer.from([0xff, 0xff, 0xff, 0xf0]);
    client.write(Buffer.concat([client.encode(MetadataApi, 12, { topics: null }, 41), negative]));
    expect((await answer)!.readInt32BE(0)).toBe(41);
    expect(await closed).toBeNull();
  });

  it('sends a pipelined Produce answer before closing on the malformed frame after it', async () => {
    await bystander.request(CreateTopicsApi, 7, { topics: [{ name: 'before-bad', numPartitions: 1, replicationFactor: 1 }] });
    const client = await RawClient.connect(broker.bootstrap);
    const answer = client.nextFrame();
    const closed = client.nextFrame();
    const produce = client.encode(
      ProduceApi,
      9,
      { acks: -1, timeoutMs: 1000, topicData: [{ name: 'before-bad', partitionData: [{ index: 0, records: buildBatch({ records: [{ key: null, value: Buffer.from('kept') }] }) }] }] },
      42,
    );
    client.write(Buffer.concat([produce, frame(9999, 0, Buffer.alloc(0))]));
    expect((await answer)!.readInt32BE(0)).toBe(42);
    expect(await closed).toBeNull();
  });
});
