// Section `startup`: the library API's start-up, from `startBroker()` to the
// first acknowledged produce (kafkajs, acks=all, one record to a new topic,
// auto-created), and stop(). Each run spawns two processes:
// - the first, with an empty initdb cache: `cold` (initdb, then a copy of the
//   new template), then `warm, same process` (a second start: the template
//   exists and the modules are loaded), then `external` (a fresh schema in
//   BENCH_DATABASE_URL: migrations, no embedded server);
// - the second, on the same cache: `warm cache, new process` — what a test
//   suite's next run sees (vitest's globalSetup runs in a new process).
// The broker runs in the measuring process, as the library API runs it; the
// sources go through tsx, so `import` (also reported) is slower than the
// built package's.
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DATABASE_URL } from './broker.js';
import { Collector, withTimeout, type Ctx, type Row } from './stats.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

interface Timing {
  case: string;
  ms?: number;
  startMs?: number;
  firstAckMs?: number;
  stopMs?: number;
}

function runChild(cache: string, cases: string[]): Promise<Timing[]> {
  return withTimeout(
    new Promise((resolve, reject) => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'bench/startup-child.ts', cache, DATABASE_URL, ...cases], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (err += d));
      child.on('error', reject);
      child.on('exit', (code) => {
        if (code !== 0) reject(new Error(`startup child exited ${code}: ${err.slice(-2000)}`));
        else
          resolve(
            out
              .trim()
              .split('\n')
              .map((l) => JSON.parse(l) as Timing),
          );
      });
    }),
    120_000,
    'startup child',
  );
}

export async function runStartup(ctx: Ctx): Promise<Row[]> {
  const col = new Collector('startup');
  const names: Record<string, string> = {
    cold: 'embedded, cold (new process, empty initdb cache)',
    warm: 'embedded, warm (same process, second start)',
    'warm-new-process': 'embedded, warm cache, new process',
    external: 'external PostgreSQL (fresh schema)',
  };
  for (let run = 0; run < ctx.runs; run++) {
    const cache = mkdtempSync(join(tmpdir(), 'pgkafka-bench-initdb-'));
    // As root, the embedded server runs as "postgres" and must be able to enter it.
    chmodSync(cache, 0o755);
    try {
      const timings = [...(await runChild(cache, ['cold', 'warm', 'external'])), ...(await runChild(cache, ['warm-new-process']))];
      const of = (kase: string) => timings.find((t) => t.case === kase)!;
      col.add('import of the library (tsx, first process)', 'ms', of('import').ms!);
      for (const kase of ['cold', 'warm', 'warm-new-process', 'external']) {
        const t = of(kase);
        col.add(`${names[kase]}: startBroker() → first produce acked`, 'ms', t.firstAckMs!);
        col.add(`${names[kase]}: startBroker() resolved`, 'ms', t.startMs!);
        col.add(`${names[kase]}: stop()`, 'ms', t.stopMs!);
      }
      ctx.log(`  run ${run + 1}: ${timings.map((t) => `${t.case} ${Math.round(t.firstAckMs ?? t.ms!)} ms`).join(', ')}`);
    } finally {
      rmSync(cache, { recursive: true, force: true });
    }
  }
  col.judge(`${names.warm}: startBroker() → first produce acked`, 'ms', '< 1000 ms (apache/kafka-native)', (m) => m < 1000);
  col.judge(`${names['warm-new-process']}: startBroker() → first produce acked`, 'ms', '< 1000 ms (apache/kafka-native)', (m) => m < 1000);
  return col.list();
}
