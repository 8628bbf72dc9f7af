// Exactly-once read-process-write with Apache Kafka's Java client through
// three brokers on one schema, across kill -9 of the broker that coordinates
// both its transactional id and its consumer group: the client (the loop of
// Kafka's documentation, compat/java/client Txns.readProcessWrite) finds the
// survivors that took the dead broker's slots over and copies every input
// record exactly once; the group's committed offset ends at the input's end.
// The cluster finalizes transactions version 2, which the Java client 4.x then
// uses: no AddPartitionsToTxn (the output's leader adds the partition at the
// coordinator, on another broker), and an epoch bump at every commit.
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrokerCluster } from '../test/support/broker-cluster.js';
import { leadersOf, until } from '../test/support/cluster.js';
import { fetch, visible } from '../test/support/txn-wire.js';
import { parseBatches } from '../src/protocol/records/index.js';
import { runJavaClient } from './support/java.js';

const N = 200;
const [IN, OUT] = ['jcluster-in', 'jcluster-out'];
const [READ_UNCOMMITTED, READ_COMMITTED] = [0, 1];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let cluster: BrokerCluster;

/** A fetch of OUT at its leader (only the leader serves fetches), among the live brokers. */
async function fetchOut(live: number[], isolationLevel: number) {
  let leader = -1;
  await until(`a live broker leads ${OUT}`, async () => live.includes((leader = (await leadersOf(cluster.bootstrap(live[0]!), OUT))[0]?.leader ?? -1)));
  return fetch(cluster.client(leader), OUT, isolationLevel);
}

/** What a read_committed consumer reads of OUT. */
const copied = async (live: number[]) => visible(await fetchOut(live, READ_COMMITTED));

/** For each COMMIT/ABORT marker in OUT, the epoch of the transaction's records before it and the marker's own. */
async function markerEpochs(live: number[]): Promise<{ records: number; marker: number }[]> {
  const part = await fetchOut(live, READ_UNCOMMITTED);
  const records = part.records as Buffer | Buffer[] | null;
  const buf = Array.isArray(records) ? Buffer.concat(records) : (records ?? Buffer.alloc(0));
  const epochs: { records: number; marker: number }[] = [];
  let open: number | null = null;
  for (const h of parseBatches(buf, { mode: 'log' }).batches) {
    if (!h.isControl) open ??= h.producerEpoch;
    else if (open !== null) {
      epochs.push({ records: open, marker: h.producerEpoch });
      open = null;
    }
  }
  return epochs;
}
beforeAll(async () => {
  cluster = await BrokerCluster.start(3);
}, 60_000);
afterAll(async () => {
  await cluster?.stop();
});

describe('three brokers, Java read-process-write', () => {
  it('carries on through the survivors after kill -9 of its coordinator, every record copied exactly once', { timeout: 90_000 }, async () => {
    const answer = await cluster.settled();
    const [transactionalId, group] = [cluster.keyOn(answer, 3), cluster.keyOn(answer, 3)];
    const kafka = new Kafka({ brokers: [cluster.bootstrap(1)], logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: IN }, { topic: OUT }] });
    const producer = kafka.producer();
    await producer.connect();
    const send = (from: number, to: number) => producer.send({ topic: IN, acks: -1, messages: Array.from({ length: to - from }, (_, i) => ({ value: `v${from + i}` })) });
    await send(0, N / 2);

    const bootstrap = [1, 2, 3].map((n) => cluster.bootstrap(n)).join(',');
    const run = runJavaClient(bootstrap, [{ id: 'txn', op: 'transactions', input: IN, output: OUT, group, transactionalId, expect: N, aborted: [], after: [], zombie: [] }], {}, 80_000);
    // Once the first half is copied, the coordinator dies; the second half arrives meanwhile.
    for (const deadline = Date.now() + 40_000; (await copied([1, 2, 3])).length < N / 2;) {
      if (Date.now() > deadline) throw new Error('the Java client copied nothing');
      await sleep(200);
    }
    await cluster.kill(3);
    await send(N / 2, N);
    await producer.disconnect();

    const res = await run;
    expect(res.txn).toMatchObject({ copied: N });
    // The last commit's marker reaches the leader by NOTIFY just after the client's EndTxn is answered.
    let values: string[] = [];
    await until(`${N} records copied`, async () => (values = await copied([1, 2])).length >= N).catch(() => {});
    expect(values.length).toBe(N);
    expect(new Set(values).size).toBe(N);
    const offsets = await admin.fetchOffsets({ groupId: group, topics: [IN] });
    await admin.disconnect();
    expect(offsets[0]!.partitions).toEqual([expect.objectContaining({ partition: 0, offset: String(N) })]);
    // The cluster finalizes transactions version 2, so the Java client used it: its partition adds went from the
    // output's leader to the transaction's coordinator, and every commit bumped the epoch its marker carries.
    const epochs = await markerEpochs([1, 2]);
    expect(epochs.length).toBeGreaterThanOrEqual(2);
    for (const e of epochs) expect(e.marker).toBe(e.records + 1);
  });
});
