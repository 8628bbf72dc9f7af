// The PostgreSQL connection is cut while an append statement commits, so
// the broker cannot tell from the statement whether it was stored. It must
// find out before answering: a committed append is answered with its real
// offset (and the broker's high watermark, tail cache and producer state
// agree with it), an uncommitted one with a retriable error, and a retry
// of either is stored once. The cuts are made by a proxy between the broker
// and PostgreSQL (test/support/pg-proxy.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode, isRetriable } from '../../src/protocol/errors.js';
import { AddPartitionsToTxnApi, CreateTopicsApi, EndTxnApi, FetchApi, InitProducerIdApi, ProduceApi } from '../../src/protocol/messages/index.js';
import { buildBatch, decodeRecords, parseBatches } from '../../src/protocol/records/index.js';
import { startTestBroker, testDatabaseUrl, type TestBroker } from '../support/broker.js';
import { PgProxy, type CutPoint } from '../support/pg-proxy.js';
import { RawClient } from '../support/raw-client.js';

let proxy: PgProxy;
let broker: TestBroker;
let client: RawClient;

beforeAll(async () => {
  const direct = new URL(testDatabaseUrl());
  proxy = await PgProxy.start(direct.hostname, Number(direct.port || 5432));
  broker = await startTestBroker({ databaseUrl: PgProxy.urlThrough(testDatabaseUrl(), proxy.port) });
  client = await RawClient.connect(broker.bootstrap);
});
afterAll(async () => {
  client?.close();
  await broker?.destroy();
  await proxy?.close();
});

async function createTopic(name: string, numPartitions = 1) {
  const res = await client.request(CreateTopicsApi, 7, { topics: [{ name, numPartitions, replicationFactor: 1 }], timeoutMs: 5000 });
  expect(res.topics[0]!.errorCode).toBe(0);
}

async function initProducer(): Promise<bigint> {
  const init = await client.request(InitProducerIdApi, 4, { transactionalId: null, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
  expect(init.errorCode).toBe(0);
  return init.producerId;
}

/** One batch of `values` to each of `partitions`; the answers by partition. */
async function produce(topic: string, partitions: number[], values: (p: number) => string[], producerId = -1n, sequence: (p: number) => number = () => -1) {
  const res = await client.request(ProduceApi, 9, {
    acks: -1,
    timeoutMs: 30_000,
    topicData: [
      {
        name: topic,
        partitionData: partitions.map((index) => ({
          index,
          records: buildBatch({ producerId, producerEpoch: producerId < 0n ? -1 : 0, baseSequence: sequence(index), records: values(index).map((v) => ({ key: null, value: Buffer.from(v) })) }),
        })),
      },
    ],
  });
  return new Map(res.responses[0]!.partitionResponses.map((p) => [p.index, p]));
}

/** What a consumer sees from `offset`: the values and the high watermark (served by the broker's in-memory state). */
async function fetchFrom(topic: string, partition: number, offset: bigint) {
  const res = await client.request(FetchApi, 11, {
    replicaId: -1,
    maxWaitMs: 0,
    minBytes: 1,
    maxBytes: 1 << 20,
    sessionEpoch: -1,
    topics: [{ topic, partitions: [{ partition, fetchOffset: offset, partitionMaxBytes: 1 << 20 }] }],
  });
  const p = res.responses[0]!.partitions[0]!;
  const buf = (p.records as Buffer | null) ?? Buffer.alloc(0);
  const values: { offset: bigint; value: string }[] = [];
  for (const h of parseBatches(buf, { mode: 'log' }).batches) for (const r of decodeRecords(buf, h).records) values.push({ offset: h.baseOffset + BigInt(r.offsetDelta), value: r.value!.toString() });
  return { errorCode: p.errorCode, highWatermark: p.highWatermark, values };
}

/** Every value stored in the partition (transaction markers aside), in offset order, as PostgreSQL holds it. */
async function stored(topic: string, partition: number): Promise<string[]> {
  const rows = await broker.query<{ data: Buffer }>(
    'SELECT b.data FROM batches b JOIN topics t ON t.topic_id = b.topic_id WHERE t.name = $1 AND b.partition = $2 AND NOT b.is_control ORDER BY b.base_offset',
    [topic, partition],
  );
  return rows.flatMap(({ data }) => parseBatches(data, { mode: 'log' }).batches.flatMap((h) => decodeRecords(data, h).records.map((r) => r.value!.toString())));
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Arms `point` and runs `act`, which must make the cut happen. */
async function withCut<T>(point: CutPoint, act: () => Promise<T>, statement?: RegExp): Promise<T> {
  const cut = proxy.arm(point, statement);
  const result = await act();
  expect(proxy.isArmed).toBe(false);
  await cut;
  return result;
}

describe('an append whose commit outcome was lost with the connection', () => {
  it('is answered with its real offset when PostgreSQL committed it, and the broker serves it (idempotent producer)', async () => {
    await createTopic('committed');
    const pid = await initProducer();
    const seq = [0];
    const send = (v: string) =>
      produce(
        'committed',
        [0],
        () => [v],
        pid,
        () => seq[0]!,
      );
    expect((await send('a')).get(0)).toMatchObject({ errorCode: 0, baseOffset: 0n });
    seq[0] = 1;
    const answer = await withCut('after-commit', () => send('b'));
    expect(answer.get(0)).toMatchObject({ errorCode: ErrorCode.NONE, baseOffset: 1n });
    // The high watermark and the tail moved with the commit: a consumer sees b at once.
    expect(await fetchFrom('committed', 0, 1n)).toEqual({ errorCode: 0, highWatermark: 2n, values: [{ offset: 1n, value: 'b' }] });
    // A retry of the same batch is a duplicate, answered with the same offset; the producer goes on.
    expect((await send('b')).get(0)).toMatchObject({ errorCode: 0, baseOffset: 1n });
    seq[0] = 2;
    expect((await send('c')).get(0)).toMatchObject({ errorCode: 0, baseOffset: 2n });
    expect(await stored('committed', 0)).toEqual(['a', 'b', 'c']);
  });

  it('is answered with its real offset for a producer without a producer id too', async () => {
    await createTopic('plain');
    expect((await produce('plain', [0], () => ['x'])).get(0)).toMatchObject({ errorCode: 0, baseOffset: 0n });
    const answer = await withCut('after-commit', () => produce('plain', [0], () => ['y', 'z']));
    expect(answer.get(0)).toMatchObject({ errorCode: 0, baseOffset: 1n });
    expect((await fetchFrom('plain', 0, 0n)).values.map((r) => r.value)).toEqual(['x', 'y', 'z']);
    expect(await stored('plain', 0)).toEqual(['x', 'y', 'z']);
  });

  for (const point of ['before-bind', 'mid-bind', 'before-sync', 'hold-before-sync'] as const) {
    it(`is answered with a retriable error when PostgreSQL did not commit it (cut ${point}), and its retry is stored once`, async () => {
      const topic = `lost-${point}`;
      await createTopic(topic);
      const pid = await initProducer();
      const seq = [0];
      const send = (v: string) =>
        produce(
          topic,
          [0],
          () => [v],
          pid,
          () => seq[0]!,
        );
      expect((await send('a')).get(0)).toMatchObject({ errorCode: 0, baseOffset: 0n });
      seq[0] = 1;
      const answer = (await withCut(point, () => send('b'))).get(0)!;
      expect(answer.errorCode).not.toBe(ErrorCode.NONE);
      expect(isRetriable(answer.errorCode)).toBe(true);
      expect(await fetchFrom(topic, 0, 1n)).toEqual({ errorCode: 0, highWatermark: 1n, values: [] });
      expect((await send('b')).get(0)).toMatchObject({ errorCode: 0, baseOffset: 1n });
      seq[0] = 2;
      expect((await send('c')).get(0)).toMatchObject({ errorCode: 0, baseOffset: 2n });
      expect(await stored(topic, 0)).toEqual(['a', 'b', 'c']);
    });
  }

  it('is never answered with an error and then committed (the Sync reaches PostgreSQL after the broker saw the connection fail)', async () => {
    await createTopic('late');
    const pid = await initProducer();
    const send = (v: string, epoch: number, sequence: number) =>
      client
        .request(ProduceApi, 9, {
          acks: -1,
          timeoutMs: 30_000,
          topicData: [
            { name: 'late', partitionData: [{ index: 0, records: buildBatch({ producerId: pid, producerEpoch: epoch, baseSequence: sequence, records: [{ key: null, value: Buffer.from(v) }] }) }] },
          ],
        })
        .then((r) => r.responses[0]!.partitionResponses[0]!);
    expect(await send('a', 0, 0)).toMatchObject({ errorCode: 0, baseOffset: 0n });
    const answer = await withCut('late-sync', () => send('b', 0, 1));
    // Long after the late Sync arrived, the log agrees with the answer.
    await sleep(500);
    if (answer.errorCode === ErrorCode.NONE) {
      expect(answer.baseOffset).toBe(1n);
      expect(await stored('late', 0)).toEqual(['a', 'b']);
      return;
    }
    expect(isRetriable(answer.errorCode)).toBe(true);
    expect(await stored('late', 0)).toEqual(['a']);
    // What librdkafka does after a sequence gap: bump the epoch and send what was not acknowledged from sequence 0.
    const bumped = await client.request(InitProducerIdApi, 4, { transactionalId: null, transactionTimeoutMs: 60_000, producerId: pid, producerEpoch: 0 });
    expect(bumped).toMatchObject({ errorCode: 0, producerEpoch: 1 });
    expect(await send('b', 1, 0)).toMatchObject({ errorCode: 0, baseOffset: 1n });
    expect(await stored('late', 0)).toEqual(['a', 'b']);
  });

  it('keeps a new producer whose first batch was not stored from leaving a gap: its next batch is OUT_OF_ORDER_SEQUENCE_NUMBER', async () => {
    await createTopic('first-lost');
    const pid = await initProducer();
    const send = (v: string, sequence: number) =>
      produce(
        'first-lost',
        [0],
        () => [v],
        pid,
        () => sequence,
      ).then((r) => r.get(0)!);
    const first = await withCut('before-bind', () => send('a', 0));
    expect(isRetriable(first.errorCode)).toBe(true);
    // Accepted, it would be taken by librdkafka as acknowledging the first batch too (which was never stored).
    expect((await send('b', 1)).errorCode).toBe(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
    expect(await send('a', 0)).toMatchObject({ errorCode: 0, baseOffset: 0n });
    expect(await send('b', 1)).toMatchObject({ errorCode: 0, baseOffset: 1n });
    expect(await stored('first-lost', 0)).toEqual(['a', 'b']);
  });

  it('is answered with its real offset when it opened a transaction, and the last stable offset follows', async () => {
    await createTopic('txn-lost');
    const transactionalId = 'txn-lost';
    const init = await client.request(InitProducerIdApi, 4, { transactionalId, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
    expect(init.errorCode).toBe(0);
    const { producerId, producerEpoch } = init;
    const added = await client.request(AddPartitionsToTxnApi, 3, {
      v3AndBelowTransactionalId: transactionalId,
      v3AndBelowProducerId: producerId,
      v3AndBelowProducerEpoch: producerEpoch,
      v3AndBelowTopics: [{ name: 'txn-lost', partitions: [0] }],
    });
    expect(added.resultsByTopicV3AndBelow[0]!.resultsByPartition[0]!.partitionErrorCode).toBe(0);
    const records = buildBatch({ producerId, producerEpoch, baseSequence: 0, isTransactional: true, records: [{ key: null, value: Buffer.from('t') }] });
    const answer = await withCut('after-commit', () =>
      client.request(ProduceApi, 9, { transactionalId, acks: -1, timeoutMs: 30_000, topicData: [{ name: 'txn-lost', partitionData: [{ index: 0, records }] }] }),
    );
    expect(answer.responses[0]!.partitionResponses[0]).toMatchObject({ errorCode: 0, baseOffset: 0n });
    const readCommitted = async () => {
      const res = await client.request(FetchApi, 11, {
        replicaId: -1,
        maxWaitMs: 0,
        minBytes: 1,
        maxBytes: 1 << 20,
        isolationLevel: 1,
        sessionEpoch: -1,
        topics: [{ topic: 'txn-lost', partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1 << 20 }] }],
      });
      return res.responses[0]!.partitions[0]!;
    };
    // The open transaction holds the last stable offset at its first offset.
    expect(await readCommitted()).toMatchObject({ errorCode: 0, highWatermark: 1n, lastStableOffset: 0n });
    const ended = await client.request(EndTxnApi, 3, { transactionalId, producerId, producerEpoch, committed: true });
    expect(ended.errorCode).toBe(0);
    let after = await readCommitted();
    for (let i = 0; i < 100 && after.lastStableOffset !== 2n; i++) {
      await sleep(20);
      after = await readCommitted();
    }
    expect(after).toMatchObject({ highWatermark: 2n, lastStableOffset: 2n });
    expect(await stored('txn-lost', 0)).toEqual(['t']);
  });

  it('settles every partition of a shared statement together: committed, all answered with their offsets', async () => {
    const partitions = [0, 1, 2, 3, 4, 5, 6, 7];
    await createTopic('shared', partitions.length);
    const pid = await initProducer();
    // The first appends go out alone; those queued behind them share one statement, which is cut after its commit.
    let answer: Awaited<ReturnType<typeof produce>> | null = null;
    let round = 0;
    const cut = proxy.arm('after-commit', /^pgkafka_append_many$/);
    for (; round < 10 && proxy.isArmed; round++)
      answer = await produce(
        'shared',
        partitions,
        (p) => [`r${round}-p${p}`],
        pid,
        () => round,
      );
    await cut;
    for (const p of partitions) expect({ p, ...answer!.get(p)! }).toMatchObject({ p, errorCode: 0, baseOffset: BigInt(round - 1) });
    for (const p of partitions) {
      expect((await fetchFrom('shared', p, 0n)).values.map((r) => r.value)).toEqual(Array.from({ length: round }, (_, r) => `r${r}-p${p}`));
      expect(await stored('shared', p)).toEqual(Array.from({ length: round }, (_, r) => `r${r}-p${p}`));
    }
  });

  it('settles every partition of a shared statement together: rolled back, those answered with an error, and stored once when retried', async () => {
    const partitions = [0, 1, 2, 3, 4, 5, 6, 7];
    await createTopic('shared-lost', partitions.length);
    const pid = await initProducer();
    let answer: Awaited<ReturnType<typeof produce>> | null = null;
    let round = 0;
    const cut = proxy.arm('before-sync', /^pgkafka_append_many$/);
    for (; round < 10 && proxy.isArmed; round++)
      answer = await produce(
        'shared-lost',
        partitions,
        (p) => [`r${round}-p${p}`],
        pid,
        () => round,
      );
    await cut;
    const last = round - 1;
    const failed = partitions.filter((p) => answer!.get(p)!.errorCode !== ErrorCode.NONE);
    // The statement held several partitions; the ones that went alone beside it were stored.
    expect(failed.length).toBeGreaterThan(1);
    for (const p of failed) expect(isRetriable(answer!.get(p)!.errorCode)).toBe(true);
    const retried = await produce(
      'shared-lost',
      failed,
      (p) => [`r${last}-p${p}`],
      pid,
      () => last,
    );
    for (const p of failed) expect({ p, ...retried.get(p)! }).toMatchObject({ p, errorCode: 0, baseOffset: BigInt(last) });
    for (const p of partitions) expect(await stored('shared-lost', p)).toEqual(Array.from({ length: round }, (_, r) => `r${r}-p${p}`));
  });
});
