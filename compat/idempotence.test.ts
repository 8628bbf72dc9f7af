// Idempotent producers through a broker killed with SIGKILL and restarted
// mid-run: afterwards every record is in the log exactly once, in order
// (librdkafka via confluent-kafka-python, and kafkajs with idempotent: true).
import { fileURLToPath } from 'node:url';
import { Kafka, logLevel } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { scratchSchema, testDatabaseUrl } from '../test/support/broker.js';
import { freePort, spawnBroker, type BrokerProcess } from '../test/support/broker-process.js';
import { kcat, KCAT_FORMAT, parseKcatFormat } from './support/kcat.js';
import { PYTHON, run } from './support/spawn.js';

const schema = scratchSchema();

/** Starts the broker, and kills (SIGKILL) and restarts it on the same port after `killAfterMs`. */
async function brokerWithCrash(port: number, killAfterMs: number): Promise<{ restarted: Promise<BrokerProcess>; first: BrokerProcess; killedAt: () => number }> {
  const env = { DATABASE_URL: testDatabaseUrl(), PGKAFKA_SCHEMA: schema, PGKAFKA_PORT: String(port) };
  const first = await spawnBroker(env);
  let killedAt = Infinity;
  const restarted = (async () => {
    await new Promise((r) => setTimeout(r, killAfterMs));
    killedAt = Date.now();
    first.child.kill('SIGKILL');
    await first.exited;
    return spawnBroker(env);
  })();
  return { first, restarted, killedAt: () => killedAt };
}

async function readValues(bootstrap: string, topic: string): Promise<string[]> {
  const out = await kcat(bootstrap, ['-C', '-t', topic, '-p', '0', '-o', 'beginning', '-e', '-f', KCAT_FORMAT], undefined, 30_000);
  return parseKcatFormat(out.stdout).map((r) => r.value!.toString());
}

describe('idempotent producers across a broker crash', () => {
  it('librdkafka (enable.idempotence=true): every record exactly once, in order', async () => {
    const port = await freePort();
    const bootstrap = `127.0.0.1:${port}`;
    const { restarted, killedAt } = await brokerWithCrash(port, 700);
    const script = fileURLToPath(new URL('./python/idempotent_producer.py', import.meta.url));
    const result = await run(PYTHON, [script, bootstrap, 'idem-rdk', '600'], { timeoutMs: 90_000 });
    const finishedAt = Date.now();
    const broker = await restarted;
    try {
      expect(finishedAt).toBeGreaterThan(killedAt());
      const summary = JSON.parse(result.stdout.toString());
      expect(summary).toMatchObject({ delivered: 600, undelivered: 0 });
      expect(await readValues(bootstrap, 'idem-rdk')).toEqual(Array.from({ length: 600 }, (_, i) => String(i)));
    } finally {
      broker.child.kill('SIGTERM');
      await broker.exited;
    }
  });

  it('kafkajs (idempotent: true): every record exactly once, in order', async () => {
    const port = await freePort();
    const bootstrap = `127.0.0.1:${port}`;
    const { restarted, killedAt } = await brokerWithCrash(port, 700);
    const kafka = new Kafka({ brokers: [bootstrap], logLevel: logLevel.NOTHING, retry: { initialRetryTime: 50, retries: 30, maxRetryTime: 1000 } });
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    for (let i = 0; i < 300; i++) {
      await producer.send({ topic: 'idem-kjs', acks: -1, messages: [{ partition: 0, value: String(i) }] });
      await new Promise((r) => setTimeout(r, 5));
    }
    const finishedAt = Date.now();
    await producer.disconnect();
    expect(finishedAt).toBeGreaterThan(killedAt());
    const broker = await restarted;
    try {
      expect(await readValues(bootstrap, 'idem-kjs')).toEqual(Array.from({ length: 300 }, (_, i) => String(i)));
    } finally {
      broker.child.kill('SIGTERM');
      await broker.exited;
    }
  });
});
