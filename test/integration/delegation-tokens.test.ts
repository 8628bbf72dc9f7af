// The delegation token APIs answer as a Kafka cluster without delegation
// token authentication (no delegation.token.secret.key): refused outright
// over PLAINTEXT (DELEGATION_TOKEN_REQUEST_NOT_ALLOWED), otherwise Kafka's
// checks then DELEGATION_TOKEN_AUTH_DISABLED; no token is ever created.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/protocol/errors.js';
import { CreateDelegationTokenApi, DescribeDelegationTokenApi, ExpireDelegationTokenApi, RenewDelegationTokenApi } from '../../src/protocol/messages/index.js';
import { AclOperation as Op, AclPermission, PatternType, ResourceType } from '../../src/security/acl.js';
import { startTestBroker, type TestBroker } from '../support/broker.js';
import { RawClient } from '../support/raw-client.js';
import { addUser, connectAs } from '../support/sasl.js';

let broker: TestBroker;
let plaintext: RawClient;
let alice: RawClient;

beforeAll(async () => {
  broker = await startTestBroker({ listeners: 'PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0', authorizerEnabled: true, superUsers: 'User:ANONYMOUS' });
  await addUser(broker, 'alice', 'alice-secret');
  plaintext = await RawClient.connect(`127.0.0.1:${broker.ports.PLAINTEXT!}`);
  alice = await connectAs(broker, 'alice', 'alice-secret');
});
afterAll(async () => {
  plaintext?.close();
  alice?.close();
  await broker?.destroy();
});

const create = (c: RawClient, version: number, owner: string | null = null, renewers = [{ principalType: 'User', principalName: 'bob' }]) =>
  c.request(CreateDelegationTokenApi, version, { ownerPrincipalType: owner === null ? null : 'User', ownerPrincipalName: owner, renewers, maxLifetimeMs: -1n });

describe('delegation tokens', () => {
  it('refuses every request over PLAINTEXT with DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, at every version', async () => {
    for (const v of [1, 2, 3]) {
      expect(await create(plaintext, v)).toMatchObject({ errorCode: ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, principalName: 'ANONYMOUS', tokenId: '', expiryTimestampMs: -1n });
      expect(await plaintext.request(DescribeDelegationTokenApi, v, { owners: null })).toMatchObject({ errorCode: ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, tokens: [] });
    }
    for (const v of [1, 2]) {
      expect(await plaintext.request(RenewDelegationTokenApi, v, { hmac: Buffer.from('x'), renewPeriodMs: 1000n })).toMatchObject({
        errorCode: ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED,
        expiryTimestampMs: -1n,
      });
      expect(await plaintext.request(ExpireDelegationTokenApi, v, { hmac: Buffer.from('x'), expiryTimePeriodMs: 1000n })).toMatchObject({
        errorCode: ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED,
        expiryTimestampMs: -1n,
      });
    }
  });

  it('answers DELEGATION_TOKEN_AUTH_DISABLED to an authenticated principal, and creates nothing', async () => {
    for (const v of [1, 2, 3]) {
      expect(await create(alice, v)).toMatchObject({
        errorCode: ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED,
        principalType: 'User',
        principalName: 'alice',
        tokenId: '',
        hmac: Buffer.alloc(0),
        issueTimestampMs: 0n,
        ...(v >= 3 ? { tokenRequesterPrincipalType: 'User', tokenRequesterPrincipalName: 'alice' } : {}),
      });
      expect(await alice.request(DescribeDelegationTokenApi, v, { owners: [{ principalType: 'User', principalName: 'alice' }] })).toMatchObject({
        errorCode: ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED,
        tokens: [],
      });
    }
    expect((await alice.request(RenewDelegationTokenApi, 2, { hmac: Buffer.from('x'), renewPeriodMs: 1000n })).errorCode).toBe(ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED);
    expect((await alice.request(ExpireDelegationTokenApi, 2, { hmac: Buffer.from('x'), expiryTimePeriodMs: 1000n })).errorCode).toBe(ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED);
  });

  it("checks a token for another owner (CREATE_TOKENS on the user) and the renewers' type first, as Kafka does", async () => {
    expect(await create(alice, 3, 'carol')).toMatchObject({ errorCode: ErrorCode.DELEGATION_TOKEN_AUTHORIZATION_FAILED, principalName: 'carol', tokenRequesterPrincipalName: 'alice' });
    await broker.context.authorizer.create([
      {
        resourceType: ResourceType.USER,
        resourceName: 'User:carol',
        patternType: PatternType.LITERAL,
        principal: 'User:alice',
        host: '*',
        operation: Op.CREATE_TOKENS,
        permissionType: AclPermission.ALLOW,
      },
    ]);
    expect((await create(alice, 3, 'carol')).errorCode).toBe(ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED);
    expect((await create(alice, 3, null, [{ principalType: 'Group', principalName: 'ops' }])).errorCode).toBe(ErrorCode.INVALID_PRINCIPAL_TYPE);
  });
});
