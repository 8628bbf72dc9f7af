// Differential: idempotent and transactional producers at the wire —
// sequences, epochs, duplicates, fencing, commit and abort markers as a
// read_committed consumer sees them, transactions version 2 (KIP-890 part 2)
// — sent as the same raw requests to a real Apache Kafka and to pgkafka; and
// the Java client's transactions under version 2, which Kafka 4.3.1 finalizes
// by default, as pgkafka does.
import { describe, it } from 'vitest';
import {
  AddOffsetsToTxnApi,
  AddPartitionsToTxnApi,
  ApiVersionsApi,
  EndTxnApi,
  FetchApi,
  InitProducerIdApi,
  OffsetFetchApi,
  ProduceApi,
  TxnOffsetCommitApi,
} from '../../src/protocol/messages/index.js';
import { buildBatch, decodeRecords, parseBatches } from '../../src/protocol/records/index.js';
import type { RawClient } from '../../test/support/raw-client.js';
import { awaitCoordinator, createTopics, eventually, expectSame, normaliseAnswer, onBoth, usePair } from '../support/differential.js';
import { runJavaClient } from '../support/java.js';
import { dataset, toJson } from '../support/records.js';

const pair = usePair();
const T0 = 1_700_000_000_000n;

type Producer = { producerId: bigint; producerEpoch: number };

function batch(p: Producer, baseSequence: number, values: string[], isTransactional = false): Buffer {
  return buildBatch({
    baseTimestamp: T0,
    producerId: p.producerId,
    producerEpoch: p.producerEpoch,
    baseSequence,
    isTransactional,
    records: values.map((v) => ({ key: null, value: Buffer.from(v) })),
  });
}

async function produce(c: RawClient, topic: string, records: Buffer, transactionalId: string | null = null, version = 11) {
  const res = await c.request(ProduceApi, version, { transactionalId, acks: -1, timeoutMs: 10_000, topicData: [{ name: topic, partitionData: [{ index: 0, records }] }] });
  return res.responses[0]!.partitionResponses.map((p) => ({
    errorCode: p.errorCode,
    errorMessage: p.errorMessage,
    baseOffset: p.baseOffset,
    logStartOffset: p.logStartOffset,
    recordErrors: p.recordErrors,
  }));
}

/** Retriable answers a client waits out: the coordinator loading, moving, or ending the previous transaction. */
const RETRIED = new Set([14, 15, 16, 51]); // COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS, NOT_COORDINATOR, CONCURRENT_TRANSACTIONS

/**
 * Sends a transaction request again while the answer is retriable, as clients do: Kafka ends a
 * transaction asynchronously (CONCURRENT_TRANSACTIONS until its markers are written), pgkafka
 * before it answers.
 */
async function settled<T>(send: () => Promise<T>, errorOf: (r: T) => number): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const res = await send();
    if (!RETRIED.has(errorOf(res)) || Date.now() > deadline) return res;
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function initProducer(c: RawClient, transactionalId: string | null, transactionTimeoutMs = 60_000) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const res = await c.request(InitProducerIdApi, 4, { transactionalId, transactionTimeoutMs, producerId: -1n, producerEpoch: -1 });
    if (!RETRIED.has(res.errorCode) || Date.now() > deadline) return { errorCode: res.errorCode, producerId: res.producerId, producerEpoch: res.producerEpoch };
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * What a consumer at this isolation level reads from offset 0 to the end: the records, the
 * control batches and the aborted transactions, over as many fetches as it takes (how much one
 * fetch returns is the broker's choice: Kafka may stop at a batch its cached high-watermark
 * position has not reached yet).
 */
async function read(c: RawClient, topic: string, isolationLevel: 0 | 1) {
  let fetchOffset = 0n;
  const batches = [];
  const aborted = new Map<string, { firstOffset: bigint }>();
  let last: { errorCode: number; highWatermark: bigint; lastStableOffset: bigint } | undefined;
  for (let round = 0; round < 20; round++) {
    const res = await c.request(FetchApi, 12, {
      replicaId: -1,
      maxWaitMs: 0,
      minBytes: 1,
      maxBytes: 1 << 20,
      isolationLevel,
      sessionId: 0,
      sessionEpoch: -1,
      topics: [{ topic, partitions: [{ partition: 0, fetchOffset, partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1 }] }],
    });
    const p = res.responses[0]!.partitions[0]!;
    last = { errorCode: p.errorCode, highWatermark: p.highWatermark, lastStableOffset: p.lastStableOffset };
    for (const a of p.abortedTransactions ?? []) aborted.set(String(a.firstOffset), { firstOffset: a.firstOffset });
    const buf = Array.isArray(p.records) ? Buffer.concat(p.records) : (p.records ?? Buffer.alloc(0));
    for (const h of parseBatches(buf, { mode: 'log' }).batches) {
      batches.push({
        baseOffset: h.baseOffset,
        isTransactional: h.isTransactional,
        isControl: h.isControl,
        producerEpoch: h.producerEpoch,
        baseSequence: h.baseSequence,
        records: decodeRecords(buf, h).records.map((r) => (h.isControl ? `control:${r.key?.toString('hex')}` : r.value?.toString())),
      });
      fetchOffset = h.baseOffset + BigInt(h.lastOffsetDelta) + 1n;
    }
    const end = isolationLevel === 1 ? p.lastStableOffset : p.highWatermark;
    if (p.errorCode !== 0 || fetchOffset >= end) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  return { ...last, abortedTransactions: [...aborted.values()], batches };
}

describe('differential: producers', () => {
  it('idempotence: in-order sequences, a duplicate, a gap, a new epoch, a stale epoch', async () => {
    const outcome = await onBoth(pair(), async (connect) => {
      const c = await connect();
      await createTopics(c, [{ name: 'i-seq', numPartitions: 1 }]);
      const p = await initProducer(c, null);
      const bumped = { producerId: p.producerId, producerEpoch: p.producerEpoch + 1 };
      return {
        init: p,
        first: await produce(c, 'i-seq', batch(p, 0, ['a', 'b', 'c'])),
        second: await produce(c, 'i-seq', batch(p, 3, ['d'])),
        duplicateOfLast: await produce(c, 'i-seq', batch(p, 3, ['d'])),
        duplicateOfFirst: await produce(c, 'i-seq', batch(p, 0, ['a', 'b', 'c'])),
        gap: await produce(c, 'i-seq', batch(p, 9, ['x'])),
        newEpochFromZero: await produce(c, 'i-seq', batch(bumped, 0, ['e'])),
        staleEpoch: await produce(c, 'i-seq', batch(p, 4, ['f'])),
        newProducerNotFromZero: await produce(c, 'i-seq', batch({ producerId: p.producerId + 1000n, producerEpoch: 0 }, 7, ['g'])),
        log: await read(c, 'i-seq', 0),
      };
    });
    expectSame(outcome);
  });

  it('transactions: commit and abort as read_committed and read_uncommitted consumers see them', async () => {
    const outcome = await onBoth(pair(), async (connect) => {
      const c = await connect();
      await createTopics(c, [{ name: 't-log', numPartitions: 1 }]);
      await awaitCoordinator(c, ['t-one'], 1);
      const p = await initProducer(c, 't-one');
      const add = () =>
        settled(
          () =>
            c.request(AddPartitionsToTxnApi, 3, {
              v3AndBelowTransactionalId: 't-one',
              v3AndBelowProducerId: p.producerId,
              v3AndBelowProducerEpoch: p.producerEpoch,
              v3AndBelowTopics: [{ name: 't-log', partitions: [0] }],
            }),
          (r) => r.resultsByTopicV3AndBelow[0]!.resultsByPartition[0]!.partitionErrorCode,
        ).then((r) => r.resultsByTopicV3AndBelow);
      const end = (committed: boolean, epoch = p.producerEpoch) =>
        settled(
          () => c.request(EndTxnApi, 3, { transactionalId: 't-one', producerId: p.producerId, producerEpoch: epoch, committed }),
          (r) => r.errorCode,
        ).then((r) => r.errorCode);
      const added = await add();
      const produced = await produce(c, 't-log', batch(p, 0, ['c1', 'c2'], true), 't-one');
      const openCommitted = await read(c, 't-log', 1);
      const committed = await end(true);
      const addedAgain = await add();
      const producedAgain = await produce(c, 't-log', batch(p, 2, ['a1'], true), 't-one');
      const aborted = await end(false);
      return {
        init: p,
        added,
        produced,
        openCommitted,
        committed,
        addedAgain,
        producedAgain,
        aborted,
        endWithoutTransaction: await end(true),
        endWithStaleEpoch: await end(true, p.producerEpoch - 1),
        readCommitted: await read(c, 't-log', 1),
        readUncommitted: await read(c, 't-log', 0),
      };
    });
    expectSame(outcome);
  });

  it('transactions: fencing by a second InitProducerId, and offsets sent to the transaction', async () => {
    const outcome = await onBoth(pair(), async (connect) => {
      const c = await connect();
      await createTopics(c, [{ name: 't-fenced', numPartitions: 1 }]);
      await awaitCoordinator(c, ['t-two'], 1);
      await awaitCoordinator(c, ['t-group']);
      const old = await initProducer(c, 't-two');
      await c.request(AddPartitionsToTxnApi, 3, {
        v3AndBelowTransactionalId: 't-two',
        v3AndBelowProducerId: old.producerId,
        v3AndBelowProducerEpoch: old.producerEpoch,
        v3AndBelowTopics: [{ name: 't-fenced', partitions: [0] }],
      });
      const oldProduced = await produce(c, 't-fenced', batch(old, 0, ['old'], true), 't-two');
      const fresh = await initProducer(c, 't-two');
      const offsetsAdded = await c
        .request(AddOffsetsToTxnApi, 3, { transactionalId: 't-two', producerId: fresh.producerId, producerEpoch: fresh.producerEpoch, groupId: 't-group' })
        .then((r) => r.errorCode);
      const txnCommit = await c
        .request(TxnOffsetCommitApi, 3, {
          transactionalId: 't-two',
          groupId: 't-group',
          producerId: fresh.producerId,
          producerEpoch: fresh.producerEpoch,
          generationId: -1,
          memberId: '',
          groupInstanceId: null,
          topics: [{ name: 't-fenced', partitions: [{ partitionIndex: 0, committedOffset: 1n, committedLeaderEpoch: -1, committedMetadata: 'txn' }] }],
        })
        .then((r) => r.topics);
      return {
        old,
        fresh: { ...fresh, epochAdvanced: fresh.producerEpoch > old.producerEpoch, sameId: fresh.producerId === old.producerId },
        oldProduced,
        oldProducesAfterFence: await produce(c, 't-fenced', batch(old, 1, ['late'], true), 't-two'),
        oldEnds: await c.request(EndTxnApi, 3, { transactionalId: 't-two', producerId: old.producerId, producerEpoch: old.producerEpoch, committed: true }).then((r) => r.errorCode),
        offsetsAdded,
        txnCommit,
        freshEnds: await settled(
          () => c.request(EndTxnApi, 3, { transactionalId: 't-two', producerId: fresh.producerId, producerEpoch: fresh.producerEpoch, committed: true }),
          (r) => r.errorCode,
        ).then((r) => r.errorCode),
        // Once the coordinator has finished the commit (Kafka writes its markers after answering).
        settledInit: await initProducer(c, 't-two').then((r) => r.errorCode),
        readCommitted: await read(c, 't-fenced', 1),
      };
    });
    expectSame(outcome);
  });

  it('transactions version 2: Produce v12 and TxnOffsetCommit v5 add to the transaction, every EndTxn v5 bumps the epoch, retries, and the late batch it refuses', async () => {
    const outcome = await onBoth(pair(), async (connect) => {
      const c = await connect();
      await createTopics(c, [{ name: 'tv2', numPartitions: 1 }]);
      await awaitCoordinator(c, ['tv2-tx'], 1);
      await awaitCoordinator(c, ['tv2-group']);
      const features = await c
        .request(ApiVersionsApi, 4, { clientSoftwareName: 'differential', clientSoftwareVersion: '1' })
        .then((r) => r.finalizedFeatures.find((f) => f.name === 'transaction.version'));
      const init = await initProducer(c, 'tv2-tx');
      const endTxn = (p: Producer, committed: boolean) =>
        settled(
          () => c.request(EndTxnApi, 5, { transactionalId: 'tv2-tx', producerId: p.producerId, producerEpoch: p.producerEpoch, committed }),
          (r) => r.errorCode,
        ).then((r) => ({ errorCode: r.errorCode, producerEpoch: r.producerEpoch, sameId: r.producerId === init.producerId }));
      const txProduce = (p: Producer, baseSequence: number, values: string[]) =>
        settled(
          () => produce(c, 'tv2', batch(p, baseSequence, values, true), 'tv2-tx', 12),
          (r) => r[0]!.errorCode,
        );
      const at = (producerEpoch: number) => ({ producerId: init.producerId, producerEpoch });
      const e = init.producerEpoch;
      const out: Record<string, unknown> = { features, init };
      out.first = await txProduce(at(e), 0, ['a', 'b']);
      out.second = await txProduce(at(e), 2, ['c']);
      out.committed = await endTxn(at(e), true);
      out.retried = await endTxn(at(e), true);
      out.retriedOtherOutcome = await endTxn(at(e), false);
      out.commitWithNothingBegun = await endTxn(at(e + 1), true);
      out.next = await txProduce(at(e + 1), 0, ['d']);
      out.lateBatchOfTheCommitted = await txProduce(at(e), 3, ['late']);
      out.lateEndTxn = await endTxn(at(e), true);
      out.aborted = await endTxn(at(e + 1), false);
      out.abortWithNothingBegun = await endTxn(at(e + 2), false);
      out.offsets = await settled(
        () =>
          c.request(TxnOffsetCommitApi, 5, {
            transactionalId: 'tv2-tx',
            groupId: 'tv2-group',
            producerId: init.producerId,
            producerEpoch: e + 3,
            generationId: -1,
            memberId: '',
            groupInstanceId: null,
            topics: [{ name: 'tv2', partitions: [{ partitionIndex: 0, committedOffset: 3n, committedLeaderEpoch: -1, committedMetadata: 'tv2' }] }],
          }),
        (r) => r.topics[0]!.partitions[0]!.errorCode,
      ).then((r) => r.topics);
      out.last = await txProduce(at(e + 3), 0, ['e']);
      out.lastCommitted = await endTxn(at(e + 3), true);
      out.readCommitted = await eventually(
        () => read(c, 'tv2', 1),
        (r) => r.lastStableOffset === r.highWatermark,
      );
      out.groupOffset = await eventually(
        () => c.request(OffsetFetchApi, 7, { groupId: 'tv2-group', topics: [{ name: 'tv2', partitionIndexes: [0] }], requireStable: true }).then((r) => r.topics[0]!.partitions[0]!),
        (r) => r.errorCode === 0,
      );
      return out;
    });
    expectSame(outcome);
  });

  it('transactions version 2: the Java client copies records in transactions with the consumer offsets, aborts one, and is fenced by a successor', async () => {
    const input = dataset('tv2-java', { partitions: 2, perPartition: 3 });
    const answers: Record<string, unknown> = {};
    for (const side of ['kafka', 'pgkafka'] as const) {
      const res = await runJavaClient(pair().bootstrap(side), [
        {
          id: 'create',
          op: 'createTopics',
          topics: [
            { name: 'tv2-java-in', partitions: 2, configs: {} },
            { name: 'tv2-java-out', partitions: 2, configs: {} },
          ],
        },
        { id: 'produce', op: 'produce', topic: 'tv2-java-in', config: {}, records: toJson(input).map((r) => ({ ...r, timestamp: null })) },
        {
          id: 'txn',
          op: 'transactions',
          input: 'tv2-java-in',
          output: 'tv2-java-out',
          group: 'tv2-java',
          transactionalId: 'tv2-java-id',
          expect: input.length,
          aborted: toJson(input.slice(0, 1)),
          after: toJson(input.slice(1, 2)),
          zombie: toJson(input.slice(2, 3)),
        },
        { id: 'offsets', op: 'listConsumerGroupOffsets', group: 'tv2-java' },
        { id: 'describe', op: 'describeTransactions', ids: ['tv2-java-id'] },
      ]);
      const described = res.describe['tv2-java-id'];
      // How many transactions the copying took depends on the polls; each EndTxn v5 (those, the aborted and the
      // last one) bumped the epoch once, and the successor's InitProducerId once more.
      answers[side] = normaliseAnswer({
        copied: res.txn.copied,
        zombie: res.txn.zombie,
        offsets: res.offsets,
        state: described.state,
        epochBumpsBeyondEndTxns: described.producerEpoch - (res.txn.transactions + 2),
      });
    }
    expectSame(answers as Record<'kafka' | 'pgkafka', unknown>);
  }, 240_000);
});
