// ACLs over the wire (RawClient, exact versions): CreateAcls, DescribeAcls
// and DeleteAcls; the checks of the topic and admin APIs with Kafka's
// *_AUTHORIZATION_FAILED codes and nothing stored when refused; Metadata
// hiding undescribable topics; prefixed patterns, DENY, hosts, super users;
// a second broker on the same database enforcing ACLs made on the first.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/protocol/errors.js';
import {
  CreateAclsApi,
  CreatePartitionsApi,
  CreateTopicsApi,
  DeleteAclsApi,
  DeleteRecordsApi,
  DeleteTopicsApi,
  DescribeAclsApi,
  DescribeConfigsApi,
  DescribeLogDirsApi,
  FetchApi,
  IncrementalAlterConfigsApi,
  ListOffsetsApi,
  MetadataApi,
  ProduceApi,
} from '../../src/protocol/messages/index.js';
import { buildBatch } from '../../src/protocol/records/index.js';
import { AclOperation as Op, AclPermission, PatternType, ResourceType } from '../../src/security/acl.js';
import { startTestBroker, type TestBroker } from '../support/broker.js';
import { RawClient } from '../support/raw-client.js';
import { addUser, connectAs } from '../support/sasl.js';

const LISTENERS = 'PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0';
let broker: TestBroker;
let admin: RawClient;
let alice: RawClient;
let bob: RawClient;

const ANY_FILTER = {
  resourceTypeFilter: ResourceType.ANY,
  resourceNameFilter: null,
  patternTypeFilter: PatternType.ANY,
  principalFilter: null,
  hostFilter: null,
  operation: Op.ANY,
  permissionType: AclPermission.ANY,
};

function allow(principal: string, resourceType: number, resourceName: string, operation: number, patternType: number = PatternType.LITERAL, host = '*') {
  return { resourceType, resourceName, resourcePatternType: patternType, principal, host, operation, permissionType: AclPermission.ALLOW as number };
}

async function createAcls(...creations: ReturnType<typeof allow>[]) {
  const res = await admin.request(CreateAclsApi, 3, { creations });
  expect(res.results.map((r) => r.errorCode)).toEqual(creations.map(() => ErrorCode.NONE));
}

const batch = (...values: string[]) => buildBatch({ baseTimestamp: 1_700_000_000_000n, records: values.map((v, i) => ({ offsetDelta: i, key: null, value: Buffer.from(v) })) });

async function produce(client: RawClient, topic: string, ...values: string[]) {
  const res = await client.request(ProduceApi, 9, { acks: -1, timeoutMs: 1000, transactionalId: null, topicData: [{ name: topic, partitionData: [{ index: 0, records: batch(...values) }] }] });
  return res.responses[0]!.partitionResponses[0]!;
}

async function fetchCode(client: RawClient, topic: string) {
  const res = await client.request(FetchApi, 11, {
    replicaId: -1,
    maxWaitMs: 0,
    minBytes: 1,
    maxBytes: 1 << 20,
    isolationLevel: 0,
    sessionId: 0,
    sessionEpoch: -1,
    topics: [{ topic, partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: 0n, logStartOffset: -1n, partitionMaxBytes: 1 << 20 }] }],
    forgottenTopicsData: [],
    rackId: '',
  });
  return res.responses[0]!.partitions[0]!;
}

const stored = async (topic: string) =>
  Number((await broker.query<{ n: string }>('SELECT coalesce(sum(b.record_count), 0)::text AS n FROM batches b JOIN topics t USING (topic_id) WHERE t.name = $1', [topic]))[0]!.n);

async function createTopic(client: RawClient, name: string) {
  return (await client.request(CreateTopicsApi, 7, { topics: [{ name, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 1000, validateOnly: false })).topics[0]!;
}

beforeAll(async () => {
  broker = await startTestBroker({ listeners: LISTENERS, authorizerEnabled: true, superUsers: 'User:admin', autoCreateTopicsEnable: true });
  for (const [user, password] of [
    ['admin', 'admin-secret'],
    ['alice', 'alice-secret'],
    ['bob', 'bob-secret'],
  ])
    await addUser(broker, user!, password!);
  admin = await connectAs(broker, 'admin', 'admin-secret');
  alice = await connectAs(broker, 'alice', 'alice-secret');
  bob = await connectAs(broker, 'bob', 'bob-secret');
  for (const topic of ['orders', 'orders-eu', 'payments', 'secret']) expect((await createTopic(admin, topic)).errorCode).toBe(ErrorCode.NONE);
});
afterAll(async () => {
  for (const c of [admin, alice, bob]) c?.close();
  await broker?.destroy();
});

describe('ACL APIs', () => {
  it('answer SECURITY_DISABLED on a broker without an authorizer', async () => {
    const plain = await startTestBroker();
    try {
      const client = await RawClient.connect(plain.bootstrap);
      const created = await client.request(CreateAclsApi, 2, { creations: [allow('User:x', ResourceType.TOPIC, 't', Op.READ)] });
      expect(created.results[0]!.errorCode).toBe(ErrorCode.SECURITY_DISABLED);
      expect((await client.request(DescribeAclsApi, 2, ANY_FILTER)).errorCode).toBe(ErrorCode.SECURITY_DISABLED);
      expect((await client.request(DeleteAclsApi, 2, { filters: [ANY_FILTER] })).filterResults[0]!.errorCode).toBe(ErrorCode.SECURITY_DISABLED);
      client.close();
    } finally {
      await plain.destroy();
    }
  });

  it('create, describe with filters, and delete bindings; invalid ones get INVALID_REQUEST', async () => {
    const res = await admin.request(CreateAclsApi, 1, {
      creations: [
        allow('User:carol', ResourceType.TOPIC, 'audit', Op.READ),
        allow('User:carol', ResourceType.TOPIC, 'aud', Op.DESCRIBE, PatternType.PREFIXED),
        allow('User:carol', ResourceType.CLUSTER, 'not-the-cluster', Op.ALTER),
        allow('carol', ResourceType.TOPIC, 'audit', Op.READ),
      ],
    });
    expect(res.results.map((r) => r.errorCode)).toEqual([0, 0, ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_REQUEST]);
    expect(res.results[2]!.errorMessage).toMatch(/kafka-cluster/);
    // As on Kafka (differential/security.test.ts): a filter-only value (ANY) fails the whole request.
    const anyOp = await admin.request(CreateAclsApi, 1, { creations: [allow('User:carol', ResourceType.TOPIC, 'audit-2', Op.READ), allow('User:carol', ResourceType.TOPIC, 'audit', Op.ANY)] });
    expect(anyOp.results).toEqual([
      { errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: null },
      { errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: null },
    ]);

    const carol = { ...ANY_FILTER, principalFilter: 'User:carol' };
    const all = await admin.request(DescribeAclsApi, 3, carol);
    expect(all.errorCode).toBe(ErrorCode.NONE);
    expect(all.resources.map((r) => [r.resourceName, r.patternType, r.acls.map((a) => a.operation)])).toEqual(
      expect.arrayContaining([
        ['audit', PatternType.LITERAL, [Op.READ]],
        ['aud', PatternType.PREFIXED, [Op.DESCRIBE]],
      ]),
    );
    expect(all.resources).toHaveLength(2);
    const match = await admin.request(DescribeAclsApi, 3, { ...carol, resourceTypeFilter: ResourceType.TOPIC, resourceNameFilter: 'audit-log', patternTypeFilter: PatternType.MATCH });
    expect(match.resources.map((r) => r.resourceName)).toEqual(['aud']);
    // An UNKNOWN code closes the connection, as Kafka's request parser refuses it.
    const other = await connectAs(broker, 'admin', 'admin-secret');
    await expect(other.request(DescribeAclsApi, 3, { ...carol, operation: 0 })).rejects.toThrow(/connection closed/);

    const deleted = await admin.request(DeleteAclsApi, 3, {
      filters: [
        { ...carol, patternTypeFilter: PatternType.PREFIXED },
        { ...carol, operation: Op.READ },
      ],
    });
    expect(deleted.filterResults.map((f) => f.matchingAcls.map((a) => a.resourceName))).toEqual([['aud'], ['audit']]);
    expect((await admin.request(DescribeAclsApi, 3, carol)).resources).toEqual([]);
  });

  it('need DESCRIBE / ALTER on the cluster', async () => {
    expect((await alice.request(DescribeAclsApi, 3, ANY_FILTER)).errorCode).toBe(ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
    const created = await alice.request(CreateAclsApi, 3, { creations: [allow('User:alice', ResourceType.TOPIC, '*', Op.ALL)] });
    expect(created.results[0]!.errorCode).toBe(ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
    expect((await alice.request(DeleteAclsApi, 3, { filters: [ANY_FILTER] })).filterResults[0]!.errorCode).toBe(ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
    expect((await admin.request(DescribeAclsApi, 3, { ...ANY_FILTER, principalFilter: 'User:alice' })).resources).toEqual([]);
  });
});

describe('topic authorization', () => {
  it('refuses Produce without WRITE and stores nothing; WRITE lets it through', async () => {
    const refused = await produce(alice, 'orders', 'nope');
    expect(refused.errorCode).toBe(ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    expect(await stored('orders')).toBe(0);
    await createAcls(allow('User:alice', ResourceType.TOPIC, 'orders', Op.WRITE));
    expect((await produce(alice, 'orders', 'a1', 'a2')).errorCode).toBe(ErrorCode.NONE);
    expect(await stored('orders')).toBe(2);
    // bob still cannot.
    expect((await produce(bob, 'orders', 'b')).errorCode).toBe(ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    expect(await stored('orders')).toBe(2);
  });

  it('refuses Fetch and ListOffsets without READ / DESCRIBE', async () => {
    expect((await fetchCode(bob, 'orders')).errorCode).toBe(ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    const offsets = await bob.request(ListOffsetsApi, 7, {
      replicaId: -1,
      isolationLevel: 0,
      topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n }] }],
    });
    expect(offsets.topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    await createAcls(allow('User:bob', ResourceType.TOPIC, 'orders', Op.READ));
    const fetched = await fetchCode(bob, 'orders');
    expect(fetched.errorCode).toBe(ErrorCode.NONE);
    expect(fetched.highWatermark).toBe(2n);
  });

  it('applies prefixed ACLs to every topic with the prefix', async () => {
    await createAcls(allow('User:bob', ResourceType.TOPIC, 'orders-', Op.WRITE, PatternType.PREFIXED));
    expect((await produce(bob, 'orders-eu', 'eu')).errorCode).toBe(ErrorCode.NONE);
    expect((await produce(bob, 'payments', 'p')).errorCode).toBe(ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    expect(await stored('orders-eu')).toBe(1);
    expect(await stored('payments')).toBe(0);
  });

  it('lets a DENY override an ALLOW, also for a wildcard principal', async () => {
    await createAcls(allow('User:bob', ResourceType.TOPIC, 'payments', Op.ALL));
    expect((await produce(bob, 'payments', 'p1')).errorCode).toBe(ErrorCode.NONE);
    await createAcls({ ...allow('User:*', ResourceType.TOPIC, 'payments', Op.WRITE), permissionType: AclPermission.DENY });
    expect((await produce(bob, 'payments', 'p2')).errorCode).toBe(ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    expect((await fetchCode(bob, 'payments')).errorCode).toBe(ErrorCode.NONE);
    expect(await stored('payments')).toBe(1);
    // Super users are not subject to ACLs.
    expect((await produce(admin, 'payments', 'root')).errorCode).toBe(ErrorCode.NONE);
  });

  it('checks the client host', async () => {
    await createAcls(allow('User:alice', ResourceType.TOPIC, 'secret', Op.WRITE, PatternType.LITERAL, '10.9.8.7'));
    expect((await produce(alice, 'secret', 's')).errorCode).toBe(ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    await createAcls(allow('User:alice', ResourceType.TOPIC, 'secret', Op.WRITE, PatternType.LITERAL, '127.0.0.1'));
    expect((await produce(alice, 'secret', 's')).errorCode).toBe(ErrorCode.NONE);
  });

  it('Metadata lists only describable topics, refuses undescribable names and reports authorized operations', async () => {
    const carolPassword = 'carol-secret';
    await addUser(broker, 'carol', carolPassword);
    const carol = await connectAs(broker, 'carol', carolPassword);
    try {
      await createAcls(allow('User:carol', ResourceType.TOPIC, 'orders', Op.READ));
      const all = await carol.request(MetadataApi, 12, { topics: null, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: true });
      expect(all.topics.map((t) => t.name)).toEqual(['orders']);
      expect(all.topics[0]!.topicAuthorizedOperations).toBe((1 << Op.READ) | (1 << Op.DESCRIBE));
      const named = await carol.request(MetadataApi, 12, {
        topics: [{ name: 'payments', topicId: '00000000-0000-0000-0000-000000000000' }],
        allowAutoTopicCreation: true,
        includeTopicAuthorizedOperations: false,
      });
      expect(named.topics[0]!.errorCode).toBe(ErrorCode.TOPIC_AUTHORIZATION_FAILED);
      // DESCRIBE without CREATE: an unknown topic is not auto-created.
      await createAcls(allow('User:carol', ResourceType.TOPIC, 'fresh', Op.DESCRIBE));
      const fresh = await carol.request(MetadataApi, 12, {
        topics: [{ name: 'fresh', topicId: '00000000-0000-0000-0000-000000000000' }],
        allowAutoTopicCreation: true,
        includeTopicAuthorizedOperations: false,
      });
      expect(fresh.topics[0]!.errorCode).toBe(ErrorCode.TOPIC_AUTHORIZATION_FAILED);
      expect(await broker.query("SELECT 1 FROM topics WHERE name = 'fresh'")).toHaveLength(0);
    } finally {
      carol.close();
    }
  });
});

describe('admin authorization', () => {
  it('CreateTopics needs CREATE on the cluster or the topic; configs are shown only with DESCRIBE_CONFIGS', async () => {
    expect((await createTopic(alice, 'alice-new')).errorCode).toBe(ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    expect(await broker.query("SELECT 1 FROM topics WHERE name = 'alice-new'")).toHaveLength(0);
    await createAcls(allow('User:alice', ResourceType.TOPIC, 'alice-', Op.CREATE, PatternType.PREFIXED));
    const created = await createTopic(alice, 'alice-new');
    expect(created.errorCode).toBe(ErrorCode.NONE);
    expect(created.topicConfigErrorCode).toBe(ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    expect(created.configs).toEqual([]);
  });

  it('DeleteTopics and DeleteRecords need DELETE, CreatePartitions ALTER', async () => {
    const del = await bob.request(DeleteTopicsApi, 5, { topicNames: ['alice-new'], timeoutMs: 1000 });
    expect(del.responses[0]!.errorCode).toBe(ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    const records = await bob.request(DeleteRecordsApi, 2, { topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, offset: 1n }] }], timeoutMs: 1000 });
    expect(records.topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    const parts = await bob.request(CreatePartitionsApi, 3, { topics: [{ name: 'orders', count: 3, assignments: null }], timeoutMs: 1000, validateOnly: false });
    expect(parts.results[0]!.errorCode).toBe(ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    expect(await broker.query("SELECT 1 FROM topics WHERE name = 'alice-new'")).toHaveLength(1);
    expect((await broker.query<{ n: number }>("SELECT partition_count AS n FROM topics WHERE name = 'orders'"))[0]!.n).toBe(1);
    await createAcls(allow('User:bob', ResourceType.TOPIC, 'alice-new', Op.DELETE));
    expect((await bob.request(DeleteTopicsApi, 5, { topicNames: ['alice-new'], timeoutMs: 1000 })).responses[0]!.errorCode).toBe(ErrorCode.NONE);
  });

  it('configs need DESCRIBE_CONFIGS / ALTER_CONFIGS on the topic or the cluster; log dirs DESCRIBE on the cluster', async () => {
    const described = await bob.request(DescribeConfigsApi, 4, {
      resources: [
        { resourceType: 2, resourceName: 'secret', configurationKeys: null },
        { resourceType: 4, resourceName: '1', configurationKeys: null },
      ],
      includeSynonyms: false,
      includeDocumentation: false,
    });
    expect(described.results.map((r) => r.errorCode)).toEqual([ErrorCode.TOPIC_AUTHORIZATION_FAILED, ErrorCode.CLUSTER_AUTHORIZATION_FAILED]);
    const altered = await bob.request(IncrementalAlterConfigsApi, 1, {
      resources: [{ resourceType: 2, resourceName: 'secret', configs: [{ name: 'retention.ms', configOperation: 0, value: '1000' }] }],
      validateOnly: false,
    });
    expect(altered.responses[0]!.errorCode).toBe(ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    expect(await broker.query("SELECT 1 FROM topics WHERE name = 'secret' AND configs ? 'retention.ms'")).toHaveLength(0);
    expect((await bob.request(DescribeLogDirsApi, 4, { topics: null })).errorCode).toBe(ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
    await createAcls(allow('User:bob', ResourceType.TOPIC, 'secret', Op.ALTER_CONFIGS));
    const allowed = await bob.request(DescribeConfigsApi, 4, {
      resources: [{ resourceType: 2, resourceName: 'secret', configurationKeys: ['retention.ms'] }],
      includeSynonyms: false,
      includeDocumentation: false,
    });
    expect(allowed.results[0]!.errorCode).toBe(ErrorCode.NONE);
  });
});

describe('several brokers', () => {
  it('enforce ACLs created through another broker sharing the database', async () => {
    const second = await startTestBroker({ schema: broker.schema, listeners: LISTENERS, authorizerEnabled: true, superUsers: 'User:admin', nodeId: 2 });
    try {
      const dave = await (async () => {
        await addUser(broker, 'dave', 'dave-secret');
        return connectAs(second, 'dave', 'dave-secret');
      })();
      expect((await produce(dave, 'orders', 'd')).errorCode).toBe(ErrorCode.TOPIC_AUTHORIZATION_FAILED);
      await createAcls(allow('User:dave', ResourceType.TOPIC, 'orders', Op.WRITE));
      // Authorized, the produce gets as far as the leader check: appended if the second broker leads the partition, else NOT_LEADER_OR_FOLLOWER.
      // The second broker reloads on NOTIFY; poll briefly for it.
      let code: number = ErrorCode.TOPIC_AUTHORIZATION_FAILED;
      for (let i = 0; i < 50 && code === ErrorCode.TOPIC_AUTHORIZATION_FAILED; i++) {
        code = (await produce(dave, 'orders', 'd')).errorCode;
        if (code === ErrorCode.TOPIC_AUTHORIZATION_FAILED) await new Promise((r) => setTimeout(r, 100));
      }
      expect([ErrorCode.NONE, ErrorCode.NOT_LEADER_OR_FOLLOWER]).toContain(code);
      dave.close();
    } finally {
      await second.stop();
    }
  });
});
