// A broker with a SASL_SSL listener for the clients' SASL / TLS scenarios: the
// test CA's server certificate (for localhost), and a user `app` with a
// SCRAM-SHA-512 credential (SASL/PLAIN is checked against it too).
import { credentialFromPassword } from '../../src/security/scram.js';
import { makeTestPki, type TestPki } from '../../test/security/certs.js';
import { startTestBroker, type TestBroker } from '../../test/support/broker.js';

export const SASL_USER = 'app';
export const SASL_PASSWORD = 'app-secret';

export interface SaslSslBroker {
  broker: TestBroker;
  pki: TestPki;
  /** The SASL_SSL listener as `localhost:port`, the name the server certificate carries. */
  bootstrap: string;
  destroy(): Promise<void>;
}

export async function startSaslSslBroker(): Promise<SaslSslBroker> {
  const pki = makeTestPki();
  const broker = await startTestBroker({
    listeners: 'PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0',
    sslCertFile: pki.serverCert,
    sslKeyFile: pki.serverKey,
    autoCreateTopicsEnable: true,
  });
  await broker.context.users.alter([{ kind: 'upsert', user: SASL_USER, mechanism: 'SCRAM-SHA-512', credential: await credentialFromPassword('SCRAM-SHA-512', SASL_PASSWORD, 4096) }]);
  return {
    broker,
    pki,
    bootstrap: `localhost:${broker.ports.SASL_SSL}`,
    destroy: async () => {
      await broker.destroy();
      pki.remove();
    },
  };
}
