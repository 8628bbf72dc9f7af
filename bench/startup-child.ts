// One process of the `startup` section (bench/startup.ts): imports the library
// API, then for each case named on the command line starts a broker, produces
// one record with kafkajs (acks=all, a new topic), stops it, and prints one
// JSON line per case with its timings in milliseconds.
import { Kafka, logLevel } from 'kafkajs';

const [initdbCache, databaseUrl, ...cases] = process.argv.slice(2);
const t0 = performance.now();
const { startBroker } = await import('../src/index.js');
process.stdout.write(`${JSON.stringify({ case: 'import', ms: performance.now() - t0 })}\n`);
for (const kase of cases) {
  const started = performance.now();
  const broker = await startBroker(kase === 'external' ? { databaseUrl } : { initdbCache });
  const listening = performance.now();
  const kafka = new Kafka({ clientId: 'bench-startup', brokers: [broker.bootstrapServers], logLevel: logLevel.NOTHING });
  const producer = kafka.producer();
  await producer.connect();
  const [ack] = await producer.send({ topic: 'first', acks: -1, messages: [{ value: 'first' }] });
  const acked = performance.now();
  if (ack?.errorCode !== 0) throw new Error(`produce answered ${JSON.stringify(ack)}`);
  await producer.disconnect();
  const stopAt = performance.now();
  await broker.stop();
  const stopped = performance.now();
  process.stdout.write(`${JSON.stringify({ case: kase, startMs: listening - started, firstAckMs: acked - started, stopMs: stopped - stopAt })}\n`);
}
