// Differential: Produce, Fetch and ListOffsets edge cases sent as the same
// raw requests to a real Apache Kafka and to pgkafka (compat/support/differential.ts
// names the differences allowed on purpose).
import { describe, it } from 'vitest';
import { FetchApi, ListOffsetsApi, MetadataApi, ProduceApi } from '../../src/protocol/messages/index.js';
import { buildBatch, Compression, decodeRecords, parseBatches } from '../../src/protocol/records/index.js';
import type { RawClient } from '../../test/support/raw-client.js';
import { createTopics, eventually, expectSame, onBoth, usePair } from '../support/differential.js';

const pair = usePair();
const T0 = 1_700_000_000_000n;

function batch(values: string[], opts: { compression?: Compression; baseTimestamp?: bigint } = {}): Buffer {
  return buildBatch({
    baseTimestamp: opts.baseTimestamp ?? T0,
    compression: opts.compression,
    records: values.map((v, i) => ({ key: Buffer.from(`k${i}`), value: Buffer.from(v), timestampDelta: BigInt(i * 10), headers: [{ key: 'h', value: Buffer.from(`hv${i}`) }] })),
  });
}

/** A batch whose length field says `length`. */
function absurd(b: Buffer, length: number): Buffer {
  const copy = Buffer.from(b);
  copy.writeInt32BE(length, 8);
  return copy;
}

async function createTopic(c: RawClient, name: string, numPartitions = 1, configs: { name: string; value: string }[] = []) {
  const res = await createTopics(c, [{ name, numPartitions, configs }]);
  return res.topics.map((t) => ({ name: t.name, errorCode: t.errorCode, numPartitions: t.numPartitions, replicationFactor: t.replicationFactor }));
}

async function produce(c: RawClient, topic: string, partition: number, records: Buffer, version = 11) {
  const res = await c.request(ProduceApi, version, { acks: -1, timeoutMs: 10_000, topicData: [{ name: topic, partitionData: [{ index: partition, records }] }] });
  return res.responses.map((t) => ({ name: t.name, partitions: t.partitionResponses }));
}

/** What a consumer sees of a fetched partition: the watermarks and every batch and record, decoded. */
async function fetchFrom(c: RawClient, topic: string, partition: number, fetchOffset: bigint, version = 12) {
  const res = await c.request(FetchApi, version, {
    replicaId: -1,
    maxWaitMs: 0,
    minBytes: 1,
    maxBytes: 1 << 20,
    isolationLevel: 0,
    sessionId: 0,
    sessionEpoch: -1,
    topics: [{ topic, partitions: [{ partition, fetchOffset, partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1 }] }],
  });
  return res.responses.flatMap((t) =>
    t.partitions.map((p) => {
      const buf = Array.isArray(p.records) ? Buffer.concat(p.records) : (p.records ?? Buffer.alloc(0));
      const { batches } = parseBatches(buf, { mode: 'log' });
      return {
        errorCode: p.errorCode,
        highWatermark: p.highWatermark,
        lastStableOffset: p.lastStableOffset,
        logStartOffset: p.logStartOffset,
        abortedTransactions: p.abortedTransactions,
        preferredReadReplica: p.preferredReadReplica,
        batches: batches.map((h) => ({
          baseOffset: h.baseOffset,
          lastOffsetDelta: h.lastOffsetDelta,
          partitionLeaderEpoch: h.partitionLeaderEpoch,
          magic: h.magic,
          compression: h.compression,
          timestampType: h.timestampType,
          baseTimestamp: h.baseTimestamp,
          maxTimestamp: h.maxTimestamp,
          recordCount: h.recordCount,
          records: decodeRecords(buf, h).records.map((r) => ({
            offsetDelta: r.offsetDelta,
            timestampDelta: r.timestampDelta,
            key: r.key?.toString() ?? null,
            value: r.value?.toString() ?? null,
            headers: r.headers.map((x) => [x.key, x.value?.toString() ?? null]),
          })),
        })),
      };
    }),
  );
}

async function listOffsets(c: RawClient, topic: string, timestamps: bigint[], version = 8) {
  const out = [];
  for (const timestamp of timestamps) {
    const res = await c.request(ListOffsetsApi, version, { replicaId: -1, isolationLevel: 0, topics: [{ name: topic, partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp }] }] });
    out.push({ timestamp, partitions: res.topics.flatMap((t) => t.partitions) });
  }
  return out;
}

describe('differential: produce and fetch', () => {
  it('a produced batch reads back identically, with the same watermarks and offsets', async () => {
    const outcome = await onBoth(pair(), async (connect) => {
      const c = await connect();
      return {
        created: await createTopic(c, 'd-plain', 2),
        first: await produce(c, 'd-plain', 0, batch(['a', 'b', 'c'])),
        second: await produce(c, 'd-plain', 0, batch(['d'])),
        fetched: await fetchFrom(c, 'd-plain', 0, 0n),
        fromMiddle: await fetchFrom(c, 'd-plain', 0, 2n),
        atEnd: await fetchFrom(c, 'd-plain', 0, 4n),
        beyondEnd: await fetchFrom(c, 'd-plain', 0, 5n),
        emptyPartition: await fetchFrom(c, 'd-plain', 1, 0n),
      };
    });
    expectSame(outcome);
  });

  it('every compression codec is stored and returned as produced', async () => {
    const outcome = await onBoth(pair(), async (connect) => {
      const c = await connect();
      await createTopic(c, 'd-codecs');
      const produced = [];
      for (const compression of [Compression.None, Compression.Gzip, Compression.Snappy, Compression.Lz4, Compression.Zstd]) {
        produced.push(await produce(c, 'd-codecs', 0, batch([`x${compression}`, `y${compression}`], { compression })));
      }
      return { produced, fetched: await fetchFrom(c, 'd-codecs', 0, 0n) };
    });
    expectSame(outcome);
  });

  it('refuses what Kafka refuses: unknown partitions and topics, a bad CRC', async () => {
    const outcome = await onBoth(pair(), async (connect) => {
      const c = await connect();
      await createTopic(c, 'd-refused');
      await createTopic(c, 'd-small', 1, [{ name: 'max.message.bytes', value: '1000' }]);
      const corrupt = batch(['bad']);
      corrupt[corrupt.length - 1]! ^= 0xff;
      return {
        unknownPartition: await produce(c, 'd-refused', 3, batch(['a'])),
        noBatch: await produce(c, 'd-refused', 0, Buffer.alloc(0)),
        twoBatches: await produce(c, 'd-refused', 0, Buffer.concat([batch(['a']), batch(['b'])])),
        truncated: await produce(c, 'd-refused', 0, batch(['a', 'b']).subarray(0, 40)),
        nonZeroBaseOffset: await produce(c, 'd-refused', 0, buildBatch({ baseOffset: 5n, baseTimestamp: T0, records: [{ key: null, value: Buffer.from('x') }] })),
        controlFlag: await produce(c, 'd-refused', 0, buildBatch({ isControl: true, baseTimestamp: T0, records: [{ key: null, value: Buffer.from('x') }] })),
        tooLarge: await produce(c, 'd-small', 0, batch(['x'.repeat(2000)])),
        // (A length near 2^31 is left out: Kafka 4.3 answers it UNKNOWN_SERVER_ERROR, an overflow; pgkafka INVALID_RECORD.)
        negativeLength: await produce(c, 'd-refused', 0, absurd(batch(['a']), -5)),
        trailingBytes: await produce(c, 'd-refused', 0, Buffer.concat([batch(['kept']), batch(['cut']).subarray(0, 30)])),
        corrupt: await produce(c, 'd-refused', 0, corrupt),
        afterCorrupt: await fetchFrom(c, 'd-refused', 0, 0n),
        fetchUnknownPartition: await fetchFrom(c, 'd-refused', 7, 0n),
      };
    });
    expectSame(outcome);
  });

  it('ListOffsets: earliest, latest, max timestamp and by time', async () => {
    const outcome = await onBoth(pair(), async (connect) => {
      const c = await connect();
      await createTopic(c, 'd-times');
      await produce(c, 'd-times', 0, batch(['a', 'b', 'c'], { baseTimestamp: T0 }));
      await produce(c, 'd-times', 0, batch(['d', 'e'], { baseTimestamp: T0 + 1000n }));
      return listOffsets(c, 'd-times', [-2n, -1n, -3n, T0 - 1n, T0, T0 + 5n, T0 + 20n, T0 + 1000n, T0 + 1011n, T0 + 5000n]);
    });
    expectSame(outcome);
  });

  it('Metadata: auto-creation of an unknown topic, an invalid name, and the created topic once it leads', async () => {
    const outcome = await onBoth(pair(), async (connect) => {
      const c = await connect();
      const metadata = (names: string[], allowAutoTopicCreation: boolean) =>
        c
          .request(MetadataApi, 12, { topics: names.map((name) => ({ name })), allowAutoTopicCreation, includeTopicAuthorizedOperations: false })
          .then((r) =>
            r.topics.map((t) => ({ name: t.name, errorCode: t.errorCode, isInternal: t.isInternal, partitions: t.partitions.length })).sort((a, b) => (a.name ?? '').localeCompare(b.name ?? '')),
          );
      return {
        notCreated: await metadata(['m-absent'], false),
        invalidName: await metadata(['bad name', '..'], true),
        // (The first answer is left out: Kafka creates the topic after answering UNKNOWN_TOPIC_OR_PARTITION, pgkafka before answering.)
        creating: await metadata(['m-auto'], true).then(() => 'asked'),
        afterwards: await eventually(
          () => metadata(['m-auto'], false),
          (m) => m[0]!.errorCode === 0 && m[0]!.partitions > 0,
        ),
      };
    });
    expectSame(outcome);
  });
});
