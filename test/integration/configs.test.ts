// DescribeConfigs, AlterConfigs, IncrementalAlterConfigs and CreateTopics
// with configs, at the wire: Kafka's error codes and messages, sources and
// synonyms, validate_only, and configs that outlive a broker restart.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/protocol/errors.js';
import { AlterConfigsApi, CreateTopicsApi, DescribeConfigsApi, IncrementalAlterConfigsApi, ProduceApi } from '../../src/protocol/messages/index.js';
import { buildBatch } from '../../src/protocol/records/index.js';
import { startTestBroker, type TestBroker } from '../support/broker.js';
import { RawClient } from '../support/raw-client.js';

const TOPIC = 2;
const BROKER = 4;
const BROKER_LOGGER = 8;
const [SET, DELETE, APPEND, SUBTRACT] = [0, 1, 2, 3];

let broker: TestBroker;
let client: RawClient;

beforeAll(async () => {
  broker = await startTestBroker({ logRetentionMs: 3_600_000 });
  client = await RawClient.connect(broker.bootstrap);
});
afterAll(async () => {
  client?.close();
  await broker?.destroy();
});

async function create(name: string, configs: Record<string, string | null> = {}, validateOnly = false, version = 7) {
  const res = await client.request(CreateTopicsApi, version, {
    topics: [{ name, numPartitions: 1, replicationFactor: 1, configs: Object.entries(configs).map(([n, value]) => ({ name: n, value })) }],
    validateOnly,
  });
  return res.topics[0]!;
}

async function describeTopic(name: string, keys: string[] | null = null, version = 4) {
  const res = await client.request(DescribeConfigsApi, version, {
    resources: [{ resourceType: TOPIC, resourceName: name, configurationKeys: keys }],
    includeSynonyms: true,
    includeDocumentation: true,
  });
  return res.results[0]!;
}

async function valueOf(topic: string, key: string) {
  const r = await describeTopic(topic, [key]);
  return { value: r.configs[0]!.value, source: r.configs[0]!.configSource };
}

const incremental = (name: string, ops: [string, number, string | null][], validateOnly = false, version = 1) =>
  client
    .request(IncrementalAlterConfigsApi, version, {
      resources: [{ resourceType: TOPIC, resourceName: name, configs: ops.map(([n, configOperation, value]) => ({ name: n, configOperation, value })) }],
      validateOnly,
    })
    .then((r) => r.responses[0]!);

const alter = (name: string, configs: Record<string, string>, validateOnly = false, version = 2) =>
  client
    .request(AlterConfigsApi, version, {
      resources: [{ resourceType: TOPIC, resourceName: name, configs: Object.entries(configs).map(([n, value]) => ({ name: n, value })) }],
      validateOnly,
    })
    .then((r) => r.responses[0]!);

describe('CreateTopics with configs', () => {
  it('stores the configs as sent and reports every config with its source (v5+)', async () => {
    const created = await create('c-created', { 'retention.ms': '60000', 'cleanup.policy': 'compact, delete', 'segment.bytes': '2097152' });
    expect(created.errorCode).toBe(0);
    const configs = new Map(created.configs!.map((c) => [c.name, c]));
    expect(configs.size).toBe(33); // Kafka 4's 33: the three configs 4.0 removed are listed only when set
    expect(configs.get('retention.ms')).toMatchObject({ value: '60000', configSource: 1, readOnly: false, isSensitive: false });
    expect(configs.get('cleanup.policy')).toMatchObject({ value: 'compact,delete', configSource: 1 });
    expect(configs.get('delete.retention.ms')).toMatchObject({ value: '86400000', configSource: 5 });
    const [row] = await broker.query<{ configs: Record<string, string> }>("SELECT configs FROM topics WHERE name = 'c-created'");
    expect(row!.configs).toEqual({ 'retention.ms': '60000', 'cleanup.policy': 'compact, delete', 'segment.bytes': '2097152' });
    const topic = (await broker.context.topics.get('c-created'))!;
    expect(broker.context.topics.topicConfig(topic)).toMatchObject({ retentionMs: 60000, cleanupPolicy: { delete: true, compact: true } });
  });

  it('refuses invalid configs with INVALID_CONFIG and creates nothing', async () => {
    expect(await create('c-bad', { 'retention.ms': 'soon' })).toMatchObject({
      errorCode: ErrorCode.INVALID_CONFIG,
      errorMessage: 'Invalid value soon for configuration retention.ms: Not a number of type LONG',
      configs: null,
    });
    expect(await create('c-bad', { 'retention.msec': '1' })).toMatchObject({ errorCode: ErrorCode.INVALID_CONFIG, errorMessage: 'Unknown topic config name: retention.msec' });
    expect(await create('c-bad', { 'retention.ms': null })).toMatchObject({ errorCode: ErrorCode.INVALID_CONFIG, errorMessage: 'Null value not supported for topic configs: retention.ms' });
    expect(await create('c-bad', { 'remote.storage.enable': 'true' })).toMatchObject({ errorCode: ErrorCode.INVALID_CONFIG });
    expect(await broker.query("SELECT 1 FROM topics WHERE name = 'c-bad'")).toEqual([]);
  });

  it('validates without creating when validate_only', async () => {
    const res = await create('c-validate', { 'max.message.bytes': '2000' }, true);
    expect(res.errorCode).toBe(0);
    expect(res.configs!.find((c) => c.name === 'max.message.bytes')).toMatchObject({ value: '2000', configSource: 1 });
    expect(await broker.query("SELECT 1 FROM topics WHERE name = 'c-validate'")).toEqual([]);
  });
});

describe('DescribeConfigs', () => {
  it('describes a topic with sources, synonyms, types and documentation (v4)', async () => {
    await create('d-topic', { 'min.cleanable.dirty.ratio': '0.25' });
    const res = await describeTopic('d-topic');
    expect(res).toMatchObject({ errorCode: 0, errorMessage: '', resourceType: TOPIC, resourceName: 'd-topic' });
    expect(res.configs).toHaveLength(33);
    const byName = new Map(res.configs.map((c) => [c.name, c]));
    expect(byName.get('min.cleanable.dirty.ratio')).toMatchObject({
      value: '0.25',
      configSource: 1,
      configType: 6,
      synonyms: [
        { name: 'min.cleanable.dirty.ratio', value: '0.25', source: 1 },
        { name: 'log.cleaner.min.cleanable.ratio', value: '0.5', source: 5 },
      ],
    });
    // The broker was started with PGKAFKA_LOG_RETENTION_MS=3600000: a static broker config (then Kafka's log.retention.hours).
    expect(byName.get('retention.ms')).toMatchObject({
      value: '3600000',
      configSource: 4,
      synonyms: [
        { name: 'log.retention.ms', value: '3600000', source: 4 },
        { name: 'log.retention.hours', value: '168', source: 5 },
      ],
    });
    expect(byName.get('segment.ms')!.documentation).toMatch(/Inert in pgkafka/);
  });

  it('filters by key, and omits synonyms, types and documentation in older versions', async () => {
    const res = await client.request(DescribeConfigsApi, 1, { resources: [{ resourceType: TOPIC, resourceName: 'd-topic', configurationKeys: ['retention.bytes', 'nope'] }], includeSynonyms: false });
    // isDefault is v0's field: absent from v1 on the wire, the decoder fills the spec's default.
    expect(res.results[0]!.configs).toEqual([
      { name: 'retention.bytes', value: '-1', readOnly: false, isDefault: false, configSource: 5, isSensitive: false, synonyms: [], configType: 0, documentation: '' },
    ]);
  });

  it('answers UNKNOWN_TOPIC_OR_PARTITION and INVALID_TOPIC_EXCEPTION per resource', async () => {
    const res = await client.request(DescribeConfigsApi, 4, {
      resources: [
        { resourceType: TOPIC, resourceName: 'no-such-topic', configurationKeys: null },
        { resourceType: TOPIC, resourceName: 'bad name!', configurationKeys: null },
        { resourceType: TOPIC, resourceName: 'd-topic', configurationKeys: ['retention.bytes'] },
      ],
      includeSynonyms: false,
    });
    expect(res.results.map((r) => [r.resourceName, r.errorCode, r.configs.length])).toEqual([
      ['no-such-topic', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 0],
      ['bad name!', ErrorCode.INVALID_TOPIC_EXCEPTION, 0],
      ['d-topic', 0, 1],
    ]);
  });

  it('describes this broker, empty cluster defaults, and refuses other broker ids', async () => {
    const res = await client.request(DescribeConfigsApi, 4, {
      resources: [
        { resourceType: BROKER, resourceName: '1', configurationKeys: null },
        { resourceType: BROKER, resourceName: '', configurationKeys: null },
        { resourceType: BROKER, resourceName: '7', configurationKeys: null },
        { resourceType: BROKER_LOGGER, resourceName: '1', configurationKeys: null },
        { resourceType: 99, resourceName: 'x', configurationKeys: null },
      ],
      includeSynonyms: true,
    });
    const [self, cluster, other, logger, unknown] = res.results;
    expect(self!.errorCode).toBe(0);
    const byName = new Map(self!.configs.map((c) => [c.name, c]));
    expect(byName.get('log.retention.ms')).toMatchObject({ value: '3600000', readOnly: false, configSource: 4 });
    expect(byName.get('message.max.bytes')).toMatchObject({ value: '1048588', readOnly: false, configSource: 5 });
    expect(byName.get('num.partitions')).toMatchObject({ value: '1', readOnly: true, configSource: 5 });
    for (const n of ['num.partitions', 'auto.create.topics.enable', 'offsets.retention.minutes', 'group.max.size', 'log.cleanup.policy', 'compression.type']) expect(byName.has(n)).toBe(true);
    expect(cluster).toMatchObject({ errorCode: 0, configs: [] });
    expect(other).toMatchObject({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Unexpected broker id, expected 1 or empty string, but received 7' });
    expect(logger).toMatchObject({ errorCode: 0, configs: [] });
    expect(unknown!.errorCode).toBe(ErrorCode.INVALID_REQUEST);
  });
});

describe('IncrementalAlterConfigs', () => {
  it('sets, appends and subtracts cleanup.policy, and DELETE reverts to the default', async () => {
    await create('i-topic');
    expect(
      await incremental('i-topic', [
        ['cleanup.policy', APPEND, 'compact'],
        ['retention.ms', SET, '1000'],
      ]),
    ).toMatchObject({ errorCode: 0, errorMessage: null });
    expect(await valueOf('i-topic', 'cleanup.policy')).toEqual({ value: 'delete,compact', source: 1 });
    expect(await incremental('i-topic', [['cleanup.policy', SUBTRACT, 'delete']])).toMatchObject({ errorCode: 0 });
    expect(await valueOf('i-topic', 'cleanup.policy')).toEqual({ value: 'compact', source: 1 });
    const topic = (await broker.context.topics.get('i-topic'))!;
    expect(broker.context.topics.topicConfig(topic)).toMatchObject({ cleanupPolicy: { delete: false, compact: true }, retentionMs: 1000 });
    expect(
      await incremental(
        'i-topic',
        [
          ['cleanup.policy', DELETE, null],
          ['retention.ms', DELETE, null],
        ],
        false,
        0,
      ),
    ).toMatchObject({ errorCode: 0 });
    expect(await valueOf('i-topic', 'cleanup.policy')).toEqual({ value: 'delete', source: 5 });
    expect(await valueOf('i-topic', 'retention.ms')).toEqual({ value: '3600000', source: 4 });
    expect(broker.context.topics.topicConfig((await broker.context.topics.get('i-topic'))!)).toMatchObject({ cleanupPolicy: { delete: true, compact: false }, retentionMs: 3600000 });
  });

  it('refuses APPEND on a non-list config, bad values and unknown names, changing nothing', async () => {
    await create('i-bad', { 'retention.ms': '5000' });
    expect(await incremental('i-bad', [['retention.ms', APPEND, '1']])).toMatchObject({
      errorCode: ErrorCode.INVALID_CONFIG,
      errorMessage: "Can't APPEND to key retention.ms because its type is not LIST.",
    });
    expect(await incremental('i-bad', [['segment.ms', SET, '0']])).toMatchObject({
      errorCode: ErrorCode.INVALID_CONFIG,
      errorMessage: 'Invalid value 0 for configuration segment.ms: Value must be at least 1',
    });
    expect(await incremental('i-bad', [['segment.mss', SET, '1']])).toMatchObject({ errorCode: ErrorCode.INVALID_CONFIG, errorMessage: 'Unknown topic config name: segment.mss' });
    expect(await incremental('i-bad', [['segment.ms', SET, null]])).toMatchObject({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Null value not supported for : segment.ms' });
    expect(
      await incremental('i-bad', [
        ['segment.ms', SET, '1'],
        ['segment.ms', SET, '2'],
      ]),
    ).toMatchObject({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Error due to duplicate config keys' });
    expect(await incremental('nowhere', [['segment.ms', SET, '1']])).toMatchObject({ errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION });
    const [row] = await broker.query<{ configs: Record<string, string> }>("SELECT configs FROM topics WHERE name = 'i-bad'");
    expect(row!.configs).toEqual({ 'retention.ms': '5000' });
  });

  it('validates without storing when validate_only', async () => {
    await create('i-validate');
    expect(await incremental('i-validate', [['compression.type', SET, 'zstd']], true)).toMatchObject({ errorCode: 0 });
    expect(await incremental('i-validate', [['compression.type', SET, 'brotli']], true)).toMatchObject({ errorCode: ErrorCode.INVALID_CONFIG });
    expect(await valueOf('i-validate', 'compression.type')).toEqual({ value: 'producer', source: 5 });
  });

  it('refuses static broker config changes and duplicate resources with INVALID_REQUEST', async () => {
    const res = await client.request(IncrementalAlterConfigsApi, 1, {
      resources: [
        { resourceType: BROKER, resourceName: '1', configs: [{ name: 'num.partitions', configOperation: SET, value: '1' }] },
        { resourceType: BROKER, resourceName: '', configs: [] },
        { resourceType: TOPIC, resourceName: 'i-validate', configs: [] },
        { resourceType: TOPIC, resourceName: 'i-validate', configs: [] },
      ],
      validateOnly: false,
    });
    expect(res.responses.map((r) => [r.errorCode, r.errorMessage])).toEqual([
      [ErrorCode.INVALID_REQUEST, 'Cannot update these configs dynamically: [num.partitions]'],
      [0, null],
      [ErrorCode.INVALID_REQUEST, 'Each resource must appear at most once.'],
      [ErrorCode.INVALID_REQUEST, 'Each resource must appear at most once.'],
    ]);
  });
});

describe('AlterConfigs', () => {
  it('replaces the whole explicit config set', async () => {
    await create('a-topic', { 'retention.ms': '1000', 'segment.ms': '2000' });
    expect(await alter('a-topic', { 'retention.bytes': '1048576', 'cleanup.policy': 'compact' }, false, 0)).toMatchObject({ errorCode: 0, errorMessage: null });
    const [row] = await broker.query<{ configs: Record<string, string> }>("SELECT configs FROM topics WHERE name = 'a-topic'");
    expect(row!.configs).toEqual({ 'retention.bytes': '1048576', 'cleanup.policy': 'compact' });
    expect(await valueOf('a-topic', 'retention.ms')).toEqual({ value: '3600000', source: 4 });
    expect(await valueOf('a-topic', 'segment.ms')).toEqual({ value: '604800000', source: 5 });
  });

  it('checks configs before existence, honours validate_only, and refuses broker changes', async () => {
    await create('a-validate');
    expect(await alter('a-validate', { 'retention.ms': '5' }, true)).toMatchObject({ errorCode: 0 });
    expect(await valueOf('a-validate', 'retention.ms')).toEqual({ value: '3600000', source: 4 });
    expect(await alter('a-validate', { 'message.timestamp.type': 'Now' })).toMatchObject({
      errorCode: ErrorCode.INVALID_CONFIG,
      errorMessage: 'Invalid value Now for configuration message.timestamp.type: String must be one of: CreateTime, LogAppendTime',
    });
    expect(await alter('missing', { 'retention.ms': 'x' })).toMatchObject({ errorCode: ErrorCode.INVALID_CONFIG });
    expect(await alter('missing', { 'retention.ms': '5' })).toMatchObject({ errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION });
    const res = await client.request(AlterConfigsApi, 1, { resources: [{ resourceType: BROKER, resourceName: '2', configs: [{ name: 'num.partitions', value: '3' }] }] });
    expect(res.responses[0]).toMatchObject({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Unexpected broker id, expected 1, but received 2' });
  });
});

describe('topic configs Kafka 4.0 removed, taken as Kafka 3.9 took them', () => {
  const LONG_MAX = '9223372036854775807';
  const resolved = async (name: string) => broker.context.topics.topicConfig((await broker.context.topics.get(name))!);
  const produceAt = async (topic: string, timestamp: number) => {
    const records = buildBatch({ compression: 0, baseTimestamp: BigInt(timestamp), records: [{ key: Buffer.from('k'), value: Buffer.from('v'), headers: [] }] });
    const res = await client.request(ProduceApi, 9, { acks: -1, timeoutMs: 1000, topicData: [{ name: topic, partitionData: [{ index: 0, records }] }] });
    return res.responses[0]!.partitionResponses[0]!.errorCode;
  };

  it('creates topics with message.format.version and message.timestamp.difference.max.ms and describes them as 3.9 did', async () => {
    expect(await create('r-legacy', { 'message.format.version': '2.8', 'message.timestamp.difference.max.ms': '60000' })).toMatchObject({ errorCode: 0, errorMessage: null });
    const res = await describeTopic('r-legacy', ['message.format.version', 'message.timestamp.difference.max.ms', 'message.timestamp.after.max.ms']);
    const byName = new Map(res.configs.map((c) => [c.name, c]));
    expect(byName.get('message.format.version')).toMatchObject({
      value: '2.8',
      configSource: 1,
      configType: 2,
      readOnly: false,
      synonyms: [
        { name: 'message.format.version', value: '2.8', source: 1 },
        { name: 'log.message.format.version', value: '3.0-IV1', source: 5 },
      ],
    });
    expect(byName.get('message.timestamp.difference.max.ms')).toMatchObject({
      value: '60000',
      configSource: 1,
      configType: 5,
      synonyms: [
        { name: 'message.timestamp.difference.max.ms', value: '60000', source: 1 },
        { name: 'log.message.timestamp.difference.max.ms', value: LONG_MAX, source: 5 },
      ],
    });
    expect(byName.get('message.timestamp.difference.max.ms')!.documentation).toMatch(/Removed in Kafka 4\.0/);
    expect(byName.get('message.timestamp.after.max.ms')).toMatchObject({ value: '3600000', configSource: 5 });
    expect((await describeTopic('d-topic', ['message.format.version'])).configs[0]).toMatchObject({ value: '3.0-IV1', configSource: 5 });
    // The difference is the limit on both sides where before/after are not set.
    expect(await resolved('r-legacy')).toMatchObject({ messageTimestampBeforeMaxMs: 60000, messageTimestampAfterMaxMs: 60000 });
    expect(await produceAt('r-legacy', Date.now() - 3_600_000)).toBe(ErrorCode.INVALID_TIMESTAMP);
    expect(await produceAt('r-legacy', Date.now() + 600_000)).toBe(ErrorCode.INVALID_TIMESTAMP);
    expect(await produceAt('r-legacy', Date.now())).toBe(0);
  });

  it('lets message.timestamp.before.max.ms and after.max.ms win where they are set', async () => {
    await create('r-before', { 'message.timestamp.difference.max.ms': '60000', 'message.timestamp.before.max.ms': '5000' });
    expect(await resolved('r-before')).toMatchObject({ messageTimestampBeforeMaxMs: 5000, messageTimestampAfterMaxMs: 60000 });
    await create('r-after', { 'message.timestamp.difference.max.ms': '60000', 'message.timestamp.after.max.ms': '7000' });
    expect(await resolved('r-after')).toMatchObject({ messageTimestampBeforeMaxMs: 60000, messageTimestampAfterMaxMs: 7000 });
    expect(await incremental('r-after', [['message.timestamp.difference.max.ms', DELETE, null]])).toMatchObject({ errorCode: 0 });
    expect(await resolved('r-after')).toMatchObject({ messageTimestampBeforeMaxMs: Number(LONG_MAX), messageTimestampAfterMaxMs: 7000 });
  });

  it('validates them as Kafka 3.9 did', async () => {
    expect(await create('r-bad', { 'message.format.version': '9.9' })).toMatchObject({
      errorCode: ErrorCode.INVALID_CONFIG,
      errorMessage: 'Invalid value 9.9 for configuration message.format.version: Version 9.9 is not a valid version',
    });
    expect(await create('r-bad', { 'message.timestamp.difference.max.ms': '-1' })).toMatchObject({
      errorCode: ErrorCode.INVALID_CONFIG,
      errorMessage: 'Invalid value -1 for configuration message.timestamp.difference.max.ms: Value must be at least 0',
    });
    for (const version of ['0.10.2', '0.10.0-IV1', '2.8.1', '3.0', '3.9-IV0', '4.0-IV1']) expect((await create('r-versions', { 'message.format.version': version }, true)).errorCode).toBe(0);
    expect((await create('r-versions', { 'message.format.version': '4.0' }, true)).errorCode).toBe(ErrorCode.INVALID_CONFIG);
  });
});

describe('config changes reach other brokers', () => {
  it("drops another broker's cached topic through NOTIFY and survives a restart", async () => {
    const second = await startTestBroker({ schema: broker.schema, nodeId: 2 });
    try {
      await create('n-topic');
      const before = (await second.context.topics.get('n-topic'))!;
      expect(second.context.topics.topicConfig(before).retentionMs).toBe(604800000);
      expect(await incremental('n-topic', [['retention.ms', SET, '42']])).toMatchObject({ errorCode: 0 });
      await expect.poll(async () => second.context.topics.topicConfig((await second.context.topics.get('n-topic'))!).retentionMs).toBe(42);
      // A stale topic object still resolves to the current configs.
      expect(second.context.topics.topicConfig(before).retentionMs).toBe(42);
    } finally {
      await second.stop();
    }
    const restarted = await startTestBroker({ schema: broker.schema, nodeId: 3 });
    try {
      const topic = (await restarted.context.topics.get('n-topic'))!;
      expect(topic.configs).toEqual({ 'retention.ms': '42' });
      expect(restarted.context.topics.topicConfig(topic).retentionMs).toBe(42);
    } finally {
      await restarted.stop();
    }
  });
});
