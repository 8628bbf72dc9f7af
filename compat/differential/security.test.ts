// Differential: SASL and ACLs. Both brokers have a SASL_PLAINTEXT listener
// (PLAIN and SCRAM-SHA-256) and an authorizer (Kafka: StandardAuthorizer) with
// `admin` as super user; `app` may write and read one topic and read one
// group. The same raw requests compare authentication failures and what the
// connection does after them, then each API refused or filtered for `app`,
// then the ACL APIs themselves.
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { describe, it } from 'vitest';
import {
  ApiVersionsApi,
  CreateAclsApi,
  CreatePartitionsApi,
  CreateTopicsApi,
  DeleteAclsApi,
  DeleteGroupsApi,
  DeleteRecordsApi,
  DeleteTopicsApi,
  DescribeAclsApi,
  DescribeClusterApi,
  DescribeConfigsApi,
  DescribeGroupsApi,
  FetchApi,
  FindCoordinatorApi,
  InitProducerIdApi,
  JoinGroupApi,
  ListGroupsApi,
  ListOffsetsApi,
  MetadataApi,
  OffsetCommitApi,
  OffsetFetchApi,
  ProduceApi,
  SaslAuthenticateApi,
  SaslHandshakeApi,
} from '../../src/protocol/messages/index.js';
import { buildBatch } from '../../src/protocol/records/index.js';
import { AclOperation, AclPermission, PatternType, ResourceType } from '../../src/security/acl.js';
import { saltedPassword } from '../../src/security/scram.js';
import { subscription } from '../../test/support/consumer-protocol.js';
import { RawClient } from '../../test/support/raw-client.js';
import { addUser } from '../../test/support/sasl.js';
import { awaitCoordinator, createTopics, eventually, expectSame, onBoth, usePair, type Pair, type Side } from '../support/differential.js';

const USERS = { admin: 'admin-secret', app: 'app-secret' } as const;
type User = keyof typeof USERS;

const pair = usePair({
  kafka: {
    'auto.create.topics.enable': false,
    'sasl.enabled.mechanisms': 'PLAIN,SCRAM-SHA-256',
    'listener.name.sasl_plaintext.plain.sasl.jaas.config': `org.apache.kafka.common.security.plain.PlainLoginModule required ${Object.entries(USERS)
      .map(([u, p]) => `user_${u}="${p}"`)
      .join(' ')};`,
    'listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config': 'org.apache.kafka.common.security.scram.ScramLoginModule required;',
    'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer',
    // ANONYMOUS: the broker's own PLAINTEXT and controller connections.
    'super.users': 'User:admin;User:ANONYMOUS',
  },
  kafkaStart: {
    listeners: ['SASL_PLAINTEXT'],
    format: Object.entries(USERS).flatMap(([u, p]) => ['--add-scram', `SCRAM-SHA-256=[name=${u},iterations=4096,password=${p}]`]),
  },
  pgkafka: {
    autoCreateTopicsEnable: false,
    listeners: 'PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0',
    saslEnabledMechanisms: 'PLAIN,SCRAM-SHA-256',
    authorizerEnabled: true,
    superUsers: 'User:admin;User:ANONYMOUS',
  },
});

let usersAdded = false;
async function saslAddress(p: Pair, side: Side): Promise<string> {
  if (side === 'kafka') return p.kafka.listeners.SASL_PLAINTEXT!;
  if (!usersAdded) {
    for (const [u, pw] of Object.entries(USERS)) await addUser(p.pgkafka, u, pw);
    usersAdded = true;
  }
  return `127.0.0.1:${p.pgkafka.ports.SASL_PLAINTEXT}`;
}

/** A request's answer, or `closed` when the broker closed the connection instead. */
async function orClosed<T>(send: () => Promise<T>): Promise<T | 'closed'> {
  try {
    return await send();
  } catch (err) {
    if (/connection closed/.test(String(err))) return 'closed';
    throw err;
  }
}

/** The client side of SCRAM-SHA-256 (RFC 5802): both answers of SaslAuthenticate, the server's final message reduced to its kind. */
async function scram(c: RawClient, user: string, password: string) {
  const bare = `n=${user},r=${randomBytes(12).toString('base64')}`;
  const first = await c.request(SaslAuthenticateApi, 2, { authBytes: Buffer.from(`n,,${bare}`) });
  if (first.errorCode !== 0) return { first, final: null };
  const serverFirst = first.authBytes.toString();
  const attrs = Object.fromEntries(serverFirst.split(',').map((p) => [p[0], p.slice(2)]));
  const salted = await saltedPassword('SCRAM-SHA-256', password, Buffer.from(attrs.s!, 'base64'), Number(attrs.i));
  const clientKey = createHmac('sha256', salted).update('Client Key').digest();
  const storedKey = createHash('sha256').update(clientKey).digest();
  const withoutProof = `c=biws,r=${attrs.r}`;
  const signature = createHmac('sha256', storedKey).update(`${bare},${serverFirst},${withoutProof}`).digest();
  const proof = Buffer.from(clientKey.map((b, i) => b ^ signature[i]!));
  const final = await orClosed(() => c.request(SaslAuthenticateApi, 2, { authBytes: Buffer.from(`${withoutProof},p=${proof.toString('base64')}`) }));
  // The nonce and salt are random per exchange: only the shape of the server's messages is compared.
  const shape = (m: { authBytes: Buffer }) => ({ ...m, authBytes: m.authBytes.toString().replace(/=[^,]*/g, '=…') });
  return { first: shape(first), final: final === 'closed' ? final : shape(final) };
}

async function plain(c: RawClient, user: string, password: string) {
  const handshake = await c.request(SaslHandshakeApi, 1, { mechanism: 'PLAIN' });
  const auth = await orClosed(() => c.request(SaslAuthenticateApi, 2, { authBytes: Buffer.from(`\0${user}\0${password}`) }));
  return { handshake, auth };
}

/** A connection to the SASL listener, logged in as `user` with PLAIN. */
async function loginAs(p: Pair, side: Side, user: User): Promise<RawClient> {
  const c = await RawClient.connect(await saslAddress(p, side));
  const { auth } = await plain(c, user, USERS[user]);
  if (auth === 'closed' || auth.errorCode !== 0) throw new Error(`${side}: ${user} could not log in: ${JSON.stringify(auth)}`);
  return c;
}

/** Runs `scenario` on each broker with a way to open connections to its SASL listener. */
function onBothSasl<T>(scenario: (open: () => Promise<RawClient>, login: (user: User) => Promise<RawClient>, side: Side) => Promise<T>) {
  const p = pair();
  return onBoth(p, async (_connect, side) => {
    const opened: RawClient[] = [];
    const keep = (c: RawClient) => (opened.push(c), c);
    try {
      return await scenario(
        async () => keep(await RawClient.connect(await saslAddress(p, side))),
        async (user) => keep(await loginAs(p, side, user)),
        side,
      );
    } finally {
      for (const c of opened) c.close();
    }
  });
}

const versions = (c: RawClient) => c.request(ApiVersionsApi, 3, { clientSoftwareName: 'pgkafka-differential', clientSoftwareVersion: '1' }).then((r) => r.errorCode);
const metadataOf = (c: RawClient, topics: string[] | null) =>
  c.request(MetadataApi, 12, { topics: topics && topics.map((name) => ({ name })), allowAutoTopicCreation: false, includeTopicAuthorizedOperations: true }).then((r) =>
    r.topics
      .filter((t) => !t.name?.startsWith('__'))
      .sort((a, b) => (a.name ?? '').localeCompare(b.name ?? ''))
      .map((t) => ({ name: t.name, errorCode: t.errorCode, partitions: t.partitions.length, topicAuthorizedOperations: t.topicAuthorizedOperations })),
  );

const acl = (
  resourceType: number,
  resourceName: string,
  operation: number,
  principal = 'User:app',
  permissionType: number = AclPermission.ALLOW,
  resourcePatternType: number = PatternType.LITERAL,
) => ({ resourceType, resourceName, resourcePatternType, principal, host: '*', operation, permissionType });

describe('differential: SASL and ACLs', () => {
  it('authentication: wrong passwords, unknown users and mechanisms, requests out of order, and what the connection does after each', async () => {
    const outcome = await onBothSasl(async (open) => {
      const out: Record<string, unknown> = {};
      let c = await open();
      out.plainWrongPassword = await plain(c, 'app', 'wrong');
      out.afterWrongPassword = await orClosed(() => versions(c));
      c = await open();
      out.plainUnknownUser = await plain(c, 'nobody', 'secret');
      out.afterUnknownUser = await orClosed(() => versions(c));
      c = await open();
      out.plainMalformed = await orClosed(() => c.request(SaslHandshakeApi, 1, { mechanism: 'PLAIN' }).then(() => c.request(SaslAuthenticateApi, 2, { authBytes: Buffer.from('no separators') })));
      out.afterMalformed = await orClosed(() => versions(c));
      c = await open();
      out.unsupportedMechanism = await c.request(SaslHandshakeApi, 1, { mechanism: 'GSSAPI' });
      out.afterUnsupportedMechanism = await orClosed(() => versions(c));
      c = await open();
      out.unknownMechanism = await c.request(SaslHandshakeApi, 1, { mechanism: 'NO-SUCH-MECHANISM' });
      c = await open();
      out.scramHandshake = await c.request(SaslHandshakeApi, 1, { mechanism: 'SCRAM-SHA-256' });
      out.scramWrongPassword = await scram(c, 'app', 'wrong');
      out.afterScramWrongPassword = await orClosed(() => versions(c));
      c = await open();
      await c.request(SaslHandshakeApi, 1, { mechanism: 'SCRAM-SHA-256' });
      out.scramUnknownUser = await scram(c, 'nobody', 'secret');
      c = await open();
      await c.request(SaslHandshakeApi, 1, { mechanism: 'SCRAM-SHA-256' });
      out.scramRight = await scram(c, 'app', USERS.app);
      out.afterScram = await orClosed(() => metadataOf(c, ['sec-none']));
      c = await open();
      out.metadataBeforeAuthentication = await orClosed(() => metadataOf(c, null));
      c = await open();
      out.apiVersionsBeforeAuthentication = await orClosed(() => versions(c));
      out.authenticateBeforeHandshake = await orClosed(() => c.request(SaslAuthenticateApi, 2, { authBytes: Buffer.from('\0app\0app-secret') }));
      c = await open();
      out.plainRight = await plain(c, 'app', USERS.app);
      out.handshakeAgain = await orClosed(() => c.request(SaslHandshakeApi, 1, { mechanism: 'PLAIN' }));
      out.afterHandshakeAgain = await orClosed(() => versions(c));
      return out;
    });
    expectSame(outcome);
  });

  it('authorization: what app may not do, per API', async () => {
    const outcome = await onBothSasl(async (_open, login) => {
      const admin = await login('admin');
      await createTopics(admin, [
        { name: 'sec-allowed', numPartitions: 1 },
        { name: 'sec-secret', numPartitions: 1 },
      ]);
      await awaitCoordinator(admin, ['sec-g', 'sec-g-other']);
      const granted = await admin.request(CreateAclsApi, 3, {
        creations: [acl(ResourceType.TOPIC, 'sec-allowed', AclOperation.WRITE), acl(ResourceType.TOPIC, 'sec-allowed', AclOperation.READ), acl(ResourceType.GROUP, 'sec-g', AclOperation.READ)],
      });
      // Kafka's brokers apply ACLs from the metadata log: wait until app is allowed.
      const app = await login('app');
      await eventually(
        () => metadataOf(app, ['sec-allowed']),
        (m) => m[0]!.errorCode === 0,
      );
      const nodeId = (await admin.request(MetadataApi, 12, { topics: [], allowAutoTopicCreation: false })).brokers[0]!.nodeId;
      // Kafka answers the topics of one request in the order of a hash map: each list is compared by name.
      const produce = (name: string) =>
        app
          .request(ProduceApi, 11, {
            acks: -1,
            timeoutMs: 10_000,
            topicData: [{ name, partitionData: [{ index: 0, records: buildBatch({ baseTimestamp: 1_700_000_000_000n, records: [{ key: null, value: Buffer.from('v') }] }) }] }],
          })
          .then((r) => r.responses.map((t) => ({ name: t.name, partitions: t.partitionResponses.map((p) => ({ errorCode: p.errorCode, baseOffset: p.baseOffset })) })));
      const fetch = (topic: string) =>
        app
          .request(FetchApi, 12, {
            replicaId: -1,
            maxWaitMs: 0,
            minBytes: 1,
            maxBytes: 1 << 20,
            isolationLevel: 0,
            sessionId: 0,
            sessionEpoch: -1,
            topics: [{ topic, partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1 }] }],
          })
          .then((r) => ({
            errorCode: r.errorCode,
            responses: r.responses.map((t) => ({
              topic: t.topic,
              partitions: t.partitions.map((p) => ({ errorCode: p.errorCode, highWatermark: p.highWatermark, records: p.records ? 'records' : null })),
            })),
          }));
      const join = (groupId: string) =>
        app
          .request(JoinGroupApi, 7, {
            groupId,
            sessionTimeoutMs: 10_000,
            rebalanceTimeoutMs: 10_000,
            memberId: '',
            groupInstanceId: null,
            protocolType: 'consumer',
            protocols: [{ name: 'range', metadata: subscription(['sec-allowed']) }],
          })
          .then((r) => r.errorCode);
      const commit = (groupId: string, topic: string) =>
        app.request(OffsetCommitApi, 8, {
          groupId,
          generationIdOrMemberEpoch: -1,
          memberId: '',
          groupInstanceId: null,
          topics: [{ name: topic, partitions: [{ partitionIndex: 0, committedOffset: 1n, committedLeaderEpoch: -1, committedMetadata: null }] }],
        });
      return {
        granted,
        metadataAll: await metadataOf(app, null),
        metadataNamed: await metadataOf(app, ['sec-allowed', 'sec-secret', 'sec-none']),
        produce: { allowed: await produce('sec-allowed'), secret: await produce('sec-secret'), unknown: await produce('sec-none') },
        fetch: { allowed: await fetch('sec-allowed'), secret: await fetch('sec-secret'), unknown: await fetch('sec-none') },
        listOffsets: await app
          .request(ListOffsetsApi, 7, {
            replicaId: -1,
            isolationLevel: 0,
            topics: ['sec-allowed', 'sec-secret'].map((name) => ({ name, partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n }] })),
          })
          .then((r) => r.topics.sort((a, b) => (a.name ?? '').localeCompare(b.name ?? ''))),
        createTopics: await app
          .request(CreateTopicsApi, 7, {
            topics: [
              { name: 'sec-new', numPartitions: 1, replicationFactor: 1, configs: [] },
              { name: 'sec-allowed', numPartitions: 1, replicationFactor: 1, configs: [] },
            ],
            timeoutMs: 10_000,
          })
          .then((r) => r.topics.map((t) => ({ name: t.name, errorCode: t.errorCode, errorMessage: t.errorMessage })).sort((a, b) => (a.name ?? '').localeCompare(b.name ?? ''))),
        createPartitions: await app
          .request(CreatePartitionsApi, 3, {
            topics: [
              { name: 'sec-allowed', count: 2, assignments: null },
              { name: 'sec-none', count: 2, assignments: null },
            ],
            timeoutMs: 10_000,
            validateOnly: true,
          })
          .then((r) => r.results.sort((a, b) => (a.name ?? '').localeCompare(b.name ?? ''))),
        deleteRecords: await app
          .request(DeleteRecordsApi, 2, { topics: [{ name: 'sec-allowed', partitions: [{ partitionIndex: 0, offset: 0n }] }], timeoutMs: 10_000 })
          .then((r) => r.topics.sort((a, b) => (a.name ?? '').localeCompare(b.name ?? ''))),
        deleteTopics: await app
          .request(DeleteTopicsApi, 6, { topics: ['sec-allowed', 'sec-none'].map((name) => ({ name, topicId: '00000000-0000-0000-0000-000000000000' })), timeoutMs: 10_000 })
          .then((r) => r.responses.sort((a, b) => (a.name ?? '').localeCompare(b.name ?? ''))),
        describeConfigs: await app
          .request(DescribeConfigsApi, 4, {
            resources: [
              { resourceType: 2, resourceName: 'sec-allowed', configurationKeys: ['retention.ms'] },
              { resourceType: 4, resourceName: String(nodeId), configurationKeys: ['log.retention.hours'] },
            ],
            includeSynonyms: false,
            includeDocumentation: false,
          })
          .then((r) => r.results.map((x) => ({ errorCode: x.errorCode, errorMessage: x.errorMessage, resourceType: x.resourceType, configs: x.configs.length }))),
        describeCluster: await app
          .request(DescribeClusterApi, 1, { includeClusterAuthorizedOperations: true, endpointType: 1 })
          .then((r) => ({ errorCode: r.errorCode, clusterAuthorizedOperations: r.clusterAuthorizedOperations })),
        findCoordinator: await app
          .request(FindCoordinatorApi, 4, { keyType: 0, coordinatorKeys: ['sec-g', 'sec-g-other'] })
          .then((r) => r.coordinators.map((k) => ({ key: k.key, errorCode: k.errorCode }))),
        findTxnCoordinator: await app.request(FindCoordinatorApi, 4, { keyType: 1, coordinatorKeys: ['sec-tx'] }).then((r) => r.coordinators.map((k) => ({ key: k.key, errorCode: k.errorCode }))),
        joinOther: await join('sec-g-other'),
        commitAllowed: await commit('sec-g', 'sec-allowed'),
        commitSecretTopic: await commit('sec-g', 'sec-secret'),
        commitOtherGroup: await commit('sec-g-other', 'sec-allowed'),
        offsetFetchAll: await app.request(OffsetFetchApi, 7, { groupId: 'sec-g', topics: null, requireStable: false }),
        offsetFetchNamed: await app.request(OffsetFetchApi, 7, {
          groupId: 'sec-g',
          topics: [
            { name: 'sec-allowed', partitionIndexes: [0] },
            { name: 'sec-secret', partitionIndexes: [0] },
          ],
          requireStable: false,
        }),
        offsetFetchOther: await app.request(OffsetFetchApi, 7, { groupId: 'sec-g-other', topics: null, requireStable: false }).then((r) => r.errorCode),
        describeGroups: await app
          .request(DescribeGroupsApi, 5, { groups: ['sec-g', 'sec-g-other'], includeAuthorizedOperations: true })
          .then((r) =>
            r.groups
              .sort((a, b) => a.groupId.localeCompare(b.groupId))
              .map((g) => ({ groupId: g.groupId, errorCode: g.errorCode, groupState: g.groupState, authorizedOperations: g.authorizedOperations })),
          ),
        listGroups: await app.request(ListGroupsApi, 4, { statesFilter: [] }).then((r) => ({ errorCode: r.errorCode, groups: r.groups.map((g) => g.groupId).sort() })),
        deleteGroups: await app.request(DeleteGroupsApi, 2, { groupsNames: ['sec-g', 'sec-g-other'] }).then((r) => r.results.sort((a, b) => a.groupId.localeCompare(b.groupId))),
        // Kafka answers COORDINATOR_NOT_AVAILABLE until its first block of producer ids arrives: retried, as clients do.
        idempotentProducer: await eventually(
          () => app.request(InitProducerIdApi, 4, { transactionalId: null, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 }).then((r) => r.errorCode),
          (code) => code !== 14,
        ),
        transactionalProducer: await app.request(InitProducerIdApi, 4, { transactionalId: 'sec-tx', transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 }).then((r) => r.errorCode),
        describeAclsByApp: await app.request(DescribeAclsApi, 3, {
          resourceTypeFilter: ResourceType.ANY,
          resourceNameFilter: null,
          patternTypeFilter: PatternType.ANY,
          principalFilter: null,
          hostFilter: null,
          operation: AclOperation.ANY,
          permissionType: AclPermission.ANY,
        }),
        createAclsByApp: await app.request(CreateAclsApi, 3, { creations: [acl(ResourceType.TOPIC, 'sec-secret', AclOperation.READ)] }),
        deleteAclsByApp: await app.request(DeleteAclsApi, 3, {
          filters: [
            {
              resourceTypeFilter: ResourceType.ANY,
              resourceNameFilter: null,
              patternTypeFilter: PatternType.ANY,
              principalFilter: null,
              hostFilter: null,
              operation: AclOperation.ANY,
              permissionType: AclPermission.ANY,
            },
          ],
        }),
      };
    });
    expectSame(outcome);
  });

  it('CreateAcls, DescribeAcls and DeleteAcls: valid and invalid bindings, filters, patterns', async () => {
    const outcome = await onBothSasl(async (_open, login) => {
      const admin = await login('admin');
      const describeAll = (filter: Partial<{ resourceTypeFilter: number; resourceNameFilter: string | null; patternTypeFilter: number; principalFilter: string | null; operation: number }> = {}) =>
        admin
          .request(DescribeAclsApi, 3, {
            resourceTypeFilter: ResourceType.ANY,
            resourceNameFilter: null,
            patternTypeFilter: PatternType.ANY,
            principalFilter: null,
            hostFilter: null,
            operation: AclOperation.ANY,
            permissionType: AclPermission.ANY,
            ...filter,
          })
          .then((r) => ({
            errorCode: r.errorCode,
            errorMessage: r.errorMessage,
            resources: r.resources
              .filter((x) => x.resourceName.startsWith('acl-'))
              .sort((a, b) => `${a.resourceType}${a.resourceName}${a.patternType}`.localeCompare(`${b.resourceType}${b.resourceName}${b.patternType}`))
              .map((x) => ({ ...x, acls: x.acls.sort((a, b) => `${a.principal}${a.operation}${a.permissionType}`.localeCompare(`${b.principal}${b.operation}${b.permissionType}`)) })),
          }));
      const create = (creations: ReturnType<typeof acl>[]) => admin.request(CreateAclsApi, 3, { creations });
      const created = await create([
        acl(ResourceType.TOPIC, 'acl-orders', AclOperation.READ),
        acl(ResourceType.TOPIC, 'acl-orders', AclOperation.WRITE, 'User:app', AclPermission.DENY),
        acl(ResourceType.TOPIC, 'acl-', AclOperation.DESCRIBE, 'User:*', AclPermission.ALLOW, PatternType.PREFIXED),
        acl(ResourceType.GROUP, 'acl-group', AclOperation.ALL),
        acl(ResourceType.TRANSACTIONAL_ID, 'acl-tx', AclOperation.WRITE),
        acl(ResourceType.CLUSTER, 'kafka-cluster', AclOperation.IDEMPOTENT_WRITE),
        acl(ResourceType.TOPIC, 'acl-cluster-op', AclOperation.IDEMPOTENT_WRITE),
        // Refused one by one.
        acl(ResourceType.TOPIC, 'acl-bad-principal', AclOperation.READ, 'app'),
        acl(ResourceType.CLUSTER, 'other-cluster', AclOperation.ALTER),
        acl(ResourceType.TOPIC, '', AclOperation.READ),
      ]);
      // A filter-only value (ANY, MATCH) in one binding fails the whole request.
      const valid = acl(ResourceType.TOPIC, 'acl-never', AclOperation.READ);
      const wholeRequest = {
        anyOperation: await create([valid, acl(ResourceType.TOPIC, 'acl-bad', AclOperation.ANY)]),
        anyResourceType: await create([valid, acl(ResourceType.ANY, 'acl-bad', AclOperation.READ)]),
        matchPattern: await create([valid, acl(ResourceType.TOPIC, 'acl-bad', AclOperation.READ, 'User:app', AclPermission.ALLOW, PatternType.MATCH)]),
        anyPermission: await create([valid, acl(ResourceType.TOPIC, 'acl-bad', AclOperation.READ, 'User:app', AclPermission.ANY)]),
        unknownOperation: await orClosed(async () => (await login('admin')).request(CreateAclsApi, 3, { creations: [valid, acl(ResourceType.TOPIC, 'acl-bad', AclOperation.UNKNOWN)] })),
      };
      const all = await eventually(
        () => describeAll(),
        (r) => r.resources.length >= 4,
      );
      return {
        created,
        wholeRequest,
        all,
        topicsOnly: await describeAll({ resourceTypeFilter: ResourceType.TOPIC }),
        literalName: await describeAll({ resourceTypeFilter: ResourceType.TOPIC, resourceNameFilter: 'acl-orders', patternTypeFilter: PatternType.LITERAL }),
        matching: await describeAll({ resourceTypeFilter: ResourceType.TOPIC, resourceNameFilter: 'acl-orders', patternTypeFilter: PatternType.MATCH }),
        byPrincipal: await describeAll({ principalFilter: 'User:*' }),
        byOperation: await describeAll({ operation: AclOperation.WRITE }),
        invalidFilter: await orClosed(async () =>
          (await login('admin')).request(DescribeAclsApi, 3, {
            resourceTypeFilter: ResourceType.UNKNOWN,
            resourceNameFilter: null,
            patternTypeFilter: PatternType.ANY,
            principalFilter: null,
            hostFilter: null,
            operation: AclOperation.ANY,
            permissionType: AclPermission.ANY,
          }),
        ).then((r) => (r === 'closed' ? r : { errorCode: r.errorCode, errorMessage: r.errorMessage, resources: r.resources })),
        deleted: await admin.request(DeleteAclsApi, 3, {
          filters: [
            {
              resourceTypeFilter: ResourceType.TOPIC,
              resourceNameFilter: 'acl-orders',
              patternTypeFilter: PatternType.LITERAL,
              principalFilter: null,
              hostFilter: null,
              operation: AclOperation.ANY,
              permissionType: AclPermission.DENY,
            },
            {
              resourceTypeFilter: ResourceType.TOPIC,
              resourceNameFilter: 'acl-nothing',
              patternTypeFilter: PatternType.LITERAL,
              principalFilter: null,
              hostFilter: null,
              operation: AclOperation.ANY,
              permissionType: AclPermission.ANY,
            },
            {
              resourceTypeFilter: ResourceType.TOPIC,
              resourceNameFilter: 'acl-',
              patternTypeFilter: PatternType.PREFIXED,
              principalFilter: 'User:*',
              hostFilter: null,
              operation: AclOperation.ANY,
              permissionType: AclPermission.ANY,
            },
          ],
        }),
        deleteInvalidFilter: await orClosed(async () =>
          (await login('admin')).request(DeleteAclsApi, 3, {
            filters: [
              {
                resourceTypeFilter: ResourceType.UNKNOWN,
                resourceNameFilter: null,
                patternTypeFilter: PatternType.ANY,
                principalFilter: null,
                hostFilter: null,
                operation: AclOperation.ANY,
                permissionType: AclPermission.ANY,
              },
            ],
          }),
        ),
        afterDelete: await eventually(
          () => describeAll({ resourceTypeFilter: ResourceType.TOPIC, resourceNameFilter: 'acl-orders' }),
          (r) => r.resources.every((x) => x.acls.every((a) => a.permissionType !== AclPermission.DENY)),
        ),
      };
    });
    expectSame(outcome);
  });
});
