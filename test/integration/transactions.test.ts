// Transactions at the wire: InitProducerId with a transactional id and
// fencing, AddPartitionsToTxn, EndTxn markers, the last stable offset and
// aborted transactions in read_committed fetches, ListOffsets, timeouts,
// TxnOffsetCommit, and a broker restart in the middle of a transaction.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/protocol/errors.js';
import {
  AddOffsetsToTxnApi,
  DeleteRecordsApi,
  DescribeTransactionsApi,
  FetchApi,
  InitProducerIdApi,
  ListTransactionsApi,
  OffsetFetchApi,
  TxnOffsetCommitApi,
} from '../../src/protocol/messages/index.js';
import { startTestBroker, type TestBroker } from '../support/broker.js';
import { RawClient } from '../support/raw-client.js';
import { addPartitions, allValues, createTopic, endTxn, fetch, init, latest, plainProduce, produce, visible } from '../support/txn-wire.js';

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

describe('transactions', () => {
  it('a committed transaction becomes visible to read_committed at the commit; the LSO holds it back while open', async () => {
    await createTopic(client, 'tx-commit');
    await plainProduce(client, 'tx-commit', ['before']);
    const p = await init(client, 'tx-commit-1');
    expect(await addPartitions(client, p, 'tx-commit')).toEqual([ErrorCode.NONE]);
    expect((await produce(client, p, 'tx-commit', ['t1', 't2'])).errorCode).toBe(ErrorCode.NONE);
    await plainProduce(client, 'tx-commit', ['after']);

    const open = await fetch(client, 'tx-commit', 1);
    expect(open).toMatchObject({ highWatermark: 4n, lastStableOffset: 1n });
    expect(visible(open)).toEqual(['before']);
    expect(allValues(await fetch(client, 'tx-commit', 0))).toEqual(['before', 't1', 't2', 'after']);
    expect(await latest(client, 'tx-commit', 1)).toBe(1n);
    expect(await latest(client, 'tx-commit', 0)).toBe(4n);

    // A read_committed long poll parked at the LSO wakes when the commit moves it.
    const parked = fetch(client, 'tx-commit', 1, 1n, 5000);
    const other = await RawClient.connect(broker.bootstrap);
    const started = Date.now();
    expect(await endTxn(other, p, true)).toBe(ErrorCode.NONE);
    other.close();
    const woke = await parked;
    expect(Date.now() - started).toBeLessThan(3000);
    expect(woke.lastStableOffset).toBe(5n);
    expect(visible(woke)).toEqual(['t1', 't2', 'after']);
    expect(await latest(client, 'tx-commit', 1)).toBe(5n);
    expect(await broker.query('SELECT 1 FROM open_txns')).toHaveLength(0);
  });

  it('an aborted transaction is dropped by read_committed (aborted list) and still returned to read_uncommitted', async () => {
    await createTopic(client, 'tx-abort');
    const p = await init(client, 'tx-abort-1');
    await addPartitions(client, p, 'tx-abort');
    await produce(client, p, 'tx-abort', ['x1', 'x2']);
    expect(await endTxn(client, p, false)).toBe(ErrorCode.NONE);
    await plainProduce(client, 'tx-abort', ['plain']);

    const committed = await fetch(client, 'tx-abort', 1);
    expect(committed.abortedTransactions).toEqual([{ producerId: p.producerId, firstOffset: 0n }]);
    expect(visible(committed)).toEqual(['plain']);
    const uncommitted = await fetch(client, 'tx-abort', 0);
    expect(uncommitted.abortedTransactions).toBeNull();
    expect(allValues(uncommitted)).toEqual(['x1', 'x2', 'plain']);
    // A fetch starting after the aborted range carries no aborted list.
    expect((await fetch(client, 'tx-abort', 1, 3n)).abortedTransactions).toEqual([]);
  });

  it('forgets an aborted transaction once the log start moves past its ABORT marker', async () => {
    await createTopic(client, 'tx-abort-trim');
    const p = await init(client, 'tx-abort-trim-1');
    await addPartitions(client, p, 'tx-abort-trim');
    await produce(client, p, 'tx-abort-trim', ['y1']);
    expect(await endTxn(client, p, false)).toBe(ErrorCode.NONE); // y1 at 0, ABORT marker at 1
    await plainProduce(client, 'tx-abort-trim', ['k1', 'k2']);
    const aborted = () => broker.query("SELECT a.last_offset FROM aborted_txns a JOIN topics t USING (topic_id) WHERE t.name = 'tx-abort-trim'");
    expect(await aborted()).toHaveLength(1);
    const trim = async (offset: bigint) =>
      (await client.request(DeleteRecordsApi, 2, { topics: [{ name: 'tx-abort-trim', partitions: [{ partitionIndex: 0, offset }] }], timeoutMs: 1000 })).topics[0]!.partitions[0]!.errorCode;
    // The marker itself is still readable at log start 1: kept.
    expect(await trim(1n)).toBe(ErrorCode.NONE);
    expect(await aborted()).toHaveLength(1);
    expect(await trim(2n)).toBe(ErrorCode.NONE);
    expect(await aborted()).toHaveLength(0);
    expect(visible(await fetch(client, 'tx-abort-trim', 1, 2n))).toEqual(['k1', 'k2']);
  });

  it('refuses a batch for a partition outside the transaction, and EndTxn outside one', async () => {
    await createTopic(client, 'tx-refuse', 2);
    const p = await init(client, 'tx-refuse-1');
    await addPartitions(client, p, 'tx-refuse', [0]);
    expect((await produce(client, p, 'tx-refuse', ['no'], { partition: 1 })).errorCode).toBe(ErrorCode.INVALID_RECORD);
    expect((await produce(client, p, 'tx-refuse', ['no'], { partition: 1, version: 12 })).errorCode).toBe(ErrorCode.INVALID_TXN_STATE);
    expect(await addPartitions(client, p, 'missing-topic')).toEqual([ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]);
    expect(await endTxn(client, p, true)).toBe(ErrorCode.NONE);
    expect(await endTxn(client, p, false)).toBe(ErrorCode.INVALID_TXN_STATE);
    const q = await init(client, 'tx-refuse-2');
    expect(await endTxn(client, q, true)).toBe(ErrorCode.INVALID_TXN_STATE);
  });

  it('a second InitProducerId fences the first instance and aborts its open transaction', async () => {
    await createTopic(client, 'tx-fence');
    const first = await init(client, 'tx-fence-1');
    await addPartitions(client, first, 'tx-fence');
    await produce(client, first, 'tx-fence', ['zombie']);
    const second = await init(client, 'tx-fence-1');
    expect(second.producerId).toBe(first.producerId);
    expect(second.producerEpoch).toBeGreaterThan(first.producerEpoch);

    expect((await produce(client, first, 'tx-fence', ['late'])).errorCode).toBe(ErrorCode.INVALID_PRODUCER_EPOCH);
    expect(await endTxn(client, first, true, 3)).toBe(ErrorCode.PRODUCER_FENCED);
    expect(await endTxn(client, first, true, 1)).toBe(ErrorCode.INVALID_PRODUCER_EPOCH);
    expect(await addPartitions(client, first, 'tx-fence')).toEqual([ErrorCode.PRODUCER_FENCED]);

    const part = await fetch(client, 'tx-fence', 1);
    expect(part.lastStableOffset).toBe(part.highWatermark);
    expect(visible(part)).toEqual([]);
    expect(part.abortedTransactions).toEqual([{ producerId: first.producerId, firstOffset: 0n }]);

    await addPartitions(client, second, 'tx-fence');
    expect((await produce(client, second, 'tx-fence', ['fresh'])).errorCode).toBe(ErrorCode.NONE);
    expect(await endTxn(client, second, true)).toBe(ErrorCode.NONE);
    expect(visible(await fetch(client, 'tx-fence', 1))).toEqual(['fresh']);
  });

  it('aborts a transaction open longer than its timeout, with an epoch bump, and the LSO moves', async () => {
    await createTopic(client, 'tx-timeout');
    const p = await init(client, 'tx-timeout-1', 1000);
    await addPartitions(client, p, 'tx-timeout');
    await produce(client, p, 'tx-timeout', ['slow']);
    expect((await fetch(client, 'tx-timeout', 1)).lastStableOffset).toBe(0n);
    const deadline = Date.now() + 10_000;
    let part = await fetch(client, 'tx-timeout', 1);
    while (part.lastStableOffset === 0n && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      part = await fetch(client, 'tx-timeout', 1);
    }
    expect(part.lastStableOffset).toBe(2n);
    expect(visible(part)).toEqual([]);
    expect(await endTxn(client, p, true)).toBe(ErrorCode.PRODUCER_FENCED);
    const described = await client.request(DescribeTransactionsApi, 0, { transactionalIds: ['tx-timeout-1', 'nobody'] });
    expect(described.transactionStates[0]).toMatchObject({ transactionState: 'CompleteAbort', producerEpoch: p.producerEpoch + 1 });
    expect(described.transactionStates[1]!.errorCode).toBe(ErrorCode.TRANSACTIONAL_ID_NOT_FOUND);
  });

  it('TxnOffsetCommit offsets are visible to OffsetFetch only after the commit (requireStable: UNSTABLE_OFFSET_COMMIT)', async () => {
    await createTopic(client, 'tx-offsets');
    const p = await init(client, 'tx-offsets-1');
    const groupId = 'tx-group';
    expect((await client.request(AddOffsetsToTxnApi, 3, { transactionalId: p.transactionalId, producerId: p.producerId, producerEpoch: p.producerEpoch, groupId })).errorCode).toBe(ErrorCode.NONE);
    const commit = await client.request(TxnOffsetCommitApi, 3, {
      transactionalId: p.transactionalId,
      groupId,
      producerId: p.producerId,
      producerEpoch: p.producerEpoch,
      generationId: -1,
      memberId: '',
      groupInstanceId: null,
      topics: [{ name: 'tx-offsets', partitions: [{ partitionIndex: 0, committedOffset: 42n, committedLeaderEpoch: -1, committedMetadata: 'm' }] }],
    });
    expect(commit.topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.NONE);
    const offsetFetch = (requireStable: boolean) =>
      client.request(OffsetFetchApi, 7, { groupId, topics: [{ name: 'tx-offsets', partitionIndexes: [0] }], requireStable }).then((r) => r.topics[0]!.partitions[0]!);
    expect(await offsetFetch(false)).toMatchObject({ errorCode: ErrorCode.NONE, committedOffset: -1n });
    expect((await offsetFetch(true)).errorCode).toBe(ErrorCode.UNSTABLE_OFFSET_COMMIT);
    expect(await endTxn(client, p, true)).toBe(ErrorCode.NONE);
    expect(await offsetFetch(true)).toMatchObject({ errorCode: ErrorCode.NONE, committedOffset: 42n, metadata: 'm' });

    // Aborted: the staged offset is dropped.
    await client.request(AddOffsetsToTxnApi, 3, { transactionalId: p.transactionalId, producerId: p.producerId, producerEpoch: p.producerEpoch, groupId });
    await client.request(TxnOffsetCommitApi, 3, {
      transactionalId: p.transactionalId,
      groupId,
      producerId: p.producerId,
      producerEpoch: p.producerEpoch,
      generationId: -1,
      memberId: '',
      groupInstanceId: null,
      topics: [{ name: 'tx-offsets', partitions: [{ partitionIndex: 0, committedOffset: 99n, committedLeaderEpoch: -1, committedMetadata: null }] }],
    });
    expect(await endTxn(client, p, false)).toBe(ErrorCode.NONE);
    expect(await offsetFetch(true)).toMatchObject({ errorCode: ErrorCode.NONE, committedOffset: 42n });
  });

  it('lists transactions by state', async () => {
    const res = await client.request(ListTransactionsApi, 1, { stateFilters: ['CompleteCommit', 'Bogus'], producerIdFilters: [], durationFilter: -1n });
    expect(res.unknownStateFilters).toEqual(['Bogus']);
    expect(res.transactionStates.map((t) => t.transactionalId)).toContain('tx-commit-1');
    expect(res.transactionStates.every((t) => t.transactionState === 'CompleteCommit')).toBe(true);
  });
});

describe('transactions across a broker restart', () => {
  it('an open transaction survives a restart: the LSO holds, and it can then be committed or aborted', async () => {
    const own = await startTestBroker();
    let c = await RawClient.connect(own.bootstrap);
    await createTopic(c, 'tx-restart');
    const a = await init(c, 'tx-restart-a');
    const b = await init(c, 'tx-restart-b');
    await addPartitions(c, a, 'tx-restart');
    await addPartitions(c, b, 'tx-restart');
    await produce(c, a, 'tx-restart', ['a1']);
    await produce(c, b, 'tx-restart', ['b1']);
    c.close();
    await own.stop();
    const restarted = await startTestBroker({ schema: own.schema });
    try {
      c = await RawClient.connect(restarted.bootstrap);
      let part = await fetch(c, 'tx-restart', 1);
      expect(part).toMatchObject({ highWatermark: 2n, lastStableOffset: 0n });
      expect(await endTxn(c, a, true)).toBe(ErrorCode.NONE);
      part = await fetch(c, 'tx-restart', 1);
      expect(part.lastStableOffset).toBe(1n);
      expect(visible(part)).toEqual(['a1']);
      expect(await endTxn(c, b, false)).toBe(ErrorCode.NONE);
      part = await fetch(c, 'tx-restart', 1);
      expect(part.lastStableOffset).toBe(part.highWatermark);
      expect(visible(part)).toEqual(['a1']);
      c.close();
    } finally {
      await restarted.destroy();
    }
  });

  it('a transaction stored in PrepareCommit is completed at start-up, never half visible', async () => {
    const own = await startTestBroker();
    let c = await RawClient.connect(own.bootstrap);
    await createTopic(c, 'tx-prepared', 2);
    const p = await init(c, 'tx-prepared-1');
    await addPartitions(c, p, 'tx-prepared', [0, 1]);
    await produce(c, p, 'tx-prepared', ['p0'], { partition: 0 });
    await produce(c, p, 'tx-prepared', ['p1'], { partition: 1 });
    c.close();
    await own.stop();
    // As if the broker died after storing PrepareCommit, before any marker.
    await own.query("UPDATE transactions SET state = 'PrepareCommit' WHERE transactional_id = 'tx-prepared-1'");
    const restarted = await startTestBroker({ schema: own.schema });
    try {
      c = await RawClient.connect(restarted.bootstrap);
      expect(visible(await fetch(c, 'tx-prepared', 1))).toEqual(['p0']);
      const res = await c.request(FetchApi, 11, {
        replicaId: -1,
        maxWaitMs: 0,
        minBytes: 1,
        maxBytes: 1 << 20,
        isolationLevel: 1,
        sessionId: 0,
        sessionEpoch: -1,
        topics: [{ topic: 'tx-prepared', partitions: [{ partition: 1, fetchOffset: 0n, partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1 }] }],
      });
      expect(visible(res.responses[0]!.partitions[0]!)).toEqual(['p1']);
      const state = await restarted.query<{ state: string }>("SELECT state FROM transactions WHERE transactional_id = 'tx-prepared-1'");
      expect(state[0]!.state).toBe('CompleteCommit');
      c.close();
    } finally {
      await restarted.destroy();
    }
  });
});

describe('transactional id expiration', () => {
  it('forgets a transactional id idle for longer than transactional.id.expiration.ms', async () => {
    const own = await startTestBroker({ transactionalIdExpirationMs: 300 });
    const c = await RawClient.connect(own.bootstrap);
    try {
      const first = await c.request(InitProducerIdApi, 4, { transactionalId: 'short-lived', transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
      expect(first.errorCode).toBe(0);
      expect(await own.query(`SELECT 1 FROM transactions WHERE transactional_id = 'short-lived'`)).toHaveLength(1);
      const deadline = Date.now() + 5000;
      while ((await own.query(`SELECT 1 FROM transactions WHERE transactional_id = 'short-lived'`)).length > 0 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(await own.query(`SELECT 1 FROM transactions WHERE transactional_id = 'short-lived'`)).toHaveLength(0);
      const again = await c.request(InitProducerIdApi, 4, { transactionalId: 'short-lived', transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
      expect(again).toMatchObject({ errorCode: 0, producerEpoch: 0 });
      expect(again.producerId).not.toBe(first.producerId);
    } finally {
      c.close();
      await own.destroy();
    }
  });
});
