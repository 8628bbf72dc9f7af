// Which test files need PostgreSQL: the three projects of vitest.config.ts.
// unit: every test/ file not listed here (no PostgreSQL, no broker: `npm run
// test:unit`); integration: the files listed (a broker or the stores against
// a real PostgreSQL); compat: compat/ (third-party clients). A folder ends
// with '/'. test/projects.test.ts checks that every test file lands in
// exactly one project and that no unit file reaches PostgreSQL.

export const INTEGRATION: readonly string[] = [
  'test/integration/',
  'test/cli/',
  'test/fuzz/',
  'test/observability/lag.test.ts',
  'test/observability/request-metrics.test.ts',
  'test/security/acl.test.ts',
  'test/security/acl-groups.test.ts',
  'test/security/sasl.test.ts',
  'test/security/tls.test.ts',
  'test/security/users-cli.test.ts',
  'test/server/pipeline-limits.test.ts',
  'test/storage/contract/pg.test.ts',
  'test/storage/group-store.test.ts',
  'test/handlers/group-routing.test.ts',
];

export const COMPAT: readonly string[] = ['compat/'];

/** A list entry as vitest include globs. */
export const globs = (entries: readonly string[]): string[] => entries.map((e) => (e.endsWith('/') ? `${e}**/*.test.ts` : e));

export const matches = (entries: readonly string[], file: string): boolean => entries.some((e) => (e.endsWith('/') ? file.startsWith(e) : file === e));

export type Project = 'unit' | 'integration' | 'compat';

/** The project a test file (path from the repository root) belongs to, by the lists above. */
export function projectOf(file: string): Project | null {
  if (matches(COMPAT, file)) return 'compat';
  if (matches(INTEGRATION, file)) return 'integration';
  return file.startsWith('test/') ? 'unit' : null;
}
