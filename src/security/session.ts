// The authentication state of one connection, as Kafka's
// SaslServerAuthenticator keeps it. On a SASL listener the client first
// sends ApiVersions (optional) and SaslHandshake; after SaslHandshake v1 the
// tokens come in SaslAuthenticate requests, after v0 (KIP-43's original
// flow, which kafka-python uses) as raw frames: an int32 length and the
// token, answered the same way. Until authentication succeeds only
// ApiVersions and the SASL APIs are served; anything else closes the
// connection. A failure answers SASL_AUTHENTICATION_FAILED with a message and
// closes the connection. With a session lifetime (KIP-368,
// connections.max.reauth.ms) the client re-authenticates with a new
// SaslHandshake/SaslAuthenticate on the same connection; once the session
// has expired, any other request closes it.
import type { SecurityProtocol } from '../config/listeners.js';
import { ErrorCode } from '../protocol/errors.js';
import { PlainServer } from './plain.js';
import { AuthenticationError, type SaslServer } from './sasl-server.js';
import { isScramMechanism, ScramServer, type ScramCredential, type ScramMechanism } from './scram.js';

export type { SecurityProtocol };

export const ANONYMOUS = 'User:ANONYMOUS';

const API_VERSIONS_KEY = 18;
const SASL_HANDSHAKE_KEY = 17;
const SASL_AUTHENTICATE_KEY = 36;

export interface SecurityOptions {
  enabledMechanisms: string[];
  /** connections.max.reauth.ms: 0 means sessions never expire. */
  maxReauthMs: number;
  lookupCredential(user: string, mechanism: ScramMechanism): Promise<ScramCredential | null>;
  now?: () => number;
}

type State = 'handshake' | 'authenticate' | 'raw' | 'authenticated';

export interface SaslAuthenticateResult {
  errorCode: number;
  errorMessage: string | null;
  authBytes: Buffer;
  sessionLifetimeMs: bigint;
}

export class SecuritySession {
  /** The principal handlers see: "User:<name>", the TLS certificate's subject, or User:ANONYMOUS. */
  principal: string;
  /** Set when the response being written is the last: the connection closes once it is out. */
  closeAfterResponse = false;
  private state: State;
  private server: SaslServer | null = null;
  private expiresAt: number | null = null;
  private authenticatedMechanism: string | null = null;
  private readonly now: () => number;

  constructor(
    readonly protocol: SecurityProtocol,
    private readonly options: SecurityOptions,
    /** The principal of a TLS client certificate, if one was presented. */
    tlsPrincipal: string | null = null,
  ) {
    this.principal = tlsPrincipal ?? ANONYMOUS;
    this.state = this.saslEnabled ? 'handshake' : 'authenticated';
    this.now = options.now ?? Date.now;
  }

  get saslEnabled(): boolean {
    return this.protocol === 'SASL_PLAINTEXT' || this.protocol === 'SASL_SSL';
  }

  /** The next frame is a raw SASL token (after SaslHandshake v0), not a request. */
  get expectsRawToken(): boolean {
    return this.state === 'raw';
  }

  /** Whether the connection may be served (TLS and PLAINTEXT listeners: always). */
  get authenticated(): boolean {
    return !this.saslEnabled || this.authenticatedMechanism !== null;
  }

  /** Why a request with this API key may not be served now (the connection closes), or null. */
  refusal(apiKey: number): string | null {
    if (apiKey === SASL_HANDSHAKE_KEY) return null;
    if (!this.saslEnabled) return null;
    // Before a handshake Kafka's authenticator takes only ApiVersions and SaslHandshake: anything else closes.
    if (apiKey === SASL_AUTHENTICATE_KEY) return this.state === 'handshake' && this.authenticatedMechanism === null ? 'SaslAuthenticate before SaslHandshake' : null;
    if (this.authenticatedMechanism === null) {
      if (apiKey === API_VERSIONS_KEY && this.state === 'handshake') return null;
      return `request (API key ${apiKey}) before SASL authentication completed`;
    }
    if (this.expiresAt !== null && this.now() > this.expiresAt) return 'SASL session expired without re-authentication (connections.max.reauth.ms)';
    return null;
  }

  handshake(mechanism: string, version: number): { errorCode: number; mechanisms: string[] } {
    const mechanisms = this.options.enabledMechanisms;
    // Without SASL, or authenticated and not re-authenticating (a v0 handshake, or sessions that never expire), Kafka's
    // request handler answers (no mechanisms listed) and keeps the connection.
    if (!this.saslEnabled || (this.state === 'authenticated' && (version < 1 || this.expiresAt === null))) return { errorCode: ErrorCode.ILLEGAL_SASL_STATE, mechanisms: [] };
    const reauthenticating = this.state === 'authenticated';
    if (this.state !== 'handshake' && !reauthenticating) {
      this.closeAfterResponse = true;
      return { errorCode: ErrorCode.ILLEGAL_SASL_STATE, mechanisms };
    }
    if (!mechanisms.includes(mechanism) || (reauthenticating && mechanism !== this.authenticatedMechanism)) {
      this.closeAfterResponse = true;
      return { errorCode: ErrorCode.UNSUPPORTED_SASL_MECHANISM, mechanisms };
    }
    this.server = mechanism === 'PLAIN' ? new PlainServer(this.options.lookupCredential) : isScramMechanism(mechanism) ? new ScramServer(mechanism, this.options.lookupCredential) : null;
    if (!this.server) {
      this.closeAfterResponse = true;
      return { errorCode: ErrorCode.UNSUPPORTED_SASL_MECHANISM, mechanisms };
    }
    this.state = version === 0 ? 'raw' : 'authenticate';
    return { errorCode: ErrorCode.NONE, mechanisms };
  }

  /** One SaslAuthenticate request. */
  async authenticate(token: Buffer, version: number): Promise<SaslAuthenticateResult> {
    const failed = (errorCode: number, errorMessage: string): SaslAuthenticateResult => {
      this.closeAfterResponse = true;
      return { errorCode, errorMessage, authBytes: Buffer.alloc(0), sessionLifetimeMs: 0n };
    };
    if (this.state === 'authenticated') {
      // As Kafka's request handler: answered, and the connection stays.
      return { errorCode: ErrorCode.ILLEGAL_SASL_STATE, errorMessage: 'SaslAuthenticate request received after successful authentication', authBytes: Buffer.alloc(0), sessionLifetimeMs: 0n };
    }
    if (this.state !== 'authenticate' || !this.server) return failed(ErrorCode.ILLEGAL_SASL_STATE, 'Unexpected SaslAuthenticate request: no SaslHandshake v1 preceded it');
    let challenge: Buffer;
    try {
      challenge = await this.server.evaluate(token);
    } catch (err) {
      if (err instanceof AuthenticationError) return failed(ErrorCode.SASL_AUTHENTICATION_FAILED, err.message);
      throw err;
    }
    let sessionLifetimeMs = 0n;
    if (this.server.complete) {
      const error = this.completed();
      if (error) return failed(ErrorCode.SASL_AUTHENTICATION_FAILED, error);
      // Clients below v1 cannot re-authenticate: Kafka closes their connection at expiry all the same.
      if (this.options.maxReauthMs > 0 && version >= 1) sessionLifetimeMs = BigInt(this.options.maxReauthMs);
    }
    // Kafka's answer leaves the message at its default, the empty string.
    return { errorCode: ErrorCode.NONE, errorMessage: '', authBytes: challenge, sessionLifetimeMs };
  }

  /** One raw token after SaslHandshake v0: the challenge to send back, or null on failure (the connection closes, as Kafka's does). */
  async rawToken(token: Buffer): Promise<Buffer | null> {
    if (!this.server) return null;
    try {
      const challenge = await this.server.evaluate(token);
      if (this.server.complete && this.completed() !== null) return null;
      return challenge;
    } catch (err) {
      if (err instanceof AuthenticationError) return null;
      throw err;
    }
  }

  /** The exchange just completed: becomes authenticated, or an error if re-authentication named another user. */
  private completed(): string | null {
    const principal = `User:${this.server!.principalName}`;
    if (this.authenticatedMechanism !== null && principal !== this.principal) {
      return `Cannot change principals during re-authentication from ${this.principal} to ${principal}`;
    }
    this.principal = principal;
    this.authenticatedMechanism = this.server!.mechanism;
    this.state = 'authenticated';
    this.expiresAt = this.options.maxReauthMs > 0 ? this.now() + this.options.maxReauthMs : null;
    return null;
  }
}
