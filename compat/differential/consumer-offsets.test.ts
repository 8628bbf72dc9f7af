// __consumer_offsets read by Kafka's own console consumer with the offsets
// formatter (org.apache.kafka.tools.consumer.OffsetsMessageFormatter), from
// Apache Kafka 4.3.1 and from pgkafka after the same commits: the printed
// commits must be the same, commit timestamps and the value's version aside. Each key is committed
// once, so Kafka's not yet compacted log and pgkafka's compacted view hold
// the same records.
import { describe, expect, it } from 'vitest';
import { OffsetCommitApi } from '../../src/protocol/messages/index.js';
import { runToolOk } from '../support/kafka-tools.js';
import { awaitCoordinator, createTopics, onBoth, usePair, type Side } from '../support/differential.js';

const pair = usePair();
const TOPIC = 'offsets-formatted';
// Partition 12 of __consumer_offsets: Utils.abs("my-group".hashCode()) % 50.
const GROUP = 'my-group';
const GROUP_PARTITION = 12;

interface Printed {
  key: unknown;
  value: { version: number; data: Record<string, unknown> };
}

/** What the formatter printed (one JSON object per commit, not separated by newlines), commit timestamps replaced. */
async function formatted(side: Side, count: number): Promise<Printed[]> {
  const r = await runToolOk(
    'kafka-console-consumer',
    [
      '--bootstrap-server',
      pair().bootstrap(side),
      '--topic',
      '__consumer_offsets',
      '--partition',
      String(GROUP_PARTITION),
      '--offset',
      'earliest',
      '--formatter',
      'org.apache.kafka.tools.consumer.OffsetsMessageFormatter',
      '--max-messages',
      String(count),
      '--timeout-ms',
      '20000',
    ],
    { timeoutMs: 60_000 },
  );
  if (process.env.DIFF_DUMP) console.log(side, r.stdout);
  return r.stdout
    .trim()
    .split(/(?<=\})(?=\{"key")/)
    .map((l) => JSON.parse(l.replace(/"commitTimestamp":\d+/g, '"commitTimestamp":"<time>"')) as Printed);
}

/** The value without its version and Kafka 4's topic id (a tagged field of OffsetCommitValue v4). */
const withoutVersion = (p: Printed) => {
  const { topicId: _topicId, ...data } = p.value.data;
  return { key: p.key, data };
};

describe('__consumer_offsets through the console consumer offsets formatter', () => {
  it('prints the same commits as Apache Kafka', async () => {
    await onBoth(pair(), async (connect) => {
      const c = await connect();
      await createTopics(c, [{ name: TOPIC, numPartitions: 3 }]);
      await awaitCoordinator(c, [GROUP]);
      for (const [partitionIndex, committedOffset, committedMetadata] of [
        [0, 5n, null],
        [1, 7n, 'meta'],
        [2, 0n, ''],
      ] as const) {
        const res = await c.request(OffsetCommitApi, 8, {
          groupId: GROUP,
          generationIdOrMemberEpoch: -1,
          memberId: '',
          topics: [{ name: TOPIC, partitions: [{ partitionIndex, committedOffset, committedLeaderEpoch: partitionIndex === 2 ? 3 : -1, committedMetadata }] }],
        });
        expect(res.topics[0]!.partitions[0]!.errorCode).toBe(0);
      }
    });
    const [kafka, pgkafka] = [await formatted('kafka', 3), await formatted('pgkafka', 3)];
    expect(kafka).toHaveLength(3);
    // Kafka 4.3 writes OffsetCommitValue v4 (flexible, with the topic id), which Burrow 1.2 and other
    // readers of Kafka 2.x's records cannot decode; pgkafka writes v3, as Kafka 2.1-3.9 did.
    expect([kafka.map((p) => p.value.version), pgkafka.map((p) => p.value.version)]).toEqual([
      [4, 4, 4],
      [3, 3, 3],
    ]);
    expect(pgkafka.map(withoutVersion)).toEqual(kafka.map(withoutVersion));
  });
});
