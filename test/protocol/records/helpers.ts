import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

export const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');

/** Read a `.hex` fixture: `#` lines are comments, whitespace is ignored. */
export function loadHex(name: string): Buffer {
  const text = readFileSync(path.join(FIXTURES, name), 'utf8');
  const hex = text
    .split('\n')
    .filter((l) => !l.trimStart().startsWith('#'))
    .join('')
    .replace(/\s+/g, '');
  return Buffer.from(hex, 'hex');
}

export const PYTHON = '/usr/bin/python3';

/** Run a python snippet with `input` on stdin; returns stdout (throws on failure). */
export function runPython(code: string, input: Buffer | string = ''): string {
  const r = spawnSync(PYTHON, ['-c', code], { input, maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`python failed (${r.status}): ${r.stderr.toString()}`);
  return r.stdout.toString();
}

export function pythonHas(module: string): boolean {
  const r = spawnSync(PYTHON, ['-c', `import ${module}`]);
  return r.status === 0;
}
