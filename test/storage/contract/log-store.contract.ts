import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { BatchToAppend } from '../../../src/log/log-storage.js';
import type { HarnessRef } from './harness.js';

/** A batch of `count` offsets at `rel`; its bytes name it (the first 8 are the store's to overwrite). */
const batch = (rel: bigint, count: number, over: Partial<BatchToAppend> = {}, size = 40): BatchToAppend => {
  const data = Buffer.alloc(size, 0xab);
  data.write(`b${rel}`, 8);
  return {
    data,
    relativeOffset: rel,
    lastOffsetDelta: count - 1,
    recordCount: count,
    firstTimestamp: 1000n,
    maxTimestamp: 1000n,
    producerId: -1n,
    producerEpoch: -1,
    baseSequence: -1,
    isTransactional: false,
    isControl: false,
    ...over,
  };
};

const baseOf = (data: Buffer) => data.readBigInt64BE(0);

export function logStorageContract(h: HarnessRef): void {
  describe('LogStorage', () => {
    async function topic(partitions = 2): Promise<string> {
      const topicId = randomUUID();
      await h().topics.create({ topicId, name: `t-${topicId}`, partitionCount: partitions, configs: {} });
      return topicId;
    }

    it('assigns offsets from the partition log end, writes each base offset into its batch, and answers null for no such partition', async () => {
      const { log } = h();
      const t = await topic();
      expect(await log.append(t, 0, 3n, [batch(0n, 2), batch(2n, 1)], null, 0n)).toEqual({ baseOffset: 0n, highWatermark: 3n, logStartOffset: 0n });
      expect(await log.append(t, 0, 5n, [batch(0n, 5)], null, 3n)).toEqual({ baseOffset: 3n, highWatermark: 8n, logStartOffset: 0n });
      expect(await log.append(t, 7, 1n, [batch(0n, 1)], null, 0n)).toBeNull();
      expect(await log.append(randomUUID(), 0, 1n, [batch(0n, 1)], null, 0n)).toBeNull();
      const read = await log.read(t, 0, 0n, 8n, 1 << 20, false);
      expect(read.map((b) => [b.baseOffset, b.lastOffset, baseOf(b.data)])).toEqual([
        [0n, 1n, 0n],
        [2n, 2n, 2n],
        [3n, 7n, 3n],
      ]);
      expect(read[2]!.data.subarray(8, 10).toString()).toBe('b0');
      const snapshots = await log.partitionSnapshots(t);
      expect(snapshots.map((s) => [s.partition, s.highWatermark, s.logStartOffset, s.leaderEpoch, s.openTxns.size, s.hasAbortedTxns])).toEqual([
        [0, 8n, 0n, 0, 0, false],
        [1, 0n, 0n, 0, 0, false],
      ]);
      expect((await log.partitionSnapshots(t, 1)).map((s) => s.partition)).toEqual([1]);
      expect(await log.partitionSnapshots(t, 5)).toEqual([]);
    });

    it("appends several partitions in one statement, each one's result in order (null for no such partition)", async () => {
      const { log } = h();
      const t = await topic();
      const u = await topic(1);
      await log.append(t, 1, 4n, [batch(0n, 4)], null, 0n);
      const results = await log.appendMany([
        { topicId: t, partition: 1, offsetCount: 2n, batches: [batch(0n, 2)], logEnd: 4n },
        { topicId: t, partition: 9, offsetCount: 1n, batches: [batch(0n, 1)], logEnd: 0n },
        { topicId: u, partition: 0, offsetCount: 3n, batches: [batch(0n, 1), batch(1n, 2)], logEnd: 0n },
      ]);
      expect(results).toEqual([{ baseOffset: 4n, highWatermark: 6n, logStartOffset: 0n }, null, { baseOffset: 0n, highWatermark: 3n, logStartOffset: 0n }]);
      expect((await log.read(u, 0, 0n, 3n, 1 << 20, false)).map((b) => baseOf(b.data))).toEqual([0n, 1n]);
    });

    it('applies a statement whole or not at all', async () => {
      const { log } = h();
      const t = await topic();
      // Two batches at one offset break the batches' key: the other partition's append goes neither.
      await expect(
        log.appendMany([
          { topicId: t, partition: 0, offsetCount: 1n, batches: [batch(0n, 1)], logEnd: 0n },
          { topicId: t, partition: 1, offsetCount: 1n, batches: [batch(0n, 1), batch(0n, 1)], logEnd: 0n },
        ]),
      ).rejects.toThrow();
      await expect(log.append(t, 0, 1n, [batch(0n, 1), batch(0n, 1)], null, 0n)).rejects.toThrow();
      expect((await log.partitionSnapshots(t)).map((s) => s.highWatermark)).toEqual([0n, 0n]);
      expect(await log.read(t, 0, 0n, 1n, 1 << 20, true)).toEqual([]);
    });

    it('reads from the batch holding the offset, below the bound given, cut at about maxBytes (always one with minOne)', async () => {
      const { log } = h();
      const t = await topic();
      await log.append(t, 0, 10n, [batch(0n, 4, {}, 100), batch(4n, 3, {}, 100), batch(7n, 3, {}, 100)], null, 0n);
      const bases = async (from: bigint, hw: bigint, maxBytes: number, minOne: boolean) => (await log.read(t, 0, from, hw, maxBytes, minOne)).map((b) => b.baseOffset);
      expect(await bases(5n, 10n, 1000, false)).toEqual([4n, 7n]);
      expect(await bases(0n, 7n, 1000, false)).toEqual([0n, 4n]);
      expect(await bases(0n, 10n, 250, false)).toEqual([0n, 4n]);
      expect(await bases(0n, 10n, 50, false)).toEqual([]);
      expect(await bases(0n, 10n, 50, true)).toEqual([0n]);
      expect(await bases(10n, 10n, 1000, true)).toEqual([]);
      expect(await bases(3n, 3n, 1000, true)).toEqual([]);
    });

    it('keeps the transaction index: a first transactional batch opens, a marker ends, an ABORT records the range', async () => {
      const { log } = h();
      const t = await topic(1);
      const txnBatch = (rel: bigint, pid: bigint) => batch(rel, 2, { producerId: pid, producerEpoch: 0, baseSequence: 0, isTransactional: true });
      const marker = (rel: bigint, pid: bigint) => batch(rel, 1, { producerId: pid, producerEpoch: 0, isTransactional: true, isControl: true });
      await log.append(t, 0, 1n, [batch(0n, 1)], null, 0n);
      await log.append(
        t,
        0,
        4n,
        [txnBatch(0n, 7n), txnBatch(2n, 8n)],
        {
          opened: [
            { producerId: 7n, relativeOffset: 0n },
            { producerId: 8n, relativeOffset: 2n },
          ],
          ended: [],
        },
        1n,
      );
      // A second "open" of an open transaction keeps its first offset.
      await log.append(t, 0, 2n, [txnBatch(0n, 7n)], { opened: [{ producerId: 7n, relativeOffset: 0n }], ended: [] }, 5n);
      let [s] = await log.partitionSnapshots(t);
      expect([...s!.openTxns].sort((a, b) => Number(a[0] - b[0]))).toEqual([
        [7n, 1n],
        [8n, 3n],
      ]);
      expect(s!.hasAbortedTxns).toBe(false);

      await log.append(
        t,
        0,
        2n,
        [marker(0n, 7n), marker(1n, 8n)],
        {
          opened: [],
          ended: [
            { producerId: 7n, relativeOffset: 0n, commit: false },
            { producerId: 8n, relativeOffset: 1n, commit: true },
          ],
        },
        7n,
      );
      [s] = await log.partitionSnapshots(t);
      expect(s!.openTxns.size).toBe(0);
      expect(s!.hasAbortedTxns).toBe(true);
      expect(s!.highWatermark).toBe(9n);
      // The ABORT marker at 7 ends producer 7's range [1, 7].
      expect(await log.abortedTransactions(t, 0, 0n, 9n)).toEqual([{ producerId: 7n, firstOffset: 1n }]);
      expect(await log.abortedTransactions(t, 0, 7n, 8n)).toEqual([{ producerId: 7n, firstOffset: 1n }]);
      expect(await log.abortedTransactions(t, 0, 8n, 9n)).toEqual([]);
      expect(await log.abortedTransactions(t, 0, 0n, 1n)).toEqual([]);
      // A marker for a producer with no open transaction changes nothing.
      await log.append(t, 0, 1n, [marker(0n, 9n)], { opened: [], ended: [{ producerId: 9n, relativeOffset: 0n, commit: false }] }, 9n);
      expect(await log.abortedTransactions(t, 0, 0n, 10n)).toEqual([{ producerId: 7n, firstOffset: 1n }]);
    });

    it('finds batches by timestamp at or after the log start, skipping control batches', async () => {
      const { log } = h();
      const t = await topic(1);
      const at = (ts: bigint, over: Partial<BatchToAppend> = {}) => ({ maxTimestamp: ts, firstTimestamp: ts, ...over });
      await log.append(t, 0, 6n, [batch(0n, 1, at(500n)), batch(1n, 1, at(900n)), batch(2n, 1, at(2000n, { isControl: true })), batch(3n, 1, at(900n)), batch(4n, 2, at(700n))], null, 0n);
      const base = (b: { baseOffset: bigint } | null) => b?.baseOffset ?? null;
      expect(base(await log.firstBatchWithTimestampAtLeast(t, 0, 600n, 0n))).toBe(1n);
      expect(base(await log.firstBatchWithTimestampAtLeast(t, 0, 600n, 2n))).toBe(3n);
      expect(base(await log.firstBatchWithTimestampAtLeast(t, 0, 1000n, 0n))).toBeNull();
      expect(base(await log.firstBatchWithTimestampAtLeast(t, 0, 0n, 5n))).toBe(4n);
      // Ties go to the earliest batch; the control batch's timestamp does not count.
      expect(base(await log.batchWithMaxTimestamp(t, 0, 0n))).toBe(1n);
      expect(base(await log.batchWithMaxTimestamp(t, 0, 2n))).toBe(3n);
      expect(base(await log.batchWithMaxTimestamp(t, 0, 6n))).toBeNull();
      const found = await log.firstBatchWithTimestampAtLeast(t, 0, 600n, 0n);
      expect(baseOf(found!.data)).toBe(1n);
    });
  });

  describe('PartitionStorage and ProducerStorage', () => {
    async function topic(name: string, partitions = 1): Promise<string> {
      const topicId = randomUUID();
      await h().topics.create({ topicId, name, partitionCount: partitions, configs: {} });
      return topicId;
    }

    it('moves the log start forward only, up to the high watermark, counting what groups had not read, and deletes below it in chunks', async () => {
      const { log, partitions, commitOffset } = h();
      const t = await topic('orders');
      await log.append(t, 0, 10n, [batch(0n, 2, {}, 50), batch(2n, 3, {}, 60), batch(5n, 5, {}, 70)], null, 0n);
      await commitOffset({ groupId: 'b', topic: 'orders', partition: 0, committedOffset: 1n, leaderEpoch: -1, metadata: null });
      await commitOffset({ groupId: 'a', topic: 'orders', partition: 0, committedOffset: 3n, leaderEpoch: -1, metadata: null });
      await commitOffset({ groupId: 'c', topic: 'orders', partition: 0, committedOffset: 9n, leaderEpoch: -1, metadata: null });
      expect(await partitions.advanceLogStart(t, 'orders', 0, 4n, 'x')).toEqual({
        logStartOffset: 4n,
        highWatermark: 10n,
        deletedUnread: [
          { groupId: 'a', records: 1n },
          { groupId: 'b', records: 3n },
        ],
      });
      expect(await partitions.advanceLogStart(t, 'orders', 0, 2n, 'x')).toEqual({ logStartOffset: 4n, highWatermark: 10n, deletedUnread: [] });
      expect(await partitions.advanceLogStart(t, 'orders', 7, 2n, 'x')).toBeNull();
      expect((await log.partitionSnapshots(t))[0]!.logStartOffset).toBe(4n);
      expect(await partitions.deleteBelowLogStart(t, 0, 10)).toBe(1);
      expect(await partitions.deleteBelowLogStart(t, 0, 10)).toBe(0);
      expect(await partitions.advanceLogStart(t, 'orders', 0, 99n, 'x')).toEqual({
        logStartOffset: 10n,
        highWatermark: 10n,
        deletedUnread: [
          { groupId: 'a', records: 6n },
          { groupId: 'b', records: 6n },
          { groupId: 'c', records: 1n },
        ],
      });
      expect(await partitions.deleteBelowLogStart(t, 0, 1)).toBe(1);
      expect(await partitions.deleteBelowLogStart(t, 0, 5)).toBe(1);
      expect((await partitions.partitionSizes([t])).map((p) => p.bytes)).toEqual([0n]);
    });

    it('names the retention target by time and by size, and sizes the partitions', async () => {
      const { log, partitions } = h();
      const t = await topic('logs', 2);
      const at = (ts: bigint) => ({ maxTimestamp: ts, firstTimestamp: ts });
      await log.append(t, 0, 6n, [batch(0n, 2, at(100n), 50), batch(2n, 2, at(200n), 60), batch(4n, 2, at(300n), 70)], null, 0n);
      expect(await partitions.retentionTarget(t, 0, null, null)).toBe(0n);
      expect(await partitions.retentionTarget(t, 0, 150n, null)).toBe(2n);
      expect(await partitions.retentionTarget(t, 0, 400n, null)).toBe(6n);
      // The oldest batch goes only while the newer ones still hold retention.bytes.
      expect(await partitions.retentionTarget(t, 0, null, 130)).toBe(2n);
      expect(await partitions.retentionTarget(t, 0, null, 131)).toBe(0n);
      expect(await partitions.retentionTarget(t, 0, null, 70)).toBe(4n);
      expect(await partitions.retentionTarget(t, 0, 250n, 1000)).toBe(4n);
      expect(await partitions.retentionTarget(t, 1, 250n, 1000)).toBe(0n);
      expect(await partitions.retentionTarget(t, 5, null, null)).toBeNull();
      expect(await partitions.partitionSizes([t])).toEqual([
        { topicId: t, partition: 0, bytes: 180n },
        { topicId: t, partition: 1, bytes: 0n },
      ]);
      expect((await partitions.partitionSizes(null)).length).toBe(2);
      expect(await partitions.databaseBytes()).toBeGreaterThanOrEqual(180n);
    });

    it('adds partitions only from the count it was told', async () => {
      const { log, partitions, topics } = h();
      const t = await topic('grow', 1);
      expect(await partitions.addPartitions(t, 2, 4, 'grow')).toBe(false);
      expect(await partitions.addPartitions(t, 1, 3, 'grow')).toBe(true);
      expect((await topics.getByName('grow'))!.partitionCount).toBe(3);
      expect((await log.partitionSnapshots(t)).map((s) => s.partition)).toEqual([0, 1, 2]);
      expect(await log.append(t, 2, 1n, [batch(0n, 1)], null, 0n)).toEqual({ baseOffset: 0n, highWatermark: 1n, logStartOffset: 0n });
      expect(await partitions.addPartitions(randomUUID(), 1, 2, 'none')).toBe(false);
    });

    it("reads a producer's newest batches from the log, newest last, without control batches", async () => {
      const { log, producers } = h();
      const t = await topic('idem');
      const p = (rel: bigint, count: number, pid: bigint, seq: number, over: Partial<BatchToAppend> = {}) =>
        batch(rel, count, { producerId: pid, producerEpoch: 2, baseSequence: seq, maxTimestamp: 1234n, ...over });
      await log.append(t, 0, 9n, [p(0n, 2, 5n, 0), p(2n, 1, 6n, 0), p(3n, 3, 5n, 2), p(6n, 1, 5n, -1, { isControl: true }), p(7n, 2, 5n, 2147483647)], null, 0n);
      expect(await producers.lastBatches(t, 0, 5n, 2)).toEqual([
        { producerEpoch: 2, firstSequence: 2, lastSequence: 4, baseOffset: 3n, maxTimestamp: 1234 },
        { producerEpoch: 2, firstSequence: 2147483647, lastSequence: 0, baseOffset: 7n, maxTimestamp: 1234 },
      ]);
      expect((await producers.lastBatches(t, 0, 6n, 5)).map((b) => b.baseOffset)).toEqual([2n]);
      expect(await producers.lastBatches(t, 0, 99n, 5)).toEqual([]);
      const a = await producers.allocateProducerId();
      expect(await producers.allocateProducerId()).toBeGreaterThan(a);
    });
  });
}
