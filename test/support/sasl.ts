// Authenticated raw connections for tests that need a principal (ACLs):
// users get SCRAM credentials (PLAIN is checked against them) and connect
// through the broker's SASL_PLAINTEXT listener with SASL/PLAIN.
import { ErrorCode } from '../../src/protocol/errors.js';
import { SaslAuthenticateApi, SaslHandshakeApi } from '../../src/protocol/messages/index.js';
import { credentialFromPassword } from '../../src/security/scram.js';
import type { TestBroker } from './broker.js';
import { RawClient } from './raw-client.js';

export async function addUser(broker: TestBroker, user: string, password: string): Promise<void> {
  await broker.context.users.alter([{ kind: 'upsert', user, mechanism: 'SCRAM-SHA-256', credential: await credentialFromPassword('SCRAM-SHA-256', password, 4096) }]);
}

/** A RawClient on the broker's SASL_PLAINTEXT listener, logged in as `user` with SASL/PLAIN. */
export async function connectAs(broker: TestBroker, user: string, password: string): Promise<RawClient> {
  const port = broker.ports.SASL_PLAINTEXT;
  if (port === undefined) throw new Error('the broker has no SASL_PLAINTEXT listener');
  const client = await RawClient.connect(`127.0.0.1:${port}`);
  const handshake = await client.request(SaslHandshakeApi, 1, { mechanism: 'PLAIN' });
  if (handshake.errorCode !== ErrorCode.NONE) throw new Error(`SaslHandshake: ${handshake.errorCode}`);
  const auth = await client.request(SaslAuthenticateApi, 2, { authBytes: Buffer.from(`\0${user}\0${password}`) });
  if (auth.errorCode !== ErrorCode.NONE) throw new Error(`SaslAuthenticate: ${auth.errorCode} ${auth.errorMessage}`);
  return client;
}
