// Differential: every Admin call of Apache Kafka's Java client (kafka-clients
// 4.4.0, compat/java/client), run as one sequence in one JVM against a real
// Apache Kafka and against pgkafka, and compared at client level: what each
// call returned or threw (the exception's class; its words are allowed to
// differ, as every allowed difference in support/differential.ts). Both
// brokers run an authorizer (the ACL calls need one) with the PLAINTEXT
// listener's ANONYMOUS principal as super user.
import { describe, it } from 'vitest';
import { runJavaClient, type JavaOp } from '../support/java.js';
import { expectSame, normaliseAnswer, usePair, type Pair, type Side } from '../support/differential.js';

const pair = usePair({
  kafka: {
    'auto.create.topics.enable': false,
    'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer',
    'super.users': 'User:ANONYMOUS',
  },
  pgkafka: { autoCreateTopicsEnable: false, authorizerEnabled: true, superUsers: 'User:ANONYMOUS' },
});

// A minute ago, in whole seconds, the same for both runs: records far older than the topic's
// retention.ms would be deleted by Kafka's first retention check (30 s after it starts) mid-run.
const T0 = Math.floor(Date.now() / 1000) * 1000 - 60_000;
const b64 = (s: string) => Buffer.from(s).toString('base64');
const records = (n: number, partition: number, from = 0) =>
  Array.from({ length: n }, (_, i) => ({ partition, key: b64(`k${i}`), value: b64(`v${partition}-${i}`), headers: [['h', b64('x')]], timestamp: T0 + (from + i) * 1000 }));

/** Kafka 4.3's features pgkafka does not finalize: KIP-848 consumer groups (issue 17), share and streams groups, KRaft and eligible leader replicas. */
const UNSERVED_FEATURES = ['group.version', 'share.version', 'streams.version', 'kraft.version', 'eligible.leader.replicas.version'];

/** Runs the same operations against each broker, one JVM each, and returns both answers (normalised by expectSame's rules). */
async function onBothJava(p: Pair, ops: JavaOp[]): Promise<Record<Side, unknown>> {
  const out: Partial<Record<Side, unknown>> = {};
  for (const side of ['kafka', 'pgkafka'] as const) {
    const res = await runJavaClient(p.bootstrap(side), ops, { 'request.timeout.ms': 15_000, 'default.api.timeout.ms': 30_000 }, 180_000);
    // describeCluster's node ids are named "id" in the runner's answer.
    if (res.cluster?.nodes) res.cluster.nodes = res.cluster.nodes.map((n: Record<string, unknown>) => ({ ...n, id: typeof n.id }));
    // An ACL's host is no node's address: kept out of the identity fields.
    for (const key of ['describeAcls', 'describeAclsFiltered', 'deleteAcls', 'describeAclsAfter']) {
      if (Array.isArray(res[key])) res[key] = res[key].map(({ host, ...acl }: Record<string, unknown>) => ({ ...acl, aclHost: host }));
    }
    if (side === 'kafka') {
      // pgkafka has no __transaction_state: transactions live in PostgreSQL tables; __consumer_offsets is served
      // from the committed offsets, listed once an offset was committed, as here (FINDINGS: "The internal topics").
      res.listTopicsWithInternal = res.listTopicsWithInternal?.filter?.((t: string) => !t.startsWith('__') || t === '__consumer_offsets');
    }
    if (side === 'kafka' && res.features?.finalized) {
      // Features naming protocols pgkafka does not serve (FINDINGS: "describeFeatures"); metadata.version is compared.
      for (const kind of ['finalized', 'supported'] as const) {
        res.features[kind] = Object.fromEntries(Object.entries(res.features[kind] as Record<string, unknown>).filter(([name]) => !UNSERVED_FEATURES.includes(name)));
      }
    }
    // Byte counts are where the bytes are, which differs (FINDINGS: "Where a partition's bytes are"): Kafka
    // keeps a segment's bytes after DeleteRecords passed it, PostgreSQL tells no client its disk's free space.
    for (const dir of res.logDirs ?? []) {
      delete dir.hasUsableBytes;
      for (const replica of Object.values(dir.partitions ?? {}) as Record<string, unknown>[]) delete replica.hasSize;
    }
    out[side] = normaliseAnswer(res);
  }
  return out as Record<Side, unknown>;
}

const TOPIC_KEYS = ['retention.ms', 'cleanup.policy', 'segment.bytes', 'max.message.bytes', 'min.insync.replicas'];
const BROKER_KEYS = ['log.retention.ms', 'log.retention.hours', 'num.partitions', 'auto.create.topics.enable', 'log.cleanup.policy', 'message.max.bytes'];

describe('differential: the Java Admin client', () => {
  it('topics, configs, records, offsets, groups, ACLs, SCRAM users, cluster, features, log dirs, producers, transactions, quotas, elections and reassignments', async () => {
    const ops: JavaOp[] = [
      // Topics
      {
        id: 'createTopics',
        op: 'createTopics',
        topics: [
          { name: 'ja-a', partitions: 3, configs: { 'retention.ms': '3600000', 'cleanup.policy': 'delete' } },
          { name: 'ja-b', partitions: 1 },
          { name: 'ja-doomed', partitions: 2 },
          { name: 'ja-bad-name', partitions: 1, configs: { 'no.such.config': '1' } },
          { name: 'ja-bad-value', partitions: 1, configs: { 'retention.ms': 'soon' } },
          { name: 'ja-bad-policy', partitions: 1, configs: { 'cleanup.policy': 'shred' } },
        ],
      },
      { id: 'createDuplicate', op: 'createTopics', topics: [{ name: 'ja-a', partitions: 1 }] },
      {
        id: 'createValidateOnly',
        op: 'createTopics',
        validateOnly: true,
        topics: [
          { name: 'ja-validated', partitions: 2 },
          { name: 'ja-a', partitions: 1 },
        ],
      },
      { id: 'describeTopics', op: 'describeTopics', topics: ['ja-a', 'ja-b', 'ja-missing'] },
      { id: 'createPartitions', op: 'createPartitions', topic: 'ja-b', total: 3 },
      { id: 'createPartitionsShrink', op: 'createPartitions', topic: 'ja-b', total: 2 },
      { id: 'createPartitionsSame', op: 'createPartitions', topic: 'ja-b', total: 3 },
      { id: 'createPartitionsUnknown', op: 'createPartitions', topic: 'ja-missing', total: 3 },
      // Before the deletion: Kafka's broker learns of a deletion from its metadata log, a moment later.
      { id: 'listTopics', op: 'listTopics' },
      { id: 'deleteTopics', op: 'deleteTopics', topics: ['ja-doomed', 'ja-missing'] },
      // Configs: topics and brokers, sources, synonyms, validation errors
      { id: 'topicConfigs', op: 'describeConfigsWithSynonyms', topic: 'ja-a', names: TOPIC_KEYS },
      {
        id: 'alterTopicSet',
        op: 'incrementalAlterConfigs',
        topic: 'ja-a',
        ops: [
          { name: 'segment.bytes', type: 'SET', value: '1048576' },
          { name: 'retention.ms', type: 'DELETE' },
        ],
      },
      { id: 'alterTopicAppend', op: 'incrementalAlterConfigs', topic: 'ja-a', ops: [{ name: 'cleanup.policy', type: 'APPEND', value: 'compact' }] },
      { id: 'alterTopicSubtract', op: 'incrementalAlterConfigs', topic: 'ja-a', ops: [{ name: 'cleanup.policy', type: 'SUBTRACT', value: 'compact' }] },
      { id: 'alterTopicBadValue', op: 'incrementalAlterConfigs', topic: 'ja-a', ops: [{ name: 'retention.ms', type: 'SET', value: 'soon' }] },
      { id: 'alterTopicUnknownName', op: 'incrementalAlterConfigs', topic: 'ja-a', ops: [{ name: 'no.such.config', type: 'SET', value: '1' }] },
      { id: 'alterTopicUnknownTopic', op: 'incrementalAlterConfigs', topic: 'ja-missing', ops: [{ name: 'retention.ms', type: 'SET', value: '1' }] },
      // A Kafka broker shows an altered topic config once the metadata log reaches its cache: read until it has.
      { id: 'topicConfigsAfter', op: 'describeConfigsWithSynonyms', topic: 'ja-a', names: TOPIC_KEYS, until: { 'segment.bytes': '1048576', 'cleanup.policy': 'delete' } },
      { id: 'topicConfigsUnknown', op: 'describeConfigsWithSynonyms', topic: 'ja-missing', names: TOPIC_KEYS },
      { id: 'brokerConfigs', op: 'describeConfigsWithSynonyms', broker: true, names: BROKER_KEYS },
      { id: 'alterBrokerDynamic', op: 'incrementalAlterBrokerConfigs', broker: true, ops: [{ name: 'log.retention.ms', type: 'SET', value: '7200000' }] },
      { id: 'alterClusterDefault', op: 'incrementalAlterBrokerConfigs', broker: '', ops: [{ name: 'log.cleanup.policy', type: 'SET', value: 'compact' }] },
      { id: 'alterBrokerReadOnly', op: 'incrementalAlterBrokerConfigs', broker: true, ops: [{ name: 'num.partitions', type: 'SET', value: '3' }] },
      { id: 'alterBrokerValidateOnly', op: 'incrementalAlterBrokerConfigs', broker: true, validateOnly: true, ops: [{ name: 'log.retention.ms', type: 'SET', value: '1000' }] },
      { id: 'brokerConfigsAfter', op: 'describeConfigsWithSynonyms', broker: true, names: BROKER_KEYS, until: { 'log.cleanup.policy': 'compact', 'log.retention.ms': '7200000' } },
      { id: 'clusterDefaultConfigs', op: 'describeConfigsWithSynonyms', broker: '', names: BROKER_KEYS },
      { id: 'alterBrokerReset', op: 'incrementalAlterBrokerConfigs', broker: true, ops: [{ name: 'log.retention.ms', type: 'DELETE' }] },
      { id: 'alterClusterReset', op: 'incrementalAlterBrokerConfigs', broker: '', ops: [{ name: 'log.cleanup.policy', type: 'DELETE' }] },
      // Records and offsets (the producer's defaults: idempotent, acks=all)
      { id: 'produce', op: 'produce', topic: 'ja-a', records: [...records(5, 0), ...records(3, 1, 10)] },
      {
        id: 'listOffsets',
        op: 'listOffsets',
        topic: 'ja-a',
        partitions: [0, 1, 2],
        specs: { earliest: 'earliest', latest: 'latest', max: 'maxTimestamp', past: '0', middle: String(T0 + 2500), later: String(T0 + 11_000), future: String(T0 + 60_000) },
      },
      { id: 'describeProducers', op: 'describeProducers', topic: 'ja-a', partitions: [0, 1, 2] },
      { id: 'deleteRecords', op: 'deleteRecords', topic: 'ja-a', offsets: { 0: 2, 1: 3, 2: 0 } },
      { id: 'deleteRecordsBeyond', op: 'deleteRecords', topic: 'ja-a', offsets: { 0: 9 } },
      { id: 'listOffsetsAfterDelete', op: 'listOffsets', topic: 'ja-a', partitions: [0, 1, 2], specs: { earliest: 'earliest', latest: 'latest', past: '0' } },
      // Consumer groups (classic): a static member joins, commits and stays a member after close
      { id: 'staticJoin', op: 'staticJoin', topic: 'ja-a', group: 'ja-group', instance: 'ja-instance', expect: 3 },
      { id: 'listConsumerGroups', op: 'listConsumerGroups' },
      { id: 'listGroups', op: 'listGroups' },
      { id: 'describeGroups', op: 'describeConsumerGroups', groups: ['ja-group', 'ja-no-group'] },
      { id: 'listGroupOffsets', op: 'listConsumerGroupOffsets', group: 'ja-group' },
      { id: 'alterOffsetsWithMember', op: 'alterConsumerGroupOffsets', group: 'ja-group', topic: 'ja-a', offsets: { 0: 1 } },
      { id: 'deleteOffsetsWithMember', op: 'deleteConsumerGroupOffsets', group: 'ja-group', topic: 'ja-a', partitions: [0] },
      { id: 'deleteGroupWithMember', op: 'deleteConsumerGroups', groups: ['ja-group'] },
      { id: 'removeUnknownMember', op: 'removeMembersFromConsumerGroup', group: 'ja-group', instances: ['ja-nobody'] },
      { id: 'removeMember', op: 'removeMembersFromConsumerGroup', group: 'ja-group', instances: ['ja-instance'] },
      { id: 'removeAllFromEmpty', op: 'removeMembersFromConsumerGroup', group: 'ja-group' },
      { id: 'describeGroupEmpty', op: 'describeConsumerGroups', groups: ['ja-group'] },
      { id: 'alterOffsets', op: 'alterConsumerGroupOffsets', group: 'ja-group', topic: 'ja-a', offsets: { 0: 4, 2: 0 } },
      { id: 'alterOffsetsUnknownPartition', op: 'alterConsumerGroupOffsets', group: 'ja-group', topic: 'ja-a', offsets: { 9: 0 } },
      { id: 'alterOffsetsNewGroup', op: 'alterConsumerGroupOffsets', group: 'ja-group-2', topic: 'ja-a', offsets: { 1: 3 } },
      { id: 'deleteOffsets', op: 'deleteConsumerGroupOffsets', group: 'ja-group', topic: 'ja-a', partitions: [0] },
      { id: 'deleteOffsetsUnknownGroup', op: 'deleteConsumerGroupOffsets', group: 'ja-no-group', topic: 'ja-a', partitions: [0] },
      { id: 'listGroupOffsetsAfter', op: 'listConsumerGroupOffsets', group: 'ja-group' },
      { id: 'deleteGroups', op: 'deleteConsumerGroups', groups: ['ja-group', 'ja-no-group'] },
      { id: 'listGroupsAfter', op: 'listGroups' },
      { id: 'listTopicsWithInternal', op: 'listTopicsWithInternal' },
      { id: 'authorizedOperations', op: 'authorizedOperations', topics: ['ja-a'], groups: ['ja-group-2'] },
      // ACLs
      {
        id: 'createAcls',
        op: 'createAcls',
        acls: [
          { resourceType: 'TOPIC', name: 'ja-a', principal: 'User:app', operation: 'READ' },
          { resourceType: 'TOPIC', name: 'ja-', patternType: 'PREFIXED', principal: 'User:app', operation: 'WRITE' },
          { resourceType: 'GROUP', name: 'ja-group', principal: 'User:app', operation: 'READ', permission: 'DENY', host: '10.0.0.1' },
          { resourceType: 'CLUSTER', name: 'kafka-cluster', principal: 'User:ops', operation: 'DESCRIBE_CONFIGS' },
        ],
      },
      { id: 'createAclBadCluster', op: 'createAcls', acls: [{ resourceType: 'CLUSTER', name: 'not-the-cluster', principal: 'User:ops', operation: 'ALTER' }] },
      { id: 'createAclBadPrincipal', op: 'createAcls', acls: [{ resourceType: 'TOPIC', name: 'ja-a', principal: 'app', operation: 'READ' }] },
      { id: 'describeAcls', op: 'describeAcls' },
      { id: 'describeAclsFiltered', op: 'describeAcls', filter: { resourceType: 'TOPIC', name: 'ja-a', patternType: 'MATCH' } },
      {
        id: 'deleteAcls',
        op: 'deleteAcls',
        filters: [
          { resourceType: 'TOPIC', principal: 'User:app' },
          { resourceType: 'GROUP', name: 'ja-none' },
        ],
      },
      { id: 'describeAclsAfter', op: 'describeAcls' },
      // SCRAM users
      {
        id: 'alterScram',
        op: 'alterUserScramCredentials',
        upserts: [
          { user: 'ja-alice', mechanism: 'SCRAM-SHA-256', iterations: 8192, password: 'alice-secret' },
          { user: 'ja-bob', mechanism: 'SCRAM-SHA-256', iterations: 1000, password: 'bob-secret' },
        ],
        deletions: [{ user: 'ja-carol', mechanism: 'SCRAM-SHA-256' }],
      },
      { id: 'alterScramSecond', op: 'alterUserScramCredentials', upserts: [{ user: 'ja-alice', mechanism: 'SCRAM-SHA-512', iterations: 4096, password: 'alice-secret' }] },
      {
        id: 'alterScramTwiceInOne',
        op: 'alterUserScramCredentials',
        upserts: [{ user: 'ja-dave', mechanism: 'SCRAM-SHA-256', iterations: 4096, password: 'dave-secret' }],
        deletions: [{ user: 'ja-dave', mechanism: 'SCRAM-SHA-512' }],
      },
      { id: 'describeScramAll', op: 'describeUserScramCredentials' },
      { id: 'describeScram', op: 'describeUserScramCredentials', users: ['ja-alice', 'ja-nobody'] },
      { id: 'deleteScram', op: 'alterUserScramCredentials', deletions: [{ user: 'ja-alice', mechanism: 'SCRAM-SHA-512' }] },
      { id: 'describeScramAfter', op: 'describeUserScramCredentials', users: ['ja-alice'] },
      // Cluster, features, log dirs
      { id: 'cluster', op: 'describeCluster' },
      { id: 'features', op: 'describeFeatures' },
      { id: 'logDirs', op: 'describeLogDirs', topics: ['ja-a', 'ja-b'] },
      { id: 'replicaLogDirs', op: 'describeReplicaLogDirs', topic: 'ja-a', partitions: [0, 7] },
      // Transactions: one left open, then fenced
      { id: 'openTransaction', op: 'openTransaction', transactionalId: 'ja-txn', topic: 'ja-b', records: records(2, 0) },
      { id: 'listTransactions', op: 'listTransactions' },
      { id: 'describeTransactions', op: 'describeTransactionsEach', ids: ['ja-txn', 'ja-no-txn'] },
      { id: 'offsetsInTransaction', op: 'listOffsets', topic: 'ja-b', partitions: [0], specs: { latest: 'latest' } },
      { id: 'committedOffsetsInTransaction', op: 'listOffsets', topic: 'ja-b', partitions: [0], isolation: 'read_committed', specs: { latest: 'latest', earliest: 'earliest' } },
      { id: 'producersInTransaction', op: 'describeProducers', topic: 'ja-b', partitions: [0] },
      { id: 'fenceProducers', op: 'fenceProducers', ids: ['ja-txn'] },
      { id: 'describeFenced', op: 'describeTransactionsEach', ids: ['ja-txn'], settled: true },
      { id: 'fenceUnknown', op: 'fenceProducers', ids: ['ja-no-txn'] },
      // Quotas, elections, reassignments
      { id: 'describeQuotas', op: 'describeClientQuotas' },
      { id: 'electPreferred', op: 'electLeaders', type: 'PREFERRED', topic: 'ja-a', partitions: [0, 1, 9] },
      { id: 'electUnclean', op: 'electLeaders', type: 'UNCLEAN', topic: 'ja-a', partitions: [0] },
      { id: 'listReassignments', op: 'listPartitionReassignments' },
      { id: 'listReassignmentsOf', op: 'listPartitionReassignments', topic: 'ja-a', partitions: [0, 9] },
      { id: 'cancelReassignments', op: 'alterPartitionReassignments', topic: 'ja-a', partitions: [0] },
    ];
    expectSame(await onBothJava(pair(), ops));
  }, 240_000);
});
