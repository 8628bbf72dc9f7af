// Differential: topic and broker configs — what DescribeConfigs lists (values,
// sources, synonyms, types, read-only and sensitive flags), what CreateTopics
// v5+ reports, and what IncrementalAlterConfigs accepts or refuses — and the
// config resources ListConfigResources lists, sent as the same raw requests to
// a real Apache Kafka and to pgkafka.
import { describe, it } from 'vitest';
import { DescribeConfigsApi, IncrementalAlterConfigsApi, ListConfigResourcesApi, MetadataApi, OffsetCommitApi } from '../../src/protocol/messages/index.js';
import type { RawClient } from '../../test/support/raw-client.js';
import { awaitCoordinator, createTopics, eventually, expectSame, onBoth, usePair } from '../support/differential.js';

const pair = usePair();
const TOPIC = 2;
const BROKER = 4;
const GROUP = 32;
const SET = 0;
const DELETE = 1;
const APPEND = 2;

async function describeConfigs(c: RawClient, resourceType: number, resourceName: string, keys: string[] | null = null) {
  const res = await c.request(DescribeConfigsApi, 4, { resources: [{ resourceType, resourceName, configurationKeys: keys }], includeSynonyms: true, includeDocumentation: false });
  return res.results.map((r) => ({
    errorCode: r.errorCode,
    errorMessage: r.errorMessage,
    resourceType: r.resourceType,
    resourceName: r.resourceName,
    configs: r.configs.sort((a, b) => a.name.localeCompare(b.name)),
  }));
}

async function alter(c: RawClient, resourceType: number, resourceName: string, configs: { name: string; configOperation: number; value: string | null }[], validateOnly = false) {
  const res = await c.request(IncrementalAlterConfigsApi, 1, { resources: [{ resourceType, resourceName, configs }], validateOnly });
  return res.responses;
}

describe('differential: configs', () => {
  it('a topic: every config as created, then set, appended and deleted', async () => {
    const outcome = await onBoth(pair(), async (connect) => {
      const c = await connect();
      const created = await createTopics(c, [
        {
          name: 'c-topic',
          numPartitions: 1,
          configs: [
            { name: 'retention.ms', value: '3600000' },
            { name: 'cleanup.policy', value: 'compact' },
          ],
        },
      ]);
      return {
        createdConfigs: created.topics[0]!.configs?.sort((a, b) => a.name.localeCompare(b.name)),
        described: await describeConfigs(c, TOPIC, 'c-topic'),
        set: await alter(c, TOPIC, 'c-topic', [
          { name: 'segment.bytes', configOperation: SET, value: '1048576' },
          { name: 'retention.ms', configOperation: DELETE, value: null },
        ]),
        append: await alter(c, TOPIC, 'c-topic', [{ name: 'cleanup.policy', configOperation: APPEND, value: 'delete' }]),
        badValue: await alter(c, TOPIC, 'c-topic', [{ name: 'retention.ms', configOperation: SET, value: 'soon' }]),
        unknownName: await alter(c, TOPIC, 'c-topic', [{ name: 'no.such.config', configOperation: SET, value: '1' }]),
        unknownTopic: await alter(c, TOPIC, 'c-none', [{ name: 'retention.ms', configOperation: SET, value: '1' }]),
        after: await describeConfigs(c, TOPIC, 'c-topic', ['segment.bytes', 'retention.ms', 'cleanup.policy']),
        describeUnknownTopic: await describeConfigs(c, TOPIC, 'c-none'),
      };
    });
    expectSame(outcome);
  });

  it('a broker: the configs clients read, dynamic topic defaults, read-only refusals', async () => {
    const outcome = await onBoth(pair(), async (connect) => {
      const c = await connect();
      const node = String((await c.request(MetadataApi, 12, { topics: [], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false })).brokers[0]!.nodeId);
      const keys = [
        'default.replication.factor',
        'num.partitions',
        'log.retention.ms',
        'log.retention.hours',
        'message.max.bytes',
        'auto.create.topics.enable',
        'offsets.topic.num.partitions',
        'log.cleanup.policy',
        'compression.type',
      ];
      return {
        read: await describeConfigs(c, BROKER, node, keys),
        setDynamic: await alter(c, BROKER, node, [{ name: 'log.retention.ms', configOperation: SET, value: '7200000' }]),
        setClusterDefault: await alter(c, BROKER, '', [{ name: 'log.cleanup.policy', configOperation: SET, value: 'compact' }]),
        readOnly: await alter(c, BROKER, node, [{ name: 'num.partitions', configOperation: SET, value: '3' }]),
        // Kafka's brokers apply a config change when they replay the metadata log: read until it shows.
        afterDynamic: await eventually(
          () => describeConfigs(c, BROKER, node, ['log.retention.ms', 'log.cleanup.policy']),
          (r) => r[0]!.configs.some((x) => x.name === 'log.cleanup.policy' && x.value === 'compact'),
        ),
        clusterDefaults: await describeConfigs(c, BROKER, ''),
        topicSeesDefaults: await createTopics(c, [{ name: 'c-defaults', numPartitions: 1 }]).then(() => describeConfigs(c, TOPIC, 'c-defaults', ['retention.ms', 'cleanup.policy'])),
      };
    });
    expectSame(outcome);
  });

  it('ListConfigResources: the groups with configs set (not the others), then brokers and topics; refused types', async () => {
    const outcome = await onBoth(pair(), async (connect) => {
      const c = await connect();
      const node = String((await c.request(MetadataApi, 12, { topics: [], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false })).brokers[0]!.nodeId);
      const list = async (version: number, resourceTypes: number[]) => {
        const res = await c.request(ListConfigResourcesApi, version, { resourceTypes });
        // Kafka lists a type's resources in no set order; the node id differs between the clusters.
        const resources = res.configResources
          .map((r) => ({ resourceType: r.resourceType, resourceName: r.resourceName === node ? '<node>' : r.resourceName }))
          .sort((a, b) => a.resourceType - b.resourceType || a.resourceName.localeCompare(b.resourceName));
        return { errorCode: res.errorCode, types: [...new Set(res.configResources.map((r) => r.resourceType))], resources };
      };
      await createTopics(c, [{ name: 'c-listed', numPartitions: 1 }]);
      // A group that exists, with committed offsets, and no configs.
      await awaitCoordinator(c, ['c-plain']);
      const committed = await c.request(OffsetCommitApi, 8, {
        groupId: 'c-plain',
        generationIdOrMemberEpoch: -1,
        memberId: '',
        groupInstanceId: null,
        topics: [{ name: 'c-listed', partitions: [{ partitionIndex: 0, committedOffset: 0n, committedLeaderEpoch: -1, committedMetadata: null }] }],
      });
      const set = [
        await alter(c, GROUP, 'c-group-a', [{ name: 'consumer.session.timeout.ms', configOperation: SET, value: '50000' }]),
        await alter(c, GROUP, 'c-group-b', [{ name: 'consumer.heartbeat.interval.ms', configOperation: SET, value: '6000' }]),
        await alter(c, GROUP, 'c-group-a', [{ name: 'consumer.session.timeout.ms', configOperation: DELETE, value: null }]),
      ];
      // Kafka's brokers learn of group configs by replaying the metadata log: read until the last change shows.
      const groups = await eventually(
        () => list(1, [GROUP]),
        (r) => r.resources.length === 1,
      );
      return {
        committed: committed.topics[0]!.partitions[0]!.errorCode,
        set,
        groups,
        everyType: await list(1, []),
        topicsAndGroups: await list(1, [TOPIC, GROUP]),
        clientMetrics: await list(1, [16]),
        v0: await list(0, []),
        unknownType: await list(1, [GROUP, 1]),
      };
    });
    expectSame(outcome);
  });
});
