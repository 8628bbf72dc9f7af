// Differential: topic administration (CreateTopics, CreatePartitions,
// DeleteRecords, DeleteTopics, Metadata) sent as the same raw requests to a
// real Apache Kafka and to pgkafka.
import { describe, it } from 'vitest';
import { CreatePartitionsApi, CreateTopicsApi, DeleteRecordsApi, DeleteTopicsApi, MetadataApi, ProduceApi } from '../../src/protocol/messages/index.js';
import { buildBatch } from '../../src/protocol/records/index.js';
import type { RawClient } from '../../test/support/raw-client.js';
import { createTopics, eventually, expectSame, onBoth, usePair } from '../support/differential.js';

const pair = usePair({ kafka: { 'auto.create.topics.enable': false }, pgkafka: { autoCreateTopicsEnable: false } });

type Topic = { name: string; numPartitions?: number; replicationFactor?: number; configs?: { name: string; value: string | null }[] };

async function create(c: RawClient, topics: Topic[], validateOnly = false, version = 7) {
  const res = await c.request(CreateTopicsApi, version, {
    topics: topics.map((t) => ({ name: t.name, numPartitions: t.numPartitions ?? 1, replicationFactor: t.replicationFactor ?? 1, configs: t.configs ?? [] })),
    timeoutMs: 10_000,
    validateOnly,
  });
  // The configs a v5+ answer lists are compared by the configs scenarios; here only what creation decided.
  // Kafka lists the topics of a Metadata answer in the order of a hash set: compared by name.
  return res.topics
    .sort((a, b) => (a.name ?? '').localeCompare(b.name ?? ''))
    .map((t) => ({ name: t.name, errorCode: t.errorCode, errorMessage: t.errorMessage, numPartitions: t.numPartitions, replicationFactor: t.replicationFactor }));
}

async function partitionsOf(c: RawClient, names: string[]) {
  const res = await c.request(MetadataApi, 12, { topics: names.map((name) => ({ name })), allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
  // Kafka lists the topics of a Metadata answer in the order of a hash set: compared by name.
  return res.topics
    .sort((a, b) => (a.name ?? '').localeCompare(b.name ?? ''))
    .map((t) => ({ name: t.name, errorCode: t.errorCode, isInternal: t.isInternal, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: p.errorCode })) }));
}

describe('differential: topic administration', () => {
  it('CreateTopics: valid, duplicate, invalid names, partitions, replication factors and configs', async () => {
    const outcome = await onBoth(pair(), async (connect) => {
      const c = await connect();
      const first = await create(c, [{ name: 'a-made', numPartitions: 3 }]);
      return {
        first,
        again: await create(c, [{ name: 'a-made' }]),
        sameTwiceInOneRequest: await create(c, [{ name: 'a-twice' }, { name: 'a-twice' }]),
        invalidNames: await create(c, [{ name: 'bad name' }, { name: '.' }, { name: '..' }, { name: 'x'.repeat(250) }, { name: 'ok.dotted_under-score' }]),
        zeroPartitions: await create(c, [{ name: 'a-zero', numPartitions: 0 }]),
        defaultPartitions: await create(c, [{ name: 'a-default', numPartitions: -1, replicationFactor: -1 }]),
        zeroReplicas: await create(c, [{ name: 'a-noreplica', replicationFactor: 0 }]),
        unknownConfig: await create(c, [{ name: 'a-badconfig', configs: [{ name: 'no.such.config', value: '1' }] }]),
        badConfigValue: await create(c, [{ name: 'a-badvalue', configs: [{ name: 'retention.ms', value: 'soon' }] }]),
        validateOnly: await create(c, [{ name: 'a-validated', numPartitions: 2 }], true),
        metadata: await eventually(
          () => partitionsOf(c, ['a-made', 'a-validated', 'ok.dotted_under-score', 'a-never']),
          (m) => m.filter((t) => t.errorCode === 0).length === 2,
        ),
      };
    });
    expectSame(outcome);
  });

  it('CreatePartitions: grow, shrink, same count, unknown topic, validate only', async () => {
    const outcome = await onBoth(pair(), async (connect) => {
      const c = await connect();
      await createTopics(c, [{ name: 'p-grow', numPartitions: 2 }]);
      const grow = (name: string, count: number, validateOnly = false) =>
        c.request(CreatePartitionsApi, 3, { topics: [{ name, count, assignments: null }], timeoutMs: 10_000, validateOnly }).then((r) => r.results);
      return {
        validateOnly: await grow('p-grow', 5, true),
        grown: await grow('p-grow', 4),
        same: await grow('p-grow', 4),
        shrink: await grow('p-grow', 1),
        unknown: await grow('p-none', 3),
        metadata: await eventually(
          () => partitionsOf(c, ['p-grow']),
          (m) => m[0]!.partitions.length === 4,
        ),
      };
    });
    expectSame(outcome);
  });

  it('DeleteRecords: inside the log, at the end, beyond it, -1, unknown partitions', async () => {
    const outcome = await onBoth(pair(), async (connect) => {
      const c = await connect();
      await createTopics(c, [{ name: 'r-trim', numPartitions: 2 }]);
      const produced = [];
      for (let i = 0; i < 3; i++) {
        produced.push(
          await c
            .request(ProduceApi, 11, {
              acks: -1,
              timeoutMs: 10_000,
              topicData: [
                {
                  name: 'r-trim',
                  partitionData: [
                    {
                      index: 0,
                      records: buildBatch({
                        baseTimestamp: 1_700_000_000_000n,
                        records: [
                          { key: null, value: Buffer.from(`v${i}`) },
                          { key: null, value: Buffer.from(`w${i}`) },
                        ],
                      }),
                    },
                  ],
                },
              ],
            })
            .then((r) => r.responses[0]!.partitionResponses[0]!.errorCode),
        );
      }
      const trim = (partitions: { partitionIndex: number; offset: bigint }[], name = 'r-trim') =>
        c.request(DeleteRecordsApi, 2, { topics: [{ name, partitions }], timeoutMs: 10_000 }).then((r) => r.topics);
      return {
        produced,
        inside: await trim([{ partitionIndex: 0, offset: 3n }]),
        backwards: await trim([{ partitionIndex: 0, offset: 1n }]),
        beyond: await trim([{ partitionIndex: 0, offset: 7n }]),
        toEnd: await trim([{ partitionIndex: 0, offset: -1n }]),
        emptyPartition: await trim([{ partitionIndex: 1, offset: 0n }]),
        unknownPartition: await trim([{ partitionIndex: 9, offset: 0n }]),
        unknownTopic: await trim([{ partitionIndex: 0, offset: 0n }], 'r-none'),
      };
    });
    expectSame(outcome);
  });

  it('DeleteTopics: by name, twice, unknown', async () => {
    const outcome = await onBoth(pair(), async (connect) => {
      const c = await connect();
      await createTopics(c, [{ name: 'x-doomed', numPartitions: 1 }]);
      const del = (names: string[]) =>
        c.request(DeleteTopicsApi, 6, { topics: names.map((name) => ({ name, topicId: '00000000-0000-0000-0000-000000000000' })), timeoutMs: 10_000 }).then((r) => r.responses);
      const byId = (topicId: string) => c.request(DeleteTopicsApi, 6, { topics: [{ name: null, topicId }], timeoutMs: 10_000 }).then((r) => r.responses);
      return { first: await del(['x-doomed']), unknown: await del(['x-never']), unknownId: await byId('5d0d8d5c-1b7e-4d0b-9a53-3c8a4f3c2a11') };
    });
    expectSame(outcome);
  });
});
