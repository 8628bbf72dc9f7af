// TxnOffsetCommit answers as Kafka's broker does when the transaction does
// not check out: Kafka's group coordinator verifies the transaction with the
// transaction coordinator (KIP-890) before it looks at the group, and maps
// the verification's errors for the producer. Nothing is staged.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/protocol/errors.js';
import { AddOffsetsToTxnApi, CreateTopicsApi, EndTxnApi, InitProducerIdApi, OffsetFetchApi, TxnOffsetCommitApi } from '../../src/protocol/messages/index.js';
import { startTestBroker, type TestBroker } from '../support/broker.js';
import { RawClient } from '../support/raw-client.js';

let broker: TestBroker;
let client: RawClient;
let producer: { transactionalId: string; producerId: bigint; producerEpoch: number };

beforeAll(async () => {
  broker = await startTestBroker({ offsetMetadataMaxBytes: 8 });
  client = await RawClient.connect(broker.bootstrap);
  await client.request(CreateTopicsApi, 7, { topics: [{ name: 'in', numPartitions: 1, replicationFactor: 1 }] });
  const init = await client.request(InitProducerIdApi, 4, { transactionalId: 'known', transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
  expect(init.errorCode).toBe(0);
  producer = { transactionalId: 'known', producerId: init.producerId, producerEpoch: init.producerEpoch };
});
afterAll(async () => {
  client?.close();
  await broker?.destroy();
});

interface Commit {
  transactionalId: string;
  producerId: bigint;
  producerEpoch: number;
  groupId?: string;
  generationId?: number;
  memberId?: string;
  metadata?: string;
}

/** Error codes of partition 0 of 'in', partition 5 of 'in' (unknown) and of an unknown topic. */
async function commit(version: number, c: Commit): Promise<number[]> {
  const res = await client.request(TxnOffsetCommitApi, version, {
    transactionalId: c.transactionalId,
    producerId: c.producerId,
    producerEpoch: c.producerEpoch,
    groupId: c.groupId ?? 'g',
    generationId: c.generationId ?? -1,
    memberId: c.memberId ?? '',
    groupInstanceId: null,
    topics: [
      {
        name: 'in',
        partitions: [
          { partitionIndex: 0, committedOffset: 1n, committedLeaderEpoch: -1, committedMetadata: c.metadata ?? '' },
          { partitionIndex: 5, committedOffset: 1n, committedLeaderEpoch: -1, committedMetadata: '' },
        ],
      },
      { name: 'nowhere', partitions: [{ partitionIndex: 0, committedOffset: 1n, committedLeaderEpoch: -1, committedMetadata: '' }] },
    ],
  });
  return res.topics.flatMap((t) => t.partitions.map((p) => p.errorCode));
}

const unknownTopic = [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION];

describe('TxnOffsetCommit with a transaction that does not check out', () => {
  it('answers INVALID_PRODUCER_ID_MAPPING for an unknown transactional id, at every version', async () => {
    for (let v = 0; v <= 5; v++) {
      expect(await commit(v, { transactionalId: 'never-initialised', producerId: 4242n, producerEpoch: 0 })).toEqual([ErrorCode.INVALID_PRODUCER_ID_MAPPING, ...unknownTopic]);
    }
  });

  it('answers INVALID_PRODUCER_ID_MAPPING for a producer id the transactional id does not have', async () => {
    expect(await commit(3, { ...producer, producerId: producer.producerId + 1000n })).toEqual([ErrorCode.INVALID_PRODUCER_ID_MAPPING, ...unknownTopic]);
  });

  it('answers INVALID_PRODUCER_EPOCH for another epoch, at every version', async () => {
    for (const v of [0, 2, 3, 4, 5]) {
      expect(await commit(v, { ...producer, producerEpoch: producer.producerEpoch + 1 })).toEqual([ErrorCode.INVALID_PRODUCER_EPOCH, ...unknownTopic]);
    }
  });

  it('answers INVALID_REQUEST for an empty transactional id', async () => {
    expect(await commit(3, { ...producer, transactionalId: '' })).toEqual([ErrorCode.INVALID_REQUEST, ...unknownTopic]);
  });

  it('answers INVALID_TXN_STATE below v4 and TRANSACTION_ABORTABLE at v4 for a group the transaction has not added; v5 adds it (transactions version 2)', async () => {
    expect(await commit(3, producer)).toEqual([ErrorCode.INVALID_TXN_STATE, ...unknownTopic]);
    expect(await commit(4, producer)).toEqual([ErrorCode.TRANSACTION_ABORTABLE, ...unknownTopic]);
    // Another transactional id, aborted afterwards, so that the other cases here see nothing staged.
    const init = await client.request(InitProducerIdApi, 4, { transactionalId: 'known-v5', transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
    const v5 = { transactionalId: 'known-v5', producerId: init.producerId, producerEpoch: init.producerEpoch };
    expect(await commit(5, { ...v5, groupId: 'g-v5' })).toEqual([ErrorCode.NONE, ...unknownTopic]);
    expect((await client.request(EndTxnApi, 4, { ...v5, committed: false })).errorCode).toBe(ErrorCode.NONE);
  });

  it('verifies the transaction before the group and before the metadata size, as Kafka does', async () => {
    // A generation for a group that does not exist would be ILLEGAL_GENERATION; too-long metadata OFFSET_METADATA_TOO_LARGE.
    expect(await commit(3, { transactionalId: 'never-initialised', producerId: 4242n, producerEpoch: 0, generationId: 5, memberId: 'm' })).toEqual([
      ErrorCode.INVALID_PRODUCER_ID_MAPPING,
      ...unknownTopic,
    ]);
    expect(await commit(3, { transactionalId: 'never-initialised', producerId: 4242n, producerEpoch: 0, metadata: 'far too long' })).toEqual([ErrorCode.INVALID_PRODUCER_ID_MAPPING, ...unknownTopic]);
    // With the transaction in order, the group is checked next, then the size.
    expect((await client.request(AddOffsetsToTxnApi, 3, { ...producer, groupId: 'g' })).errorCode).toBe(0);
    expect(await commit(3, { ...producer, generationId: 5, memberId: 'm' })).toEqual([ErrorCode.ILLEGAL_GENERATION, ...unknownTopic]);
    expect(await commit(3, { ...producer, metadata: 'far too long' })).toEqual([ErrorCode.OFFSET_METADATA_TOO_LARGE, ...unknownTopic]);
  });

  it('stages nothing for a refused commit', async () => {
    expect(await broker.query('SELECT * FROM txn_offsets')).toEqual([]);
    const fetched = await client.request(OffsetFetchApi, 7, { groupId: 'g', topics: [{ name: 'in', partitionIndexes: [0] }], requireStable: true });
    expect(fetched.topics[0]!.partitions[0]!).toMatchObject({ errorCode: 0, committedOffset: -1n });
  });
});
