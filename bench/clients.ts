// Thin wrappers around the Kafka clients the benchmark drives: the librdkafka
// client (node-rdkafka-style API of @confluentinc/kafka-javascript) and kafkajs.
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { Kafka, logLevel } from 'kafkajs';
import { sleep } from './stats.js';

const require = createRequire(import.meta.url);
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const rdkafka: any = require('@confluentinc/kafka-javascript');

/** 1,024 distinct 16-byte keys, reused round-robin. */
export const KEYS: Buffer[] = Array.from({ length: 1024 }, () => randomBytes(16));

export function kafkajs(bootstrap: string): Kafka {
  return new Kafka({ clientId: 'pgkafka-bench', brokers: [bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 3 } });
}

export async function createTopic(bootstrap: string, topic: string, partitions: number): Promise<void> {
  const admin = kafkajs(bootstrap).admin();
  await admin.connect();
  try {
    await admin.createTopics({ topics: [{ topic, numPartitions: partitions }], waitForLeaders: true, timeout: 30_000 });
  } finally {
    await admin.disconnect();
  }
}

export interface ProduceResult {
  seconds: number;
  errors: number;
  firstError?: string;
}

/** kafkajs: sends of `perSend` messages, `inFlight` sends outstanding, acks=-1. */
export async function produceKafkajs(bootstrap: string, topic: string, partitions: number, count: number, value: Buffer, perSend = 1000, inFlight = 4): Promise<ProduceResult> {
  const producer = kafkajs(bootstrap).producer({ allowAutoTopicCreation: false });
  await producer.connect();
  let next = 0;
  let errors = 0;
  let firstError: string | undefined;
  const t0 = performance.now();
  const worker = async () => {
    while (next < count) {
      const start = next;
      const n = Math.min(perSend, count - start);
      next += n;
      const messages = new Array(n);
      for (let i = 0; i < n; i++) messages[i] = { key: KEYS[(start + i) & 1023], value, partition: (start + i) % partitions };
      try {
        await producer.send({ topic, acks: -1, messages, timeout: 30_000 });
      } catch (err) {
        errors += n;
        firstError ??= String(err);
      }
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  const seconds = (performance.now() - t0) / 1000;
  await producer.disconnect();
  return { seconds, errors, firstError };
}

function rdConnect<T>(client: T & { connect(o: unknown, cb: (err: unknown) => void): void }, timeoutMs = 20_000): Promise<T> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('librdkafka connect timed out')), timeoutMs);
    client.connect({ timeout: timeoutMs }, (err) => {
      clearTimeout(t);
      if (err) reject(err instanceof Error ? err : new Error(JSON.stringify(err)));
      else resolve(client);
    });
  });
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type RdProducer = any;

export async function rdProducer(bootstrap: string, conf: Record<string, unknown> = {}): Promise<RdProducer> {
  const p = new rdkafka.Producer({
    'metadata.broker.list': bootstrap,
    'client.id': 'pgkafka-bench',
    dr_cb: true,
    'linger.ms': 5,
    'batch.num.messages': 10000,
    'queue.buffering.max.messages': 2_000_000,
    'queue.buffering.max.kbytes': 2_000_000,
    'request.required.acks': -1,
    'compression.codec': 'none',
    'enable.idempotence': false,
    ...conf,
  });
  await rdConnect(p);
  p.setPollInterval(5);
  return p;
}

export function rdDisconnect(c: { disconnect(cb: () => void): void }): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, 10_000);
    c.disconnect(() => {
      clearTimeout(t);
      resolve();
    });
  });
}

/** librdkafka producer: enqueue every record (explicit partition round-robin), wait for all delivery reports. */
export async function produceRdkafka(bootstrap: string, topic: string, partitions: number, count: number, value: Buffer, timeoutMs = 120_000): Promise<ProduceResult> {
  const p = await rdProducer(bootstrap);
  let delivered = 0;
  let errors = 0;
  let firstError: string | undefined;
  let resolveDone!: () => void;
  const done = new Promise<void>((r) => (resolveDone = r));
  p.on('delivery-report', (err: unknown) => {
    if (err) {
      errors++;
      firstError ??= String((err as Error).message ?? err);
    } else delivered++;
    if (delivered + errors >= count) resolveDone();
  });
  const t0 = performance.now();
  const deadline = Date.now() + timeoutMs;
  let i = 0;
  while (i < count && Date.now() < deadline) {
    const end = Math.min(count, i + 5000);
    try {
      for (; i < end; i++) p.produce(topic, i % partitions, value, KEYS[i & 1023]);
    } catch (err) {
      // queue full: let librdkafka drain
      if (!/full/i.test(String(err))) throw err;
      await sleep(2);
    }
    await new Promise((r) => setImmediate(r));
  }
  const timer = setTimeout(resolveDone, Math.max(0, deadline - Date.now()));
  await done;
  clearTimeout(timer);
  const seconds = (performance.now() - t0) / 1000;
  if (delivered + errors < count) {
    errors += count - delivered - errors;
    firstError ??= 'timed out waiting for delivery reports';
  }
  await rdDisconnect(p);
  return { seconds, errors, firstError };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type RdConsumer = any;

export async function rdConsumer(bootstrap: string, conf: Record<string, unknown> = {}): Promise<RdConsumer> {
  const c = new rdkafka.KafkaConsumer(
    {
      'metadata.broker.list': bootstrap,
      'client.id': 'pgkafka-bench',
      'group.id': `bench-${randomBytes(4).toString('hex')}`,
      'enable.auto.commit': false,
      'enable.partition.eof': false,
      ...conf,
    },
    { 'auto.offset.reset': 'earliest' },
  );
  return rdConnect(c);
}

/** Reads `count` records from offset 0 of the given partitions with assign(); returns seconds and bytes of values. */
export async function consumeRdkafka(bootstrap: string, topic: string, partitions: number[], count: number, timeoutMs = 120_000): Promise<{ seconds: number; received: number; bytes: number }> {
  const c = await rdConsumer(bootstrap, { 'fetch.wait.max.ms': 100, 'queued.min.messages': 200_000, 'fetch.message.max.bytes': 4_194_304 });
  c.setDefaultConsumeTimeout(200);
  let received = 0;
  let bytes = 0;
  const t0 = performance.now();
  c.assign(partitions.map((partition) => ({ topic, partition, offset: 0 })));
  const deadline = Date.now() + timeoutMs;
  while (received < count && Date.now() < deadline) {
    const msgs: { value: Buffer | null }[] = await new Promise((resolve, reject) => c.consume(10_000, (err: unknown, m: { value: Buffer | null }[]) => (err ? reject(err) : resolve(m))));
    received += msgs.length;
    for (const m of msgs) bytes += m.value?.length ?? 0;
  }
  const seconds = (performance.now() - t0) / 1000;
  await rdDisconnect(c);
  return { seconds, received, bytes };
}
