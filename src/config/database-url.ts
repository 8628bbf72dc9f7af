// A DATABASE_URL as libpq reads it, hosts and target_session_attrs included:
// postgresql://user:password@h1:5432,h2:5433/db?target_session_attrs=read-write
// lists a primary and its standbys (the storage layer picks among them,
// src/storage/pg/hosts.ts). Validated here at start-up, used there.

export type TargetSessionAttrs = 'any' | 'read-write' | 'primary';
/** libpq's values; the broker writes, so only those that can land on a primary are served. */
const LIBPQ_TARGETS = ['any', 'read-write', 'read-only', 'primary', 'standby', 'prefer-standby'] as const;
const SERVED_TARGETS: readonly string[] = ['any', 'read-write', 'primary'];

export interface DatabaseHost {
  host: string;
  port: number;
  /** DATABASE_URL with this host alone and without target_session_attrs: what node-postgres understands. */
  url: string;
}

export interface DatabaseHosts {
  hosts: DatabaseHost[];
  targetSessionAttrs: TargetSessionAttrs;
}

const URL_PARTS = /^(postgres(?:ql)?:\/\/)(?:([^@/?#]*)@)?([^/?#]*)([^?#]*)(?:\?([^#]*))?(#.*)?$/;

/**
 * Splits a postgresql:// URL into its hosts, each with a URL of its own.
 * Throws with a message for the user when the URL lists several hosts in a
 * way the broker cannot serve.
 */
export function parseDatabaseUrl(connectionString: string): DatabaseHosts {
  const parts = URL_PARTS.exec(connectionString);
  if (!parts) return { hosts: [{ host: '', port: 5432, url: connectionString }], targetSessionAttrs: 'any' };
  const [, scheme, userinfo, hostList, path, query, fragment] = parts;
  const params = (query ?? '').split('&').filter((p) => p !== '');
  const isTarget = (p: string) => p.split('=')[0] === 'target_session_attrs';
  const target = decodeURIComponent(params.find(isTarget)?.split('=')[1] ?? 'any');
  if (!(LIBPQ_TARGETS as readonly string[]).includes(target)) throw new Error(`target_session_attrs=${target} is not one of ${LIBPQ_TARGETS.join(', ')}`);
  if (!SERVED_TARGETS.includes(target)) throw new Error(`target_session_attrs=${target} would connect the broker to a standby, where it cannot write: use read-write (or primary)`);
  const rest = params.filter((p) => !isTarget(p));
  const tail = `${path}${rest.length > 0 ? `?${rest.join('&')}` : ''}${fragment ?? ''}`;
  const names = hostList!.split(',');
  if (names.length > 1 && target === 'any') {
    throw new Error('a DATABASE_URL with several hosts needs target_session_attrs=read-write (or primary): without it the broker could connect to a standby, where it cannot write');
  }
  const hosts = names.map((name) => {
    const m = /^(\[[^\]]*\]|[^:]*)(?::(\d*))?$/.exec(name);
    if (!m || m[1] === '') throw new Error(`host "${name}" of DATABASE_URL is empty or malformed`);
    const port = m[2] ? Number(m[2]) : 5432;
    const host = m[1]!.replace(/^\[(.*)\]$/, '$1');
    return { host: decodeURIComponent(host), port, url: `${scheme}${userinfo !== undefined ? `${userinfo}@` : ''}${m[1]}:${port}${tail}` };
  });
  // One host and no check: the URL as given, untouched (node-postgres' own parsing, `?host=` sockets included).
  if (hosts.length === 1 && target === 'any') hosts[0]!.url = connectionString;
  return { hosts, targetSessionAttrs: target as TargetSessionAttrs };
}
