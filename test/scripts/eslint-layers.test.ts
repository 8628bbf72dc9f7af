// The layer rule (scripts/eslint-layers.js) run through ESLint's Node API on
// snippets placed at paths in src/: an import in the wrong direction is an
// error, one downward is not, and the repository's config turns the rule on.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';
import layers, { LAYERS } from '../../scripts/eslint-layers.js';

const root = path.resolve(import.meta.dirname, '../..');

// Only the layer rule, without type information: fast, and independent of the other rules.
const eslint = new ESLint({
  cwd: root,
  overrideConfigFile: true,
  overrideConfig: [{ files: ['**/*.ts'], languageOptions: { parser: tseslint.parser }, plugins: { pgkafka: layers }, rules: { 'pgkafka/layers': 'error' } }],
});

async function problems(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(root, file) });
  return result!.messages.map((m) => m.message);
}

describe('the layer rule', () => {
  it('fails an import from a higher layer: storage importing a handler', async () => {
    const found = await problems('src/storage/pg/example-store.ts', "import { defineHandler } from '../../handlers/types.js';\nexport const x = defineHandler;\n");
    expect(found).toEqual([expect.stringContaining('src/storage/pg/example-store.ts (storage) may not import src/handlers/types.js (handlers)')]);
  });

  it('fails the directions issue 15 names: storage importing security, handlers importing storage, config importing security', async () => {
    expect(await problems('src/storage/pg/acl-store.ts', "import type { AclBinding } from '../../security/acl.js';\nexport type A = AclBinding;\n")).toHaveLength(1);
    expect(await problems('src/handlers/51-alter-user-scram-credentials.ts', "import type { UserStore } from '../storage/pg/user-store.js';\nexport type U = UserStore;\n")).toHaveLength(1);
    expect(await problems('src/config/schema.ts', "import { parsePrincipal } from '../security/acl.js';\nexport const p = parsePrincipal;\n")).toHaveLength(1);
  });

  it('allows imports downward and within a layer', async () => {
    expect(
      await problems(
        'src/log/example.ts',
        "import type { LogStore } from '../storage/pg/log-store.js';\nimport { ErrorCode } from '../protocol/errors.js';\nimport { systemClock } from '../clock.js';\nimport { x } from './topic-manager.js';\nexport { LogStore, ErrorCode, systemClock, x };\n",
      ),
    ).toEqual([]);
    expect(await problems('src/handlers/00-example.ts', "import { LogManager } from '../log/log-manager.js';\nimport { ctx } from '../broker-context.js';\nexport { LogManager, ctx };\n")).toEqual([]);
    expect(
      await problems(
        'src/storage/pg/example.ts',
        "import type { Logger } from '../../observability/logger.js';\nimport type { Config } from '../../config/schema.js';\nexport type L = [Logger, Config];\n",
      ),
    ).toEqual([]);
  });

  it('checks re-exports, dynamic imports and import() types too', async () => {
    expect(await problems('src/protocol/example.ts', "export * from '../log/log-manager.js';\n")).toHaveLength(1);
    expect(await problems('src/protocol/example.ts', "export { LogManager } from '../log/log-manager.js';\n")).toHaveLength(1);
    expect(await problems('src/storage/example.ts', "export const load = () => import('../coordinator/coordination.js');\n")).toHaveLength(1);
    expect(await problems('src/storage/example.ts', "export type C = import('../coordinator/coordination.js').Coordination;\n")).toHaveLength(1);
  });

  it("keeps storage out of the handlers' context, types included: it names the domain's storage interfaces", async () => {
    expect(await problems('src/broker-context.ts', "import type { UserStorage } from './security/user-storage.js';\nexport type U = UserStorage;\n")).toEqual([]);
    expect(await problems('src/broker-context.ts', "import type { UserStore } from './storage/pg/user-store.js';\nexport type U = UserStore;\n")).toHaveLength(1);
  });

  it('keeps the PostgreSQL packages in src/storage/pg', async () => {
    expect(await problems('src/log/example.ts', "import type pg from 'pg';\nexport type P = pg.Pool;\n")).toEqual([expect.stringContaining("may not import 'pg'")]);
    expect(await problems('src/storage/pg/example.ts', "import type pg from 'pg';\nexport type P = pg.Pool;\n")).toEqual([]);
  });

  it('fails a file in src that the table does not place, and leaves tests alone', async () => {
    expect(await problems('src/new-thing.ts', 'export const x = 1;\n')).toEqual([expect.stringContaining('src/new-thing.ts is in no layer')]);
    expect(await problems('test/example.test.ts', "import { LogStore } from '../src/storage/pg/log-store.js';\nexport { LogStore };\n")).toEqual([]);
  });

  it("is on in the repository's config for every file in src", async () => {
    const repo = new ESLint({ cwd: root });
    const config = await repo.calculateConfigForFile(path.join(root, 'src/storage/pg/log-store.ts'));
    expect(config.rules['pgkafka/layers']).toEqual([2]);
  });

  it('matches the table in docs/contributing.md: layers, their files and their imports', () => {
    const doc = readFileSync(path.join(root, 'docs/contributing.md'), 'utf8');
    // The doc names files with their extension (src/index.ts and src/index.cts are one entry of the rule).
    const files = (cell: string) =>
      [
        ...new Set(
          cell
            .replace(/`/g, '')
            .split(', ')
            .map((f) => f.replace(/\.c?ts$/, '')),
        ),
      ].sort();
    const rows = [...doc.matchAll(/^\| `([a-z]+)` \| (.+?) \| (.+?) \|$/gm)].map((m) => [m[1], files(m[2]!), m[3]!.replace(/`/g, '')]);
    const table = LAYERS.map((l) => [l.name, [...l.files].sort(), l.imports === '*' ? 'everything' : [...l.imports, ...(l.types ?? []).map((t) => `types from ${t}`)].join(', ') || 'nothing else']);
    expect(rows).toEqual(table);
  });
});
