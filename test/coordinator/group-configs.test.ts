// Group configs (config resource type GROUP) over in-memory storage or none: Kafka's
// GroupConfig checks, DescribeConfigs' sources and synonyms, and the values a
// consumer group uses, kept within the broker's current bounds.
import { describe, expect, it } from 'vitest';
import { GroupConfigs, type GroupConfigBounds } from '../../src/coordinator/group-configs.js';
import { ConfigSource } from '../../src/log/config-values.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { MemoryDatabase, MemoryGroupConfigStore } from '../../src/storage/memory/index.js';

const bounds: GroupConfigBounds = {
  consumerSessionTimeoutMs: 45000,
  consumerMinSessionTimeoutMs: 45000,
  consumerMaxSessionTimeoutMs: 60000,
  consumerHeartbeatIntervalMs: 5000,
  consumerMinHeartbeatIntervalMs: 5000,
  consumerMaxHeartbeatIntervalMs: 15000,
  consumerAssignmentIntervalMs: 1000,
  consumerMinAssignmentIntervalMs: 0,
  consumerMaxAssignmentIntervalMs: 15000,
};
const noBrokerSynonyms = { generation: 0, synonyms: () => [] };
const set = (name: string, value: string) => ({ name, configOperation: 0, value });

describe('group configs', () => {
  it("checks as Kafka's GroupConfig: names, types, the broker's bounds, session above heartbeat", async () => {
    const configs = new GroupConfigs(bounds, noBrokerSynonyms);
    const alter = (...ops: ReturnType<typeof set>[]) => configs.alter('g', { ops }, false);
    expect(await alter(set('consumer.foo', '1'))).toEqual({ errorCode: ErrorCode.INVALID_CONFIG, errorMessage: 'Unknown group config name: consumer.foo' });
    expect(await alter(set('consumer.session.timeout.ms', '0'))).toEqual({
      errorCode: ErrorCode.INVALID_CONFIG,
      errorMessage: 'Invalid value 0 for configuration consumer.session.timeout.ms: Value must be at least 1',
    });
    expect(await alter(set('consumer.session.timeout.ms', '70000'))).toEqual({
      errorCode: ErrorCode.INVALID_CONFIG,
      errorMessage: 'consumer.session.timeout.ms must be less than or equal to group.consumer.max.session.timeout.ms',
    });
    expect(await alter(set('share.isolation.level', 'serializable'))).toMatchObject({ errorCode: ErrorCode.INVALID_CONFIG });
    expect(await configs.alter('', { ops: [set('consumer.session.timeout.ms', '50000')] }, false)).toMatchObject({ errorCode: ErrorCode.INVALID_REQUEST });
    expect(configs.setOn('g')).toEqual({});
    expect(await alter(set('consumer.session.timeout.ms', '50000'), set('consumer.heartbeat.interval.ms', '6000'))).toEqual({ errorCode: ErrorCode.NONE, errorMessage: null });
    expect(configs.consumerSessionTimeoutMs('g')).toBe(50000);
    expect(configs.consumerHeartbeatIntervalMs('g')).toBe(6000);
    expect(configs.consumerSessionTimeoutMs('other')).toBe(45000);
  });

  it('describes a set config as GROUP_CONFIG over its broker synonym, the others from the broker', async () => {
    const configs = new GroupConfigs(bounds, noBrokerSynonyms);
    await configs.alter('g', { replace: { 'consumer.heartbeat.interval.ms': '6000' } }, false);
    const [heartbeat, session] = configs.describe('g', { names: ['consumer.heartbeat.interval.ms', 'consumer.session.timeout.ms'], includeSynonyms: true, includeDocumentation: false });
    expect(heartbeat).toMatchObject({
      value: '6000',
      source: ConfigSource.GROUP_CONFIG,
      synonyms: [
        { name: 'consumer.heartbeat.interval.ms', value: '6000', source: ConfigSource.GROUP_CONFIG },
        { name: 'group.consumer.heartbeat.interval.ms', value: '5000', source: ConfigSource.DEFAULT_CONFIG },
      ],
    });
    expect(session).toMatchObject({ value: '45000', source: ConfigSource.DEFAULT_CONFIG });
    expect(configs.describe('g', { names: null, includeSynonyms: false, includeDocumentation: false })).toHaveLength(17);
  });

  it('lists the groups with configs set; a group whose configs are all removed is forgotten', async () => {
    for (const store of [undefined, new MemoryGroupConfigStore(new MemoryDatabase())]) {
      const configs = new GroupConfigs(bounds, noBrokerSynonyms, store);
      await configs.alter('a', { replace: { 'consumer.session.timeout.ms': '50000' } }, false);
      await configs.alter('b', { ops: [set('consumer.heartbeat.interval.ms', '6000')] }, false);
      await configs.alter('c', { replace: { 'consumer.session.timeout.ms': '50000' } }, true);
      expect(configs.groupIds().sort()).toEqual(['a', 'b']);
      await configs.alter('a', { replace: {} }, false);
      await configs.alter('b', { ops: [{ name: 'consumer.heartbeat.interval.ms', configOperation: 1, value: null }] }, false);
      expect(configs.groupIds()).toEqual([]);
    }
  });

  it("a value set before the broker's bounds narrowed is used within them (GroupConfig.evaluate)", async () => {
    const db = new MemoryDatabase();
    await new GroupConfigs(bounds, noBrokerSynonyms, new MemoryGroupConfigStore(db)).alter('g', { replace: { 'consumer.session.timeout.ms': '60000' } }, false);
    // Another broker, started since with a lower maximum, reads the stored value.
    const narrowed = new GroupConfigs({ ...bounds, consumerMaxSessionTimeoutMs: 50000 }, noBrokerSynonyms, new MemoryGroupConfigStore(db));
    await narrowed.load();
    expect(narrowed.setOn('g')).toEqual({ 'consumer.session.timeout.ms': '60000' });
    expect(narrowed.consumerSessionTimeoutMs('g')).toBe(50000);
  });
});
