// Differential scenarios: the same requests, through the project's own
// codecs, go to a real Apache Kafka and to pgkafka, and what a client can
// observe in the two answers is compared. The differences allowed on purpose
// are few and named here:
// - who and where: node ids, hosts, ports, cluster ids, topic ids (random
//   per cluster), producer ids (allocated per cluster);
// - when: throttle times, timestamps the broker assigns (log append time,
//   log start times) and durations;
// - human-readable text: the words of error messages (clients show them,
//   never branch on them), though not whether there is one; a client's
//   exception keeps its class (`UnknownTopicOrPartitionException: <message>`).
// Everything else — error codes per request and per partition, offsets,
// watermarks, records, generations, assignments, configs and their sources
// — must be equal.
import { afterAll, beforeAll, expect } from 'vitest';
import { ZERO_UUID } from '../../src/protocol/codec/types.js';
import { startTestBroker, type TestBroker } from '../../test/support/broker.js';
import { CreateTopicsApi, DescribeGroupsApi, FindCoordinatorApi, ListOffsetsApi, MetadataApi, type CreateTopicsResponse } from '../../src/protocol/messages/index.js';
import { RawClient } from '../../test/support/raw-client.js';
import { startApacheKafka, type ApacheKafka } from './apache-kafka.js';

export type Side = 'kafka' | 'pgkafka';

export interface Pair {
  kafka: ApacheKafka;
  pgkafka: TestBroker;
  bootstrap(side: Side): string;
}

/**
 * Starts one Apache Kafka and one pgkafka for a test file (stopped after it).
 * `kafka` entries are server.properties names; `pgkafka` the broker's options.
 * The settings that shape answers are the same on both.
 */
export function usePair(
  settings: { kafka?: Record<string, string | number | boolean>; pgkafka?: Parameters<typeof startTestBroker>[0]; kafkaStart?: Parameters<typeof startApacheKafka>[1] } = {},
): () => Pair {
  let pair: Pair | undefined;
  beforeAll(async () => {
    const [kafka, pgkafka] = await Promise.all([
      startApacheKafka({ 'group.initial.rebalance.delay.ms': 0, ...settings.kafka }, settings.kafkaStart),
      startTestBroker({ groupInitialRebalanceDelayMs: 0, ...settings.pgkafka }),
    ]);
    pair = { kafka, pgkafka, bootstrap: (side) => (side === 'kafka' ? kafka.bootstrap : pgkafka.bootstrap) };
  }, 180_000);
  afterAll(async () => {
    await Promise.all([pair?.kafka.stop(), pair?.pgkafka.destroy()]);
  });
  return () => {
    if (!pair) throw new Error('the pair of brokers is not started');
    return pair;
  };
}

/** Runs a scenario on each broker in turn, each on fresh connections, and returns both outcomes, normalised. */
export async function onBoth<T>(pair: Pair, scenario: (connect: () => Promise<RawClient>, side: Side) => Promise<T>): Promise<Record<Side, unknown>> {
  const out: Partial<Record<Side, unknown>> = {};
  for (const side of ['kafka', 'pgkafka'] as const) {
    const clients: RawClient[] = [];
    const connect = async () => {
      const client = await RawClient.connect(pair.bootstrap(side));
      clients.push(client);
      return client;
    };
    try {
      out[side] = normalise(await scenario(connect, side));
    } finally {
      for (const c of clients) c.close();
    }
  }
  return out as Record<Side, unknown>;
}

/**
 * pgkafka's answers must equal Kafka's. DIFF_DUMP=1 prints both in full, for
 * reading a difference in context.
 */
export function expectSame(outcome: Record<Side, unknown>): void {
  if (process.env.DIFF_DUMP) console.log(JSON.stringify(outcome, null, 1));
  expect(outcome.pgkafka).toEqual(outcome.kafka);
}

/**
 * Reads until `done` holds (at most 10 s), for what Kafka's brokers apply asynchronously: a
 * broker learns of topic, partition and config changes by replaying the metadata log, so a read
 * right after the change may still show the old state.
 */
export async function eventually<T>(read: () => Promise<T>, done: (r: T) => boolean): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const r = await read();
    if (done(r) || Date.now() > deadline) return r;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * CreateTopics v7, then waits, as clients do before producing (kafkajs's waitForLeaders), until
 * Metadata names a leader for every partition of the topics it created.
 */
export async function createTopics(c: RawClient, topics: { name: string; numPartitions: number; configs?: { name: string; value: string | null }[] }[]): Promise<CreateTopicsResponse> {
  const res = await c.request(CreateTopicsApi, 7, { topics: topics.map((t) => ({ ...t, replicationFactor: 1, configs: t.configs ?? [] })), timeoutMs: 10_000 });
  const created = res.topics.filter((t) => t.errorCode === 0).map((t) => t.name);
  if (created.length > 0) {
    const md = await eventually(
      () => c.request(MetadataApi, 12, { topics: created.map((name) => ({ name })), allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false }),
      (m) => m.topics.every((t) => t.errorCode === 0 && t.partitions.length > 0 && t.partitions.every((p) => p.leaderId >= 0)),
    );
    // Named leader is not yet serving leader: wait until every partition answers ListOffsets.
    const topicsAsked = md.topics.map((t) => ({ name: t.name!, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, currentLeaderEpoch: -1, timestamp: -1n })) }));
    await eventually(
      () => c.request(ListOffsetsApi, 7, { replicaId: -1, isolationLevel: 0, topics: topicsAsked }),
      (r) => r.topics.every((t) => t.partitions.every((p) => p.errorCode === 0)),
    );
  }
  return res;
}

/**
 * Waits, as clients do, until FindCoordinator names a coordinator for the
 * keys (Kafka creates its __consumer_offsets or __transaction_state topic on
 * the first look-up and answers COORDINATOR_NOT_AVAILABLE until it is loaded).
 * keyType 0 is a group, 1 a transactional id.
 */
export async function awaitCoordinator(c: RawClient, keys: string[], keyType: 0 | 1 = 0): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const res = await c.request(FindCoordinatorApi, 4, { keyType, coordinatorKeys: keys });
    // A group coordinator named may still be loading its partition: it answers NOT_COORDINATOR meanwhile.
    const ready =
      res.coordinators.every((k) => k.errorCode === 0) &&
      (keyType !== 0 || (await c.request(DescribeGroupsApi, 5, { groups: keys, includeAuthorizedOperations: false })).groups.every((g) => g.errorCode === 0));
    if (ready) return;
    if (Date.now() > deadline) throw new Error(`no coordinator for ${keys.join(', ')}: ${JSON.stringify(res.coordinators)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** A client's answer with the allowed differences replaced, as onBoth replaces them in raw answers. */
export const normaliseAnswer = (value: unknown): unknown => normalise(value);

/** Fields whose values differ between any two clusters, replaced by a marker of their presence. */
// controller, coordinator, replicas and isr: the node ids the Java client's answers name (compat/java/client).
const IDENTITY_FIELDS = new Set([
  'nodeId',
  'host',
  'port',
  'clusterId',
  'controllerId',
  'leaderId',
  'coordinatorId',
  'brokerId',
  'producerId',
  'memberId',
  'leader',
  'controller',
  'coordinator',
  'replicas',
  'isr',
]);
const TIME_FIELDS = new Set(['throttleTimeMs', 'logAppendTimeMs', 'logStartOffsetTimestamp', 'transactionStartTimeMs', 'lastTimestamp']);
const TEXT_FIELDS = new Set(['errorMessage']);

function normalise(value: unknown, key?: string): unknown {
  if (key !== undefined) {
    if (TIME_FIELDS.has(key)) return typeof value;
    if (TEXT_FIELDS.has(key)) return value === null || value === '' ? value : '<message>';
    if (IDENTITY_FIELDS.has(key) && Array.isArray(value)) return value.map((v) => normalise(v, key));
    if (IDENTITY_FIELDS.has(key)) return typeof value === 'number' ? (value < 0 ? value : '<id>') : value === null || value === '' ? value : '<id>';
    if (key === 'topicId') return value === ZERO_UUID ? value : '<topic id>';
  }
  if (typeof value === 'string') {
    const thrown = /^(\w+(?:Exception|Error)): (.*)$/s.exec(value);
    if (thrown) return thrown[2] === '' || thrown[2] === 'null' ? value : `${thrown[1]}: <message>`;
  }
  if (Buffer.isBuffer(value)) return `<${value.length} bytes ${value.toString('hex')}>`;
  if (typeof value === 'bigint') return `${value}n`;
  if (Array.isArray(value)) return value.map((v) => normalise(v));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (k !== 'unknownTaggedFields') out[k] = normalise(v, k);
    return out;
  }
  return value;
}
