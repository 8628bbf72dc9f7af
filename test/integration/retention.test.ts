// The log deletes by policy only: DeleteRecords, retention.ms and
// retention.bytes move the log start offset; reads below it answer
// OFFSET_OUT_OF_RANGE; groups that lose unread records are counted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/protocol/errors.js';
import { CreatePartitionsApi, CreateTopicsApi, DeleteRecordsApi, FetchApi, ListOffsetsApi, MetadataApi, OffsetCommitApi, ProduceApi } from '../../src/protocol/messages/index.js';
import { buildBatch } from '../../src/protocol/records/index.js';
import { startTestBroker, type TestBroker } from '../support/broker.js';
import { RawClient } from '../support/raw-client.js';

let broker: TestBroker;
let client: RawClient;

beforeAll(async () => {
  // A long check interval: the tests run cleaner passes themselves.
  broker = await startTestBroker({ logRetentionCheckIntervalMs: 3_600_000, logCleanerBackoffMs: 3_600_000, logCleanerChunkBatches: 2 });
  client = await RawClient.connect(broker.bootstrap);
});
afterAll(async () => {
  client?.close();
  await broker?.destroy();
});

async function createTopic(name: string, configs: Record<string, string> = {}, numPartitions = 1) {
  const res = await client.request(CreateTopicsApi, 7, {
    topics: [{ name, numPartitions, replicationFactor: 1, configs: Object.entries(configs).map(([n, value]) => ({ name: n, value })) }],
  });
  expect(res.topics[0]!.errorCode).toBe(0);
}

/** Appends one batch of `count` records, all `ageMs` old. */
async function produce(topic: string, count: number, ageMs = 0, valueSize = 10) {
  const records = Array.from({ length: count }, (_, i) => ({ offsetDelta: i, key: Buffer.from(`k${i}`), value: Buffer.alloc(valueSize, 97) }));
  const res = await client.request(ProduceApi, 9, {
    acks: -1,
    timeoutMs: 1000,
    topicData: [{ name: topic, partitionData: [{ index: 0, records: buildBatch({ baseTimestamp: BigInt(Date.now() - ageMs), records }) }] }],
  });
  expect(res.responses[0]!.partitionResponses[0]!.errorCode).toBe(0);
  return res.responses[0]!.partitionResponses[0]!.baseOffset;
}

async function fetchAt(topic: string, fetchOffset: bigint) {
  const res = await client.request(FetchApi, 11, {
    replicaId: -1,
    maxWaitMs: 0,
    minBytes: 1,
    maxBytes: 1 << 20,
    sessionEpoch: -1,
    topics: [{ topic, partitions: [{ partition: 0, fetchOffset, partitionMaxBytes: 1 << 20 }] }],
  });
  return res.responses[0]!.partitions[0]!;
}

async function earliest(topic: string) {
  const res = await client.request(ListOffsetsApi, 7, { replicaId: -1, topics: [{ name: topic, partitions: [{ partitionIndex: 0, timestamp: -2n }] }] });
  return res.topics[0]!.partitions[0]!.offset;
}

async function storedBatches(topic: string): Promise<string[]> {
  const rows = await broker.query<{ base_offset: string }>(`SELECT b.base_offset::text FROM batches b JOIN topics t USING (topic_id) WHERE t.name = $1 ORDER BY b.base_offset`, [topic]);
  return rows.map((r) => r.base_offset);
}

async function eventually(check: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('DeleteRecords', () => {
  it('moves the low watermark; reads below it are OFFSET_OUT_OF_RANGE; whole batches below it are deleted', async () => {
    await createTopic('trimmed');
    for (let i = 0; i < 5; i++) await produce('trimmed', 2); // batches at 0, 2, 4, 6, 8
    const res = await client.request(DeleteRecordsApi, 2, { topics: [{ name: 'trimmed', partitions: [{ partitionIndex: 0, offset: 5n }] }], timeoutMs: 1000 });
    expect(res.topics[0]!.partitions[0]).toMatchObject({ errorCode: 0, lowWatermark: 5n });
    expect(await earliest('trimmed')).toBe(5n);
    expect((await fetchAt('trimmed', 3n)).errorCode).toBe(ErrorCode.OFFSET_OUT_OF_RANGE);
    const at = await fetchAt('trimmed', 5n);
    expect(at.errorCode).toBe(0);
    expect(at.logStartOffset).toBe(5n);
    // The batch holding offset 5 (4-5) stays; the ones wholly below go.
    await eventually(async () => (await storedBatches('trimmed')).join() === '4,6,8');
  });

  it('treats -1 as the high watermark, refuses offsets above it, and never moves the start back', async () => {
    await createTopic('trim-all');
    await produce('trim-all', 3);
    const above = await client.request(DeleteRecordsApi, 0, { topics: [{ name: 'trim-all', partitions: [{ partitionIndex: 0, offset: 9n }] }], timeoutMs: 1000 });
    expect(above.topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.OFFSET_OUT_OF_RANGE);
    const all = await client.request(DeleteRecordsApi, 0, { topics: [{ name: 'trim-all', partitions: [{ partitionIndex: 0, offset: -1n }] }], timeoutMs: 1000 });
    expect(all.topics[0]!.partitions[0]).toMatchObject({ errorCode: 0, lowWatermark: 3n });
    const back = await client.request(DeleteRecordsApi, 0, { topics: [{ name: 'trim-all', partitions: [{ partitionIndex: 0, offset: 1n }] }], timeoutMs: 1000 });
    expect(back.topics[0]!.partitions[0]).toMatchObject({ errorCode: 0, lowWatermark: 3n });
    const missing = await client.request(DeleteRecordsApi, 0, { topics: [{ name: 'nope', partitions: [{ partitionIndex: 0, offset: 1n }] }], timeoutMs: 1000 });
    expect(missing.topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  });
});

describe('retention', () => {
  it('deletes batches older than retention.ms and counts what a lagging group never read', async () => {
    await createTopic('aging', { 'retention.ms': '60000' });
    await produce('aging', 3, 120_000); // 0-2, two minutes old
    await produce('aging', 3, 90_000); // 3-5
    await produce('aging', 2, 0); // 6-7, fresh
    await client.request(OffsetCommitApi, 2, {
      groupId: 'slowpoke',
      generationIdOrMemberEpoch: -1,
      memberId: '',
      topics: [{ name: 'aging', partitions: [{ partitionIndex: 0, committedOffset: 1n, committedMetadata: '' }] }],
    });
    await broker.cleaner.runOnce();
    expect(await earliest('aging')).toBe(6n);
    expect((await fetchAt('aging', 1n)).errorCode).toBe(ErrorCode.OFFSET_OUT_OF_RANGE);
    await eventually(async () => (await storedBatches('aging')).join() === '6');
    const lost = await broker.query<{ records: string }>(`SELECT records::text FROM deleted_unread WHERE group_id = 'slowpoke'`);
    expect(lost).toEqual([{ records: '5' }]);
    const metrics = await (await fetch(`http://127.0.0.1:${broker.metricsPort}/metrics`)).text();
    expect(metrics).toContain('pgkafka_consumergroup_records_deleted_unread_total{consumergroup="slowpoke",topic="aging",partition="0"} 5');
  });

  it('keeps at least retention.bytes, deleting the oldest batches beyond it', async () => {
    await createTopic('sized', { 'retention.bytes': '300' });
    for (let i = 0; i < 4; i++) await produce('sized', 1, 0, 100); // four batches of ~170 bytes
    await broker.cleaner.runOnce();
    // Kafka deletes a batch only while what is newer still holds retention.bytes: two stay.
    expect(await earliest('sized')).toBe(2n);
  });

  it('leaves topics alone whose cleanup.policy is compact or whose retention is unlimited', async () => {
    await createTopic('forever', { 'retention.ms': '-1' });
    await produce('forever', 2, 10 * 365 * 86_400_000);
    await broker.cleaner.runOnce();
    expect(await earliest('forever')).toBe(0n);
  });
});

describe('CreatePartitions', () => {
  it('adds empty partitions that Metadata shows at once, and refuses to shrink', async () => {
    await createTopic('growing');
    const grow = await client.request(CreatePartitionsApi, 3, { topics: [{ name: 'growing', count: 3, assignments: null }], timeoutMs: 1000, validateOnly: false });
    expect(grow.results[0]!.errorCode).toBe(0);
    const md = await client.request(MetadataApi, 12, { topics: [{ name: 'growing' }] });
    expect(md.topics[0]!.partitions.map((p) => p.partitionIndex)).toEqual([0, 1, 2]);
    const res = await client.request(ProduceApi, 9, {
      acks: -1,
      timeoutMs: 1000,
      topicData: [{ name: 'growing', partitionData: [{ index: 2, records: buildBatch({ records: [{ key: null, value: Buffer.from('x') }] }) }] }],
    });
    expect(res.responses[0]!.partitionResponses[0]).toMatchObject({ errorCode: 0, baseOffset: 0n });
    const shrink = await client.request(CreatePartitionsApi, 3, { topics: [{ name: 'growing', count: 2, assignments: null }], timeoutMs: 1000, validateOnly: false });
    expect(shrink.results[0]!.errorCode).toBe(ErrorCode.INVALID_PARTITIONS);
    const same = await client.request(CreatePartitionsApi, 3, { topics: [{ name: 'growing', count: 3, assignments: null }], timeoutMs: 1000, validateOnly: false });
    expect(same.results[0]!.errorCode).toBe(ErrorCode.INVALID_PARTITIONS);
    const dryRun = await client.request(CreatePartitionsApi, 3, { topics: [{ name: 'growing', count: 5, assignments: null }], timeoutMs: 1000, validateOnly: true });
    expect(dryRun.results[0]!.errorCode).toBe(0);
    const after = await client.request(MetadataApi, 12, { topics: [{ name: 'growing' }] });
    expect(after.topics[0]!.partitions).toHaveLength(3);
  });
});
