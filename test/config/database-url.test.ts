// DATABASE_URL as libpq reads it: several hosts, target_session_attrs.
import { describe, expect, it } from 'vitest';
import { parseDatabaseUrl } from '../../src/config/database-url.js';
import { loadConfig } from '../../src/config/schema.js';

describe('parseDatabaseUrl', () => {
  it('splits several hosts into one URL each, in order, without target_session_attrs and with every other part kept', () => {
    const parsed = parseDatabaseUrl('postgresql://app:s%40cret@db1:5432,db2:5433,[::1]/kafka?sslmode=disable&target_session_attrs=read-write&application_name=x');
    expect(parsed.targetSessionAttrs).toBe('read-write');
    expect(parsed.hosts).toEqual([
      { host: 'db1', port: 5432, url: 'postgresql://app:s%40cret@db1:5432/kafka?sslmode=disable&application_name=x' },
      { host: 'db2', port: 5433, url: 'postgresql://app:s%40cret@db2:5433/kafka?sslmode=disable&application_name=x' },
      { host: '::1', port: 5432, url: 'postgresql://app:s%40cret@[::1]:5432/kafka?sslmode=disable&application_name=x' },
    ]);
  });

  it('leaves a URL with one host and no target_session_attrs exactly as given', () => {
    const url = 'postgres://u@localhost/db?host=/var/run/postgresql';
    expect(parseDatabaseUrl(url)).toEqual({ hosts: [{ host: 'localhost', port: 5432, url }], targetSessionAttrs: 'any' });
  });

  it('checks one host too when target_session_attrs asks for it', () => {
    expect(parseDatabaseUrl('postgresql://db:6000/x?target_session_attrs=primary')).toEqual({ hosts: [{ host: 'db', port: 6000, url: 'postgresql://db:6000/x' }], targetSessionAttrs: 'primary' });
  });

  it('refuses what would put the broker on a standby', () => {
    expect(() => parseDatabaseUrl('postgresql://a,b/x')).toThrow(/several hosts needs target_session_attrs=read-write/);
    expect(() => parseDatabaseUrl('postgresql://a,b/x?target_session_attrs=any')).toThrow(/several hosts needs target_session_attrs=read-write/);
    expect(() => parseDatabaseUrl('postgresql://a,b/x?target_session_attrs=prefer-standby')).toThrow(/cannot write: use read-write/);
    expect(() => parseDatabaseUrl('postgresql://a,b/x?target_session_attrs=rw')).toThrow(/not one of any, read-write/);
    expect(() => parseDatabaseUrl('postgresql://a,,b/x?target_session_attrs=read-write')).toThrow(/host "" of DATABASE_URL/);
  });
});

describe('DATABASE_URL option', () => {
  it('accepts several hosts with target_session_attrs=read-write', () => {
    const url = 'postgresql://u:p@h1:5432,h2:5432/db?target_session_attrs=read-write';
    expect(loadConfig({ DATABASE_URL: url }).databaseUrl).toBe(url);
  });

  it('refuses several hosts without it, naming the option', () => {
    expect(() => loadConfig({ DATABASE_URL: 'postgresql://u:p@h1,h2/db' })).toThrow(/databaseUrl \(DATABASE_URL.*several hosts needs target_session_attrs=read-write/);
  });
});
