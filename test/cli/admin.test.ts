// `pgkafka acl`, `pgkafka user` and `pgkafka cluster info` run as processes
// against a broker with the authorizer on (the CLI connects as the super
// user ANONYMOUS on the plaintext listener): ACLs created, listed and
// deleted; a SCRAM user created over the Kafka protocol logs in on the SASL
// listener with its password and not with another.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../support/broker.js';
import { pgkafka } from '../support/cli-process.js';
import { connectAs } from '../support/sasl.js';

let broker: TestBroker;
const run = (...args: string[]) => pgkafka(args, { env: { PGKAFKA_BROKERS: broker.bootstrap } });

beforeAll(async () => {
  broker = await startTestBroker({ listeners: 'PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0', authorizerEnabled: true, superUsers: 'User:ANONYMOUS' });
});
afterAll(async () => {
  await broker?.destroy();
});

const HEADER = 'PRINCIPAL   HOST  RESOURCE-TYPE  RESOURCE-NAME  RESOURCE-PATTERN-TYPE  OPERATION  PERMISSION\n';

describe('pgkafka acl', { timeout: 180_000 }, () => {
  it('creates, lists and deletes ACLs', async () => {
    const created = await run('acl', 'create', '--allow-principal', 'User:alice', '--operation', 'read', '--operation', 'describe', '--topic', 'orders');
    expect(created).toMatchObject({ code: 0, err: '' });
    expect(created.out).toBe(
      HEADER + 'User:alice  *     TOPIC          orders         LITERAL                READ       ALLOW\nUser:alice  *     TOPIC          orders         LITERAL                DESCRIBE   ALLOW\n',
    );
    await run('acl', 'create', '--deny-principal', 'User:bob', '--deny-host', '10.0.0.1', '--operation', 'write', '--group', 'app-', '--resource-pattern-type', 'prefixed');

    const all = JSON.parse((await run('acl', 'list', '-f', 'json')).out) as Record<string, string>[];
    expect(all).toHaveLength(3);
    expect(all).toContainEqual({ principal: 'User:bob', host: '10.0.0.1', resourceType: 'GROUP', resourceName: 'app-', patternType: 'PREFIXED', operation: 'WRITE', permission: 'DENY' });
    const alices = JSON.parse((await run('acl', 'list', '--allow-principal', 'User:alice', '-f', 'json')).out) as Record<string, string>[];
    expect(alices.map((a) => a.operation).sort()).toEqual(['DESCRIBE', 'READ']);

    const deleted = await run('acl', 'delete', '--topic', 'orders', '--operation', 'read');
    expect(deleted.out).toBe(HEADER + 'User:alice  *     TOPIC          orders         LITERAL                READ       ALLOW\n');
    expect(JSON.parse((await run('acl', 'list', '-f', 'json')).out)).toHaveLength(2);
  });

  it('refuses incomplete or unknown ACL flags', async () => {
    expect((await run('acl', 'create', '--topic', 'x', '--operation', 'read')).err).toBe('pgkafka: acl create: name a principal (--allow-principal or --deny-principal)\n');
    expect((await run('acl', 'create', '--allow-principal', 'User:a', '--topic', 'x', '--operation', 'fly')).err).toBe('pgkafka: acl: unknown operation fly\n');
    expect((await run('acl', 'delete')).code).toBe(2);
  });
});

describe('pgkafka user', { timeout: 180_000 }, () => {
  it('creates a SCRAM user who can log in, lists and deletes it', async () => {
    expect(await run('user', 'create', 'carol', '-p', 'carol-secret', '--mechanism', 'SCRAM-SHA-512', '--mechanism', 'scram-sha-256')).toMatchObject({
      code: 0,
      out: 'Created user carol (SCRAM-SHA-512, SCRAM-SHA-256).\n',
    });
    (await connectAs(broker, 'carol', 'carol-secret')).close();
    await expect(connectAs(broker, 'carol', 'wrong')).rejects.toThrow(/SaslAuthenticate/);
    expect((await run('user', 'list')).out).toBe('USER   MECHANISM      ITERATIONS\ncarol  SCRAM-SHA-256  4096\ncarol  SCRAM-SHA-512  4096\n');
    expect((await run('user', 'delete', 'carol')).out).toBe('Deleted user carol (SCRAM-SHA-256, SCRAM-SHA-512).\n');
    expect(JSON.parse((await run('user', 'list', '-f', 'json')).out)).toEqual([]);
    await expect(connectAs(broker, 'carol', 'carol-secret')).rejects.toThrow(/SaslAuthenticate/);
    const missing = await run('user', 'delete', 'carol');
    expect(missing).toMatchObject({ code: 1, err: 'pgkafka: user carol: RESOURCE_NOT_FOUND\n' });
    expect((await run('user', 'create', 'dave')).code).toBe(2);
  });
});

describe('pgkafka cluster info', { timeout: 180_000 }, () => {
  it('names the cluster, its controller and brokers, and the topics', async () => {
    await run('topic', 'create', 'orders', '-p', '2');
    const info = JSON.parse((await run('cluster', 'info', '-f', 'json')).out) as {
      clusterId: string;
      controllerId: number;
      brokers: { id: number; host: string; port: number; leaders: number }[];
      topics: unknown[];
    };
    expect(info.controllerId).toBe(1);
    expect(info.brokers).toEqual([{ id: 1, host: '127.0.0.1', port: broker.port, rack: null, leaders: 2 }]);
    expect(info.topics).toEqual([{ name: 'orders', partitions: 2, replicas: 1 }]);
    const text = (await run('cluster', 'info')).out;
    expect(text).toBe(
      `CLUSTER\n=======\n${info.clusterId}\n\nBROKERS\n=======\nID  HOST       PORT   RACK  LEADERS\n1*  127.0.0.1  ${broker.port}  -     2\n\nTOPICS\n======\nNAME    PARTITIONS  REPLICAS\norders  2           1\n`,
    );
  });
});
