// Generates src/protocol/messages/*.ts from Apache Kafka's JSON message
// definitions: 4.3.1's in protocol-spec/messages, extended to the old versions
// only 3.9.1's (protocol-spec/kafka-3.9/messages) define. Plain TypeScript, no template engine;
// the output is deterministic. This entry point reads the specs and writes (or
// checks) the files; the code emission is in scripts/protocol-gen/.
//
//   tsx scripts/generate-protocol.ts           writes the files
//   tsx scripts/generate-protocol.ts --check   exits 1 if any file differs
import { readFileSync, readdirSync, writeFileSync, mkdirSync, existsSync, unlinkSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generate, HEADER } from './protocol-gen/files.js';
import { unionSpecs } from './protocol-gen/merge.js';
import { type MessageSpec, stripComments } from './protocol-gen/spec.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SPEC_DIR = join(ROOT, 'protocol-spec', 'messages');
const OLD_SPEC_DIR = join(ROOT, 'protocol-spec', 'kafka-3.9', 'messages');
const OUT_DIR = join(ROOT, 'src', 'protocol', 'messages');

function loadDir(dir: string): MessageSpec[] {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort();
  return files.map((f) => JSON.parse(stripComments(readFileSync(join(dir, f), 'utf8'))) as MessageSpec);
}

function loadSpecs(): MessageSpec[] {
  return unionSpecs(loadDir(OLD_SPEC_DIR), loadDir(SPEC_DIR));
}

function main(): void {
  const check = process.argv.includes('--check');
  const files = generate(loadSpecs());
  const existing = existsSync(OUT_DIR) ? readdirSync(OUT_DIR).filter((f) => f.endsWith('.ts')) : [];
  if (check) {
    const bad: string[] = [];
    for (const [name, text] of files) {
      const p = join(OUT_DIR, name);
      if (!existsSync(p)) bad.push(`missing: ${name}`);
      else if (readFileSync(p, 'utf8') !== text) bad.push(`differs: ${name}`);
    }
    for (const name of existing) if (!files.has(name)) bad.push(`extra: ${name}`);
    if (bad.length > 0) {
      console.error(`src/protocol/messages is out of date (run npm run gen):\n  ${bad.join('\n  ')}`);
      process.exit(1);
    }
    console.log(`src/protocol/messages is up to date (${files.size} files)`);
    return;
  }
  mkdirSync(OUT_DIR, { recursive: true });
  let written = 0;
  for (const [name, text] of files) {
    const p = join(OUT_DIR, name);
    if (existsSync(p) && readFileSync(p, 'utf8') === text) continue;
    writeFileSync(p, text);
    written++;
  }
  for (const name of existing) {
    const p = join(OUT_DIR, name);
    if (!files.has(name) && readFileSync(p, 'utf8').startsWith(HEADER)) unlinkSync(p);
  }
  console.log(`generated ${files.size} files in src/protocol/messages (${written} changed)`);
}

main();
