// SASL over the wire (RawClient, exact versions): SaslHandshake v0/v1,
// SaslAuthenticate v0-2 with PLAIN and SCRAM, failures closing the
// connection, the pre-authentication gate, the v0 raw-token flow, per-listener
// Metadata endpoints and the SCRAM credential admin APIs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/protocol/errors.js';
import {
  AlterUserScramCredentialsApi,
  ApiVersionsApi,
  DescribeUserScramCredentialsApi,
  FindCoordinatorApi,
  MetadataApi,
  ProduceApi,
  SaslAuthenticateApi,
  SaslHandshakeApi,
} from '../../src/protocol/messages/index.js';
import { credentialFromPassword } from '../../src/security/scram.js';
import { startTestBroker, type TestBroker } from '../support/broker.js';
import { RawClient } from '../support/raw-client.js';
import { ScramClient } from './scram-client.js';

let broker: TestBroker;
let sasl: string;
let plaintext: string;

beforeAll(async () => {
  broker = await startTestBroker({
    listeners: 'PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0',
    advertisedListeners: 'PLAINTEXT://localhost:0',
    connectionsMaxReauthMs: 60_000,
  });
  sasl = `127.0.0.1:${broker.ports.SASL_PLAINTEXT}`;
  plaintext = `127.0.0.1:${broker.ports.PLAINTEXT}`;
  await broker.context.users.alter([
    { kind: 'upsert', user: 'alice', mechanism: 'SCRAM-SHA-256', credential: await credentialFromPassword('SCRAM-SHA-256', 'alice-secret') },
    { kind: 'upsert', user: 'alice', mechanism: 'SCRAM-SHA-512', credential: await credentialFromPassword('SCRAM-SHA-512', 'alice-secret', 8192) },
  ]);
});
afterAll(() => broker?.destroy());

async function scram(client: RawClient, mechanism: 'SCRAM-SHA-256' | 'SCRAM-SHA-512', password: string, version = 2) {
  expect(await client.request(SaslHandshakeApi, 1, { mechanism })).toEqual({ errorCode: 0, mechanisms: ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'] });
  const c = new ScramClient(mechanism, 'alice', password);
  const first = await client.request(SaslAuthenticateApi, version, { authBytes: c.first() });
  expect(first.errorCode).toBe(0);
  const final = await client.request(SaslAuthenticateApi, version, { authBytes: c.final(first.authBytes) });
  return { final, verified: final.errorCode === 0 && c.verify(final.authBytes) };
}

describe('SASL listener', () => {
  it('advertises the SASL and SCRAM admin APIs', async () => {
    const client = await RawClient.connect(sasl);
    const res = await client.request(ApiVersionsApi, 3, { clientSoftwareName: 'test', clientSoftwareVersion: '1' });
    const keys = new Map(res.apiKeys.map((k) => [k.apiKey, [k.minVersion, k.maxVersion]]));
    expect(keys.get(17)).toEqual([0, 1]);
    expect(keys.get(36)).toEqual([0, 2]);
    expect(keys.get(50)).toEqual([0, 0]);
    expect(keys.get(51)).toEqual([0, 0]);
    client.close();
  });

  it('authenticates SCRAM-SHA-256 and SCRAM-SHA-512 (v0-2), then serves requests and advertises this listener', async () => {
    for (const [mechanism, version] of [
      ['SCRAM-SHA-256', 2],
      ['SCRAM-SHA-512', 1],
      ['SCRAM-SHA-256', 0],
    ] as const) {
      const client = await RawClient.connect(sasl);
      const { final, verified } = await scram(client, mechanism, 'alice-secret', version);
      expect(verified).toBe(true);
      expect(final.sessionLifetimeMs).toBe(version >= 1 ? 60_000n : 0n);
      const md = await client.request(MetadataApi, 12, { topics: [], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
      expect(md.brokers).toEqual([{ nodeId: 1, host: '127.0.0.1', port: broker.ports.SASL_PLAINTEXT, rack: null }]);
      const fc = await client.request(FindCoordinatorApi, 4, { keyType: 0, coordinatorKeys: ['g'] });
      expect(fc.coordinators[0]).toMatchObject({ host: '127.0.0.1', port: broker.ports.SASL_PLAINTEXT });
      client.close();
    }
  });

  it('answers a wrong password with SASL_AUTHENTICATION_FAILED and closes', async () => {
    const client = await RawClient.connect(sasl);
    const { final } = await scram(client, 'SCRAM-SHA-256', 'wrong');
    expect(final.errorCode).toBe(ErrorCode.SASL_AUTHENTICATION_FAILED);
    expect(final.errorMessage).toMatch(/invalid credentials with SASL mechanism SCRAM-SHA-256/);
    expect(await client.nextFrame()).toBeNull();

    const plain = await RawClient.connect(sasl);
    await plain.request(SaslHandshakeApi, 1, { mechanism: 'PLAIN' });
    const res = await plain.request(SaslAuthenticateApi, 2, { authBytes: Buffer.from('\u0000alice\u0000nope') });
    expect(res).toMatchObject({ errorCode: ErrorCode.SASL_AUTHENTICATION_FAILED, errorMessage: 'Authentication failed: Invalid username or password' });
    expect(await plain.nextFrame()).toBeNull();
  });

  it('refuses an unknown mechanism and closes', async () => {
    const client = await RawClient.connect(sasl);
    expect(await client.request(SaslHandshakeApi, 1, { mechanism: 'GSSAPI' })).toMatchObject({ errorCode: ErrorCode.UNSUPPORTED_SASL_MECHANISM });
    expect(await client.nextFrame()).toBeNull();
  });

  it('closes a connection that produces before authenticating, storing nothing', async () => {
    const client = await RawClient.connect(sasl);
    const closed = client.nextFrame();
    client.write(client.encode(ProduceApi, 9, { acks: -1, timeoutMs: 1000, topicData: [{ name: 'sneaky', partitionData: [] }] }));
    expect(await closed).toBeNull();
    const half = await RawClient.connect(sasl);
    await half.request(SaslHandshakeApi, 1, { mechanism: 'PLAIN' });
    const closedToo = half.nextFrame();
    half.write(half.encode(MetadataApi, 12, { topics: null, allowAutoTopicCreation: true, includeTopicAuthorizedOperations: false }));
    expect(await closedToo).toBeNull();
    expect(await broker.query(`SELECT name FROM topics WHERE name = 'sneaky'`)).toEqual([]);
  });

  it('serves the SaslHandshake v0 flow: raw tokens, PLAIN and SCRAM', async () => {
    const client = await RawClient.connect(sasl);
    expect((await client.request(SaslHandshakeApi, 0, { mechanism: 'PLAIN' })).errorCode).toBe(0);
    const token = Buffer.from('\u0000alice\u0000alice-secret');
    const size = Buffer.alloc(4);
    size.writeInt32BE(token.length);
    const answer = client.nextFrame();
    client.write(Buffer.concat([size, token]));
    expect(await answer).toEqual(Buffer.alloc(0));
    const md = await client.request(MetadataApi, 1, { topics: [] });
    expect(md.brokers[0]!.port).toBe(broker.ports.SASL_PLAINTEXT);
    client.close();

    const raw = (c: RawClient, t: Buffer) => {
      const s = Buffer.alloc(4);
      s.writeInt32BE(t.length);
      const next = c.nextFrame();
      c.write(Buffer.concat([s, t]));
      return next;
    };
    const s = await RawClient.connect(sasl);
    await s.request(SaslHandshakeApi, 0, { mechanism: 'SCRAM-SHA-512' });
    const c = new ScramClient('SCRAM-SHA-512', 'alice', 'alice-secret');
    const serverFirst = await raw(s, c.first());
    expect(c.verify((await raw(s, c.final(serverFirst!)))!)).toBe(true);
    expect((await s.request(MetadataApi, 1, { topics: [] })).brokers).toHaveLength(1);
    s.close();

    const bad = await RawClient.connect(sasl);
    await bad.request(SaslHandshakeApi, 0, { mechanism: 'PLAIN' });
    expect(await raw(bad, Buffer.from('\u0000alice\u0000wrong'))).toBeNull();
  });

  it('answers the SASL APIs with ILLEGAL_SASL_STATE on a PLAINTEXT listener (connection kept), which advertises its own endpoint', async () => {
    const client = await RawClient.connect(plaintext);
    const md = await client.request(MetadataApi, 12, { topics: [], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
    expect(md.brokers).toEqual([{ nodeId: 1, host: 'localhost', port: broker.ports.PLAINTEXT, rack: null }]);
    expect((await client.request(SaslHandshakeApi, 1, { mechanism: 'PLAIN' })).errorCode).toBe(ErrorCode.ILLEGAL_SASL_STATE);
    expect((await client.request(SaslAuthenticateApi, 2, { authBytes: Buffer.from('\u0000alice\u0000alice-secret') })).errorCode).toBe(ErrorCode.ILLEGAL_SASL_STATE);
    expect((await client.request(MetadataApi, 1, { topics: [] })).brokers).toHaveLength(1);
    client.close();
  });

  it('re-authenticates on the same connection (KIP-368)', async () => {
    const client = await RawClient.connect(sasl);
    expect((await scram(client, 'SCRAM-SHA-256', 'alice-secret')).verified).toBe(true);
    expect((await scram(client, 'SCRAM-SHA-256', 'alice-secret')).verified).toBe(true);
    expect((await client.request(MetadataApi, 1, { topics: [] })).brokers).toHaveLength(1);
    client.close();
  });
});

describe('SCRAM credential APIs', () => {
  it('describes, upserts (salted passwords) and deletes credentials with Kafka errors', async () => {
    const client = await RawClient.connect(plaintext);
    const described = await client.request(DescribeUserScramCredentialsApi, 0, { users: [{ name: 'alice' }, { name: 'nobody' }] });
    expect(described.results).toEqual([
      {
        user: 'alice',
        errorCode: 0,
        errorMessage: '',
        credentialInfos: [
          { mechanism: 1, iterations: 4096 },
          { mechanism: 2, iterations: 8192 },
        ],
      },
      { user: 'nobody', errorCode: ErrorCode.RESOURCE_NOT_FOUND, errorMessage: 'Attempt to describe a user credential that does not exist: nobody', credentialInfos: [] },
    ]);

    const { pbkdf2Sync } = await import('node:crypto');
    const salt = Buffer.from('0123456789abcdef');
    const altered = await client.request(AlterUserScramCredentialsApi, 0, {
      deletions: [{ name: 'ghost', mechanism: 1 }],
      upsertions: [
        { name: 'bob', mechanism: 1, iterations: 4096, salt, saltedPassword: pbkdf2Sync('bob-secret', salt, 4096, 32, 'sha256') },
        { name: 'carol', mechanism: 1, iterations: 100, salt, saltedPassword: pbkdf2Sync('x', salt, 100, 32, 'sha256') },
        { name: 'dave', mechanism: 3, iterations: 4096, salt, saltedPassword: Buffer.alloc(32) },
      ],
    });
    expect(altered.results).toEqual([
      { user: 'ghost', errorCode: ErrorCode.RESOURCE_NOT_FOUND, errorMessage: 'Attempt to delete a user credential that does not exist' },
      { user: 'bob', errorCode: 0, errorMessage: null },
      { user: 'carol', errorCode: ErrorCode.UNACCEPTABLE_CREDENTIAL, errorMessage: 'Too few iterations' },
      { user: 'dave', errorCode: ErrorCode.UNSUPPORTED_SASL_MECHANISM, errorMessage: 'Unknown SCRAM mechanism' },
    ]);
    const stored = await broker.query<{ user_name: string }>('SELECT user_name FROM scram_credentials ORDER BY 1');
    expect(stored.map((r) => r.user_name)).toEqual(['alice', 'alice', 'bob']);

    const s = await RawClient.connect(sasl);
    await s.request(SaslHandshakeApi, 1, { mechanism: 'PLAIN' });
    expect((await s.request(SaslAuthenticateApi, 2, { authBytes: Buffer.from('\u0000bob\u0000bob-secret') })).errorCode).toBe(0);
    s.close();

    const deleted = await client.request(AlterUserScramCredentialsApi, 0, {
      deletions: [
        { name: 'bob', mechanism: 1 },
        { name: 'bob', mechanism: 1 },
      ],
      upsertions: [],
    });
    expect(deleted.results).toEqual([{ user: 'bob', errorCode: ErrorCode.DUPLICATE_RESOURCE, errorMessage: 'A user credential cannot be altered twice in the same request' }]);
    expect((await client.request(AlterUserScramCredentialsApi, 0, { deletions: [{ name: 'bob', mechanism: 1 }], upsertions: [] })).results[0]!.errorCode).toBe(0);
    const all = await client.request(DescribeUserScramCredentialsApi, 0, { users: null });
    expect(all.results.map((r) => r.user)).toEqual(['alice']);
    client.close();
  });
});
