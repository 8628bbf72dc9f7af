// Broker configs at the wire: DescribeConfigs of a broker (Kafka's names,
// types, sources, read-only flags, synonyms), dynamic broker configs set
// with AlterConfigs and IncrementalAlterConfigs per broker and cluster-wide
// (resource ""), stored in PostgreSQL for every broker, refused as Kafka
// refuses them, and reflected in topics' defaults.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/protocol/errors.js';
import { AlterConfigsApi, CreateTopicsApi, DescribeConfigsApi, IncrementalAlterConfigsApi, ProduceApi } from '../../src/protocol/messages/index.js';
import { buildBatch } from '../../src/protocol/records/index.js';
import { startTestBroker, type TestBroker } from '../support/broker.js';
import { RawClient } from '../support/raw-client.js';

const TOPIC = 2;
const BROKER = 4;
const [SET, DELETE, APPEND] = [0, 1, 2];
const [TOPIC_CONFIG, DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG, STATIC_BROKER_CONFIG, DEFAULT_CONFIG] = [1, 2, 3, 4, 5];

let broker: TestBroker;
let client: RawClient;

beforeAll(async () => {
  broker = await startTestBroker({ connectionsMaxReauthMs: 60_000, logRetentionBytes: 1_000_000 });
  client = await RawClient.connect(broker.bootstrap);
});
afterAll(async () => {
  client?.close();
  await broker?.destroy();
});

async function describeBroker(name: string, keys: string[] | null = null, c = client) {
  const res = await c.request(DescribeConfigsApi, 4, { resources: [{ resourceType: BROKER, resourceName: name, configurationKeys: keys }], includeSynonyms: true, includeDocumentation: true });
  return res.results[0]!;
}

async function brokerConfig(name: string, key: string, c = client) {
  return (await describeBroker(name, [key], c)).configs[0];
}

async function topicConfig(topic: string, key: string) {
  const res = await client.request(DescribeConfigsApi, 4, { resources: [{ resourceType: TOPIC, resourceName: topic, configurationKeys: [key] }], includeSynonyms: true, includeDocumentation: false });
  return res.results[0]!.configs[0]!;
}

const incremental = (name: string, ops: [string, number, string | null][], validateOnly = false) =>
  client
    .request(IncrementalAlterConfigsApi, 1, {
      resources: [{ resourceType: BROKER, resourceName: name, configs: ops.map(([n, configOperation, value]) => ({ name: n, configOperation, value })) }],
      validateOnly,
    })
    .then((r) => r.responses[0]!);

const alter = (name: string, configs: Record<string, string>, validateOnly = false) =>
  client
    .request(AlterConfigsApi, 2, {
      resources: [{ resourceType: BROKER, resourceName: name, configs: Object.entries(configs).map(([n, value]) => ({ name: n, value })) }],
      validateOnly,
    })
    .then((r) => r.responses[0]!);

async function stored() {
  const rows = await broker.query<{ resource_name: string; configs: Record<string, string> }>('SELECT resource_name, configs FROM broker_configs ORDER BY resource_name');
  return Object.fromEntries(rows.filter((r) => Object.keys(r.configs).length > 0).map((r) => [r.resource_name, r.configs]));
}

describe('DescribeConfigs of a broker', () => {
  it('lists the Kafka broker configs that mean something here, with types, sources and read-only flags', async () => {
    const res = await describeBroker('1');
    expect(res.errorCode).toBe(0);
    const byName = new Map(res.configs.map((c) => [c.name, c]));
    expect(byName.get('default.replication.factor')).toMatchObject({
      value: '1',
      readOnly: true,
      configSource: DEFAULT_CONFIG,
      isSensitive: false,
      configType: 3,
      synonyms: [{ name: 'default.replication.factor', value: '1', source: DEFAULT_CONFIG }],
    });
    expect(byName.get('connections.max.reauth.ms')).toMatchObject({
      value: '60000',
      readOnly: true,
      configSource: STATIC_BROKER_CONFIG,
      configType: 5,
      synonyms: [
        { name: 'connections.max.reauth.ms', value: '60000', source: STATIC_BROKER_CONFIG },
        { name: 'connections.max.reauth.ms', value: '0', source: DEFAULT_CONFIG },
      ],
    });
    expect(byName.get('node.id')).toMatchObject({ value: '1', readOnly: true, configSource: STATIC_BROKER_CONFIG, synonyms: [{ name: 'node.id', value: '1', source: STATIC_BROKER_CONFIG }] });
    // Dynamic in Kafka and here: the topic defaults.
    expect(byName.get('log.retention.bytes')).toMatchObject({ value: '1000000', readOnly: false, configSource: STATIC_BROKER_CONFIG });
    expect(byName.get('message.max.bytes')).toMatchObject({ value: '1048588', readOnly: false, configSource: DEFAULT_CONFIG });
    // log.retention.ms has no default of its own (log.retention.hours has): Kafka lists no synonym for it.
    expect(byName.get('log.retention.ms')).toMatchObject({ value: null, readOnly: false, configSource: DEFAULT_CONFIG, synonyms: [] }); // unset, as on Kafka
    expect(byName.get('log.retention.hours')).toMatchObject({ value: '168', readOnly: true, configSource: DEFAULT_CONFIG, configType: 3 });
    expect(byName.get('offsets.topic.num.partitions')).toMatchObject({ value: '50', readOnly: true });
    expect(byName.get('num.partitions')!.documentation).toBeTruthy();
    expect(res.configs.map((c) => c.name)).toEqual([...res.configs.map((c) => c.name)].sort());
  });

  it('describes no cluster-wide dynamic configs until one is set', async () => {
    expect(await describeBroker('')).toMatchObject({ errorCode: 0, configs: [] });
  });
});

describe('dynamic broker configs', () => {
  it('sets a cluster-wide default that topics without their own value take, with its synonyms', async () => {
    await client.request(CreateTopicsApi, 7, { topics: [{ name: 'b-topic', numPartitions: 1, replicationFactor: 1, configs: [] }], validateOnly: false });
    expect(
      await incremental('', [
        ['log.retention.ms', SET, '3600000'],
        ['log.cleanup.policy', SET, 'compact'],
      ]),
    ).toMatchObject({ errorCode: 0, errorMessage: null });
    expect(await stored()).toEqual({ '': { 'log.retention.ms': '3600000', 'log.cleanup.policy': 'compact' } });

    const cluster = await describeBroker('');
    expect(cluster.configs.map((c) => [c.name, c.value, c.configSource, c.readOnly, c.synonyms])).toEqual([
      ['log.cleanup.policy', 'compact', DYNAMIC_DEFAULT_BROKER_CONFIG, false, [{ name: 'log.cleanup.policy', value: 'compact', source: DYNAMIC_DEFAULT_BROKER_CONFIG }]],
      ['log.retention.ms', '3600000', DYNAMIC_DEFAULT_BROKER_CONFIG, false, [{ name: 'log.retention.ms', value: '3600000', source: DYNAMIC_DEFAULT_BROKER_CONFIG }]],
    ]);
    expect(await brokerConfig('1', 'log.retention.ms')).toMatchObject({
      value: '3600000',
      configSource: DYNAMIC_DEFAULT_BROKER_CONFIG,
      synonyms: [
        { name: 'log.retention.ms', value: '3600000', source: DYNAMIC_DEFAULT_BROKER_CONFIG },
        { name: 'log.retention.hours', value: '168', source: DEFAULT_CONFIG },
      ],
    });
    expect(await topicConfig('b-topic', 'retention.ms')).toMatchObject({
      value: '3600000',
      configSource: DYNAMIC_DEFAULT_BROKER_CONFIG,
      synonyms: [
        { name: 'log.retention.ms', value: '3600000', source: DYNAMIC_DEFAULT_BROKER_CONFIG },
        { name: 'log.retention.hours', value: '168', source: DEFAULT_CONFIG },
      ],
    });
    expect(await topicConfig('b-topic', 'cleanup.policy')).toMatchObject({ value: 'compact', configSource: DYNAMIC_DEFAULT_BROKER_CONFIG });
    const topic = (await broker.context.topics.get('b-topic'))!;
    expect(broker.context.topics.topicConfig(topic)).toMatchObject({ retentionMs: 3600000, cleanupPolicy: { delete: false, compact: true } });

    expect(
      await incremental('', [
        ['log.cleanup.policy', DELETE, null],
        ['log.retention.ms', DELETE, null],
      ]),
    ).toMatchObject({ errorCode: 0 });
    expect(await stored()).toEqual({});
    expect(await topicConfig('b-topic', 'retention.ms')).toMatchObject({ value: '604800000', configSource: DEFAULT_CONFIG, synonyms: [] });
    expect(broker.context.topics.topicConfig(topic)).toMatchObject({ retentionMs: 604800000, cleanupPolicy: { delete: true, compact: false } });
  });

  it('sets per-broker values over the cluster default with the legacy AlterConfigs, which replaces the whole set', async () => {
    expect(await incremental('', [['message.max.bytes', SET, '500000']])).toMatchObject({ errorCode: 0 });
    expect(await alter('1', { 'message.max.bytes': '2000', 'log.retention.bytes': '5000' })).toMatchObject({ errorCode: 0, errorMessage: null });
    expect(await brokerConfig('1', 'message.max.bytes')).toMatchObject({
      value: '2000',
      configSource: DYNAMIC_BROKER_CONFIG,
      synonyms: [
        { name: 'message.max.bytes', value: '2000', source: DYNAMIC_BROKER_CONFIG },
        { name: 'message.max.bytes', value: '500000', source: DYNAMIC_DEFAULT_BROKER_CONFIG },
        { name: 'message.max.bytes', value: '1048588', source: DEFAULT_CONFIG },
      ],
    });
    expect(await topicConfig('b-topic', 'max.message.bytes')).toMatchObject({ value: '2000', configSource: DYNAMIC_BROKER_CONFIG });
    expect(broker.context.topics.topicConfig((await broker.context.topics.get('b-topic'))!).maxMessageBytes).toBe(2000);
    const records = buildBatch({ compression: 0, baseTimestamp: BigInt(Date.now()), records: [{ key: null, value: Buffer.alloc(3000, 1), headers: [] }] });
    const produced = await client.request(ProduceApi, 9, { acks: -1, timeoutMs: 1000, topicData: [{ name: 'b-topic', partitionData: [{ index: 0, records }] }] });
    expect(produced.responses[0]!.partitionResponses[0]!.errorCode).toBe(ErrorCode.MESSAGE_TOO_LARGE);
    expect(await alter('1', { 'log.retention.bytes': '7000' })).toMatchObject({ errorCode: 0 });
    expect(await stored()).toEqual({ '': { 'message.max.bytes': '500000' }, 1: { 'log.retention.bytes': '7000' } });
    expect(await topicConfig('b-topic', 'max.message.bytes')).toMatchObject({ value: '500000', configSource: DYNAMIC_DEFAULT_BROKER_CONFIG });
    expect(await alter('1', {})).toMatchObject({ errorCode: 0 });
    expect(await incremental('', [['message.max.bytes', DELETE, null]])).toMatchObject({ errorCode: 0 });
    expect(await stored()).toEqual({});
  });

  it('refuses what Kafka refuses, with its codes and messages, storing nothing', async () => {
    expect(
      await incremental('1', [
        ['num.partitions', SET, '3'],
        ['log.retention.ms', SET, '1'],
      ]),
    ).toEqual(
      expect.objectContaining({
        errorCode: ErrorCode.INVALID_REQUEST,
        errorMessage: 'Cannot update these configs dynamically: [num.partitions]',
      }),
    );
    expect(await alter('', { 'log.retention.hours': '1' })).toMatchObject({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Cannot update these configs dynamically: [log.retention.hours]' });
    expect(await incremental('', [['log.retention.ms', SET, 'soon']])).toMatchObject({
      errorCode: ErrorCode.INVALID_REQUEST,
      errorMessage: 'Invalid value soon for configuration log.retention.ms: Not a number of type LONG',
    });
    expect(await incremental('', [['log.cleaner.min.cleanable.ratio', SET, '2']])).toMatchObject({
      errorCode: ErrorCode.INVALID_REQUEST,
      errorMessage: 'Invalid value 2.0 for configuration log.cleaner.min.cleanable.ratio: Value must be no more than 1',
    });
    expect(await incremental('', [['log.retention.ms', APPEND, '1']])).toMatchObject({
      errorCode: ErrorCode.INVALID_CONFIG,
      errorMessage: 'Config value append is not allowed for config key: log.retention.ms',
    });
    expect(await incremental('7', [['log.retention.ms', SET, '1']])).toMatchObject({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Unexpected broker id, expected 1, but received 7' });
    expect(await incremental('x', [['log.retention.ms', SET, '1']])).toMatchObject({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Node id must be an integer, but it is: x' });
    expect(await incremental('', [['log.retention.ms', SET, '1']], true)).toMatchObject({ errorCode: 0 });
    expect(await alter('1', { 'log.retention.ms': '1' }, true)).toMatchObject({ errorCode: 0 });
    expect(await stored()).toEqual({});
  });

  it("appends to a list config from Kafka's default", async () => {
    expect(await incremental('', [['log.cleanup.policy', APPEND, 'compact']])).toMatchObject({ errorCode: 0 });
    expect(await stored()).toEqual({ '': { 'log.cleanup.policy': 'delete,compact' } });
    expect(await incremental('', [['log.cleanup.policy', DELETE, null]])).toMatchObject({ errorCode: 0 });
  });

  it('reach every broker sharing the database at once, and outlive a restart', async () => {
    const second = await startTestBroker({ schema: broker.schema, nodeId: 2 });
    try {
      const other = await RawClient.connect(second.bootstrap);
      try {
        expect(await incremental('', [['log.retention.ms', SET, '42000']])).toMatchObject({ errorCode: 0 });
        expect(await incremental('1', [['log.message.timestamp.type', SET, 'LogAppendTime']])).toMatchObject({ errorCode: 0 });
        await expect.poll(async () => (await brokerConfig('2', 'log.retention.ms', other))?.value).toBe('42000');
        await expect.poll(async () => second.context.topics.topicConfig((await second.context.topics.get('b-topic'))!).retentionMs).toBe(42000);
        // A per-broker value is that broker's alone.
        expect(await brokerConfig('2', 'log.message.timestamp.type', other)).toMatchObject({ value: 'CreateTime', configSource: DEFAULT_CONFIG });
        expect(await brokerConfig('1', 'log.message.timestamp.type')).toMatchObject({ value: 'LogAppendTime', configSource: DYNAMIC_BROKER_CONFIG });
      } finally {
        other.close();
      }
    } finally {
      await second.stop();
    }
    // Broker 1's own value stays with broker 1; the cluster default reaches a broker started later.
    const restarted = await startTestBroker({ schema: broker.schema, nodeId: 3 });
    try {
      const topic = (await restarted.context.topics.get('b-topic'))!;
      expect(restarted.context.topics.topicConfig(topic)).toMatchObject({ retentionMs: 42000, messageTimestampType: 'CreateTime' });
      expect(broker.context.topics.topicConfig(topic)).toMatchObject({ retentionMs: 42000, messageTimestampType: 'LogAppendTime' });
    } finally {
      await restarted.stop();
    }
    expect(await incremental('', [['log.retention.ms', DELETE, null]])).toMatchObject({ errorCode: 0 });
    expect(await incremental('1', [['log.message.timestamp.type', DELETE, null]])).toMatchObject({ errorCode: 0 });
  });

  it('keeps names it does not know as Kafka keeps custom configs: stored, listed as sensitive, read-only', async () => {
    expect(await incremental('', [['my.custom.setting', SET, 'x']])).toMatchObject({ errorCode: 0 });
    expect(await brokerConfig('', 'my.custom.setting')).toMatchObject({ value: null, isSensitive: true, readOnly: true, configSource: DYNAMIC_DEFAULT_BROKER_CONFIG, configType: 0 });
    expect(await incremental('', [['my.custom.setting', DELETE, null]])).toMatchObject({ errorCode: 0 });
  });
});

describe('topic configs with a dynamic broker default', () => {
  it('lists the topic value first, then the dynamic default', async () => {
    await client.request(CreateTopicsApi, 7, { topics: [{ name: 'b-own', numPartitions: 1, replicationFactor: 1, configs: [{ name: 'retention.ms', value: '1000' }] }], validateOnly: false });
    expect(await incremental('', [['log.retention.ms', SET, '2000']])).toMatchObject({ errorCode: 0 });
    expect(await topicConfig('b-own', 'retention.ms')).toMatchObject({
      value: '1000',
      configSource: TOPIC_CONFIG,
      synonyms: [
        { name: 'retention.ms', value: '1000', source: TOPIC_CONFIG },
        { name: 'log.retention.ms', value: '2000', source: DYNAMIC_DEFAULT_BROKER_CONFIG },
        { name: 'log.retention.hours', value: '168', source: DEFAULT_CONFIG },
      ],
    });
    expect(await incremental('', [['log.retention.ms', DELETE, null]])).toMatchObject({ errorCode: 0 });
  });
});
