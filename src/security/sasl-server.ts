// The SASL mechanisms the broker serves, behind one interface: a server that
// evaluates the client's tokens until it is complete and names the user.

/** A failed authentication: answered with SASL_AUTHENTICATION_FAILED and this message, then the connection closes. */
export class AuthenticationError extends Error {}

export interface SaslServer {
  readonly mechanism: string;
  /** The next challenge for the client's token; throws AuthenticationError. */
  evaluate(token: Buffer): Promise<Buffer>;
  readonly complete: boolean;
  /** The authenticated user name, once complete. */
  readonly principalName: string | null;
}
