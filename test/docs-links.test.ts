// Every relative link in the project's Markdown (README, docs/, compat/, bench/)
// points at a file that exists and, for a Markdown target with #anchor, at a
// heading it has (GitHub's slugs). No network: links with a scheme are skipped.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

// Pages other helpers of the same round are writing; linked from the README before they land.
// Remove an entry once its page exists.
const PENDING = new Set(['docs/log-codes.md', 'docs/contributing.md']);

function markdownFiles(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) => {
      const path = join(dir, e.name);
      if (e.isDirectory()) return e.name === 'node_modules' || e.name.startsWith('.') ? [] : walk(path);
      return e.name.endsWith('.md') ? [path] : [];
    });
  return ['README.md', 'bench/README.md', ...walk('docs'), ...walk('compat')];
}

/** The text outside fenced code blocks, line by line (links and headings in code are not links). */
function proseLines(text: string): string[] {
  let fenced = false;
  return text.split('\n').filter((line) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      return false;
    }
    return !fenced;
  });
}

/** GitHub's anchor for a heading: rendered text, lower case, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .trim()
    .replace(/\s/g, '-');
}

function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const line of proseLines(text)) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = slug(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** The broken relative links of `file` (a path from the repository root) whose text is `text`. */
function brokenLinks(file: string, text: string): string[] {
  const broken: string[] = [];
  for (const line of proseLines(text)) {
    for (const m of line.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = m[1]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      const [path, anchor] = target.split('#', 2) as [string, string | undefined];
      const abs = path === '' ? join(root, file) : resolve(join(root, dirname(file)), decodeURI(path));
      const fromRoot = relative(root, abs);
      if (!existsSync(abs)) {
        if (!PENDING.has(fromRoot)) broken.push(`${target} (no file ${fromRoot})`);
        continue;
      }
      if (anchor !== undefined && abs.endsWith('.md') && statSync(abs).isFile()) {
        if (!anchors(readFileSync(abs, 'utf8')).has(anchor)) broken.push(`${target} (no heading #${anchor} in ${fromRoot})`);
      }
    }
  }
  return broken;
}

describe('Markdown links', () => {
  const files = markdownFiles();

  it('point at files and headings that exist', () => {
    const broken = files.flatMap((f) => brokenLinks(f, readFileSync(join(root, f), 'utf8')).map((b) => `${f}: ${b}`));
    expect(broken).toEqual([]);
  });

  it('the README links every page under docs/', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const linked = new Set([...readme.matchAll(/\]\((docs\/[^)#\s]+)/g)].map((m) => m[1]));
    const pages = files.filter((f) => f.startsWith('docs/') && !f.slice(5).includes('/'));
    expect(pages.filter((p) => !linked.has(p))).toEqual([]);
  });

  it('catches a missing file and a missing heading', () => {
    const text = '[a](apis.md) [b](missing.md) [c](apis.md#no-such-heading) [d](apis.md#the-single-copy-answers) [e](https://kafka.apache.org/)';
    expect(brokenLinks('docs/example.md', text)).toEqual(['missing.md (no file docs/missing.md)', 'apis.md#no-such-heading (no heading #no-such-heading in docs/apis.md)']);
  });
});
