// Apache Kafka's Java client (kafka-clients 4.4.0) against a broker with the
// authorizer on and SASL_PLAINTEXT, SASL_SSL and SSL (client certificates
// required) listeners: SASL/PLAIN and SCRAM-SHA-256 logins, TLS with the
// certificate's subject as the principal, ACLs created, described and deleted
// through the Admin API and enforced on produce and fetch, and SCRAM users
// described and altered through the Admin API. One JVM runs every operation.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestPki, type TestPki } from '../test/security/certs.js';
import { startTestBroker, type TestBroker } from '../test/support/broker.js';
import { addUser } from '../test/support/sasl.js';
import { runJavaClient, type JavaOp, type JavaResults } from './support/java.js';
import { dataset, expectRecords, fromJson, toJson } from './support/records.js';

let broker: TestBroker;
let pki: TestPki;
let res: JavaResults;

const CERT_PRINCIPAL = 'User:CN=client-1,O=pgkafka tests,C=US';
const recs = dataset('jc-sec', { partitions: 1, perPartition: 4 });

const jaas = (mechanism: 'PLAIN' | 'SCRAM-SHA-256', user: string, password: string) =>
  `org.apache.kafka.common.security.${mechanism === 'PLAIN' ? 'plain.PlainLoginModule' : 'scram.ScramLoginModule'} required username="${user}" password="${password}";`;

beforeAll(async () => {
  pki = makeTestPki();
  broker = await startTestBroker({
    listeners: 'SASL_PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0,SSL://127.0.0.1:0',
    sslCertFile: pki.serverCert,
    sslKeyFile: pki.serverKey,
    sslCaFile: pki.caCert,
    sslClientAuth: 'required',
    authorizerEnabled: true,
    superUsers: 'User:admin',
    autoCreateTopicsEnable: false,
  });
  await addUser(broker, 'admin', 'admin-secret');
  await addUser(broker, 'app', 'app-secret');

  const at = (listener: 'SASL_PLAINTEXT' | 'SASL_SSL' | 'SSL') => `127.0.0.1:${broker.ports[listener]}`;
  const trust = { 'ssl.truststore.type': 'PEM', 'ssl.truststore.location': pki.caCert };
  const saslSsl = (mechanism: 'PLAIN' | 'SCRAM-SHA-256', user: string, password: string) => ({
    'bootstrap.servers': at('SASL_SSL'),
    'security.protocol': 'SASL_SSL',
    'sasl.mechanism': mechanism,
    'sasl.jaas.config': jaas(mechanism, user, password),
    'max.block.ms': '5000',
    ...trust,
  });
  const tls = {
    'bootstrap.servers': at('SSL'),
    'security.protocol': 'SSL',
    'ssl.keystore.type': 'PEM',
    'ssl.keystore.certificate.chain': readFileSync(pki.clientCert, 'utf8'),
    'ssl.keystore.key': readFileSync(pki.clientKey, 'utf8'),
    'max.block.ms': '5000',
    ...trust,
  };
  const carol = saslSsl('SCRAM-SHA-256', 'carol', 'carol-secret');
  const allow = (principal: string, resourceType: string, name: string, operation: string) => ({ resourceType, name, patternType: 'PREFIXED', principal, host: '*', operation, permission: 'ALLOW' });
  const ops: JavaOp[] = [
    {
      id: 'create',
      op: 'createTopics',
      topics: [
        { name: 'jc-acl-orders', partitions: 1 },
        { name: 'jc-other', partitions: 1 },
        { name: 'jc-tls-events', partitions: 1 },
      ],
    },
    { id: 'users', op: 'describeUserScramCredentials' },
    {
      id: 'alter-users',
      op: 'alterUserScramCredentials',
      upserts: [
        { user: 'carol', mechanism: 'SCRAM-SHA-256', iterations: 8192, password: 'carol-secret' },
        { user: 'dave', mechanism: 'SCRAM-SHA-256', iterations: 4096, password: 'dave-secret' },
      ],
    },
    { id: 'delete-missing', op: 'alterUserScramCredentials', deletions: [{ user: 'app', mechanism: 'SCRAM-SHA-512' }] },
    { id: 'users-after', op: 'describeUserScramCredentials', users: ['carol', 'dave', 'nobody'] },
    { id: 'carol-refused', op: 'produce', topic: 'jc-acl-orders', records: toJson(recs), config: carol },
    { id: 'acls', op: 'createAcls', acls: [allow('User:carol', 'TOPIC', 'jc-acl-', 'WRITE'), allow('User:carol', 'TOPIC', 'jc-acl-', 'READ'), allow(CERT_PRINCIPAL, 'TOPIC', 'jc-tls-', 'WRITE')] },
    { id: 'describe-acls', op: 'describeAcls' },
    { id: 'carol-produce', op: 'produce', topic: 'jc-acl-orders', records: toJson(recs), config: carol },
    { id: 'carol-consume', op: 'consume', topic: 'jc-acl-orders', partitions: [0], config: carol },
    { id: 'carol-other', op: 'produce', topic: 'jc-other', records: toJson(recs), config: carol },
    { id: 'tls-produce', op: 'produce', topic: 'jc-tls-events', records: toJson(recs), config: tls },
    { id: 'tls-consume', op: 'consume', topic: 'jc-tls-events', partitions: [0], config: tls },
    { id: 'plain-ssl-produce', op: 'produce', topic: 'jc-other', records: toJson(recs), config: saslSsl('PLAIN', 'admin', 'admin-secret') },
    { id: 'plain-ssl-consume', op: 'consume', topic: 'jc-other', partitions: [0], config: saslSsl('PLAIN', 'admin', 'admin-secret') },
    { id: 'wrong-password', op: 'produce', topic: 'jc-acl-orders', records: toJson(recs), config: { ...saslSsl('SCRAM-SHA-256', 'carol', 'wrong'), 'max.block.ms': '1500' } },
    { id: 'delete-acls', op: 'deleteAcls', filters: [{ principal: 'User:carol', operation: 'READ' }] },
    { id: 'carol-consume-after', op: 'consume', topic: 'jc-acl-orders', partitions: [0], config: carol },
    { id: 'delete-dave', op: 'alterUserScramCredentials', deletions: [{ user: 'dave', mechanism: 'SCRAM-SHA-256' }] },
    { id: 'dave-refused', op: 'produce', topic: 'jc-acl-orders', records: toJson(recs), config: { ...saslSsl('SCRAM-SHA-256', 'dave', 'dave-secret'), 'max.block.ms': '1500' } },
  ];
  // The Admin of the run logs in as the super user with SASL/PLAIN on the SASL_PLAINTEXT listener.
  res = await runJavaClient(at('SASL_PLAINTEXT'), ops, { 'security.protocol': 'SASL_PLAINTEXT', 'sasl.mechanism': 'PLAIN', 'sasl.jaas.config': jaas('PLAIN', 'admin', 'admin-secret') });
}, 180_000);
afterAll(async () => {
  await broker?.destroy();
  pki?.remove();
});

const count = async (topic: string) =>
  Number((await broker.query<{ n: string }>('SELECT coalesce(sum(b.record_count), 0)::text AS n FROM batches b JOIN topics t USING (topic_id) WHERE t.name = $1', [topic]))[0]!.n);

describe('Java client security', () => {
  it('SASL/PLAIN over SASL_PLAINTEXT and SASL_SSL: the super user creates topics, produces and consumes', () => {
    expect(res.create).toEqual({ 'jc-acl-orders': 'ok', 'jc-other': 'ok', 'jc-tls-events': 'ok' });
    expect(res['plain-ssl-produce'].delivered.map((d: { offset: number }) => d.offset)).toEqual([0, 1, 2, 3]);
    expectRecords(fromJson(res['plain-ssl-consume'].records), recs);
  });

  it('SCRAM users: described, created and deleted through the Admin API; a deleted credential no longer logs in', () => {
    expect(res.users).toEqual({ admin: [{ mechanism: 'SCRAM-SHA-256', iterations: 4096 }], app: [{ mechanism: 'SCRAM-SHA-256', iterations: 4096 }] });
    expect(res['alter-users']).toEqual({ carol: 'ok', dave: 'ok' });
    expect(res['delete-missing']).toEqual({ app: 'ResourceNotFoundException: Attempt to delete a user credential that does not exist' });
    expect(res['users-after']).toEqual({
      carol: [{ mechanism: 'SCRAM-SHA-256', iterations: 8192 }],
      dave: [{ mechanism: 'SCRAM-SHA-256', iterations: 4096 }],
      nobody: 'ResourceNotFoundException: Attempt to describe a user credential that does not exist: nobody',
    });
    expect(res['delete-dave']).toEqual({ dave: 'ok' });
    expect(res['dave-refused'].error).toMatch(/^SaslAuthenticationException: Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256/);
  });

  it('SCRAM-SHA-256 over SASL_SSL: refused without an ACL, allowed by a prefixed ACL, refused again once it is deleted', async () => {
    expect(res['carol-refused'].error).toBe('TopicAuthorizationException: Not authorized to access topics: [jc-acl-orders]');
    expect(res.acls).toBe('ok');
    expect(res['carol-produce'].delivered.map((d: { offset: number }) => d.offset)).toEqual([0, 1, 2, 3]);
    expectRecords(fromJson(res['carol-consume'].records), recs);
    expect(res['carol-other'].error).toBe('TopicAuthorizationException: Not authorized to access topics: [jc-other]');
    expect(await count('jc-acl-orders')).toBe(4);
    expect(res['delete-acls']).toEqual([{ resourceType: 'TOPIC', name: 'jc-acl-', patternType: 'PREFIXED', principal: 'User:carol', host: '*', operation: 'READ', permission: 'ALLOW' }]);
    expect(res['carol-consume-after'].error).toBe('TopicAuthorizationException: Not authorized to access topics: [jc-acl-orders]');
  });

  it('describeAcls lists the bindings as created', () => {
    expect(res['describe-acls'].map((a: Record<string, string>) => `${a.principal} ${a.operation} ${a.resourceType}:${a.patternType}:${a.name}`).sort()).toEqual(
      [`${CERT_PRINCIPAL} WRITE TOPIC:PREFIXED:jc-tls-`, 'User:carol READ TOPIC:PREFIXED:jc-acl-', 'User:carol WRITE TOPIC:PREFIXED:jc-acl-'].sort(),
    );
  });

  it("TLS with a client certificate: the certificate's subject is the principal the ACLs name", async () => {
    expect(res['tls-produce'].delivered.map((d: { offset: number }) => d.offset)).toEqual([0, 1, 2, 3]);
    expect(await count('jc-tls-events')).toBe(4);
    // WRITE only: the same principal may not read.
    expect(res['tls-consume'].error).toBe('TopicAuthorizationException: Not authorized to access topics: [jc-tls-events]');
  });

  it('a wrong password is refused', () => {
    expect(res['wrong-password'].error).toMatch(/^SaslAuthenticationException: Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256/);
  });
});
