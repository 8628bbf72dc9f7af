// A throwaway PKI for TLS tests, made with openssl in a temp dir: a CA, a
// server certificate for 127.0.0.1/localhost and a client certificate.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestPki {
  dir: string;
  caCert: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  remove(): void;
}

export function makeTestPki(): TestPki {
  const dir = mkdtempSync(join(tmpdir(), 'pgkafka-pki-'));
  const f = (name: string) => join(dir, name);
  const ssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=pgkafka test CA', '-keyout', f('ca.key'), '-out', f('ca.pem'));
  writeFileSync(f('server.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  const leaf = (name: string, subject: string, ext?: string) => {
    ssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', subject, '-keyout', f(`${name}.key`), '-out', f(`${name}.csr`));
    ssl('x509', '-req', '-in', f(`${name}.csr`), '-CA', f('ca.pem'), '-CAkey', f('ca.key'), '-CAcreateserial', '-days', '2', '-out', f(`${name}.pem`), ...(ext ? ['-extfile', ext] : []));
  };
  leaf('server', '/CN=localhost', f('server.ext'));
  leaf('client', '/C=US/O=pgkafka tests/CN=client-1');
  return {
    dir,
    caCert: f('ca.pem'),
    serverCert: f('server.pem'),
    serverKey: f('server.key'),
    clientCert: f('client.pem'),
    clientKey: f('client.key'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
