// TLS listeners with a CA made by openssl at test time: client-certificate
// principals (RFC 2253 subject, as Kafka's default principal builder), an
// SSL listener requiring client certificates, SASL_SSL with kafkajs.
import { readFileSync } from 'node:fs';
import { connect, createServer, type TLSSocket } from 'node:tls';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/schema.js';
import { credentialFromPassword } from '../../src/security/scram.js';
import { tlsPrincipal, tlsServerOptions } from '../../src/security/tls.js';
import { startTestBroker, type TestBroker } from '../support/broker.js';
import { makeTestPki, type TestPki } from './certs.js';

let pki: TestPki;
let broker: TestBroker;

beforeAll(async () => {
  pki = makeTestPki();
  broker = await startTestBroker({
    listeners: 'SSL://127.0.0.1:0,SASL_SSL://127.0.0.1:0',
    sslCertFile: pki.serverCert,
    sslKeyFile: pki.serverKey,
    sslCaFile: pki.caCert,
    sslClientAuth: 'requested',
  });
  await broker.context.users.alter([{ kind: 'upsert', user: 'tls-user', mechanism: 'SCRAM-SHA-256', credential: await credentialFromPassword('SCRAM-SHA-256', 'pw') }]);
});
afterAll(async () => {
  await broker?.destroy();
  pki?.remove();
});

describe('TLS', () => {
  it('names a client certificate as Kafka does', async () => {
    const server = createServer(tlsServerOptions({ certFile: pki.serverCert, keyFile: pki.serverKey, caFile: pki.caCert, clientAuth: 'requested' }));
    const principals: (string | null)[] = [];
    server.on('secureConnection', (s: TLSSocket) => {
      principals.push(tlsPrincipal(s));
      s.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    const dial = (withCert: boolean) =>
      new Promise<void>((resolve, reject) => {
        const s = connect({ port, host: '127.0.0.1', ca: readFileSync(pki.caCert), ...(withCert ? { cert: readFileSync(pki.clientCert), key: readFileSync(pki.clientKey) } : {}) });
        s.on('error', reject);
        s.on('close', () => resolve());
        s.resume();
      });
    await dial(true);
    await dial(false);
    server.close();
    expect(principals).toEqual(['User:CN=client-1,O=pgkafka tests,C=US', null]);
  });

  it('needs a certificate and key for TLS listeners', () => {
    expect(() => loadConfig({}, { listeners: 'SASL_SSL://:9093' })).toThrow(ConfigError);
    expect(() => loadConfig({}, { listeners: 'FOO://:9093' })).toThrow(/must be one of/);
    expect(() => loadConfig({}, { listeners: 'PLAINTEXT://:1,PLAINTEXT://:2' })).toThrow(/twice/);
    expect(() => loadConfig({}, { listeners: 'PLAINTEXT://:1', advertisedListeners: 'SSL://h:2' })).toThrow(/not in listeners/);
    expect(loadConfig({}, { listeners: 'PLAINTEXT://0.0.0.0:9092,SASL_SSL://[::1]:9093', sslCertFile: 'c', sslKeyFile: 'k' }).listeners).toBe('PLAINTEXT://0.0.0.0:9092,SASL_SSL://[::1]:9093');
  });

  it('serves kafkajs over SSL with a client certificate and over SASL_SSL with SCRAM', async () => {
    const ca = [readFileSync(pki.caCert, 'utf8')];
    const ssl = new Kafka({
      brokers: [`localhost:${broker.ports.SSL}`],
      ssl: { ca, cert: readFileSync(pki.clientCert, 'utf8'), key: readFileSync(pki.clientKey, 'utf8') },
      logLevel: logLevel.NOTHING,
    });
    const admin = ssl.admin();
    await admin.connect();
    expect((await admin.describeCluster()).brokers).toEqual([{ nodeId: 1, host: '127.0.0.1', port: broker.ports.SSL }]);
    await admin.disconnect();

    const saslSsl = new Kafka({
      brokers: [`localhost:${broker.ports.SASL_SSL}`],
      ssl: { ca },
      sasl: { mechanism: 'scram-sha-256', username: 'tls-user', password: 'pw' },
      logLevel: logLevel.NOTHING,
    });
    const producer = saslSsl.producer();
    await producer.connect();
    await producer.send({ topic: 'tls-topic', messages: [{ value: 'over tls' }] });
    await producer.disconnect();
    const wrong = new Kafka({
      brokers: [`localhost:${broker.ports.SASL_SSL}`],
      ssl: { ca },
      sasl: { mechanism: 'plain', username: 'tls-user', password: 'nope' },
      logLevel: logLevel.NOTHING,
      retry: { retries: 0 },
    });
    const refused = wrong.producer();
    await expect(refused.connect()).rejects.toThrow(/SASL PLAIN authentication failed|Authentication failed/);
  });

  it('refuses an SSL client without a certificate when ssl.client.auth is required', async () => {
    const strict = await startTestBroker({ listeners: 'SSL://127.0.0.1:0', sslCertFile: pki.serverCert, sslKeyFile: pki.serverKey, sslCaFile: pki.caCert, sslClientAuth: 'required' });
    try {
      const ca = [readFileSync(pki.caCert, 'utf8')];
      const brokers = [`localhost:${strict.port}`];
      const anonymous = new Kafka({ brokers, ssl: { ca }, logLevel: logLevel.NOTHING, retry: { retries: 0 }, connectionTimeout: 2000 }).admin();
      await expect(anonymous.connect()).rejects.toThrow();
      const admin = new Kafka({ brokers, ssl: { ca, cert: readFileSync(pki.clientCert, 'utf8'), key: readFileSync(pki.clientKey, 'utf8') }, logLevel: logLevel.NOTHING }).admin();
      await admin.connect();
      expect((await admin.describeCluster()).brokers[0]!.port).toBe(strict.port);
      await admin.disconnect();
    } finally {
      await strict.destroy();
    }
  });
});
