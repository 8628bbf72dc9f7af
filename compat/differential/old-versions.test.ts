// Differential: the request versions Kafka 4.0 removed (KIP-896), sent as the
// same raw requests to Apache Kafka 3.9.1 (the last release serving them, from
// compat/java/kafka39/pom.xml) and to pgkafka.
// Left out on purpose: OffsetCommit/OffsetFetch v0 (Kafka 3.9 kept v0 commits
// in ZooKeeper and a KRaft broker refuses them; pgkafka stores them like the
// others), ListOffsets v0 by timestamp (Kafka answers from its segment files'
// modification times), and the configs Kafka 4.0 removed (DescribeConfigs is
// asked for named configs both releases have).
import { describe, it } from 'vitest';
import {
  AddPartitionsToTxnApi,
  CreateTopicsApi,
  EndTxnApi,
  InitProducerIdApi,
  DeleteTopicsApi,
  DescribeAclsApi,
  DescribeConfigsApi,
  FetchApi,
  ListOffsetsApi,
  MetadataApi,
  OffsetCommitApi,
  OffsetFetchApi,
  OffsetForLeaderEpochApi,
  ProduceApi,
} from '../../src/protocol/messages/index.js';
import { buildBatch, decompressWrapper, readLegacyMessage, writeLegacyMessageSet, type LegacyMessage, type LegacyRecordToWrite } from '../../src/protocol/records/index.js';
import type { RawClient } from '../../test/support/raw-client.js';
import { awaitCoordinator, createTopics, eventually, expectSame, onBoth, usePair } from '../support/differential.js';

const pair = usePair({ kafka: { 'auto.create.topics.enable': false }, pgkafka: { autoCreateTopicsEnable: false }, kafkaStart: { release: '3.9' } });

const byName = <T extends { name: string | null }>(xs: T[]) => [...xs].sort((a, b) => (a.name ?? '').localeCompare(b.name ?? ''));

async function produce(c: RawClient, topic: string, n: number) {
  const records = buildBatch({
    compression: 0,
    baseTimestamp: 1_700_000_000_000n,
    records: Array.from({ length: n }, (_, i) => ({ offsetDelta: i, timestampDelta: BigInt(i), key: null, value: Buffer.from(`v${i}`), headers: [] })),
  });
  const res = await c.request(ProduceApi, 7, { acks: -1, timeoutMs: 10_000, topicData: [{ name: topic, partitionData: [{ index: 0, records }] }] });
  return res.responses[0]!.partitionResponses[0]!.errorCode;
}

describe('differential with Kafka 3.9.1: versions Kafka 4.0 removed', () => {
  it('CreateTopics v0 and v1, DeleteTopics v0, Metadata v0 (an empty list is every topic)', async () => {
    const outcome = await onBoth(pair(), async (connect) => {
      const c = await connect();
      const create = async (version: number, topics: { name: string; numPartitions: number }[], validateOnly = false) =>
        byName((await c.request(CreateTopicsApi, version, { topics: topics.map((t) => ({ ...t, replicationFactor: 1 })), timeoutMs: 10_000, validateOnly })).topics);
      const v0 = await create(0, [
        { name: 'o-v0', numPartitions: 2 },
        { name: 'bad name', numPartitions: 1 },
      ]);
      const again = await create(0, [{ name: 'o-v0', numPartitions: 2 }]);
      const v1 = await create(1, [{ name: 'o-v1', numPartitions: 1 }], true);
      const v1zero = await create(1, [{ name: 'o-zero', numPartitions: 0 }]);
      const metadata = await eventually(
        async () => byName((await c.request(MetadataApi, 0, { topics: [] })).topics).map((t) => ({ name: t.name, errorCode: t.errorCode, partitions: t.partitions.length })),
        (ts) => ts.some((t) => t.name === 'o-v0' && t.partitions === 2),
      );
      const deleted = byName((await c.request(DeleteTopicsApi, 0, { topicNames: ['o-v0', 'o-never'], timeoutMs: 10_000 })).responses);
      return { v0, again, v1, v1zero, metadata, deleted };
    });
    expectSame(outcome);
  });

  it('ListOffsets v0: latest and earliest with MaxNumOffsets, an empty log, a timestamp below -2, an unknown partition', async () => {
    const outcome = await onBoth(pair(), async (connect) => {
      const c = await connect();
      await createTopics(c, [
        { name: 'o-offsets', numPartitions: 1 },
        { name: 'o-empty', numPartitions: 1 },
      ]);
      const produced = await produce(c, 'o-offsets', 3);
      const ask = async (topic: string, partitionIndex: number, timestamp: bigint, maxNumOffsets: number) => {
        const res = await c.request(ListOffsetsApi, 0, { replicaId: -1, topics: [{ name: topic, partitions: [{ partitionIndex, timestamp, maxNumOffsets }] }] });
        return res.topics[0]!.partitions[0];
      };
      return {
        produced,
        latest: await ask('o-offsets', 0, -1n, 5),
        latestOne: await ask('o-offsets', 0, -1n, 1),
        earliest: await ask('o-offsets', 0, -2n, 5),
        empty: await ask('o-empty', 0, -1n, 5),
        maxTimestamp: await ask('o-offsets', 0, -3n, 5),
        unknown: await ask('o-offsets', 4, -1n, 1),
      };
    });
    expectSame(outcome);
  });

  it('OffsetCommit v1 (commit timestamp) and v2 (retention time), read back with OffsetFetch v1', async () => {
    const outcome = await onBoth(pair(), async (connect) => {
      const c = await connect();
      await createTopics(c, [{ name: 'o-commits', numPartitions: 2 }]);
      await awaitCoordinator(c, ['o-g1', 'o-g2', 'o-none']);
      const commit = async (version: number, groupId: string, partitions: { partitionIndex: number; committedOffset: bigint; commitTimestamp?: bigint }[], retentionTimeMs = -1n) =>
        (
          await c.request(OffsetCommitApi, version, {
            groupId,
            generationIdOrMemberEpoch: -1,
            memberId: '',
            retentionTimeMs,
            topics: [{ name: 'o-commits', partitions: partitions.map((p) => ({ committedMetadata: 'm', commitTimestamp: -1n, ...p })) }],
          })
        ).topics;
      const fetch = async (groupId: string) => (await c.request(OffsetFetchApi, 1, { groupId, topics: [{ name: 'o-commits', partitionIndexes: [0, 1, 2] }] })).topics;
      return {
        v1: await commit(1, 'o-g1', [
          { partitionIndex: 0, committedOffset: 5n, commitTimestamp: 1_600_000_000_000n },
          { partitionIndex: 1, committedOffset: 6n },
        ]),
        v1Read: await fetch('o-g1'),
        v1Member: await c.request(OffsetCommitApi, 1, {
          groupId: 'o-g1',
          generationIdOrMemberEpoch: 3,
          memberId: 'nobody',
          topics: [{ name: 'o-commits', partitions: [{ partitionIndex: 0, committedOffset: 1n }] }],
        }),
        v2: await commit(2, 'o-g2', [{ partitionIndex: 0, committedOffset: 7n }], 3_600_000n),
        v2Read: await fetch('o-g2'),
        unknownGroupRead: await fetch('o-none'),
      };
    });
    expectSame(outcome);
  });

  it('DescribeConfigs v0 (IsDefault), OffsetForLeaderEpoch v0 and v1, DescribeAcls v0 without an authorizer', async () => {
    const outcome = await onBoth(pair(), async (connect) => {
      const c = await connect();
      await createTopics(c, [{ name: 'o-configs', numPartitions: 1, configs: [{ name: 'retention.ms', value: '3600000' }] }]);
      await produce(c, 'o-configs', 2);
      const configs = await c.request(DescribeConfigsApi, 0, {
        resources: [
          { resourceType: 2, resourceName: 'o-configs', configurationKeys: ['cleanup.policy', 'retention.ms', 'segment.bytes'] },
          { resourceType: 2, resourceName: 'o-unknown', configurationKeys: null },
        ],
      });
      const epochs = async (version: number) =>
        (
          await c.request(OffsetForLeaderEpochApi, version, {
            topics: [
              {
                topic: 'o-configs',
                partitions: [
                  { partition: 0, leaderEpoch: 0 },
                  { partition: 3, leaderEpoch: 0 },
                ],
              },
            ],
          })
        ).topics;
      return {
        configs: configs.results.map((r) => ({ ...r, configs: byName(r.configs) })),
        epochsV0: await epochs(0),
        epochsV1: await epochs(1),
        acls: await c.request(DescribeAclsApi, 0, { resourceTypeFilter: 1, resourceNameFilter: null, principalFilter: null, hostFilter: null, operation: 1, permissionType: 1 }),
      };
    });
    expectSame(outcome);
  });

  it('Produce v0-2 with magic 0/1 message sets, and Fetch v0-3 down-converting them and magic 2 batches', async () => {
    const TS = 1_700_000_000_000n;
    const recs = (from: number, n: number, base = 0): LegacyRecordToWrite[] =>
      Array.from({ length: n }, (_, i) => ({ offset: BigInt(base + i), timestamp: TS + BigInt(from + i), key: i % 2 ? null : Buffer.from(`k${from + i}`), value: Buffer.from(`v${from + i}`) }));
    const set = (magic: 0 | 1, compression: 0 | 1 | 2 | 3, records: LegacyRecordToWrite[]) => writeLegacyMessageSet(records, { magic, compression });
    /** Message sets compared by what they say (compressed bytes differ between encoders), and their total size. */
    const messages = (buf: Buffer): unknown[] => {
      const out: unknown[] = [];
      for (let pos = 0; pos + 12 <= buf.length;) {
        const size = 12 + buf.readInt32BE(pos + 8);
        if (buf.readBigInt64BE(pos) < 0n || pos + size > buf.length) {
          // The padding's length is the total less the messages, whose compressed wrappers differ between encoders.
          out.push({ padding: buf.readBigInt64BE(pos) === -1n, partial: buf.readBigInt64BE(pos) >= 0n });
          break;
        }
        const m: LegacyMessage = readLegacyMessage(buf, pos, size)!;
        const plain = { offset: m.offset, magic: m.magic, attributes: m.attributes, timestamp: m.timestamp, key: m.key?.toString() ?? null, crcValid: m.crcValid };
        out.push(m.compression === 0 ? { ...plain, value: m.value?.toString() ?? null } : { ...plain, inner: messages(decompressWrapper(m)) });
        pos += size;
      }
      return out;
    };
    /** The wrapper's offset (outside its CRC) set to `offset`. */
    const wrapperAt = (wrapper: Buffer, offset: bigint) => {
      const copy = Buffer.from(wrapper);
      copy.writeBigInt64BE(offset, 0);
      return copy;
    };
    const outcome = await onBoth(pair(), async (connect) => {
      const c = await connect();
      await createTopics(c, [{ name: 'o-legacy', numPartitions: 1 }]);
      const produce = async (version: number, records: Buffer) => {
        const res = await c.request(ProduceApi, version, { acks: -1, timeoutMs: 10_000, topicData: [{ name: 'o-legacy', partitionData: [{ index: 0, records }] }] });
        return res.responses[0]!.partitionResponses[0]!;
      };
      const badCrc = set(1, 0, recs(0, 1));
      badCrc[12] ^= 0xff;
      const produced = {
        v0: await produce(0, set(0, 0, recs(0, 2))),
        v1gzip: await produce(1, set(1, 1, recs(2, 3))),
        v2: await produce(2, set(1, 0, recs(5, 2))),
        v2snappy: await produce(2, set(0, 2, recs(7, 2))),
        badCrc: await produce(2, badCrc),
        mixed: await produce(2, Buffer.concat([set(0, 0, recs(0, 1)), set(1, 0, recs(0, 1))])),
        wrapperAndMore: await produce(2, Buffer.concat([set(1, 1, recs(0, 1)), set(1, 0, recs(0, 1))])),
        partialOnly: await produce(2, set(1, 0, recs(0, 1)).subarray(0, 20)),
        empty: await produce(1, Buffer.alloc(0)),
        magic2InV2: await produce(2, buildBatch({ compression: 0, baseTimestamp: TS, records: [{ key: null, value: Buffer.from('m2') }] })),
        // A producer's LogAppendTime: refused only without a timestamp (Kafka checks a CreateTime topic's range first).
        appendTimeNone: await produce(2, writeLegacyMessageSet(recs(0, 1), { magic: 1, compression: 0, logAppendTime: -1n })),
        appendTime: await produce(2, writeLegacyMessageSet(recs(20, 1), { magic: 1, compression: 0, logAppendTime: TS })),
        wrapperBelowInner: await produce(2, wrapperAt(set(1, 1, recs(0, 3)), 1n)),
        v2batch: await produce(
          7,
          buildBatch({ compression: 0, baseTimestamp: TS, records: [0, 1, 2].map((i) => ({ offsetDelta: i, timestampDelta: BigInt(i), key: null, value: Buffer.from(`b${i}`), headers: [] })) }),
        ),
      };
      const fetch = async (version: number, fetchOffset: bigint, partitionMaxBytes = 1 << 20) => {
        const res = await c.request(FetchApi, version, {
          replicaId: -1,
          maxWaitMs: 0,
          minBytes: 0,
          maxBytes: 1 << 20,
          topics: [{ topic: 'o-legacy', partitions: [{ partition: 0, fetchOffset, partitionMaxBytes }] }],
        });
        const p = res.responses[0]!.partitions[0]!;
        const raw = p.records as Buffer | Buffer[] | null;
        const records = Array.isArray(raw) ? Buffer.concat(raw) : (raw ?? Buffer.alloc(0));
        return { errorCode: p.errorCode, highWatermark: p.highWatermark, size: records.length, messages: messages(records) };
      };
      return {
        produced,
        fetchV0: await fetch(0, 0n),
        fetchV1FromMiddle: await fetch(1, 10n),
        fetchV2: await fetch(2, 1n),
        fetchV3Small: await fetch(3, 5n, 30),
        fetchV3End: await fetch(3, 12n),
      };
    });
    expectSame(outcome);
  });

  it('Fetch v0 and v2 over transactions: markers dropped, aborted records delivered (these versions read uncommitted)', async () => {
    const outcome = await onBoth(pair(), async (connect) => {
      const c = await connect();
      await createTopics(c, [{ name: 'o-legacy-txn', numPartitions: 1 }]);
      await awaitCoordinator(c, ['o-txn'], 1);
      // Retried while the coordinator loads or the previous transaction is still ending (Kafka ends it asynchronously).
      const settled = async <T>(send: () => Promise<T>, errorOf: (r: T) => number): Promise<T> => {
        const r = await eventually(send, (x) => ![14, 15, 16, 51].includes(errorOf(x)));
        return r;
      };
      const p = await settled(
        () => c.request(InitProducerIdApi, 1, { transactionalId: 'o-txn', transactionTimeoutMs: 60_000 }),
        (r) => r.errorCode,
      );
      const txn = async (sequence: number, values: string[], committed: boolean) => {
        await settled(
          () =>
            c.request(AddPartitionsToTxnApi, 1, {
              v3AndBelowTransactionalId: 'o-txn',
              v3AndBelowProducerId: p.producerId,
              v3AndBelowProducerEpoch: p.producerEpoch,
              v3AndBelowTopics: [{ name: 'o-legacy-txn', partitions: [0] }],
            }),
          (r) => r.resultsByTopicV3AndBelow[0]!.resultsByPartition[0]!.partitionErrorCode,
        );
        const records = buildBatch({
          baseTimestamp: 1_700_000_000_000n,
          producerId: p.producerId,
          producerEpoch: p.producerEpoch,
          baseSequence: sequence,
          isTransactional: true,
          records: values.map((v) => ({ key: null, value: Buffer.from(v) })),
        });
        const produced = await c.request(ProduceApi, 3, { transactionalId: 'o-txn', acks: -1, timeoutMs: 10_000, topicData: [{ name: 'o-legacy-txn', partitionData: [{ index: 0, records }] }] });
        const ended = await settled(
          () => c.request(EndTxnApi, 1, { transactionalId: 'o-txn', producerId: p.producerId, producerEpoch: p.producerEpoch, committed }),
          (r) => r.errorCode,
        );
        return [produced.responses[0]!.partitionResponses[0]!.errorCode, ended.errorCode];
      };
      const committed = await txn(0, ['c1', 'c2'], true);
      const aborted = await txn(2, ['a1'], false);
      // Both markers written (offsets 2 and 4): the high watermark reaches 5.
      await eventually(
        () =>
          c.request(FetchApi, 4, {
            replicaId: -1,
            maxWaitMs: 0,
            minBytes: 0,
            maxBytes: 1 << 20,
            isolationLevel: 0,
            topics: [{ topic: 'o-legacy-txn', partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1 << 20 }] }],
          }),
        (r) => r.responses[0]!.partitions[0]!.highWatermark >= 5n,
      );
      /**
       * Every message a consumer at this version reads from `from` to the end, fetch after fetch, each
       * offset once: how much one fetch returns is the broker's choice (Kafka may stop at a batch its
       * cached high-watermark position has not reached), and Kafka 3.9 answers the first batch after a
       * marker twice (LazyDownConversionRecords re-reads the batch its size was taken from).
       */
      const consume = async (version: number, from: bigint) => {
        const seen = new Map<bigint, unknown>();
        let fetchOffset = from;
        for (let round = 0; round < 10 && fetchOffset < 5n; round++) {
          const res = await c.request(FetchApi, version, {
            replicaId: -1,
            maxWaitMs: 0,
            minBytes: 0,
            maxBytes: 1 << 20,
            topics: [{ topic: 'o-legacy-txn', partitions: [{ partition: 0, fetchOffset, partitionMaxBytes: 1 << 20 }] }],
          });
          const raw = res.responses[0]!.partitions[0]!.records as Buffer | Buffer[] | null;
          const buf = Array.isArray(raw) ? Buffer.concat(raw) : (raw ?? Buffer.alloc(0));
          for (let pos = 0; pos + 12 <= buf.length && buf.readBigInt64BE(pos) >= 0n && pos + 12 + buf.readInt32BE(pos + 8) <= buf.length; pos += 12 + buf.readInt32BE(pos + 8)) {
            const m = readLegacyMessage(buf, pos, 12 + buf.readInt32BE(pos + 8))!;
            if (m.offset >= fetchOffset && !seen.has(m.offset)) seen.set(m.offset, [m.offset, m.magic, m.timestamp, m.value?.toString() ?? null]);
          }
          const last = [...seen.keys()].pop();
          // The markers have no message: past the last one read, or past the marker the fetch started at.
          fetchOffset = last !== undefined && last >= fetchOffset ? last + 1n : fetchOffset + 1n;
        }
        return [...seen.values()];
      };
      return { committed, aborted, v0: await consume(0, 0n), v2: await consume(2, 0n), v2AtMarker: await consume(2, 2n) };
    });
    expectSame(outcome);
  });
});
