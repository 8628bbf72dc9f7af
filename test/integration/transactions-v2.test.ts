// Transactions version 2 (KIP-890 part 2) at the wire, as a Kafka 4 client
// uses it once ApiVersions finalizes transaction.version 2: no
// AddPartitionsToTxn (Produce v12+ adds the partition) and no AddOffsetsToTxn
// (TxnOffsetCommit v5 adds the group); EndTxn v5 bumps the epoch at every
// commit and abort and names the new one; and the hanging transaction this
// prevents: a late batch of an ended transaction is refused instead of joining
// the next one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiVersionsApi, CreateTopicsApi, DescribeTransactionsApi, EndTxnApi, OffsetFetchApi, TxnOffsetCommitApi } from '../../src/protocol/messages/index.js';
import { startTestBroker, type TestBroker } from '../support/broker.js';
import { RawClient } from '../support/raw-client.js';
import * as wire from '../support/txn-wire.js';

const READ_COMMITTED = 1;

let broker: TestBroker;
let client: RawClient;

beforeAll(async () => {
  broker = await startTestBroker();
  client = await RawClient.connect(broker.bootstrap);
});
afterAll(async () => {
  client?.close();
  await broker?.destroy();
});

/** InitProducerId v5, as a Kafka 4 client sends it. */
const init = (transactionalId: string) => wire.init(client, transactionalId, 60_000, 5);

/** Produce v12 by default (the version that adds the partition itself): the partition's error code. */
const produce = async (p: wire.Producer, topic: string, values: string[], opts: { partition?: number; version?: number } = {}) =>
  (await wire.produce(client, p, topic, values, { version: 12, ...opts })).errorCode;

const endTxn = (p: wire.Producer, committed: boolean) => wire.endTxnBumpingEpoch(client, p, committed);

async function readCommitted(topic: string) {
  const part = await wire.fetch(client, topic, READ_COMMITTED);
  return { values: wire.visible(part), highWatermark: part.highWatermark, lastStableOffset: part.lastStableOffset };
}

const describeTxn = async (transactionalId: string) => (await client.request(DescribeTransactionsApi, 0, { transactionalIds: [transactionalId] })).transactionStates[0]!;

describe('transactions version 2', () => {
  it('Produce v12 adds the partition itself; EndTxn v5 commits with an epoch bump, naming the new epoch, and the markers carry it', async () => {
    await client.request(CreateTopicsApi, 7, { topics: [{ name: 'tv2-commit', numPartitions: 2, replicationFactor: 1 }] });
    const p = await init('tv2-commit-1');
    expect(await produce(p, 'tv2-commit', ['a', 'b'])).toBe(ErrorCode.NONE);
    expect(await produce(p, 'tv2-commit', ['c'])).toBe(ErrorCode.NONE);
    expect(await produce(p, 'tv2-commit', ['d'], { partition: 1 })).toBe(ErrorCode.NONE);
    expect(await describeTxn('tv2-commit-1')).toMatchObject({ transactionState: 'Ongoing', producerEpoch: 0, topics: [{ topic: 'tv2-commit', partitions: [0, 1] }] });
    expect((await readCommitted('tv2-commit')).values).toEqual([]);

    expect(await endTxn(p, true)).toMatchObject({ errorCode: ErrorCode.NONE, producerEpoch: 1 });
    expect(await readCommitted('tv2-commit')).toMatchObject({ values: ['a', 'b', 'c'], lastStableOffset: 4n, highWatermark: 4n });
    const markers = await broker.query<{ producer_epoch: number }>('SELECT producer_epoch FROM batches WHERE is_control AND producer_id = $1', [p.producerId.toString()]);
    expect(markers.map((m) => Number(m.producer_epoch))).toEqual([1, 1]);

    // A retry of that EndTxn (the previous epoch) is answered as it was.
    expect(await client.request(EndTxnApi, 5, { transactionalId: p.transactionalId, producerId: p.producerId, producerEpoch: 0, committed: true })).toMatchObject({
      errorCode: ErrorCode.NONE,
      producerId: p.producerId,
      producerEpoch: 1,
    });
    // The next transaction, at the new epoch from sequence 0.
    expect(await produce(p, 'tv2-commit', ['e'])).toBe(ErrorCode.NONE);
    expect(await endTxn(p, true)).toMatchObject({ errorCode: ErrorCode.NONE, producerEpoch: 2 });
    expect((await readCommitted('tv2-commit')).values).toEqual(['a', 'b', 'c', 'e']);
  });

  it('the hanging transaction it prevents: a late batch of an aborted transaction is refused, not taken into the next one, and nothing stays open', async () => {
    await client.request(CreateTopicsApi, 7, { topics: [{ name: 'tv2-late', numPartitions: 1, replicationFactor: 1 }] });
    const p = await init('tv2-late-1');
    expect(await produce(p, 'tv2-late', ['kept-out'])).toBe(ErrorCode.NONE);
    const aborted = { ...p };
    expect(await endTxn(p, false)).toMatchObject({ errorCode: ErrorCode.NONE, producerEpoch: 1 });

    // A batch of the aborted transaction that a client retried late (epoch 0): before KIP-890 part 2 the same epoch would have joined the next transaction.
    expect(await produce(p, 'tv2-late', ['next'])).toBe(ErrorCode.NONE);
    expect(await produce(aborted, 'tv2-late', ['late'])).toBe(ErrorCode.INVALID_PRODUCER_EPOCH);
    expect(await endTxn(p, true)).toMatchObject({ errorCode: ErrorCode.NONE, producerEpoch: 2 });
    // And after the commit, with no transaction open: refused again, and the LSO is the high watermark (no open transaction holds it back).
    expect(await produce(aborted, 'tv2-late', ['later'])).toBe(ErrorCode.INVALID_PRODUCER_EPOCH);
    const read = await readCommitted('tv2-late');
    expect(read.values).toEqual(['next']);
    expect(read.lastStableOffset).toBe(read.highWatermark);
    expect(await describeTxn('tv2-late-1')).toMatchObject({ transactionState: 'CompleteCommit', producerEpoch: 2, topics: [] });
    expect(await broker.query('SELECT 1 FROM open_txns')).toHaveLength(0);
  });

  it('TxnOffsetCommit v5 adds the group itself; the offsets become the group’s at the commit', async () => {
    await client.request(CreateTopicsApi, 7, { topics: [{ name: 'tv2-offsets', numPartitions: 1, replicationFactor: 1 }] });
    const p = await init('tv2-offsets-1');
    const groupId = 'tv2-group';
    const commit = await client.request(TxnOffsetCommitApi, 5, {
      transactionalId: p.transactionalId,
      groupId,
      producerId: p.producerId,
      producerEpoch: p.producerEpoch,
      generationId: -1,
      memberId: '',
      groupInstanceId: null,
      topics: [{ name: 'tv2-offsets', partitions: [{ partitionIndex: 0, committedOffset: 7n, committedLeaderEpoch: -1, committedMetadata: null }] }],
    });
    expect(commit.topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.NONE);
    const offsetFetch = () => client.request(OffsetFetchApi, 7, { groupId, topics: [{ name: 'tv2-offsets', partitionIndexes: [0] }], requireStable: true }).then((r) => r.topics[0]!.partitions[0]!);
    expect((await offsetFetch()).errorCode).toBe(ErrorCode.UNSTABLE_OFFSET_COMMIT);
    expect(await endTxn(p, true)).toMatchObject({ errorCode: ErrorCode.NONE, producerEpoch: 1 });
    expect(await offsetFetch()).toMatchObject({ errorCode: ErrorCode.NONE, committedOffset: 7n });
    // TxnOffsetCommit v4 still needs AddOffsetsToTxn first (transactions version 1).
    const v4 = await client.request(TxnOffsetCommitApi, 4, {
      transactionalId: p.transactionalId,
      groupId,
      producerId: p.producerId,
      producerEpoch: p.producerEpoch,
      generationId: -1,
      memberId: '',
      groupInstanceId: null,
      topics: [{ name: 'tv2-offsets', partitions: [{ partitionIndex: 0, committedOffset: 8n, committedLeaderEpoch: -1, committedMetadata: null }] }],
    });
    expect(v4.topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.TRANSACTION_ABORTABLE);
  });
});

describe('transactions version 2 turned off (transactionVersion 0)', () => {
  it('ApiVersions finalizes no transaction.version, so Kafka 4 clients keep to the earlier protocol', async () => {
    const off = await startTestBroker({ transactionVersion: 0 });
    try {
      const c = await RawClient.connect(off.bootstrap);
      const res = await c.request(ApiVersionsApi, 4, { clientSoftwareName: 'test', clientSoftwareVersion: '1' });
      c.close();
      expect(res.finalizedFeatures.map((f) => f.name)).toEqual(['metadata.version']);
      expect(res.supportedFeatures.map((f) => f.name)).toEqual(['metadata.version', 'transaction.version']);
    } finally {
      await off.destroy();
    }
  });
});
