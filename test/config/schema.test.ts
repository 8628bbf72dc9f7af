import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/schema.js';

describe('loadConfig', () => {
  it('has working defaults', () => {
    const config = loadConfig({});
    expect(config.port).toBe(9092);
    expect(config.databaseUrl).toBeUndefined();
    expect(config.autoCreateTopicsEnable).toBe(true);
    expect(config.numPartitions).toBe(1);
    expect(config.socketRequestMaxBytes).toBe(104857600);
  });

  it('reads environment variables over the file over defaults', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pgkafka-config-'));
    const file = join(dir, 'config.json');
    writeFileSync(file, JSON.stringify({ port: 9200, numPartitions: 3 }));
    const config = loadConfig({ PGKAFKA_CONFIG: file, PGKAFKA_PORT: '9300', PGKAFKA_AUTO_CREATE_TOPICS_ENABLE: 'false' });
    expect(config.port).toBe(9300);
    expect(config.numPartitions).toBe(3);
    expect(config.autoCreateTopicsEnable).toBe(false);
  });

  it('names the option and its variable when a value is bad', () => {
    expect(() => loadConfig({ PGKAFKA_PORT: 'ninety' })).toThrow(ConfigError);
    expect(() => loadConfig({ PGKAFKA_PORT: 'ninety' })).toThrow(/port \(PGKAFKA_PORT/);
    expect(() => loadConfig({ PGKAFKA_NUM_PARTITIONS: '0' })).toThrow(/numPartitions/);
    expect(() => loadConfig({ PGKAFKA_SCHEMA: 'Bad-Name' })).toThrow(/schema/);
  });

  it("holds the consumer-group session timeout and heartbeat interval to Kafka's bounds", () => {
    expect(loadConfig({})).toMatchObject({ groupConsumerSessionTimeoutMs: 45000, groupConsumerHeartbeatIntervalMs: 5000 });
    expect(() => loadConfig({ PGKAFKA_GROUP_CONSUMER_SESSION_TIMEOUT_MS: '6000' })).toThrow('group.consumer.session.timeout.ms must be greater than or equal to group.consumer.min.session.timeout.ms');
    expect(() => loadConfig({ PGKAFKA_GROUP_CONSUMER_HEARTBEAT_INTERVAL_MS: '20000' })).toThrow(
      'group.consumer.heartbeat.interval.ms must be less than or equal to group.consumer.max.heartbeat.interval.ms',
    );
    const small = { PGKAFKA_GROUP_CONSUMER_MIN_SESSION_TIMEOUT_MS: '1000', PGKAFKA_GROUP_CONSUMER_MIN_HEARTBEAT_INTERVAL_MS: '500' };
    expect(loadConfig({ ...small, PGKAFKA_GROUP_CONSUMER_SESSION_TIMEOUT_MS: '3000', PGKAFKA_GROUP_CONSUMER_HEARTBEAT_INTERVAL_MS: '500' }).groupConsumerSessionTimeoutMs).toBe(3000);
    expect(() => loadConfig({ ...small, PGKAFKA_GROUP_CONSUMER_SESSION_TIMEOUT_MS: '1000', PGKAFKA_GROUP_CONSUMER_HEARTBEAT_INTERVAL_MS: '1000' })).toThrow(
      'group.consumer.heartbeat.interval.ms must be less than group.consumer.session.timeout.ms',
    );
  });

  it('validates the ACL and pipelining options', () => {
    expect(loadConfig({ PGKAFKA_SUPER_USERS: ' User:admin ; User:ops;' }).superUsers).toBe('User:admin;User:ops');
    expect(() => loadConfig({ PGKAFKA_SUPER_USERS: 'admin' })).toThrow(/superUsers/);
    expect(loadConfig({ PGKAFKA_AUTHORIZER_ENABLED: 'true' }).authorizerEnabled).toBe(true);
    expect(() => loadConfig({ PGKAFKA_CONNECTION_MAX_IN_FLIGHT_REQUESTS: '0' })).toThrow(/connectionMaxInFlightRequests/);
    expect(() => loadConfig({ PGKAFKA_CONNECTION_MAX_IN_FLIGHT_BYTES: '10' })).toThrow(/connectionMaxInFlightBytes/);
    expect(loadConfig({ PGKAFKA_FETCH_READ_AHEAD_MAX_BYTES: '0' }).fetchReadAheadMaxBytes).toBe(0);
  });

  it('refuses unknown keys in the config file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pgkafka-config-'));
    const file = join(dir, 'config.json');
    writeFileSync(file, JSON.stringify({ prot: 9200 }));
    expect(() => loadConfig({ PGKAFKA_CONFIG: file })).toThrow(/prot/);
  });
});
