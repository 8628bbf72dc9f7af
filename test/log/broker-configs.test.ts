import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/schema.js';
import { BROKER_CONFIG_DEFS, brokerConfigSynonyms } from '../../src/log/broker-config-defs.js';
import { BrokerConfigs } from '../../src/log/broker-configs.js';
import { TOPIC_CONFIG_NAMES } from '../../src/log/topic-configs.js';

const all = { names: null, includeSynonyms: true, includeDocumentation: true };
const brokerWith = (overrides: Record<string, unknown> = {}) => new BrokerConfigs(loadConfig({}, overrides));
// Without a store, alter() checks the change as Kafka does and stores nothing (as validate_only).
const check = (edit: Parameters<BrokerConfigs['alter']>[1], name = '') => brokerWith().alter(name, edit, true);

describe('broker config definitions', () => {
  it("define a broker synonym for every topic config that has one, and every one of them is dynamic but message.format.version's", () => {
    const byName = new Map(BROKER_CONFIG_DEFS.map((d) => [d.name, d]));
    const described = brokerWith().describe('1', all);
    expect(described.every((c) => c.documentation)).toBe(true);
    for (const name of ['log.retention.ms', 'log.roll.ms', 'log.flush.interval.ms', 'message.max.bytes', 'compression.type', 'log.local.retention.bytes', 'log.message.timestamp.difference.max.ms']) {
      expect(byName.get(name)!.dynamic).toBe(true);
    }
    expect(byName.get('log.message.format.version')!.dynamic).toBeUndefined();
    expect(TOPIC_CONFIG_NAMES.length).toBe(36);
  });

  it('names the synonyms Kafka names', () => {
    expect(brokerConfigSynonyms('log.retention.minutes')).toEqual(['log.retention.ms', 'log.retention.minutes', 'log.retention.hours']);
    expect(brokerConfigSynonyms('log.flush.scheduler.interval.ms')).toEqual(['log.flush.scheduler.interval.ms']);
    expect(brokerConfigSynonyms('num.partitions')).toEqual(['num.partitions']);
  });
});

describe('BrokerConfigs', () => {
  it("puts the broker's own dynamic value over the cluster default, over the option, over Kafka's default", () => {
    const b = brokerWith({ messageMaxBytes: 3000 });
    expect(b.synonyms('message.max.bytes')).toEqual([
      { name: 'message.max.bytes', value: '3000', source: 4 },
      { name: 'message.max.bytes', value: '1048588', source: 5 },
    ]);
    const generation = b.generation;
    b.setDynamic({ 'message.max.bytes': '2000' }, { 'message.max.bytes': '1000' });
    expect(b.generation).toBeGreaterThan(generation);
    expect(b.value('message.max.bytes')).toBe('1000');
    expect(b.synonyms('message.max.bytes').map((s) => s.source)).toEqual([2, 3, 4, 5]);
    // Kafka drops synonyms ranked above the config itself.
    b.setDynamic({ 'log.retention.ms': '5' }, {});
    expect(b.synonyms('log.retention.hours')).toEqual([{ name: 'log.retention.hours', value: '168', source: 5 }]);
    expect(b.value('log.retention.minutes')).toBeNull();
  });

  it('ignores stored values Kafka would not accept: non-dynamic names and values that do not parse', () => {
    const b = brokerWith();
    b.setDynamic({ 'num.partitions': '9', 'log.retention.ms': 'x', 'custom.thing': 'y' }, {});
    expect(b.value('num.partitions')).toBe('1');
    expect(b.value('log.retention.ms')).toBe('604800000');
    expect(b.describe('', all).map((c) => [c.name, c.value, c.isSensitive, c.readOnly, c.configType])).toEqual([['custom.thing', null, true, true, 0]]);
  });

  it('prints a canonical value per broker and the stored text for the cluster default', () => {
    const b = brokerWith();
    b.setDynamic({ 'log.cleaner.min.cleanable.ratio': '.25', 'log.cleanup.policy': 'compact , delete' }, {});
    const [ratio, policy] = b.describe('1', { ...all, names: ['log.cleaner.min.cleanable.ratio', 'log.cleanup.policy'] });
    expect([ratio!.value, policy!.value]).toEqual(['0.25', 'compact,delete']);
    expect(b.describe('', all).map((c) => c.value)).toEqual(['.25', 'compact , delete']);
  });
});

describe('BrokerConfigs.alter checks', () => {
  it('refuses configs pgkafka cannot change at run time, naming them as Scala prints a set', async () => {
    expect(await check({ replace: { 'num.partitions': '2', 'log.retention.ms': '1', listeners: 'PLAINTEXT://:1' } })).toEqual({
      errorCode: 42,
      errorMessage: 'Cannot update these configs dynamically: [num.partitions, listeners]',
    });
    const five = ['num.partitions', 'listeners', 'max.connections', 'node.id', 'broker.id'];
    expect((await check({ replace: Object.fromEntries(five.map((n) => [n, '1'])) })).errorMessage).toBe(`Cannot update these configs dynamically: [${five.join(', ')}]`);
  });

  it("checks values with ConfigDef's messages, and takes unknown names as custom configs", async () => {
    expect(await check({ ops: [{ name: 'log.cleanup.policy', configOperation: 0, value: 'keep' }] })).toEqual({
      errorCode: 42,
      errorMessage: 'Invalid value keep for configuration log.cleanup.policy: String must be one of: compact, delete',
    });
    expect(await check({ ops: [{ name: 'compression.type', configOperation: 0, value: 'brotli' }] })).toMatchObject({ errorCode: 42 });
    expect(await check({ ops: [{ name: 'no.such.config', configOperation: 0, value: 'x' }] })).toEqual({ errorCode: 0, errorMessage: null });
  });

  it('appends and subtracts on list configs only', async () => {
    expect(await check({ ops: [{ name: 'log.cleanup.policy', configOperation: 3, value: 'delete' }] })).toEqual({ errorCode: 0, errorMessage: null });
    expect(await check({ ops: [{ name: 'message.max.bytes', configOperation: 3, value: '1' }] })).toEqual({
      errorCode: 40,
      errorMessage: 'Config value subtract is not allowed for config key: message.max.bytes',
    });
    expect(await check({ ops: [{ name: 'no.such.config', configOperation: 2, value: '1' }] })).toEqual({ errorCode: -1, errorMessage: null });
    expect(
      await check({
        ops: [
          { name: 'log.retention.ms', configOperation: 0, value: '1' },
          { name: 'x', configOperation: 9, value: '1' },
        ],
      }),
    ).toEqual({
      errorCode: 42,
      errorMessage: 'Unknown operations type 9',
    });
  });
});
