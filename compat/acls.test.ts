// ACLs with real clients over SASL_PLAINTEXT: kafkajs's admin creates,
// describes and deletes ACLs (CreateAcls/DescribeAcls/DeleteAcls v1); a
// kafkajs producer and kcat (librdkafka) are refused with Kafka's topic
// authorization error where the principal lacks WRITE — and nothing is
// stored — and let through by a prefixed ACL.
import { AclOperationTypes, AclPermissionTypes, AclResourceTypes, Kafka, logLevel, ResourcePatternTypes, type AclEntry } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../test/support/broker.js';
import { addUser } from '../test/support/sasl.js';
import { KCAT } from './support/kcat.js';
import { run } from './support/spawn.js';

let broker: TestBroker;
let bootstrap: string;

const kafka = (user: string) =>
  new Kafka({
    clientId: `compat-acls-${user}`,
    brokers: [bootstrap],
    sasl: { mechanism: 'plain', username: user, password: `${user}-secret` },
    logLevel: logLevel.NOTHING,
    retry: { retries: 0 },
  });

const count = async (topic: string) =>
  Number((await broker.query<{ n: string }>('SELECT coalesce(sum(b.record_count), 0)::text AS n FROM batches b JOIN topics t USING (topic_id) WHERE t.name = $1', [topic]))[0]!.n);

/** kafkajs reports the broker's code as the error's type, or its cause's once its retrier gives up. */
const isTopicAuthorizationFailure = (err: { type?: string; cause?: { type?: string } }) => (err.cause?.type ?? err.type) === 'TOPIC_AUTHORIZATION_FAILED';

const entry = (over: Partial<AclEntry>): AclEntry => ({
  resourceType: AclResourceTypes.TOPIC,
  resourceName: 'acl-app-',
  resourcePatternType: ResourcePatternTypes.PREFIXED,
  principal: 'User:app',
  host: '*',
  operation: AclOperationTypes.WRITE,
  permissionType: AclPermissionTypes.ALLOW,
  ...over,
});

beforeAll(async () => {
  broker = await startTestBroker({ listeners: 'SASL_PLAINTEXT://127.0.0.1:0', authorizerEnabled: true, superUsers: 'User:admin', autoCreateTopicsEnable: false });
  bootstrap = `127.0.0.1:${broker.ports.SASL_PLAINTEXT}`;
  await addUser(broker, 'admin', 'admin-secret');
  await addUser(broker, 'app', 'app-secret');
  const admin = kafka('admin').admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: 'acl-app-orders' }, { topic: 'acl-other' }] });
  await admin.disconnect();
});
afterAll(() => broker?.destroy());

describe('kafkajs admin', () => {
  it('creates, describes and deletes ACLs', async () => {
    const admin = kafka('admin').admin();
    await admin.connect();
    try {
      await admin.createAcls({ acl: [entry({ resourceName: 'acl-tmp', resourcePatternType: ResourcePatternTypes.LITERAL, operation: AclOperationTypes.READ })] });
      const described = await admin.describeAcls({
        resourceType: AclResourceTypes.TOPIC,
        resourceName: 'acl-tmp',
        resourcePatternType: ResourcePatternTypes.LITERAL,
        principal: 'User:app',
        host: '*',
        operation: AclOperationTypes.ANY,
        permissionType: AclPermissionTypes.ANY,
      });
      expect(described.resources).toEqual([
        expect.objectContaining({
          resourceName: 'acl-tmp',
          resourceType: AclResourceTypes.TOPIC,
          acls: [{ principal: 'User:app', host: '*', operation: AclOperationTypes.READ, permissionType: AclPermissionTypes.ALLOW }],
        }),
      ]);
      const deleted = await admin.deleteAcls({
        filters: [
          {
            resourceType: AclResourceTypes.TOPIC,
            resourceName: 'acl-tmp',
            resourcePatternType: ResourcePatternTypes.LITERAL,
            principal: 'User:app',
            host: '*',
            operation: AclOperationTypes.ANY,
            permissionType: AclPermissionTypes.ANY,
          },
        ],
      });
      expect(deleted.filterResponses[0]!.matchingAcls).toHaveLength(1);
      expect(await broker.query("SELECT 1 FROM acls WHERE resource_name = 'acl-tmp'")).toHaveLength(0);
    } finally {
      await admin.disconnect();
    }
  });

  it('is refused ACL changes as a principal without ALTER on the cluster', async () => {
    const app = kafka('app').admin();
    await app.connect();
    try {
      await expect(app.createAcls({ acl: [entry({ resourceName: '*', operation: AclOperationTypes.ALL })] })).rejects.toMatchObject({ type: 'CLUSTER_AUTHORIZATION_FAILED' });
    } finally {
      await app.disconnect();
    }
    expect(await broker.query("SELECT 1 FROM acls WHERE resource_name = '*'")).toHaveLength(0);
  });
});

describe('producers', () => {
  it('kafkajs: refused without WRITE (nothing stored), accepted under a prefixed ACL', async () => {
    const producer = kafka('app').producer();
    await producer.connect();
    try {
      await expect(producer.send({ topic: 'acl-app-orders', messages: [{ value: 'early' }] })).rejects.toSatisfy(isTopicAuthorizationFailure);
      expect(await count('acl-app-orders')).toBe(0);
      const admin = kafka('admin').admin();
      await admin.connect();
      await admin.createAcls({ acl: [entry({})] });
      await admin.disconnect();
      await producer.send({ topic: 'acl-app-orders', acks: -1, messages: [{ value: 'one' }, { value: 'two' }] });
      expect(await count('acl-app-orders')).toBe(2);
      await expect(producer.send({ topic: 'acl-other', messages: [{ value: 'x' }] })).rejects.toSatisfy(isTopicAuthorizationFailure);
      expect(await count('acl-other')).toBe(0);
    } finally {
      await producer.disconnect();
    }
  });

  it('kcat (librdkafka): refused with a topic authorization error, accepted under the prefixed ACL', async () => {
    const kcat = (topic: string, input: string) =>
      run(
        KCAT,
        [
          '-b',
          bootstrap,
          '-m',
          '5',
          '-P',
          '-t',
          topic,
          '-X',
          'acks=all',
          '-X',
          'message.timeout.ms=5000',
          '-X',
          'security.protocol=SASL_PLAINTEXT',
          '-X',
          'sasl.mechanisms=PLAIN',
          '-X',
          'sasl.username=app',
          '-X',
          'sasl.password=app-secret',
        ],
        { input, timeoutMs: 20_000 },
      );
    const refused = await kcat('acl-other', 'k1\n');
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/authorization failed/i);
    expect(await count('acl-other')).toBe(0);
    // The ACL from the previous test (WRITE on acl-app-*) covers this topic.
    const before = await count('acl-app-orders');
    const accepted = await kcat('acl-app-orders', 'k2\nk3\n');
    expect(accepted.code, accepted.stderr).toBe(0);
    expect(await count('acl-app-orders')).toBe(before + 2);
  });
});
