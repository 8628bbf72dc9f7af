// Topic and broker configs through real admin clients: kafkajs 2.2.4
// (createTopics with configEntries, describeConfigs, alterConfigs of topics
// and brokers, a producer refused by a Kafka 3.x timestamp config) and
// librdkafka 2.0.2 through confluent-kafka-python 1.7.0's AdminClient
// (create_topics with config, describe_configs, alter_configs of topics and
// of a broker's dynamic configs) and kafka-python 2.0.2's KafkaAdminClient
// (alter_configs of the cluster-wide broker default, describe_configs).
import { ConfigResourceTypes, Kafka, logLevel, type Admin } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../test/support/broker.js';
import { PYTHON, runOk } from './support/spawn.js';

let broker: TestBroker;
let admin: Admin;
beforeAll(async () => {
  broker = await startTestBroker({ autoCreateTopicsEnable: false, connectionsMaxReauthMs: 300_000 });
  admin = new Kafka({ clientId: 'compat-configs', brokers: [broker.bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 1 } }).admin();
  await admin.connect();
});
afterAll(async () => {
  await admin?.disconnect();
  await broker?.destroy();
});

async function describeTopic(topic: string, configNames?: string[]) {
  const res = await admin.describeConfigs({ includeSynonyms: true, resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configNames }] });
  return new Map<string, { configValue: string; configSource: number; isDefault: boolean; readOnly: boolean; configSynonyms: { configName: string; configSource: number }[] }>(
    res.resources[0]!.configEntries.map((e: { configName: string }) => [e.configName, e as never]),
  );
}

describe('kafkajs admin', () => {
  it('creates a topic with configEntries and describes them back', async () => {
    expect(
      await admin.createTopics({
        topics: [
          {
            topic: 'kjs-configs',
            numPartitions: 1,
            configEntries: [
              { name: 'cleanup.policy', value: 'compact' },
              { name: 'retention.ms', value: '120000' },
              { name: 'segment.bytes', value: '1048576' },
            ],
          },
        ],
      }),
    ).toBe(true);
    const configs = await describeTopic('kjs-configs');
    expect(configs.size).toBe(33);
    expect(configs.get('cleanup.policy')).toMatchObject({ configValue: 'compact', configSource: 1, isDefault: false, readOnly: false });
    expect(configs.get('cleanup.policy')!.configSynonyms.map((s) => [s.configName, s.configSource])).toEqual([
      ['cleanup.policy', 1],
      ['log.cleanup.policy', 5],
    ]);
    expect(configs.get('segment.bytes')).toMatchObject({ configValue: '1048576', configSource: 1 });
    expect(configs.get('delete.retention.ms')).toMatchObject({ configValue: '86400000', configSource: 5, isDefault: true });
  });

  it('alters configs (replacing the set), honours validateOnly and reports INVALID_CONFIG', async () => {
    await admin.alterConfigs({ validateOnly: true, resources: [{ type: ConfigResourceTypes.TOPIC, name: 'kjs-configs', configEntries: [{ name: 'retention.ms', value: '1' }] }] });
    expect((await describeTopic('kjs-configs', ['retention.ms'])).get('retention.ms')!.configValue).toBe('120000');
    await admin.alterConfigs({ validateOnly: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: 'kjs-configs', configEntries: [{ name: 'retention.ms', value: '240000' }] }] });
    const after = await describeTopic('kjs-configs', ['retention.ms', 'cleanup.policy']);
    expect(after.get('retention.ms')).toMatchObject({ configValue: '240000', configSource: 1 });
    expect(after.get('cleanup.policy')).toMatchObject({ configValue: 'delete', configSource: 5 });
    await expect(
      admin.alterConfigs({ validateOnly: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: 'kjs-configs', configEntries: [{ name: 'retention.ms', value: 'later' }] }] }),
    ).rejects.toMatchObject({ type: 'INVALID_CONFIG' });
    await expect(admin.createTopics({ topics: [{ topic: 'kjs-bad', configEntries: [{ name: 'no.such.config', value: '1' }] }] })).rejects.toThrow();
  });

  it('describes the broker', async () => {
    const res = await admin.describeConfigs({ includeSynonyms: false, resources: [{ type: ConfigResourceTypes.BROKER, name: '1' }] });
    const entries = new Map(res.resources[0]!.configEntries.map((e: { configName: string; configValue: string; readOnly: boolean }) => [e.configName, e]));
    expect(entries.get('message.max.bytes')).toMatchObject({ configValue: '1048588', readOnly: false, isDefault: true });
    expect(entries.get('log.retention.ms')).toMatchObject({ configValue: null, readOnly: false }); // unset, as on Kafka (log.retention.hours decides)
    expect(entries.get('default.replication.factor')).toMatchObject({ configValue: '1', readOnly: true, isDefault: true });
    expect(entries.get('connections.max.reauth.ms')).toMatchObject({ configValue: '300000', readOnly: true, isDefault: false, configSource: 4 });
    expect(entries.get('num.partitions')).toMatchObject({ configValue: '1', readOnly: true });
  });

  // kafkajs 2.2.4 and confluent-kafka-python 1.7.0 refuse an empty resource name, so the cluster-wide default ("") is tested at the wire (test/integration/broker-configs.test.ts).
  it('sets a dynamic broker config that topics take, and is refused a static one', async () => {
    await admin.createTopics({ topics: [{ topic: 'kjs-defaults', numPartitions: 1 }] });
    await admin.alterConfigs({ validateOnly: false, resources: [{ type: ConfigResourceTypes.BROKER, name: '1', configEntries: [{ name: 'log.retention.ms', value: '7200000' }] }] });
    const topic = await describeTopic('kjs-defaults', ['retention.ms']);
    expect(topic.get('retention.ms')).toMatchObject({ configValue: '7200000', configSource: 2, isDefault: false });
    expect(topic.get('retention.ms')!.configSynonyms.map((s) => [s.configName, s.configSource])).toEqual([
      ['log.retention.ms', 2],
      ['log.retention.hours', 5],
    ]);
    const self = await admin.describeConfigs({ includeSynonyms: false, resources: [{ type: ConfigResourceTypes.BROKER, name: '1', configNames: ['log.retention.ms'] }] });
    expect(self.resources[0]!.configEntries).toMatchObject([{ configName: 'log.retention.ms', configValue: '7200000', configSource: 2, readOnly: false }]);
    await expect(
      admin.alterConfigs({ validateOnly: false, resources: [{ type: ConfigResourceTypes.BROKER, name: '1', configEntries: [{ name: 'num.partitions', value: '3' }] }] }),
    ).rejects.toMatchObject({ type: 'INVALID_REQUEST' });
    // The legacy AlterConfigs replaces the whole set: an empty one clears it.
    await admin.alterConfigs({ validateOnly: false, resources: [{ type: ConfigResourceTypes.BROKER, name: '1', configEntries: [] }] });
    expect((await describeTopic('kjs-defaults', ['retention.ms'])).get('retention.ms')).toMatchObject({ configValue: '604800000', configSource: 5 });
  });

  it("takes a Kafka 3.x application's topic configs, and its producer is held to message.timestamp.difference.max.ms", async () => {
    expect(
      await admin.createTopics({
        topics: [
          {
            topic: 'kjs-legacy',
            numPartitions: 1,
            configEntries: [
              { name: 'message.format.version', value: '2.8' },
              { name: 'message.timestamp.difference.max.ms', value: '60000' },
            ],
          },
        ],
      }),
    ).toBe(true);
    const configs = await describeTopic('kjs-legacy', ['message.format.version', 'message.timestamp.difference.max.ms']);
    expect(configs.get('message.format.version')).toMatchObject({ configValue: '2.8', configSource: 1 });
    expect(configs.get('message.timestamp.difference.max.ms')).toMatchObject({ configValue: '60000', configSource: 1 });
    const producer = new Kafka({ clientId: 'compat-configs-producer', brokers: [broker.bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 0 } }).producer();
    await producer.connect();
    try {
      await expect(producer.send({ topic: 'kjs-legacy', messages: [{ value: 'old', timestamp: String(Date.now() - 3_600_000) }] })).rejects.toMatchObject({ type: 'INVALID_TIMESTAMP' });
      await expect(producer.send({ topic: 'kjs-legacy', messages: [{ value: 'now' }] })).resolves.toHaveLength(1);
    } finally {
      await producer.disconnect();
    }
  });
});

// One Python process drives the whole librdkafka scenario and prints what it saw as JSON.
const CONFLUENT_SCRIPT = String.raw`
import json, sys
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic
req = json.load(sys.stdin)
a = AdminClient({'bootstrap.servers': req['bootstrap']})
topic = req['topic']
out = {}
a.create_topics([NewTopic(topic, 1, 1, config={'retention.ms': '120000', 'cleanup.policy': 'compact,delete'})])[topic].result(15)
def describe(resource):
    entries = a.describe_configs([resource])[resource].result(15)
    return {k: {'value': v.value, 'source': int(getattr(v.source, 'value', v.source)), 'default': v.is_default, 'read_only': v.is_read_only,
                'synonyms': [[s.name, int(getattr(s.source, 'value', s.source))] for s in v.synonyms.values()]} for k, v in entries.items()}
def error(resource):
    try:
        a.alter_configs([resource])[resource].result(15)
        return None
    except Exception as e:
        return e.args[0].name() if hasattr(e.args[0], 'name') else str(e)
r = ConfigResource('topic', topic)
out['created'] = describe(r)
altered = ConfigResource('topic', topic, set_config={'retention.ms': '240000', 'max.message.bytes': '2000000'})
a.alter_configs([altered])[altered].result(15)
out['altered'] = describe(r)
out['invalid'] = error(ConfigResource('topic', topic, set_config={'min.cleanable.dirty.ratio': '7'}))
out['unknown_topic'] = error(ConfigResource('topic', 'no-such-topic', set_config={'retention.ms': '1'}))
out['broker'] = describe(ConfigResource('broker', '1'))
dynamic = ConfigResource('broker', '1', set_config={'log.cleanup.policy': 'compact'})
a.alter_configs([dynamic])[dynamic].result(15)
out['dynamic'] = describe(ConfigResource('broker', '1'))['log.cleanup.policy']
out['with_default'] = describe(r)
out['static_refused'] = error(ConfigResource('broker', '1', set_config={'num.partitions': '2'}))
cleared = ConfigResource('broker', '1', set_config={})
a.alter_configs([cleared])[cleared].result(15)
legacy = req['topic'] + '-legacy'
a.create_topics([NewTopic(legacy, 1, 1, config={'message.timestamp.difference.max.ms': '60000', 'message.format.version': '3.0'})])[legacy].result(15)
out['legacy'] = describe(ConfigResource('topic', legacy))
print(json.dumps(out))
`;

describe('confluent-kafka-python (librdkafka) AdminClient', () => {
  it('round-trips topic configs and describes the broker', async () => {
    const r = await runOk(PYTHON, ['-c', CONFLUENT_SCRIPT], { input: JSON.stringify({ bootstrap: broker.bootstrap, topic: 'ckp-configs' }), timeoutMs: 60_000 });
    type Entry = { value: string | null; source: number; default: boolean; read_only: boolean; synonyms: [string, number][] };
    const out = JSON.parse(r.stdout.toString('utf8')) as {
      created: Record<string, Entry>;
      altered: Record<string, Entry>;
      invalid: string | null;
      unknown_topic: string | null;
      broker: Record<string, Entry>;
      dynamic: Entry;
      with_default: Record<string, Entry>;
      static_refused: string | null;
      legacy: Record<string, Entry>;
    };
    expect(Object.keys(out.created)).toHaveLength(33);
    expect(out.created['cleanup.policy']).toMatchObject({ value: 'compact,delete', source: 1, default: false, read_only: false });
    expect(out.created['retention.ms']).toMatchObject({ value: '120000', source: 1 });
    expect(out.created['compression.type']).toMatchObject({ value: 'producer', source: 5, default: true });
    expect(out.altered['retention.ms']).toMatchObject({ value: '240000', source: 1 });
    expect(out.altered['max.message.bytes']).toMatchObject({ value: '2000000', source: 1 });
    expect(out.altered['cleanup.policy']).toMatchObject({ value: 'delete', source: 5 });
    expect(out.invalid).toBe('INVALID_CONFIG');
    expect(out.unknown_topic).toBe('UNKNOWN_TOPIC_OR_PART');
    expect(out.broker['message.max.bytes']).toMatchObject({ value: '1048588', read_only: false });
    expect(out.broker['default.replication.factor']).toMatchObject({ value: '1', read_only: true, default: true });
    expect(out.broker['connections.max.reauth.ms']).toMatchObject({ value: '300000', source: 4 });
    expect(out.dynamic).toMatchObject({ value: 'compact', source: 2, default: false, read_only: false });
    // The topic altered above holds no cleanup.policy of its own, so it takes the broker's.
    expect(out.with_default['cleanup.policy']).toMatchObject({ value: 'compact', source: 2 });
    expect(out.static_refused).toBe('INVALID_REQUEST');
    expect(Object.keys(out.legacy)).toHaveLength(35); // Kafka 4's 33 and the two 3.x configs it set
    expect(out.legacy['message.timestamp.difference.max.ms']).toMatchObject({ value: '60000', source: 1 });
    expect(out.legacy['message.format.version']).toMatchObject({ value: '3.0', source: 1 });
  });
});

// kafka-python sends AlterConfigs for a broker resource to any broker, so it can set the cluster-wide default ("").
const KAFKA_PYTHON_SCRIPT = String.raw`
import json, sys
from kafka.admin import KafkaAdminClient, ConfigResource, ConfigResourceType, NewTopic
req = json.load(sys.stdin)
a = KafkaAdminClient(bootstrap_servers=req['bootstrap'], request_timeout_ms=10000, client_id='compat-configs-kp')
a.create_topics([NewTopic(req['topic'], 1, 1)])
def alter(name, configs):
    r = a.alter_configs([ConfigResource(ConfigResourceType.BROKER, name, configs=configs)])
    return [[e[0], e[1]] for e in r.resources]
def describe(resource):
    r = a.describe_configs([resource], include_synonyms=True)[0]
    return {c[0]: {'value': c[1], 'read_only': c[2], 'source': c[3], 'synonyms': [[s[0], s[2]] for s in c[5]]} for c in r.resources[0][4]}
out = {}
out['set'] = alter('', {'log.retention.ms': '5400000'})
out['topic'] = describe(ConfigResource(ConfigResourceType.TOPIC, req['topic'], configs={'retention.ms': None}))
out['broker'] = describe(ConfigResource(ConfigResourceType.BROKER, '1', configs=dict.fromkeys(['log.retention.ms', 'default.replication.factor', 'connections.max.reauth.ms'])))
out['refused'] = alter('', {'log.retention.hours': '1'})
out['cleared'] = alter('', {})
out['after'] = describe(ConfigResource(ConfigResourceType.TOPIC, req['topic'], configs={'retention.ms': None}))
print(json.dumps(out))
`;

describe('kafka-python KafkaAdminClient', () => {
  it('sets the cluster-wide broker default that topics take, and is refused a static config', async () => {
    const r = await runOk(PYTHON, ['-c', KAFKA_PYTHON_SCRIPT], { input: JSON.stringify({ bootstrap: broker.bootstrap, topic: 'kp-configs' }), timeoutMs: 60_000 });
    type Entry = { value: string | null; read_only: boolean; source: number; synonyms: [string, number][] };
    const out = JSON.parse(r.stdout.toString('utf8')) as {
      set: [number, string | null][];
      topic: Record<string, Entry>;
      broker: Record<string, Entry>;
      refused: [number, string][];
      cleared: [number, string | null][];
      after: Record<string, Entry>;
    };
    expect(out.set).toEqual([[0, null]]);
    expect(out.topic['retention.ms']).toEqual({
      value: '5400000',
      read_only: false,
      source: 3,
      synonyms: [
        ['log.retention.ms', 3],
        ['log.retention.hours', 5],
      ],
    });
    expect(out.broker['log.retention.ms']).toMatchObject({ value: '5400000', read_only: false, source: 3 });
    expect(out.broker['default.replication.factor']).toMatchObject({ value: '1', read_only: true, source: 5 });
    expect(out.broker['connections.max.reauth.ms']).toMatchObject({ value: '300000', read_only: true, source: 4 });
    expect(out.refused).toEqual([[42, 'Cannot update these configs dynamically: [log.retention.hours]']]);
    expect(out.cleared).toEqual([[0, null]]);
    expect(out.after['retention.ms']).toMatchObject({ value: '604800000', source: 5, synonyms: [] });
  });
});
