// Differential: the admin APIs the Java Admin client calls that admin.test.ts
// and configs.test.ts do not — DescribeCluster, DescribeLogDirs, ElectLeaders,
// partition reassignments, DeleteGroups, OffsetDelete, DescribeClientQuotas,
// SCRAM credentials, DescribeProducers, ListTransactions and
// DescribeTransactions — sent as the same raw requests to a real Apache Kafka
// and to pgkafka.
import { createHash, randomBytes } from 'node:crypto';
import { describe, it } from 'vitest';
import {
  AddPartitionsToTxnApi,
  AlterPartitionReassignmentsApi,
  AlterUserScramCredentialsApi,
  DeleteGroupsApi,
  DescribeClientQuotasApi,
  DescribeClusterApi,
  DescribeLogDirsApi,
  DescribeProducersApi,
  DescribeTransactionsApi,
  DescribeUserScramCredentialsApi,
  ElectLeadersApi,
  EndTxnApi,
  InitProducerIdApi,
  JoinGroupApi,
  ListPartitionReassignmentsApi,
  ListTransactionsApi,
  MetadataApi,
  OffsetCommitApi,
  OffsetDeleteApi,
  ProduceApi,
  SyncGroupApi,
} from '../../src/protocol/messages/index.js';
import { buildBatch } from '../../src/protocol/records/index.js';
import { subscription } from '../../test/support/consumer-protocol.js';
import type { RawClient } from '../../test/support/raw-client.js';
import { awaitCoordinator, createTopics, eventually, expectSame, onBoth, usePair } from '../support/differential.js';

const pair = usePair({ kafka: { 'auto.create.topics.enable': false }, pgkafka: { autoCreateTopicsEnable: false } });
const T0 = 1_700_000_000_000n;

const nodeIdOf = async (c: RawClient) => (await c.request(MetadataApi, 12, { topics: [], allowAutoTopicCreation: false })).brokers[0]!.nodeId;

const produce = (c: RawClient, topic: string, partition: number, values: string[], producer?: { producerId: bigint; producerEpoch: number; baseSequence: number; transactionalId: string | null }) =>
  c
    .request(ProduceApi, 11, {
      transactionalId: producer?.transactionalId ?? null,
      acks: -1,
      timeoutMs: 10_000,
      topicData: [
        {
          name: topic,
          partitionData: [
            {
              index: partition,
              records: buildBatch({
                baseTimestamp: T0,
                producerId: producer?.producerId ?? -1n,
                producerEpoch: producer?.producerEpoch ?? -1,
                baseSequence: producer?.baseSequence ?? -1,
                isTransactional: producer?.transactionalId != null,
                records: values.map((v) => ({ key: null, value: Buffer.from(v) })),
              }),
            },
          ],
        },
      ],
    })
    .then((r) => r.responses[0]!.partitionResponses[0]!.errorCode);

const commit = (c: RawClient, groupId: string, topic: string, partitions: number[]) =>
  c
    .request(OffsetCommitApi, 8, {
      groupId,
      generationIdOrMemberEpoch: -1,
      memberId: '',
      groupInstanceId: null,
      topics: [{ name: topic, partitions: partitions.map((partitionIndex) => ({ partitionIndex, committedOffset: 1n, committedLeaderEpoch: -1, committedMetadata: null })) }],
    })
    .then((r) => r.topics.flatMap((t) => t.partitions.map((p) => p.errorCode)));

/** Retriable answers a client waits out: the coordinator loading or moving, or a transaction still ending. */
const RETRIED = new Set([14, 15, 16, 51]);
async function settled<T>(send: () => Promise<T>, errorOf: (r: T) => number): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const res = await send();
    if (!RETRIED.has(errorOf(res)) || Date.now() > deadline) return res;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('differential: the rest of the admin APIs', () => {
  it('DescribeCluster, DescribeLogDirs, ElectLeaders and partition reassignments', async () => {
    const outcome = await onBoth(pair(), async (connect) => {
      const c = await connect();
      await createTopics(c, [{ name: 'ad-cluster', numPartitions: 2 }]);
      await produce(c, 'ad-cluster', 0, ['one', 'two']);
      const nodeId = await nodeIdOf(c);
      const cluster = (version: number, body: { includeClusterAuthorizedOperations?: boolean; endpointType?: number; includeFencedBrokers?: boolean }) =>
        c.request(DescribeClusterApi, version, body).then((r) => ({ ...r, brokers: r.brokers.map((b) => ({ ...b, isSelf: b.brokerId === nodeId })) }));
      const logDirs = (topics: { topic: string; partitions: number[] }[] | null) =>
        c.request(DescribeLogDirsApi, 4, { topics }).then((r) => ({
          errorCode: r.errorCode,
          // The directory and its bytes belong to each broker's storage: compared by presence.
          results: r.results.map((d) => ({
            errorCode: d.errorCode,
            logDir: typeof d.logDir,
            totalBytes: typeof d.totalBytes,
            usableBytes: typeof d.usableBytes,
            topics: d.topics
              .filter((t) => t.name.startsWith('ad-'))
              .map((t) => ({
                name: t.name,
                partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, partitionSize: typeof p.partitionSize, offsetLag: p.offsetLag, isFutureKey: p.isFutureKey })),
              })),
          })),
        }));
      const elect = (electionType: number, topicPartitions: { topic: string; partitions: number[] }[] | null) =>
        c
          .request(ElectLeadersApi, 2, { electionType, topicPartitions, timeoutMs: 10_000 })
          .then((r) => ({ errorCode: r.errorCode, results: r.replicaElectionResults.filter((t) => t.topic.startsWith('ad-')) }));
      const reassign = (partitions: { partitionIndex: number; replicas: number[] | null }[], name = 'ad-cluster') =>
        c.request(AlterPartitionReassignmentsApi, 0, { timeoutMs: 10_000, topics: [{ name, partitions }] });
      return {
        clusterV0: await cluster(0, { includeClusterAuthorizedOperations: true }),
        clusterV1: await cluster(1, { includeClusterAuthorizedOperations: false, endpointType: 1 }),
        clusterControllers: await cluster(1, { endpointType: 2 }),
        clusterV2: await cluster(2, { endpointType: 1, includeFencedBrokers: true }),
        logDirsAll: await logDirs(null),
        logDirsNamed: await logDirs([
          { topic: 'ad-cluster', partitions: [0, 1, 7] },
          { topic: 'ad-none', partitions: [0] },
        ]),
        logDirsNone: await logDirs([]),
        electPreferred: await elect(0, [
          { topic: 'ad-cluster', partitions: [0, 1, 7] },
          { topic: 'ad-none', partitions: [0] },
        ]),
        electUnclean: await elect(1, [{ topic: 'ad-cluster', partitions: [0] }]),
        electAll: await elect(0, null),
        electUnknownType: await elect(5, [{ topic: 'ad-cluster', partitions: [0] }]),
        reassignToSelf: await reassign([{ partitionIndex: 0, replicas: [nodeId] }]),
        reassignToNobody: await reassign([{ partitionIndex: 0, replicas: [nodeId + 100] }]),
        reassignEmpty: await reassign([{ partitionIndex: 0, replicas: [] }]),
        reassignTwice: await reassign([{ partitionIndex: 1, replicas: [nodeId, nodeId] }]),
        cancelNone: await reassign([{ partitionIndex: 0, replicas: null }]),
        reassignUnknownPartition: await reassign([{ partitionIndex: 7, replicas: [nodeId] }]),
        reassignUnknownTopic: await reassign([{ partitionIndex: 0, replicas: [nodeId] }], 'ad-none'),
        listReassignmentsAll: await c.request(ListPartitionReassignmentsApi, 0, { timeoutMs: 10_000, topics: null }),
        listReassignmentsNamed: await c.request(ListPartitionReassignmentsApi, 0, {
          timeoutMs: 10_000,
          topics: [
            { name: 'ad-cluster', partitionIndexes: [0, 1] },
            { name: 'ad-none', partitionIndexes: [0] },
          ],
        }),
      };
    });
    expectSame(outcome);
  });

  it('DeleteGroups and OffsetDelete: empty, active and unknown groups, subscribed topics', async () => {
    const outcome = await onBoth(pair(), async (connect) => {
      const c = await connect();
      await createTopics(c, [
        { name: 'ad-offsets', numPartitions: 2 },
        { name: 'ad-unsubscribed', numPartitions: 1 },
      ]);
      await awaitCoordinator(c, ['ad-simple', 'ad-active', 'ad-gone', 'ad-never']);
      const simple = await commit(c, 'ad-simple', 'ad-offsets', [0, 1]);
      await commit(c, 'ad-gone', 'ad-offsets', [0]);
      // One member subscribed to ad-offsets, holding its offsets and one of ad-unsubscribed.
      const join = (memberId: string) =>
        c.request(JoinGroupApi, 7, {
          groupId: 'ad-active',
          sessionTimeoutMs: 30_000,
          rebalanceTimeoutMs: 10_000,
          memberId,
          groupInstanceId: null,
          protocolType: 'consumer',
          protocols: [{ name: 'range', metadata: subscription(['ad-offsets']) }],
        });
      const joined = await join((await join('')).memberId);
      await c.request(SyncGroupApi, 5, {
        groupId: 'ad-active',
        generationId: joined.generationId,
        memberId: joined.memberId,
        groupInstanceId: null,
        protocolType: 'consumer',
        protocolName: 'range',
        assignments: [{ memberId: joined.memberId, assignment: Buffer.alloc(0) }],
      });
      const activeCommit = await c
        .request(OffsetCommitApi, 8, {
          groupId: 'ad-active',
          generationIdOrMemberEpoch: joined.generationId,
          memberId: joined.memberId,
          groupInstanceId: null,
          topics: ['ad-offsets', 'ad-unsubscribed'].map((name) => ({ name, partitions: [{ partitionIndex: 0, committedOffset: 1n, committedLeaderEpoch: -1, committedMetadata: null }] })),
        })
        .then((r) => r.topics.flatMap((t) => t.partitions.map((p) => p.errorCode)));
      // Kafka answers the partitions of a topic in the order of a hash map: compared by index.
      const offsetDelete = (groupId: string, topics: { name: string; partitions: number[] }[]) =>
        c
          .request(OffsetDeleteApi, 0, { groupId, topics: topics.map((t) => ({ name: t.name, partitions: t.partitions.map((partitionIndex) => ({ partitionIndex })) })) })
          .then((r) => ({ ...r, topics: r.topics.map((t) => ({ ...t, partitions: t.partitions.sort((a, b) => a.partitionIndex - b.partitionIndex) })) }));
      const deleteGroups = (groups: string[]) => c.request(DeleteGroupsApi, 2, { groupsNames: groups }).then((r) => r.results.sort((a, b) => a.groupId.localeCompare(b.groupId)));
      return {
        simple,
        activeCommit,
        offsetDeleteSimple: await offsetDelete('ad-simple', [
          { name: 'ad-offsets', partitions: [0, 5] },
          { name: 'ad-none', partitions: [0] },
        ]),
        offsetDeleteActive: await offsetDelete('ad-active', [
          { name: 'ad-offsets', partitions: [0] },
          { name: 'ad-unsubscribed', partitions: [0] },
        ]),
        offsetDeleteUnknownGroup: await offsetDelete('ad-never', [{ name: 'ad-offsets', partitions: [0] }]),
        offsetDeleteEmptyGroupId: await offsetDelete('', [{ name: 'ad-offsets', partitions: [0] }]),
        deleteGroups: await deleteGroups(['ad-gone', 'ad-active', 'ad-never', '']),
        deleteAgain: await deleteGroups(['ad-gone']),
      };
    });
    expectSame(outcome);
  });

  it('DescribeClientQuotas, DescribeUserScramCredentials and AlterUserScramCredentials', async () => {
    const outcome = await onBoth(pair(), async (connect) => {
      const c = await connect();
      const quotas = (components: { entityType: string; matchType: number; match: string | null }[], strict = false) => c.request(DescribeClientQuotasApi, 1, { components, strict });
      const salt = randomBytes(16);
      // A salted password as long as the mechanism's hash (Kafka takes any length; see shortSaltedPassword).
      const salted = (mechanism: number) =>
        createHash(mechanism === 2 ? 'sha512' : 'sha256')
          .update('a salted password')
          .digest();
      const upsert = (name: string, mechanism = 1, iterations = 4096, saltedPassword = salted(mechanism)) => ({ name, mechanism, iterations, salt, saltedPassword });
      const alter = (deletions: { name: string; mechanism: number }[], upsertions: ReturnType<typeof upsert>[]) =>
        c.request(AlterUserScramCredentialsApi, 0, { deletions, upsertions }).then((r) => r.results.sort((a, b) => a.user.localeCompare(b.user)));
      const describeUsers = (names: string[] | null) =>
        // Kafka lists users and their mechanisms in the order of hash maps: compared sorted.
        c.request(DescribeUserScramCredentialsApi, 0, { users: names && names.map((name) => ({ name })) }).then((r) => ({
          ...r,
          results: r.results.sort((a, b) => a.user.localeCompare(b.user)).map((u) => ({ ...u, credentialInfos: u.credentialInfos.sort((a, b) => a.mechanism - b.mechanism) })),
        }));
      const before = await describeUsers(null);
      const altered = await alter([{ name: 'ad-ghost', mechanism: 1 }], [upsert('ad-alice'), upsert('ad-bob', 1, 100), upsert('ad-carol', 9), upsert('', 1), upsert('ad-dave', 1, 20_000)]);
      const secondMechanism = await alter([], [upsert('ad-alice', 2, 8192)]);
      return {
        quotasAll: await quotas([]),
        quotasUser: await quotas([{ entityType: 'user', matchType: 0, match: 'ad-alice' }], true),
        quotasDefault: await quotas([{ entityType: 'client-id', matchType: 1, match: null }]),
        quotasAny: await quotas([
          { entityType: 'user', matchType: 2, match: null },
          { entityType: 'client-id', matchType: 2, match: null },
        ]),
        quotasUnknownEntity: await quotas([{ entityType: 'no-such-entity', matchType: 0, match: 'x' }]),
        quotasTwice: await quotas([
          { entityType: 'user', matchType: 2, match: null },
          { entityType: 'user', matchType: 2, match: null },
        ]),
        before,
        altered,
        secondMechanism,
        bothMechanismsOfOneUser: await alter([], [upsert('ad-erin', 1), upsert('ad-erin', 2)]),
        shortSaltedPassword: await alter([], [upsert('ad-frank', 2, 4096, salted(1))]),
        described: await eventually(
          () => describeUsers(['ad-alice', 'ad-nobody']),
          (r) => r.results.some((u) => u.credentialInfos.length === 2),
        ),
        describedAll: await describeUsers(null),
        sameUserTwice: await describeUsers(['ad-alice', 'ad-alice']),
        alterTwiceInOneRequest: await alter([{ name: 'ad-alice', mechanism: 1 }], [upsert('ad-alice')]),
        deleteUnknownMechanismFirst: await alter(
          [
            { name: 'ad-alice', mechanism: 9 },
            { name: 'ad-alice', mechanism: 2 },
          ],
          [],
        ),
        deleted: await alter(
          [
            { name: 'ad-alice', mechanism: 2 },
            { name: 'ad-frank', mechanism: 2 },
          ],
          [],
        ),
        afterDelete: await eventually(
          () => describeUsers(['ad-alice']),
          (r) => r.results[0]!.credentialInfos.length === 1,
        ),
      };
    });
    expectSame(outcome);
  });

  it('DescribeProducers, ListTransactions and DescribeTransactions around an open and a committed transaction', async () => {
    const outcome = await onBoth(pair(), async (connect) => {
      const c = await connect();
      await createTopics(c, [{ name: 'ad-txn', numPartitions: 2 }]);
      await awaitCoordinator(c, ['ad-tx'], 1);
      const init = await settled(
        () => c.request(InitProducerIdApi, 4, { transactionalId: 'ad-tx', transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 }),
        (r) => r.errorCode,
      );
      const idem = await settled(
        () => c.request(InitProducerIdApi, 4, { transactionalId: null, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 }),
        (r) => r.errorCode,
      );
      const p = { producerId: init.producerId, producerEpoch: init.producerEpoch };
      const added = await settled(
        () =>
          c.request(AddPartitionsToTxnApi, 3, {
            v3AndBelowTransactionalId: 'ad-tx',
            v3AndBelowProducerId: p.producerId,
            v3AndBelowProducerEpoch: p.producerEpoch,
            v3AndBelowTopics: [{ name: 'ad-txn', partitions: [0] }],
          }),
        (r) => r.resultsByTopicV3AndBelow[0]!.resultsByPartition[0]!.partitionErrorCode,
      ).then((r) => r.resultsByTopicV3AndBelow);
      const produced = [
        await produce(c, 'ad-txn', 1, ['plain']),
        await produce(c, 'ad-txn', 1, ['i1', 'i2'], { ...idem, baseSequence: 0, transactionalId: null }),
        await produce(c, 'ad-txn', 0, ['t1', 't2', 't3'], { ...p, baseSequence: 0, transactionalId: 'ad-tx' }),
      ];
      const producers = () =>
        c
          .request(DescribeProducersApi, 0, {
            topics: [
              { name: 'ad-txn', partitionIndexes: [0, 1, 9] },
              { name: 'ad-none', partitionIndexes: [0] },
            ],
          })
          .then((r) =>
            r.topics.map((t) => ({
              name: t.name,
              partitions: t.partitions.map((x) => ({
                ...x,
                activeProducers: x.activeProducers.map((a) => ({ ...a, isTransactional: a.producerId === p.producerId })).sort((a, b) => Number(a.isTransactional) - Number(b.isTransactional)),
              })),
            })),
          );
      const list = (body: { stateFilters?: string[]; producerIdFilters?: bigint[]; durationFilter?: bigint; transactionalIdPattern?: string | null }, version = 2) =>
        c
          .request(ListTransactionsApi, version, { stateFilters: [], producerIdFilters: [], durationFilter: -1n, transactionalIdPattern: null, ...body })
          .then((r) => ({ ...r, transactionStates: r.transactionStates.filter((s) => s.transactionalId.startsWith('ad-')) }));
      const describeTxn = () =>
        c.request(DescribeTransactionsApi, 0, { transactionalIds: ['ad-tx', 'ad-never'] }).then((r) => r.transactionStates.sort((a, b) => a.transactionalId.localeCompare(b.transactionalId)));
      const open = {
        producers: await producers(),
        listed: await list({}),
        listedOngoing: await list({ stateFilters: ['Ongoing'] }),
        listedOtherState: await list({ stateFilters: ['CompleteAbort'] }),
        listedByProducer: await list({ producerIdFilters: [p.producerId] }),
        listedByPattern: await list({ transactionalIdPattern: '^ad-t.$' }),
        listedBadPattern: await list({ transactionalIdPattern: '[' }),
        listedUnknownState: await list({ stateFilters: ['Sleeping'] }),
        listedLongerThanAnHour: await list({ durationFilter: 3_600_000n }),
        described: await describeTxn(),
      };
      const ended = await settled(
        () => c.request(EndTxnApi, 3, { transactionalId: 'ad-tx', producerId: p.producerId, producerEpoch: p.producerEpoch, committed: true }),
        (r) => r.errorCode,
      ).then((r) => r.errorCode);
      const completed = await eventually(describeTxn, (r) => r[0]!.transactionState === 'CompleteCommit');
      return {
        init: init.errorCode,
        idem: idem.errorCode,
        added,
        produced,
        open,
        ended,
        completed,
        producersAfter: await eventually(producers, (r) => r[0]!.partitions[0]!.activeProducers.every((a) => a.currentTxnStartOffset === -1n)),
        listedAfter: await list({}),
      };
    });
    expectSame(outcome);
  });
});
