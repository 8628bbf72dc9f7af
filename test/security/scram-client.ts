// The client side of SCRAM (RFC 5802), for driving the broker in tests.
import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';

export class ScramClient {
  private readonly bare: string;
  private serverFirst = '';
  private salted: Buffer | null = null;
  private authMessage = '';

  constructor(
    private readonly mechanism: 'SCRAM-SHA-256' | 'SCRAM-SHA-512',
    user: string,
    private readonly password: string,
  ) {
    this.bare = `n=${user.replace(/=/g, '=3D').replace(/,/g, '=2C')},r=${randomBytes(18).toString('base64')}`;
  }

  private get hash() {
    return this.mechanism === 'SCRAM-SHA-256' ? 'sha256' : 'sha512';
  }

  first(): Buffer {
    return Buffer.from(`n,,${this.bare}`);
  }

  final(serverFirst: Buffer): Buffer {
    this.serverFirst = serverFirst.toString();
    const attrs = Object.fromEntries(this.serverFirst.split(',').map((p) => [p[0]!, p.slice(2)]));
    this.salted = pbkdf2Sync(this.password, Buffer.from(attrs.s!, 'base64'), Number(attrs.i), this.hash === 'sha256' ? 32 : 64, this.hash);
    const clientKey = createHmac(this.hash, this.salted).update('Client Key').digest();
    const storedKey = createHash(this.hash).update(clientKey).digest();
    const withoutProof = `c=biws,r=${attrs.r}`;
    this.authMessage = `${this.bare},${this.serverFirst},${withoutProof}`;
    const signature = createHmac(this.hash, storedKey).update(this.authMessage).digest();
    return Buffer.from(`${withoutProof},p=${Buffer.from(clientKey.map((b, i) => b ^ signature[i]!)).toString('base64')}`);
  }

  /** Whether the server's final message proves it holds the server key. */
  verify(serverFinal: Buffer): boolean {
    const serverKey = createHmac(this.hash, this.salted!).update('Server Key').digest();
    return serverFinal.toString() === `v=${createHmac(this.hash, serverKey).update(this.authMessage).digest('base64')}`;
  }
}
