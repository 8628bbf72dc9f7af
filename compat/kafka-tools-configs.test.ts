// kafka-configs.sh (Kafka 4.3.1's kafka.admin.ConfigCommand) against
// pgkafka: a topic's configs, a broker's and the cluster-wide broker default
// (dynamic configs, with the effect on a topic's inherited value), and SCRAM
// credentials of users, which then log in through a SASL listener.
import { Kafka, logLevel, type SASLOptions } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IncrementalAlterConfigsApi } from '../src/protocol/messages/index.js';
import { startTestBroker, type TestBroker } from '../test/support/broker.js';
import { RawClient } from '../test/support/raw-client.js';
import { runTool, runToolOk } from './support/kafka-tools.js';

let broker: TestBroker;
let bootstrap: string[];

beforeAll(async () => {
  broker = await startTestBroker({ listeners: 'PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0' });
  bootstrap = ['--bootstrap-server', broker.bootstrap];
  await runToolOk('kafka-topics', [...bootstrap, '--create', '--topic', 'tools-configured', '--partitions', '1']);
});
afterAll(() => broker?.destroy());

const configs = (...args: string[]) => runToolOk('kafka-configs', [...bootstrap, ...args]);

/** `--describe` prints one `  name=value sensitive=… synonyms={SOURCE:name=value, …}` line per config. */
function described(stdout: string): Record<string, { value: string; synonyms: string[] }> {
  const out: Record<string, { value: string; synonyms: string[] }> = {};
  for (const m of stdout.matchAll(/^ {2}([^=\s]+)=(.*) sensitive=(?:true|false) synonyms=\{(.*)\}$/gm)) out[m[1]!] = { value: m[2]!, synonyms: m[3] === '' ? [] : m[3]!.split(', ') };
  return out;
}

describe('kafka-configs --entity-type topics', () => {
  const topic = ['--entity-type', 'topics', '--entity-name', 'tools-configured'];

  it('adds, describes and deletes a topic config', async () => {
    expect((await configs(...topic, '--alter', '--add-config', 'retention.ms=5000,cleanup.policy=compact,max.message.bytes=2000')).stdout).toBe(
      'Completed updating config for topic tools-configured.\n',
    );
    const set = await configs(...topic, '--describe');
    expect(set.stdout.split('\n')[0]).toBe('Dynamic configs for topic tools-configured are:');
    expect(described(set.stdout)).toEqual({
      'cleanup.policy': { value: 'compact', synonyms: ['DYNAMIC_TOPIC_CONFIG:cleanup.policy=compact', 'DEFAULT_CONFIG:log.cleanup.policy=delete'] },
      'max.message.bytes': { value: '2000', synonyms: ['DYNAMIC_TOPIC_CONFIG:max.message.bytes=2000', 'DEFAULT_CONFIG:message.max.bytes=1048588'] },
      'retention.ms': { value: '5000', synonyms: ['DYNAMIC_TOPIC_CONFIG:retention.ms=5000'] },
    });

    await configs(...topic, '--alter', '--delete-config', 'retention.ms,max.message.bytes');
    expect(Object.keys(described((await configs(...topic, '--describe')).stdout))).toEqual(['cleanup.policy']);
    // --all lists the defaults beside the overrides.
    const all = described((await configs(...topic, '--describe', '--all')).stdout);
    expect(all['retention.ms']).toEqual({ value: '604800000', synonyms: [] }); // as Kafka prints it: log.retention.hours is not named
    expect(all['cleanup.policy']!.value).toBe('compact');

    const refused = await runTool('kafka-configs', [...bootstrap, ...topic, '--alter', '--add-config', 'retention.ms=soon']);
    expect(refused.code).toBe(1);
    expect(refused.stdout + refused.stderr).toContain('org.apache.kafka.common.errors.InvalidConfigurationException');
  }, 60_000);
});

describe('kafka-configs --entity-type brokers', () => {
  it('sets log.retention.ms on the broker and as the cluster default, and topics inherit it', async () => {
    const broker1 = ['--entity-type', 'brokers', '--entity-name', '1'];
    expect((await configs(...broker1, '--describe')).stdout).toBe('Dynamic configs for broker 1 are:\n');

    expect((await configs(...broker1, '--alter', '--add-config', 'log.retention.ms=3600000')).stdout).toBe('Completed updating config for broker 1.\n');
    expect((await configs('--entity-type', 'brokers', '--entity-default', '--alter', '--add-config', 'log.retention.ms=7200000')).stdout).toBe(
      'Completed updating default config for brokers in the cluster.\n',
    );

    expect(described((await configs(...broker1, '--describe')).stdout)).toEqual({
      'log.retention.ms': {
        value: '3600000',
        synonyms: ['DYNAMIC_BROKER_CONFIG:log.retention.ms=3600000', 'DYNAMIC_DEFAULT_BROKER_CONFIG:log.retention.ms=7200000', 'DEFAULT_CONFIG:log.retention.hours=168'],
      },
    });
    const defaults = await configs('--entity-type', 'brokers', '--entity-default', '--describe');
    expect(defaults.stdout.split('\n')[0]).toBe('Default configs for brokers in the cluster are:');
    expect(described(defaults.stdout)).toEqual({ 'log.retention.ms': { value: '7200000', synonyms: ['DYNAMIC_DEFAULT_BROKER_CONFIG:log.retention.ms=7200000'] } });

    const topic = ['--entity-type', 'topics', '--entity-name', 'tools-configured', '--describe', '--all'];
    expect(described((await configs(...topic)).stdout)['retention.ms']!.value).toBe('3600000');
    // Without the broker's own value, the cluster default applies.
    await configs(...broker1, '--alter', '--delete-config', 'log.retention.ms');
    expect(described((await configs(...topic)).stdout)['retention.ms']).toEqual({
      value: '7200000',
      synonyms: ['DYNAMIC_DEFAULT_BROKER_CONFIG:log.retention.ms=7200000', 'DEFAULT_CONFIG:log.retention.hours=168'],
    });

    const staticOnly = await runTool('kafka-configs', [...bootstrap, ...broker1, '--alter', '--add-config', 'num.partitions=4']);
    expect(staticOnly.code).toBe(1);
    expect(staticOnly.stdout + staticOnly.stderr).toContain('InvalidRequestException: Cannot update these configs dynamically: [num.partitions]');
  }, 60_000);
});

describe('kafka-configs --entity-type groups', () => {
  it('describes a group that has a config and does not exist among the groups, and refuses a group with neither', async () => {
    // Set through the protocol (a tool run fewer): the tool's own --alter is the topics' path.
    const client = await RawClient.connect(broker.bootstrap);
    try {
      const res = await client.request(IncrementalAlterConfigsApi, 1, {
        resources: [{ resourceType: 32, resourceName: 'tools-configured-group', configs: [{ name: 'consumer.session.timeout.ms', configOperation: 0, value: '50000' }] }],
        validateOnly: false,
      });
      expect(res.responses[0]!.errorCode).toBe(0);
    } finally {
      client.close();
    }
    // Without a name, the tool describes the groups ListGroups lists and those ListConfigResources lists (the groups with configs).
    const all = (await configs('--entity-type', 'groups', '--describe')).stdout;
    expect(all).toContain('Dynamic configs for group tools-configured-group are:\n');
    expect(described(all)['consumer.session.timeout.ms']?.value).toBe('50000');
    expect((await configs('--entity-type', 'groups', '--entity-name', 'tools-no-group', '--describe')).stdout).toBe("The group 'tools-no-group' doesn't exist and doesn't have dynamic config.\n");
  }, 60_000);
});

describe('kafka-configs --entity-type users', () => {
  const login = async (mechanism: 'scram-sha-256' | 'scram-sha-512', password: string) => {
    const kafka = new Kafka({
      brokers: [`127.0.0.1:${broker.ports.SASL_PLAINTEXT}`],
      sasl: { mechanism, username: 'alice', password } as SASLOptions,
      logLevel: logLevel.NOTHING,
      retry: { retries: 0 },
    });
    const admin = kafka.admin();
    try {
      await admin.connect();
      return (await admin.listTopics()).includes('tools-configured') ? 'ok' : 'no topics';
    } catch (e) {
      return (e as Error).name;
    } finally {
      await admin.disconnect();
    }
  };

  it('adds and deletes SCRAM credentials, with which the user logs in', async () => {
    const alice = ['--entity-type', 'users', '--entity-name', 'alice'];
    // One mechanism per command: Kafka's controller refuses a request that alters one user twice (DUPLICATE_RESOURCE,
    // "A user credential cannot be altered twice in the same request"), and so does pgkafka.
    const twice = await runTool('kafka-configs', [...bootstrap, ...alice, '--alter', '--add-config', 'SCRAM-SHA-256=[password=x],SCRAM-SHA-512=[password=y]']);
    expect(twice.code).not.toBe(0);
    expect(twice.stderr).toContain('A user credential cannot be altered twice in the same request');
    for (const mechanism of ['SCRAM-SHA-256=[iterations=8192,password=alice-secret]', 'SCRAM-SHA-512=[password=alice-512]']) {
      expect((await configs(...alice, '--alter', '--add-config', mechanism)).stdout).toBe('Completed updating config for user alice.\n');
    }
    expect(await login('scram-sha-256', 'alice-secret')).toBe('ok');
    expect(await login('scram-sha-512', 'alice-512')).toBe('ok');
    expect(await login('scram-sha-256', 'wrong')).toBe('KafkaJSSASLAuthenticationError');
    // The tool describes the user's client quotas (none) before its SCRAM credentials.
    expect((await configs(...alice, '--describe')).stdout).toBe("SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-256=iterations=8192, SCRAM-SHA-512=iterations=4096\n");

    await configs(...alice, '--alter', '--delete-config', 'SCRAM-SHA-512');
    expect(await login('scram-sha-512', 'alice-512')).toBe('KafkaJSSASLAuthenticationError');
    expect(await login('scram-sha-256', 'alice-secret')).toBe('ok');
  }, 60_000);
});
