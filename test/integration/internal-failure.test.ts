// PostgreSQL goes away under a running broker (a proxy between them cuts
// every connection and refuses new ones). Every request that needs the
// database is answered, on the same connection, with the code Kafka's broker
// gives for a failure of the store behind that API (the table in
// src/handlers/storage-failure.ts): KAFKA_STORAGE_ERROR for the log,
// COORDINATOR_NOT_AVAILABLE for the group and transaction coordinators,
// REQUEST_TIMED_OUT for the metadata the controller keeps. Once PostgreSQL is
// back the same connection is served as before.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ZERO_UUID, type ApiCodec, type Input } from '../../src/protocol/codec/types.js';
import { ErrorCode, errorName } from '../../src/protocol/errors.js';
import * as api from '../../src/protocol/messages/index.js';
import { buildBatch } from '../../src/protocol/records/index.js';
import { startTestBroker, testDatabaseUrl, type TestBroker } from '../support/broker.js';
import { PgProxy } from '../support/pg-proxy.js';
import { RawClient } from '../support/raw-client.js';
import { errorCodes, loadSpecs } from '../protocol/messages/spec.js';

const specs = loadSpecs();
const TOPIC = 'outage';
const { KAFKA_STORAGE_ERROR: STORAGE, COORDINATOR_NOT_AVAILABLE: COORDINATOR, REQUEST_TIMED_OUT: TIMED_OUT } = ErrorCode;

let proxy: PgProxy;
let broker: TestBroker;
let client: RawClient;

beforeAll(async () => {
  const direct = new URL(testDatabaseUrl());
  proxy = await PgProxy.start(direct.hostname, Number(direct.port || 5432));
  // The authorizer is on (the anonymous client a super user) so that the ACL APIs store and delete.
  broker = await startTestBroker({ databaseUrl: PgProxy.urlThrough(testDatabaseUrl(), proxy.port), authorizerEnabled: true, superUsers: 'User:ANONYMOUS' });
  client = await RawClient.connect(broker.bootstrap);
  const created = await client.request(api.CreateTopicsApi, 7, { topics: [{ name: TOPIC, numPartitions: 2, replicationFactor: 1 }], timeoutMs: 5000 });
  expect(created.topics[0]!.errorCode).toBe(0);
  // A group with a committed offset, so that deleting it needs PostgreSQL.
  const committed = await client.request(api.OffsetCommitApi, 8, {
    groupId: 'outage-delete',
    generationIdOrMemberEpoch: -1,
    memberId: '',
    topics: [{ name: TOPIC, partitions: [{ partitionIndex: 0, committedOffset: 0n }] }],
  });
  expect(committed.topics[0]!.partitions[0]!.errorCode).toBe(0);
});
afterAll(async () => {
  client?.close();
  proxy?.up();
  await broker?.destroy();
  await proxy?.close();
});

interface Case {
  codec: ApiCodec<any, any>;
  version: number;
  body: Input<any>;
  /** The code every error field of the answer carries. */
  code: number;
}

const batch = () => buildBatch({ records: [{ key: null, value: Buffer.from('v') }] });
const c = <Req>(codec: ApiCodec<Req, any>, version: number, body: Input<Req>, code: number): Case => ({ codec, version, body, code });

/** Requests that each need PostgreSQL (a write, or state no cache holds). */
const CASES: Case[] = [
  c(
    api.ProduceApi,
    9,
    {
      acks: -1,
      timeoutMs: 5000,
      topicData: [
        {
          name: TOPIC,
          partitionData: [
            { index: 0, records: batch() },
            { index: 1, records: batch() },
          ],
        },
      ],
    },
    STORAGE,
  ),
  c(api.DeleteRecordsApi, 2, { topics: [{ name: TOPIC, partitions: [{ partitionIndex: 0, offset: 0n }] }], timeoutMs: 1000 }, STORAGE),
  c(
    api.OffsetCommitApi,
    8,
    { groupId: 'outage-commit', generationIdOrMemberEpoch: -1, memberId: '', topics: [{ name: TOPIC, partitions: [{ partitionIndex: 0, committedOffset: 0n }] }] },
    COORDINATOR,
  ),
  c(api.OffsetFetchApi, 8, { groups: [{ groupId: 'outage-fetch', topics: null }] }, COORDINATOR),
  c(api.InitProducerIdApi, 4, { transactionalId: 'outage-txn', transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 }, COORDINATOR),
  c(api.CreateTopicsApi, 7, { topics: [{ name: 'outage-new', numPartitions: 1, replicationFactor: 1 }], timeoutMs: 5000 }, TIMED_OUT),
  c(api.DeleteTopicsApi, 6, { topics: [{ name: TOPIC, topicId: ZERO_UUID }], timeoutMs: 5000 }, TIMED_OUT),
  c(api.CreatePartitionsApi, 3, { topics: [{ name: TOPIC, count: 3, assignments: null }], timeoutMs: 5000, validateOnly: false }, TIMED_OUT),
  c(api.AlterConfigsApi, 2, { resources: [{ resourceType: 2, resourceName: TOPIC, configs: [{ name: 'retention.ms', value: '1000' }] }], validateOnly: false }, TIMED_OUT),
  c(
    api.IncrementalAlterConfigsApi,
    1,
    { resources: [{ resourceType: 2, resourceName: TOPIC, configs: [{ name: 'retention.ms', configOperation: 0, value: '1000' }] }], validateOnly: false },
    TIMED_OUT,
  ),
  c(api.DeleteGroupsApi, 2, { groupsNames: ['outage-delete'] }, COORDINATOR),
  c(api.CreateAclsApi, 3, { creations: [{ resourceType: 2, resourceName: TOPIC, resourcePatternType: 3, principal: 'User:alice', host: '*', operation: 3, permissionType: 3 }] }, TIMED_OUT),
  c(
    api.DeleteAclsApi,
    3,
    { filters: [{ resourceTypeFilter: 2, resourceNameFilter: TOPIC, patternTypeFilter: 3, principalFilter: 'User:alice', hostFilter: '*', operation: 3, permissionType: 3 }] },
    TIMED_OUT,
  ),
  c(
    api.AlterUserScramCredentialsApi,
    0,
    { deletions: [], upsertions: [{ name: 'outage-user', mechanism: 1, iterations: 4096, salt: Buffer.from('salt'), saltedPassword: Buffer.alloc(32, 1) }] },
    TIMED_OUT,
  ),
];

/** The answer, or null when the broker closed the connection instead. */
async function send(k: Case): Promise<Record<string, unknown> | null> {
  try {
    return await client.request(k.codec, k.version, k.body);
  } catch (err) {
    if (!client.closed) throw err;
    client = await RawClient.connect(broker.bootstrap);
    return null;
  }
}

describe('PostgreSQL down under a running broker', () => {
  it('answers every request that needs it with the code Kafka gives for that API, on the same connection, and serves it again once PostgreSQL is back', async () => {
    proxy.goDown();
    const seen: string[] = [];
    const wanted: string[] = [];
    for (const k of CASES) {
      const res = await send(k);
      const label = `${k.codec.name} v${k.version}`;
      wanted.push(`${label}: ${errorName(k.code)}`);
      if (res === null) {
        seen.push(`${label}: connection closed`);
        continue;
      }
      const codes = [...new Set(errorCodes(specs.get(`${k.codec.name}Response`)!, res, k.version))];
      seen.push(`${label}: ${codes.map(errorName).join(', ')}`);
    }
    expect(seen).toEqual(wanted);
    proxy.up();
    // The same connection, served again: PostgreSQL answers within a bounded time.
    let answer = -1;
    for (let i = 0; i < 100 && answer !== 0; i++) {
      const produced = await client.request(api.ProduceApi, 9, { acks: -1, timeoutMs: 5000, topicData: [{ name: TOPIC, partitionData: [{ index: 0, records: batch() }] }] });
      answer = produced.responses[0]!.partitionResponses[0]!.errorCode;
      if (answer !== 0) await new Promise((r) => setTimeout(r, 100));
    }
    expect(answer).toBe(0);
    expect(client.closed).toBe(false);
  });
});
