// The SCRAM exchange against RFC 7677's SCRAM-SHA-256 test vector, PLAIN
// against stored SCRAM credentials, and the session state machine.
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/protocol/errors.js';
import { PlainServer } from '../../src/security/plain.js';
import { AuthenticationError } from '../../src/security/sasl-server.js';
import { credentialFromPassword, saltedPassword, ScramServer, type ScramCredential, type ScramMechanism } from '../../src/security/scram.js';
import { SecuritySession } from '../../src/security/session.js';

const RFC7677 = {
  salt: Buffer.from('W22ZaJ0SNY7soEsUEjb6gQ==', 'base64'),
  clientFirst: 'n,,n=user,r=rOprNGfwEbeRWgbNEkqO',
  serverNonce: '%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0',
  serverFirst: 'r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096',
  clientFinal: 'c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=',
  serverFinal: 'v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=',
};

const lookupFrom = (creds: Record<string, Partial<Record<ScramMechanism, ScramCredential>>>) => async (user: string, m: ScramMechanism) => creds[user]?.[m] ?? null;

/** A client's side of SCRAM, to drive the server with a chosen password. */
async function clientExchange(server: ScramServer, user: string, password: string, mechanism: ScramMechanism): Promise<Buffer> {
  const h = mechanism === 'SCRAM-SHA-256' ? 'sha256' : 'sha512';
  const bare = `n=${user},r=${randomBytes(12).toString('base64')}`;
  const serverFirst = (await server.evaluate(Buffer.from(`n,,${bare}`))).toString();
  const attrs = Object.fromEntries(serverFirst.split(',').map((p) => [p[0], p.slice(2)]));
  const salted = await saltedPassword(mechanism, password, Buffer.from(attrs.s!, 'base64'), Number(attrs.i));
  const clientKey = createHmac(h, salted).update('Client Key').digest();
  const storedKey = createHash(h).update(clientKey).digest();
  const withoutProof = `c=biws,r=${attrs.r}`;
  const signature = createHmac(h, storedKey).update(`${bare},${serverFirst},${withoutProof}`).digest();
  const proof = Buffer.from(clientKey.map((b, i) => b ^ signature[i]!));
  return server.evaluate(Buffer.from(`${withoutProof},p=${proof.toString('base64')}`));
}

describe('SCRAM-SHA-256 (RFC 7677 test vector)', () => {
  it('derives the exchange of section 3 byte for byte', async () => {
    const credential = await credentialFromPassword('SCRAM-SHA-256', 'pencil', 4096, RFC7677.salt);
    const server = new ScramServer('SCRAM-SHA-256', lookupFrom({ user: { 'SCRAM-SHA-256': credential } }), () => RFC7677.serverNonce);
    expect((await server.evaluate(Buffer.from(RFC7677.clientFirst))).toString()).toBe(RFC7677.serverFirst);
    expect(server.complete).toBe(false);
    expect((await server.evaluate(Buffer.from(RFC7677.clientFinal))).toString()).toBe(RFC7677.serverFinal);
    expect(server.complete).toBe(true);
    expect(server.principalName).toBe('user');
  });

  it('refuses a wrong proof, an unknown user, a changed nonce and channel binding', async () => {
    const credential = await credentialFromPassword('SCRAM-SHA-256', 'not pencil', 4096, RFC7677.salt);
    const lookup = lookupFrom({ user: { 'SCRAM-SHA-256': credential } });
    const wrong = new ScramServer('SCRAM-SHA-256', lookup, () => RFC7677.serverNonce);
    await wrong.evaluate(Buffer.from(RFC7677.clientFirst));
    await expect(wrong.evaluate(Buffer.from(RFC7677.clientFinal))).rejects.toThrow(/invalid credentials with SASL mechanism SCRAM-SHA-256/);
    await expect(new ScramServer('SCRAM-SHA-256', lookup).evaluate(Buffer.from('n,,n=nobody,r=abc'))).rejects.toThrow(/invalid credentials/);
    await expect(new ScramServer('SCRAM-SHA-256', lookup).evaluate(Buffer.from('p=tls-unique,,n=user,r=abc'))).rejects.toThrow(/channel binding/);
    await expect(new ScramServer('SCRAM-SHA-256', lookup).evaluate(Buffer.from('n,a=other,n=user,r=abc'))).rejects.toThrow(AuthenticationError);
    const nonce = new ScramServer('SCRAM-SHA-256', lookup, () => RFC7677.serverNonce);
    await nonce.evaluate(Buffer.from(RFC7677.clientFirst));
    await expect(nonce.evaluate(Buffer.from(RFC7677.clientFinal.replace('k0,p=', 'k1,p=')))).rejects.toThrow(/nonce/);
  });

  it('authenticates SCRAM-SHA-512 and names escaped users', async () => {
    const credential = await credentialFromPassword('SCRAM-SHA-512', 's3cret');
    const server = new ScramServer('SCRAM-SHA-512', lookupFrom({ 'a,b=c': { 'SCRAM-SHA-512': credential } }));
    const final = await clientExchange(server, 'a=2Cb=3Dc', 's3cret', 'SCRAM-SHA-512');
    expect(final.toString()).toMatch(/^v=/);
    expect(server.principalName).toBe('a,b=c');
  });
});

describe('PLAIN', () => {
  it('checks the password against the SCRAM credential', async () => {
    const lookup = lookupFrom({ alice: { 'SCRAM-SHA-512': await credentialFromPassword('SCRAM-SHA-512', 'pw') } });
    const ok = new PlainServer(lookup);
    expect(await ok.evaluate(Buffer.from('\u0000alice\u0000pw'))).toEqual(Buffer.alloc(0));
    expect(ok.principalName).toBe('alice');
    await expect(new PlainServer(lookup).evaluate(Buffer.from('\u0000alice\u0000nope'))).rejects.toThrow(/Invalid username or password/);
    await expect(new PlainServer(lookup).evaluate(Buffer.from('\u0000bob\u0000pw'))).rejects.toThrow(/Invalid username or password/);
    await expect(new PlainServer(lookup).evaluate(Buffer.from('bob\u0000alice\u0000pw'))).rejects.toThrow(/authorization id/);
  });
});

describe('SecuritySession', () => {
  const options = async (now = () => 0) => ({
    enabledMechanisms: ['PLAIN', 'SCRAM-SHA-256'],
    maxReauthMs: 1000,
    lookupCredential: lookupFrom({ alice: { 'SCRAM-SHA-256': await credentialFromPassword('SCRAM-SHA-256', 'pw') }, bob: { 'SCRAM-SHA-256': await credentialFromPassword('SCRAM-SHA-256', 'pw') } }),
    now,
  });

  it('serves only ApiVersions and SASL before authentication, everything after', async () => {
    const s = new SecuritySession('SASL_PLAINTEXT', await options());
    expect(s.refusal(18)).toBeNull();
    expect(s.refusal(0)).toMatch(/before SASL authentication/);
    expect(s.handshake('GSSAPI', 1)).toEqual({ errorCode: ErrorCode.UNSUPPORTED_SASL_MECHANISM, mechanisms: ['PLAIN', 'SCRAM-SHA-256'] });
    expect(s.closeAfterResponse).toBe(true);
    const t = new SecuritySession('SASL_PLAINTEXT', await options());
    expect(t.handshake('PLAIN', 1).errorCode).toBe(ErrorCode.NONE);
    const r = await t.authenticate(Buffer.from('\u0000alice\u0000pw'), 1);
    expect(r).toMatchObject({ errorCode: ErrorCode.NONE, sessionLifetimeMs: 1000n });
    expect(t.principal).toBe('User:alice');
    expect(t.refusal(0)).toBeNull();
    expect(new SecuritySession('PLAINTEXT', await options()).refusal(0)).toBeNull();
  });

  it('re-authenticates as the same user only, and closes an expired session', async () => {
    let now = 0;
    const s = new SecuritySession('SASL_SSL', await options(() => now));
    s.handshake('PLAIN', 1);
    await s.authenticate(Buffer.from('\u0000alice\u0000pw'), 1);
    now = 500;
    expect(s.handshake('PLAIN', 1).errorCode).toBe(ErrorCode.NONE);
    expect((await s.authenticate(Buffer.from('\u0000alice\u0000pw'), 1)).errorCode).toBe(ErrorCode.NONE);
    now = 1400;
    expect(s.refusal(1)).toBeNull();
    now = 1600;
    expect(s.refusal(1)).toMatch(/expired/);
    expect(s.handshake('PLAIN', 1).errorCode).toBe(ErrorCode.NONE);
    const other = await s.authenticate(Buffer.from('\u0000bob\u0000pw'), 1);
    expect(other).toMatchObject({ errorCode: ErrorCode.SASL_AUTHENTICATION_FAILED, errorMessage: expect.stringMatching(/Cannot change principals/) });
    expect(s.closeAfterResponse).toBe(true);
  });

  it('answers ILLEGAL_SASL_STATE on a listener without SASL (kept open) and for SaslAuthenticate before a handshake (closed)', async () => {
    const plain = new SecuritySession('PLAINTEXT', await options());
    expect(plain.handshake('PLAIN', 1).errorCode).toBe(ErrorCode.ILLEGAL_SASL_STATE);
    expect((await plain.authenticate(Buffer.from('x'), 1)).errorCode).toBe(ErrorCode.ILLEGAL_SASL_STATE);
    expect(plain.closeAfterResponse).toBe(false);
    const early = new SecuritySession('SASL_PLAINTEXT', await options());
    expect((await early.authenticate(Buffer.from('x'), 1)).errorCode).toBe(ErrorCode.ILLEGAL_SASL_STATE);
    expect(early.closeAfterResponse).toBe(true);
  });
});
