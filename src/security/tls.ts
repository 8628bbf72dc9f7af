// TLS for the SSL and SASL_SSL listeners: PEM files named by the config, and
// the principal of a client certificate as Kafka's default principal builder
// names it ("User:" + the subject distinguished name in RFC 2253 form, e.g.
// "User:CN=client,O=example").
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { TlsOptions, TLSSocket } from 'node:tls';

export type ClientAuth = 'none' | 'requested' | 'required';

export interface TlsFiles {
  certFile: string;
  keyFile: string;
  caFile?: string;
  clientAuth: ClientAuth;
}

export function tlsServerOptions(files: TlsFiles): TlsOptions {
  return {
    cert: readFileSync(files.certFile),
    key: readFileSync(files.keyFile),
    ca: files.caFile ? readFileSync(files.caFile) : undefined,
    requestCert: files.clientAuth !== 'none',
    rejectUnauthorized: files.clientAuth === 'required',
  };
}

/** RFC 2253 escaping of an attribute value. */
function escapeRdnValue(v: string): string {
  return v
    .replace(/([,+"\\<>;])/g, '\\$1')
    .replace(/^([ #])/, '\\$1')
    .replace(/ $/, '\\ ');
}

/**
 * "User:<subject DN>" of the client's verified certificate, or null when it
 * presented none (or one the CA does not vouch for, with ssl.client.auth
 * "requested"): such a client is User:ANONYMOUS, as on Kafka.
 */
export function tlsPrincipal(socket: TLSSocket): string | null {
  if (!socket.authorized) return null;
  const peer = socket.getPeerX509Certificate?.() ?? null;
  if (!peer) return null;
  return `User:${rfc2253Subject(peer)}`;
}

/** The subject in RFC 2253 order: the last RDN of the certificate first (X500Principal.getName()). */
export function rfc2253Subject(cert: X509Certificate): string {
  return cert.subject
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => {
      const at = l.indexOf('=');
      return `${l.slice(0, at)}=${escapeRdnValue(l.slice(at + 1))}`;
    })
    .reverse()
    .join(',');
}
