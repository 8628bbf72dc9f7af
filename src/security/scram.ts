// SCRAM (RFC 5802) as Kafka uses it, for SHA-256 (RFC 7677) and SHA-512: the
// credential derived from a password (salt, iterations, stored key, server
// key — never the password itself) and the server side of the exchange.
// Kafka's ScramSaslServer is the model: no channel binding ("n,," or "y,,"),
// an authorisation id, if given, must equal the user name, and a failure
// never says whether the user or the password was wrong.
import { createHash, createHmac, pbkdf2, randomBytes, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import type { CredentialAlteration, ScramCredential, ScramMechanism } from '../storage/security-types.js';
import { AuthenticationError, type SaslServer } from './sasl-server.js';

export type { CredentialAlteration, ScramCredential, ScramMechanism };

const pbkdf2Async = promisify(pbkdf2);

export const SCRAM_MECHANISMS = ['SCRAM-SHA-256', 'SCRAM-SHA-512'] as const satisfies readonly ScramMechanism[];

/** Kafka's ScramMechanism enum on the wire (DescribeUserScramCredentials, AlterUserScramCredentials). */
export const SCRAM_MECHANISM_TYPES: Record<ScramMechanism, number> = { 'SCRAM-SHA-256': 1, 'SCRAM-SHA-512': 2 };
export function scramMechanismOfType(type: number): ScramMechanism | null {
  return SCRAM_MECHANISMS.find((m) => SCRAM_MECHANISM_TYPES[m] === type) ?? null;
}

/** Kafka's bounds on SCRAM iterations (ScramMechanism.minIterations, and the broker's maximum). */
export const MIN_ITERATIONS = 4096;
export const MAX_ITERATIONS = 16384;

const HASHES: Record<ScramMechanism, { hash: 'sha256' | 'sha512'; bytes: number }> = {
  'SCRAM-SHA-256': { hash: 'sha256', bytes: 32 },
  'SCRAM-SHA-512': { hash: 'sha512', bytes: 64 },
};

export function isScramMechanism(m: string): m is ScramMechanism {
  return (SCRAM_MECHANISMS as readonly string[]).includes(m);
}

const hmac = (mechanism: ScramMechanism, key: Buffer, data: string | Buffer) => createHmac(HASHES[mechanism].hash, key).update(data).digest();
const hash = (mechanism: ScramMechanism, data: Buffer) => createHash(HASHES[mechanism].hash).update(data).digest();

/** SaltedPassword := Hi(Normalize(password), salt, i). SASLprep is reduced to UTF-8, as in Kafka's ScramFormatter. */
export async function saltedPassword(mechanism: ScramMechanism, password: string, salt: Buffer, iterations: number): Promise<Buffer> {
  return pbkdf2Async(Buffer.from(password, 'utf8'), salt, iterations, HASHES[mechanism].bytes, HASHES[mechanism].hash);
}

/** The stored credential for a salted password (what AlterUserScramCredentials upsertions carry). */
export function credentialFromSaltedPassword(mechanism: ScramMechanism, salted: Buffer, salt: Buffer, iterations: number): ScramCredential {
  const clientKey = hmac(mechanism, salted, 'Client Key');
  return { salt, iterations, storedKey: hash(mechanism, clientKey), serverKey: hmac(mechanism, salted, 'Server Key') };
}

export async function credentialFromPassword(mechanism: ScramMechanism, password: string, iterations = MIN_ITERATIONS, salt = randomBytes(32)): Promise<ScramCredential> {
  return credentialFromSaltedPassword(mechanism, await saltedPassword(mechanism, password, salt, iterations), salt, iterations);
}

/** Whether `password` matches the credential (PLAIN checks passwords this way). */
export async function passwordMatches(mechanism: ScramMechanism, password: string, credential: ScramCredential): Promise<boolean> {
  const derived = credentialFromSaltedPassword(mechanism, await saltedPassword(mechanism, password, credential.salt, credential.iterations), credential.salt, credential.iterations);
  return derived.storedKey.length === credential.storedKey.length && timingSafeEqual(derived.storedKey, credential.storedKey);
}

/** RFC 5802 saslname: "=2C" is ",", "=3D" is "="; any other "=" is malformed. */
function decodeSaslName(s: string): string | null {
  if (/=(?!2C|3D)/.test(s)) return null;
  return s.replace(/=2C/g, ',').replace(/=3D/g, '=');
}

/** Parses "k=v,k=v" attributes (values may contain "="). */
function attributes(s: string): Map<string, string> | null {
  const out = new Map<string, string>();
  for (const part of s.split(',')) {
    const m = /^([a-zA-Z])=(.*)$/s.exec(part);
    if (!m) return null;
    out.set(m[1]!, m[2]!);
  }
  return out;
}

const PRINTABLE_NONCE = /^[\x21-\x2b\x2d-\x7e]+$/;

/**
 * The server side of one SCRAM exchange: client-first → server-first,
 * client-final → server-final. `lookup` finds a user's stored credential.
 */
export class ScramServer implements SaslServer {
  private state: 'first' | 'final' | 'done' = 'first';
  private user = '';
  private credential: ScramCredential | null = null;
  private gs2Header = '';
  private clientFirstBare = '';
  private serverFirst = '';
  private nonce = '';
  principalName: string | null = null;

  constructor(
    readonly mechanism: ScramMechanism,
    private readonly lookup: (user: string, mechanism: ScramMechanism) => Promise<ScramCredential | null>,
    private readonly serverNonce: () => string = () => randomBytes(24).toString('base64'),
  ) {}

  get complete(): boolean {
    return this.state === 'done';
  }

  private fail(): never {
    throw new AuthenticationError(`Authentication failed during authentication due to invalid credentials with SASL mechanism ${this.mechanism}`);
  }

  async evaluate(token: Buffer): Promise<Buffer> {
    const message = token.toString('utf8');
    if (this.state === 'first') return this.clientFirst(message);
    if (this.state === 'final') return this.clientFinal(message);
    throw new AuthenticationError('Unexpected SASL token after SCRAM authentication completed');
  }

  private async clientFirst(message: string): Promise<Buffer> {
    // gs2-header: ("n" | "y" | "p=…") "," [ "a=" authzid ] ","
    const m = /^([ny]),(a=[^,]*)?,(.*)$/s.exec(message);
    if (!m) throw new AuthenticationError(message.startsWith('p=') ? 'SCRAM channel binding is not supported' : 'Invalid SCRAM client first message');
    this.gs2Header = `${m[1]},${m[2] ?? ''},`;
    this.clientFirstBare = m[3]!;
    const attrs = attributes(this.clientFirstBare);
    const user = attrs?.get('n') !== undefined ? decodeSaslName(attrs.get('n')!) : null;
    const clientNonce = attrs?.get('r');
    if (!attrs || user === null || user === '' || !clientNonce || !PRINTABLE_NONCE.test(clientNonce) || attrs.has('m')) {
      throw new AuthenticationError('Invalid SCRAM client first message');
    }
    if (m[2] !== undefined) {
      const authzid = decodeSaslName(m[2].slice(2));
      if (authzid !== user) throw new AuthenticationError('Authentication failed: Client requested an authorization id that is different from username');
    }
    this.user = user;
    this.credential = await this.lookup(user, this.mechanism);
    if (!this.credential) this.fail();
    this.nonce = clientNonce + this.serverNonce();
    this.serverFirst = `r=${this.nonce},s=${this.credential.salt.toString('base64')},i=${this.credential.iterations}`;
    this.state = 'final';
    return Buffer.from(this.serverFirst, 'utf8');
  }

  private async clientFinal(message: string): Promise<Buffer> {
    const at = message.lastIndexOf(',p=');
    if (at < 0) throw new AuthenticationError('Invalid SCRAM client final message');
    const withoutProof = message.slice(0, at);
    const attrs = attributes(withoutProof);
    const proof = Buffer.from(message.slice(at + 3), 'base64');
    if (!attrs || attrs.get('c') !== Buffer.from(this.gs2Header, 'utf8').toString('base64')) {
      throw new AuthenticationError('Invalid SCRAM client final message: channel binding does not match');
    }
    // Kafka checks only that the nonce ends with the one it sent (ScramSaslServer), and
    // librdkafka 2.0.2 relies on that: it sends its own nonce again in front.
    if (!attrs.get('r')?.endsWith(this.nonce)) throw new AuthenticationError('Invalid SCRAM client final message: nonce does not match');
    const credential = this.credential!;
    const authMessage = `${this.clientFirstBare},${this.serverFirst},${withoutProof}`;
    const clientSignature = hmac(this.mechanism, credential.storedKey, authMessage);
    if (proof.length !== clientSignature.length) this.fail();
    const clientKey = Buffer.alloc(proof.length);
    for (let i = 0; i < proof.length; i++) clientKey[i] = proof[i]! ^ clientSignature[i]!;
    if (!timingSafeEqual(hash(this.mechanism, clientKey), credential.storedKey)) this.fail();
    this.state = 'done';
    this.principalName = this.user;
    return Buffer.from(`v=${hmac(this.mechanism, credential.serverKey, authMessage).toString('base64')}`, 'utf8');
  }
}
