// Group ACLs with a real client: a kafkajs consumer whose principal may
// DESCRIBE its group (so FindCoordinator answers) but not READ it is refused
// at JoinGroup with GROUP_AUTHORIZATION_FAILED, which kafkajs treats as
// fatal (the consumer crashes without restarting); once READ on the group is
// granted, the same principal joins and consumes.
import { Kafka, logLevel, type Consumer, type ConsumerCrashEvent } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AclOperation as Op, AclPermission, PatternType, ResourceType } from '../../src/security/acl.js';
import { startTestBroker, type TestBroker } from '../../test/support/broker.js';
import { addUser } from '../../test/support/sasl.js';

const TOPIC = 'acl-compat-events';
const GROUP = 'acl-compat-group';

let broker: TestBroker;
const kafka = (user: string) =>
  new Kafka({
    clientId: 'compat-acl-groups',
    brokers: [`127.0.0.1:${broker.ports.SASL_PLAINTEXT}`],
    sasl: { mechanism: 'plain', username: user, password: `${user}-secret` },
    logLevel: logLevel.NOTHING,
    retry: { retries: 0 },
  });

const allow = (resourceType: number, resourceName: string, operation: number) =>
  broker.context.authorizer.create([{ resourceType, resourceName, patternType: PatternType.LITERAL, principal: 'User:reader', host: '*', operation, permissionType: AclPermission.ALLOW }]);

beforeAll(async () => {
  broker = await startTestBroker({ listeners: 'PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0', authorizerEnabled: true, superUsers: 'User:admin' });
  await addUser(broker, 'admin', 'admin-secret');
  await addUser(broker, 'reader', 'reader-secret');
  const producer = kafka('admin').producer();
  const admin = kafka('admin').admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 1 }] });
  await admin.disconnect();
  await producer.connect();
  await producer.send({ topic: TOPIC, messages: [{ value: 'one' }, { value: 'two' }] });
  await producer.disconnect();
  await allow(ResourceType.TOPIC, TOPIC, Op.READ);
  await allow(ResourceType.GROUP, GROUP, Op.DESCRIBE);
});
afterAll(async () => {
  await broker?.destroy();
});

/** The error at the root of a kafkajs error chain. */
const rootCause = (e: Error): Error & { type?: string } => (e.cause instanceof Error ? rootCause(e.cause) : e);

describe('kafkajs consumer and READ on its group', () => {
  let consumer: Consumer | undefined;
  afterAll(async () => {
    await consumer?.disconnect().catch(() => {});
  });

  it('is refused with GROUP_AUTHORIZATION_FAILED without READ, then joins and consumes once it is granted', async () => {
    consumer = kafka('reader').consumer({ groupId: GROUP });
    const crashed = new Promise<ConsumerCrashEvent>((resolve) => consumer!.on(consumer!.events.CRASH, resolve));
    const answered: string[] = [];
    consumer.on(consumer.events.REQUEST, (e) => answered.push(e.payload.apiName));
    await consumer.connect();
    await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
    await consumer.run({ eachMessage: async () => {} });
    const crash = await crashed;
    expect(rootCause(crash.payload.error)).toMatchObject({ type: 'GROUP_AUTHORIZATION_FAILED' });
    expect(crash.payload.restart).toBe(false);
    // DESCRIBE on the group was enough for FindCoordinator; JoinGroup is the request refused.
    expect(answered).toEqual(expect.arrayContaining(['GroupCoordinator', 'JoinGroup']));
    expect(broker.context.groups.get(GROUP)).toBeUndefined();
    await consumer.disconnect();

    await allow(ResourceType.GROUP, GROUP, Op.READ);
    consumer = kafka('reader').consumer({ groupId: GROUP });
    await consumer.connect();
    await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
    const seen: string[] = [];
    await new Promise<void>((resolve) => {
      void consumer!.run({
        eachMessage: async ({ message }) => {
          seen.push(message.value!.toString());
          if (seen.length === 2) resolve();
        },
      });
    });
    await consumer.disconnect();
    expect(seen).toEqual(['one', 'two']);
    const committed = await broker.query<{ committed_offset: string }>('SELECT committed_offset::text FROM committed_offsets WHERE group_id = $1', [GROUP]);
    expect(committed).toEqual([{ committed_offset: '2' }]);
  });
});
