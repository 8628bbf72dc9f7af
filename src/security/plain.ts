// SASL/PLAIN (RFC 4616) as Kafka's PlainSaslServer: one token
// "[authzid] NUL authcid NUL passwd", an authorisation id (if any) equal to
// the user name. The password is checked against the user's SCRAM
// credentials (SCRAM-SHA-256 first, else SCRAM-SHA-512), so one stored
// credential serves both mechanisms and no password is ever stored.
import { AuthenticationError, type SaslServer } from './sasl-server.js';
import { passwordMatches, SCRAM_MECHANISMS, type ScramCredential, type ScramMechanism } from './scram.js';

export class PlainServer implements SaslServer {
  readonly mechanism = 'PLAIN';
  complete = false;
  principalName: string | null = null;

  constructor(private readonly lookup: (user: string, mechanism: ScramMechanism) => Promise<ScramCredential | null>) {}

  async evaluate(token: Buffer): Promise<Buffer> {
    if (this.complete) throw new AuthenticationError('Unexpected SASL token after PLAIN authentication completed');
    const parts = token.toString('utf8').split('\u0000');
    if (parts.length !== 3) throw new AuthenticationError('Invalid SASL/PLAIN response: expected 3 tokens');
    const [authzid, user, password] = parts as [string, string, string];
    if (user === '') throw new AuthenticationError('Authentication failed: username not specified');
    if (password === '') throw new AuthenticationError('Authentication failed: password not specified');
    if (authzid !== '' && authzid !== user) throw new AuthenticationError('Authentication failed: Client requested an authorization id that is different from username');
    for (const mechanism of SCRAM_MECHANISMS) {
      const credential = await this.lookup(user, mechanism);
      if (!credential) continue;
      if (!(await passwordMatches(mechanism, password, credential))) break;
      this.complete = true;
      this.principalName = user;
      return Buffer.alloc(0);
    }
    throw new AuthenticationError('Authentication failed: Invalid username or password');
  }
}
