// The log-code reference stays whole (as fastify tests its error reference):
// every PGKAFKA_* code written anywhere in src/ is in the registry
// (src/observability/log-codes.ts) and documented in docs/log-codes.md at the
// registry's level, and the registry holds nothing src/ never logs.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BROKERS_ENV } from '../../src/cli/args.js';
import { options } from '../../src/config/schema.js';
import { LOG_CODES, LogCode } from '../../src/observability/log-codes.js';

const ROOT = join(import.meta.dirname, '..', '..');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : [];
  });
}

const files = sources(join(ROOT, 'src')).filter((f) => !f.endsWith(join('observability', 'log-codes.ts')));
const text = files.map((f) => readFileSync(f, 'utf8')).join('\n');
/** PGKAFKA_* names that are environment variables, not log codes: the options', the config file's and the CLI's. */
const ENVIRONMENT = new Set<string>([...Object.values(options).map((o) => o.env), 'PGKAFKA_CONFIG', BROKERS_ENV]);
const written = new Set([...text.matchAll(/PGKAFKA_[A-Z0-9_]+/g)].map((m) => m[0]).filter((c) => !ENVIRONMENT.has(c)));
const referenced = new Set([...text.matchAll(/LogCode\.([A-Z0-9_]+)/g)].map((m) => `PGKAFKA_${m[1]}`));

/** Code → level, from the tables of docs/log-codes.md. */
const documented = new Map([...readFileSync(join(ROOT, 'docs', 'log-codes.md'), 'utf8').matchAll(/^\| `(PGKAFKA_[A-Z0-9_]+)` \| (\w+) \|/gm)].map((m) => [m[1]!, m[2]!]));

describe('log codes', () => {
  it('every code written in src/ is in the registry', () => {
    expect([...written].filter((c) => !LOG_CODES.has(c)).sort()).toEqual([]);
  });

  it('every code of the registry is documented in docs/log-codes.md, at its level', () => {
    expect([...LOG_CODES].filter(([code, level]) => documented.get(code) !== level).map(([code, level]) => `${code} (${level}): documented ${documented.get(code) ?? 'nowhere'}`)).toEqual([]);
    expect([...documented.keys()].filter((c) => !LOG_CODES.has(c))).toEqual([]);
  });

  it('every code of the registry is logged somewhere in src/', () => {
    expect([...LOG_CODES.keys()].filter((c) => !written.has(c) && !referenced.has(c))).toEqual([]);
  });

  it('a code is its name with the prefix, and no log code is also an environment variable', () => {
    expect(LogCode.HANDLER_FAILED).toBe('PGKAFKA_HANDLER_FAILED');
    expect([...LOG_CODES.keys()].filter((c) => ENVIRONMENT.has(c))).toEqual([]);
  });
});
