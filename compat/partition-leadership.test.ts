// Three broker processes on one schema, twelve partitions led 4/4/4: a
// librdkafka producer (@confluentinc/kafka-javascript) and the Java
// producer (kafka-clients 4.x), each bootstrapped with one broker, reach all
// three (only a partition's leader appends, so records in every partition
// went through every broker); and a kill -9 of one broker under acks=all
// idempotent librdkafka load loses no acknowledged record and stores none
// twice, the producer carrying on through the survivors (the stall is
// printed; the benchmark is where speed is judged).
import ck from '@confluentinc/kafka-javascript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../src/protocol/errors.js';
import { CreateTopicsApi } from '../src/protocol/messages/index.js';
import { decodeRecords, parseBatches } from '../src/protocol/records/index.js';
import { leadersOf, spread, startCluster, until, type BrokerCluster } from '../test/support/cluster.js';
import { RawClient } from '../test/support/raw-client.js';
import { runJavaClient } from './support/java.js';

const PARTITIONS = 12;
let cluster: BrokerCluster;

beforeAll(async () => {
  cluster = await startCluster(3);
  const client = await RawClient.connect(cluster.node(1).bootstrap);
  const topics = ['lead-rdkafka', 'lead-java', 'lead-kill'].map((name) => ({ name, numPartitions: PARTITIONS, replicationFactor: 1 }));
  const res = await client.request(CreateTopicsApi, 7, { topics, timeoutMs: 5000 });
  client.close();
  expect(res.topics.map((t) => t.errorCode)).toEqual([ErrorCode.NONE, ErrorCode.NONE, ErrorCode.NONE]);
  for (const { name } of topics) {
    await until(`${name} is led 4/4/4`, async () => JSON.stringify(spread(await leadersOf(cluster.node(1).bootstrap, name))) === JSON.stringify({ 1: 4, 2: 4, 3: 4 }));
  }
}, 60_000);
afterAll(async () => {
  await cluster?.stop();
});

/** The values stored in each partition of the topic, in offset order. */
async function stored(topic: string): Promise<string[][]> {
  const rows = await cluster.query<{ partition: number; data: Buffer }>(
    'SELECT b.partition, b.data FROM batches b JOIN topics t USING (topic_id) WHERE t.name = $1 ORDER BY b.partition, b.base_offset',
    [topic],
  );
  const values: string[][] = Array.from({ length: PARTITIONS }, () => []);
  for (const row of rows) {
    for (const h of parseBatches(row.data, { mode: 'log' }).batches) {
      if (h.isControl) continue;
      for (const r of decodeRecords(row.data, h).records) values[row.partition]!.push(r.value!.toString());
    }
  }
  return values;
}

function rdkafkaProducer(bootstrap: string): ck.Producer {
  return new ck.Producer({
    'bootstrap.servers': bootstrap,
    'client.id': 'compat-leadership',
    'enable.idempotence': true,
    acks: -1,
    'linger.ms': 2,
    'retry.backoff.ms': 50,
    'retry.backoff.max.ms': 200,
    'topic.metadata.refresh.interval.ms': 1000,
    dr_cb: true,
    dr_msg_cb: true,
  });
}

async function connect(producer: ck.Producer): Promise<void> {
  await new Promise<void>((res, rej) => producer.connect({}, (err) => (err ? rej(err) : res())));
  producer.setPollInterval(5);
}

async function flushAndClose(producer: ck.Producer): Promise<void> {
  await new Promise<void>((res, rej) => producer.flush(30_000, (err) => (err ? rej(err) : res())));
  await new Promise<void>((res) => producer.disconnect(() => res()));
}

describe('each client reaches all three brokers', () => {
  it('librdkafka, bootstrapped with one broker, produces to the leaders of all twelve partitions', async () => {
    const producer = rdkafkaProducer(cluster.node(1).bootstrap);
    await connect(producer);
    const failed: string[] = [];
    producer.on('delivery-report', (err) => err && failed.push(err.message));
    for (let i = 0; i < 10; i++) for (let p = 0; p < PARTITIONS; p++) producer.produce('lead-rdkafka', p, Buffer.from(`${p}-${i}`));
    await flushAndClose(producer);
    expect(failed).toEqual([]);
    const values = await stored('lead-rdkafka');
    values.forEach((v, p) => expect(v).toEqual(Array.from({ length: 10 }, (_, i) => `${p}-${i}`)));
  });

  it('the Java producer, bootstrapped with one broker, produces to the leaders of all twelve partitions', async () => {
    const res = await runJavaClient(cluster.node(2).bootstrap, [{ id: 'many', op: 'produceMany', topic: 'lead-java', partitions: PARTITIONS, count: 10 }]);
    expect(res.many).toEqual({ sent: PARTITIONS * 10, wrongOffsets: [] });
    const values = await stored('lead-java');
    values.forEach((v, p) => expect(v).toEqual(Array.from({ length: 10 }, (_, i) => `${p}-${i}`)));
  });
});

describe('kill -9 of one broker under acks=all idempotent load', () => {
  it('loses no acknowledged record, stores none twice, and carries on through the survivors', async () => {
    const before = await leadersOf(cluster.node(1).bootstrap, 'lead-kill');
    const producer = rdkafkaProducer(cluster.bootstrap);
    await connect(producer);
    const acked = new Set<string>();
    const failed: string[] = [];
    /** Per partition, the time of each acknowledgement. */
    const ackedAt: number[][] = Array.from({ length: PARTITIONS }, () => []);
    producer.on('delivery-report', (err, report) => {
      if (err) failed.push(`${String(report.value)}: ${err.message}`);
      else {
        acked.add(String(report.value));
        ackedAt[report.partition]!.push(Date.now());
      }
    });
    let sending = true;
    let sent = 0;
    const load = (async () => {
      for (let i = 0; sending; i++) {
        for (let p = 0; p < PARTITIONS; p++) producer.produce('lead-kill', p, Buffer.from(`${p}-${i}`));
        sent += PARTITIONS;
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    await until('the load is under way', () => acked.size >= 500).catch((err: Error) => {
      throw new Error(`${err.message}: ${sent} sent, ${acked.size} acknowledged, failed: ${failed.slice(0, 3).join('; ')}`);
    });
    const killedAt = Date.now();
    await cluster.kill(3);
    const moved = before.flatMap((b, p) => (b.leader === 3 ? [p] : []));
    // The producer carries on: every partition the killed broker led is acknowledged again.
    await until('the killed broker’s partitions are acknowledged again', () => moved.every((p) => ackedAt[p]!.some((t) => t > killedAt + 100)), 30_000);
    const resumedAt = Math.max(...moved.map((p) => ackedAt[p]!.find((t) => t > killedAt + 100)!));
    await new Promise((r) => setTimeout(r, 500));
    sending = false;
    await load;
    await flushAndClose(producer);
    console.log(`kill -9 under load: ${sent} records sent, ${acked.size} acknowledged; the killed broker's partitions were acknowledged again ${resumedAt - killedAt} ms after the kill`);

    expect(failed).toEqual([]);
    const values = await stored('lead-kill');
    const all = values.flat();
    expect(new Set(all).size).toBe(all.length); // no duplicates
    const kept = new Set(all);
    expect([...acked].filter((v) => !kept.has(v))).toEqual([]); // nothing acknowledged lost
    // In order per partition, with no gaps among what is stored.
    values.forEach((v, p) => expect(v).toEqual(Array.from({ length: v.length }, (_, i) => `${p}-${i}`)));
    await until('the survivors lead 6/6', async () => JSON.stringify(spread(await leadersOf(cluster.node(1).bootstrap, 'lead-kill'))) === JSON.stringify({ 1: 6, 2: 6 }));
  }, 60_000);
});
