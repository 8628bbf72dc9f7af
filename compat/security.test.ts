// Security with real clients: kafkajs (SASL PLAIN / SCRAM-SHA-256 /
// SCRAM-SHA-512 over SASL_SSL), kcat (librdkafka 2.0.2, SASL_SSL SCRAM and
// PLAIN) and kafka-python 2.0.2 (SaslHandshake v0 with raw tokens, over
// SASL_PLAINTEXT). Each produces and consumes; a wrong password is refused; a
// client that skips authentication is refused and stores nothing.
import { readFileSync } from 'node:fs';
import { Kafka, logLevel, type SASLOptions } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentialFromPassword } from '../src/security/scram.js';
import { startTestBroker, type TestBroker } from '../test/support/broker.js';
import { makeTestPki, type TestPki } from '../test/security/certs.js';
import { KCAT } from './support/kcat.js';
import { PYTHON, run } from './support/spawn.js';

let pki: TestPki;
let broker: TestBroker;
let saslSsl: string;
let saslPlaintext: string;

beforeAll(async () => {
  pki = makeTestPki();
  broker = await startTestBroker({
    listeners: 'PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0',
    sslCertFile: pki.serverCert,
    sslKeyFile: pki.serverKey,
    autoCreateTopicsEnable: true,
  });
  saslSsl = `localhost:${broker.ports.SASL_SSL}`;
  saslPlaintext = `127.0.0.1:${broker.ports.SASL_PLAINTEXT}`;
  await broker.context.users.alter([
    { kind: 'upsert', user: 'app', mechanism: 'SCRAM-SHA-256', credential: await credentialFromPassword('SCRAM-SHA-256', 'app-secret') },
    { kind: 'upsert', user: 'app', mechanism: 'SCRAM-SHA-512', credential: await credentialFromPassword('SCRAM-SHA-512', 'app-secret') },
  ]);
});
afterAll(async () => {
  await broker?.destroy();
  pki?.remove();
});

const count = async (topic: string) =>
  (await broker.query<{ n: string }>(`SELECT coalesce(sum(b.record_count), 0)::text AS n FROM batches b JOIN topics t USING (topic_id) WHERE t.name = $1`, [topic]))[0]!.n;

describe('kafkajs over SASL_SSL', () => {
  const client = (sasl: SASLOptions) =>
    new Kafka({ clientId: 'compat-security', brokers: [saslSsl], ssl: { ca: [readFileSync(pki.caCert, 'utf8')] }, sasl, logLevel: logLevel.NOTHING, retry: { retries: 0 } });

  for (const mechanism of ['plain', 'scram-sha-256', 'scram-sha-512'] as const) {
    it(`${mechanism}: produces and consumes`, async () => {
      const kafka = client({ mechanism, username: 'app', password: 'app-secret' } as SASLOptions);
      const topic = `secure-kafkajs-${mechanism}`;
      const producer = kafka.producer();
      await producer.connect();
      await producer.send({
        topic,
        messages: [
          { key: 'k', value: 'v1' },
          { key: 'k', value: 'v2' },
        ],
      });
      await producer.disconnect();
      const consumer = kafka.consumer({ groupId: `g-${mechanism}` });
      await consumer.connect();
      await consumer.subscribe({ topic, fromBeginning: true });
      const seen: string[] = [];
      await new Promise<void>((resolve) => {
        void consumer.run({
          eachMessage: async ({ message }) => {
            seen.push(message.value!.toString());
            if (seen.length === 2) resolve();
          },
        });
      });
      await consumer.disconnect();
      expect(seen).toEqual(['v1', 'v2']);
    });

    it(`${mechanism}: refuses a wrong password`, async () => {
      const producer = client({ mechanism, username: 'app', password: 'wrong' } as SASLOptions).producer();
      await expect(producer.connect()).rejects.toThrow(/authentication failed/i);
    });
  }

  it('refuses a client that does not authenticate on a SASL listener', async () => {
    const kafka = new Kafka({ brokers: [saslSsl], ssl: { ca: [readFileSync(pki.caCert, 'utf8')] }, logLevel: logLevel.NOTHING, retry: { retries: 0 }, connectionTimeout: 2000, requestTimeout: 2000 });
    const producer = kafka.producer();
    await expect(producer.connect().then(() => producer.send({ topic: 'secure-unauth', messages: [{ value: 'x' }] }))).rejects.toThrow();
    await producer.disconnect().catch(() => {});
    expect(await count('secure-unauth')).toBe('0');
  });
});

describe('kcat (librdkafka) over SASL_SSL', () => {
  const sasl = (mechanism: string, password: string) => [
    '-X',
    'security.protocol=SASL_SSL',
    '-X',
    `sasl.mechanisms=${mechanism}`,
    '-X',
    'sasl.username=app',
    '-X',
    `sasl.password=${password}`,
    '-X',
    `ssl.ca.location=${pki.caCert}`,
  ];
  const kcat = (args: string[], input?: string) => run(KCAT, ['-b', saslSsl, '-m', '5', ...args], { input, timeoutMs: 20_000 });

  for (const mechanism of ['SCRAM-SHA-256', 'SCRAM-SHA-512', 'PLAIN']) {
    it(`${mechanism}: produces and consumes`, async () => {
      const topic = `secure-kcat-${mechanism.toLowerCase()}`;
      const produced = await kcat(['-P', '-t', topic, '-X', 'acks=all', ...sasl(mechanism, 'app-secret')], 'one\ntwo\n');
      expect(produced.code, produced.stderr).toBe(0);
      const consumed = await kcat(['-C', '-t', topic, '-o', 'beginning', '-e', '-q', ...sasl(mechanism, 'app-secret')]);
      expect(consumed.code, consumed.stderr).toBe(0);
      expect(consumed.stdout.toString()).toBe('one\ntwo\n');
    });
  }

  it('refuses a wrong password and an unauthenticated producer', async () => {
    const wrong = await kcat(['-L', ...sasl('SCRAM-SHA-256', 'wrong')]);
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toMatch(/Authentication failed|SASL authentication error/i);
    const unauth = await run(KCAT, ['-b', saslPlaintext, '-m', '5', '-P', '-t', 'secure-kcat-unauth', '-X', 'message.timeout.ms=3000'], { input: 'x\n', timeoutMs: 20_000 });
    expect(unauth.code).not.toBe(0);
    expect(await count('secure-kcat-unauth')).toBe('0');
  });
});

describe('kafka-python (SaslHandshake v0, raw tokens) over SASL_PLAINTEXT', () => {
  const script = `
import sys
from kafka import KafkaProducer, KafkaConsumer
mech, password, topic = sys.argv[1], sys.argv[2], sys.argv[3]
opts = dict(bootstrap_servers=${JSON.stringify('BOOT')}, security_protocol='SASL_PLAINTEXT', sasl_mechanism=mech, sasl_plain_username='app', sasl_plain_password=password, api_version=(1, 0))
p = KafkaProducer(max_block_ms=5000, **opts)
p.send(topic, b'py-1').get(timeout=10)
p.close()
c = KafkaConsumer(topic, auto_offset_reset='earliest', consumer_timeout_ms=3000, **opts)
print(','.join(m.value.decode() for m in c))
`;
  const python = (mechanism: string, password: string, topic: string) =>
    run(PYTHON, ['-c', script.replace('"BOOT"', JSON.stringify(saslPlaintext)), mechanism, password, topic], { timeoutMs: 30_000 });

  for (const mechanism of ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512']) {
    it(`${mechanism}: produces and consumes`, async () => {
      const r = await python(mechanism, 'app-secret', `secure-python-${mechanism.toLowerCase()}`);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout.toString().trim()).toBe('py-1');
    });
  }

  it('refuses a wrong password', async () => {
    const r = await python('SCRAM-SHA-256', 'wrong', 'secure-python-wrong');
    expect(r.code).not.toBe(0);
    expect(await count('secure-python-wrong')).toBe('0');
  });
});
