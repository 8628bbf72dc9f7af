// Losing the database's primary. The test owns a PostgreSQL primary with a
// synchronous streaming standby (test/support/replicated-postgres.ts) and two
// broker processes whose DATABASE_URL lists both hosts with
// target_session_attrs=read-write. A kafkajs idempotent producer (acks=all)
// writes through broker A; the primary is killed (SIGKILL to all of its
// processes) and the standby promoted, as a failover manager would. The
// brokers must find the new primary by themselves (no restart), the producer
// must see only errors it retries, and every acknowledged record must be in
// the log exactly once afterwards, read through broker B, whose LISTEN
// connection must have moved to the new primary too.
// Broker A reaches the primary through a proxy (test/support/pg-proxy.ts)
// that holds back the answer of the append in flight when the primary is
// killed: that append was committed and replicated, its answer died with the
// primary, and the broker must find it on the new primary and acknowledge it
// with its offset (not answer an error that would have it stored twice).
import { Kafka, logLevel, type Producer } from 'kafkajs';
import { afterAll, describe, expect, it } from 'vitest';
import { FetchApi, MetadataApi } from '../../src/protocol/messages/index.js';
import { decodeRecords, parseBatches } from '../../src/protocol/records/index.js';
import { freePort, spawnBroker, type BrokerProcess } from '../support/broker-process.js';
import { compareWithLog, readLog } from '../support/durability.js';
import { PgProxy } from '../support/pg-proxy.js';
import { RawClient } from '../support/raw-client.js';
import { pgQuery, startReplicatedPostgres, type ReplicatedPostgres } from '../support/replicated-postgres.js';
import { within } from '../support/wait.js';

const TOPIC = 'failover';
/** Acknowledged records before the primary is killed, and after the first one on the new primary. */
const ACKS_BEFORE = 150;
const ACKS_AFTER = 150;

let servers: ReplicatedPostgres | undefined;
let proxy: PgProxy | undefined;
const brokers: BrokerProcess[] = [];
let producer: Producer | undefined;
afterAll(async () => {
  await producer?.disconnect().catch(() => {});
  for (const b of brokers) {
    if (b.child.exitCode === null && b.child.signalCode === null) {
      b.child.kill('SIGKILL');
      await b.exited;
    }
  }
  await proxy?.close();
  await servers?.destroy();
});

describe('PostgreSQL failover to a synchronous standby', () => {
  it('loses no acknowledged record and the brokers carry on against the promoted standby without a restart', { timeout: 90_000 }, async () => {
    servers = await startReplicatedPostgres();
    const [portA, portB] = [await freePort(), await freePort()];
    const toPrimary = (proxy = await PgProxy.start('127.0.0.1', servers.primary.port));
    const urlA = servers.url.replace(`:${servers.primary.port},`, `:${toPrimary.port},`);
    const common = { PGKAFKA_SCHEMA: 'pgkafka' };
    brokers.push(
      ...(await Promise.all([
        spawnBroker({ ...common, DATABASE_URL: urlA, PGKAFKA_PORT: String(portA), PGKAFKA_NODE_ID: '1' }),
        spawnBroker({ ...common, DATABASE_URL: servers.url, PGKAFKA_PORT: String(portB), PGKAFKA_NODE_ID: '2' }),
      ])),
    );
    const [brokerA, brokerB] = brokers as [BrokerProcess, BrokerProcess];
    const [bootstrapA, bootstrapB] = [`127.0.0.1:${portA}`, `127.0.0.1:${portB}`];

    const kafka = new Kafka({ clientId: 'failover', brokers: [bootstrapA], logLevel: logLevel.NOTHING, retry: { retries: 60, initialRetryTime: 50, maxRetryTime: 500 } });
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 1 }] });
    await admin.disconnect();

    // One record per send, each waiting for its acknowledgement (kafkajs' idempotent producer: acks=all, one request in flight).
    producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    const acknowledged = new Map<bigint, string>();
    const gaveUp: string[] = [];
    let killedAt = Infinity;
    let firstAckOnNewPrimaryMs: number | undefined;
    let acksAfter = 0;
    let stop = false;
    let sending = '';
    const writing = (async () => {
      for (let i = 0; !stop; i++) {
        const value = (sending = `r${i}`);
        const sentAt = Date.now();
        try {
          const [meta] = await producer!.send({ topic: TOPIC, acks: -1, messages: [{ value }] });
          acknowledged.set(BigInt(meta!.baseOffset!), value);
          if (sentAt > killedAt) {
            // Sent after the primary died, so stored on the new one.
            firstAckOnNewPrimaryMs ??= Date.now() - killedAt;
            acksAfter++;
          }
        } catch (err) {
          // kafkajs gives up only on an error it does not retry, or after every retry failed.
          gaveUp.push(`${value}: ${(err as Error).message}`);
        }
      }
    })();

    expect(await within(30_000, () => acknowledged.size >= ACKS_BEFORE)).toBeGreaterThanOrEqual(0);
    // The next append commits (so the synchronous standby has it) and its answer is held; the standby shows it once replayed.
    const heldAppend = toPrimary.arm('hold-answer');
    const onStandby = () =>
      pgQuery(servers!.standby.adminUrl.replace(/\/postgres$/, '/pgkafka'), `SELECT count(*)::int AS n FROM pgkafka.batches b JOIN pgkafka.topics t USING (topic_id) WHERE t.name = '${TOPIC}'`);
    expect(await within(10_000, async () => ((await onStandby())[0]!.n as number) > acknowledged.size)).toBeGreaterThanOrEqual(0);
    const heldValue = sending;
    killedAt = Date.now();
    await servers.primary.kill();
    await servers.promoteStandby();
    const promotedMs = Date.now() - killedAt;
    expect(await within(40_000, () => acksAfter >= ACKS_AFTER || gaveUp.length > 0)).toBeGreaterThanOrEqual(0);
    stop = true;
    await writing;
    process.stdout.write(
      `PostgreSQL failover: primary killed → standby promoted in ${promotedMs} ms → first produce acknowledged on the new primary ${firstAckOnNewPrimaryMs} ms after the kill; ${acknowledged.size} records acknowledged\n`,
    );

    expect(gaveUp).toEqual([]);
    // The held append was committed on the old primary and its answer lost: acknowledged, with the offset the new primary holds it at.
    await heldAppend;
    expect(toPrimary.cuts).toEqual(['hold-answer']);
    expect([...acknowledged.values()]).toContain(heldValue);
    expect(brokerA.output()).toMatch(/"code":"PGKAFKA_APPEND_OUTCOME_SETTLED".*"outcome":"committed at/);
    expect(brokerA.child.exitCode).toBeNull();
    expect(brokerB.child.exitCode).toBeNull();
    // Only the partition's leader serves fetches: read and park there.
    const leaderBootstrap = await leaderOfTopic(bootstrapB, TOPIC, { 1: bootstrapA, 2: bootstrapB });
    const stored = await readLog(leaderBootstrap, TOPIC);
    const { lost, lostValues, duplicates } = compareWithLog(stored, acknowledged, new Set(acknowledged.values()));
    expect({ lost, lostValues, duplicates }).toEqual({ lost: [], lostValues: [], duplicates: [] });

    // Broker B's LISTEN connection moved to the new primary too.
    expect(brokerB.output()).toContain('PGKAFKA_LISTEN_RESTORED');
    // Each broker logged its move to the promoted standby.
    for (const broker of [brokerA, brokerB]) {
      const chosen = broker
        .output()
        .split('\n')
        .filter((l) => l.includes('PGKAFKA_DATABASE_HOST_CHOSEN'))
        .map((l) => (JSON.parse(l) as { host: string }).host);
      expect(chosen.at(-1)).toBe(`127.0.0.1:${servers.standby.port}`);
    }
    const logEnd = stored.at(-1)!.offset + 1n;
    // A fetch parked at the log end on the leader wakes when the next record is appended.
    const consumer = await RawClient.connect(leaderBootstrap);
    try {
      const parked = consumer.request(FetchApi, 11, {
        replicaId: -1,
        maxWaitMs: 30_000,
        minBytes: 1,
        maxBytes: 1 << 20,
        sessionEpoch: -1,
        topics: [{ topic: TOPIC, partitions: [{ partition: 0, fetchOffset: logEnd, partitionMaxBytes: 1 << 20 }] }],
      });
      await producer.send({ topic: TOPIC, acks: -1, messages: [{ value: 'woken' }] });
      const buf = (await parked).responses[0]!.partitions[0]!.records as Buffer;
      const values = parseBatches(buf, { mode: 'log' }).batches.flatMap((h) => decodeRecords(buf, h).records.map((r) => r.value!.toString()));
      expect(values).toEqual(['woken']);
    } finally {
      consumer.close();
    }
  });
});

/** The bootstrap of the broker leading the topic's partition 0, as Metadata through `via` names it. */
async function leaderOfTopic(via: string, topic: string, bootstraps: Record<number, string>): Promise<string> {
  const client = await RawClient.connect(via);
  try {
    for (let attempt = 0; ; attempt++) {
      const metadata = await client.request(MetadataApi, 12, {
        topics: [{ topicId: '00000000-0000-0000-0000-000000000000', name: topic }],
        allowAutoTopicCreation: false,
        includeTopicAuthorizedOperations: false,
      });
      const leader = metadata.topics[0]?.partitions[0]?.leaderId ?? -1;
      if (bootstraps[leader]) return bootstraps[leader];
      if (attempt >= 50) throw new Error(`no leader for ${topic}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    client.close();
  }
}
