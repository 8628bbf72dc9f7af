// pgkafka benchmark: `npm run bench [-- --quick] [--runs N] [--only produce,fetch,...]`.
// Prints a table (median of the runs, min–max, ratio) and writes
// bench-results/<timestamp>.json and bench-results/latest.json.
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { runCluster } from './cluster.js';
import { runFetch } from './fetch.js';
import { runIdle } from './idle.js';
import { runKafka } from './kafka.js';
import { runLatency } from './latency.js';
import { runPeers } from './peers.js';
import { runProduce } from './produce.js';
import { runScale } from './scale.js';
import { runSessions } from './sessions.js';
import { runStartup } from './startup.js';
import { runSqlSend } from './sql-send.js';
import { fmt, median, max, min, type Ctx, type Row } from './stats.js';

const SECTIONS: Record<string, (ctx: Ctx) => Promise<Row[]>> = {
  produce: runProduce, // includes section 2, the SQL limit, in the same runs
  fetch: runFetch,
  latency: runLatency,
  idle: runIdle,
  sessions: runSessions, // incremental fetch sessions over 1,000 idle partitions
  scale: runScale,
  peers: runPeers,
  kafka: runKafka,
  startup: runStartup,
  'sql-send': runSqlSend, // producing from SQL, beside plain INSERTs
  cluster: runCluster, // 1, 2 and 3 brokers on one schema
};

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    runs: { type: 'string' },
    only: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (args.help) {
  process.stdout.write(`Usage: npm run bench -- [--quick] [--runs N] [--only ${Object.keys(SECTIONS).join(',')}]\n`);
  process.exit(0);
}
const quick = args.quick ?? false;
const runs = args.runs ? Number(args.runs) : quick ? 1 : 3;
if (!Number.isInteger(runs) || runs < 1 || runs > 20) throw new Error(`--runs must be 1..20, got ${args.runs}`);
const only = args.only ? args.only.split(',').map((s) => s.trim()) : Object.keys(SECTIONS);
for (const s of only) if (!SECTIONS[s]) throw new Error(`unknown section ${s}; known: ${Object.keys(SECTIONS).join(', ')}`);

const ctx: Ctx = {
  quick,
  runs,
  log: (m) => process.stderr.write(`${m}\n`),
  peakRssKiB: { value: 0 },
};

const started = Date.now();
const rows: Row[] = [];
const failures: { section: string; error: string }[] = [];
const durations: Record<string, number> = {};
for (const name of only) {
  const t0 = Date.now();
  ctx.log(`== ${name} (${quick ? 'quick, ' : ''}${runs} run${runs > 1 ? 's' : ''})`);
  try {
    rows.push(...(await SECTIONS[name]!(ctx)));
  } catch (err) {
    const error = (err as Error).stack ?? String(err);
    ctx.log(`!! section ${name} failed: ${error}`);
    failures.push({ section: name, error });
  }
  durations[name] = (Date.now() - t0) / 1000;
  ctx.log(`   ${name} took ${durations[name]!.toFixed(0)} s`);
}
rows.push({
  section: 'all',
  case: 'broker peak RSS (max VmHWM over sections)',
  unit: 'MiB',
  values: [ctx.peakRssKiB.value / 1024],
  target: '< 512 MiB',
  pass: ctx.peakRssKiB.value / 1024 < 512,
});

// ---- table
const header = ['section', 'case', 'median', 'min–max', 'unit', 'ratio (median, min–max)', 'target', ''];
const table = rows.map((r) => {
  const ratio = r.ratios?.length ? `${median(r.ratios).toFixed(2)}× ${r.ratioOf ?? ''} (${min(r.ratios).toFixed(2)}–${max(r.ratios).toFixed(2)})` : '';
  const range = r.values.length > 1 ? `${fmt(min(r.values))}–${fmt(max(r.values))}` : '';
  const verdict = r.pass === undefined ? '' : r.pass ? 'PASS' : 'MISS';
  return [r.section, r.case + (r.note ? ` [${r.note}]` : ''), fmt(median(r.values)), range, r.unit, ratio, r.target ?? '', verdict];
});
const widths = header.map((h, i) => Math.max(h.length, ...table.map((row) => row[i]!.length)));
const line = (cells: string[]) =>
  cells
    .map((c, i) => c.padEnd(widths[i]!))
    .join(' | ')
    .trimEnd();
process.stdout.write(`\n${line(header)}\n${widths.map((w) => '-'.repeat(w)).join('-|-')}\n${table.map(line).join('\n')}\n`);
process.stdout.write(`\nbroker peak RSS: ${(ctx.peakRssKiB.value / 1024).toFixed(0)} MiB; total ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
for (const f of failures) process.stdout.write(`FAILED section ${f.section}: ${f.error.split('\n')[0]}\n`);

// ---- JSON
const out = {
  startedAt: new Date(started).toISOString(),
  seconds: (Date.now() - started) / 1000,
  quick,
  runs,
  sections: only,
  durations,
  machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model, memMiB: Math.round(totalmem() / 2 ** 20), node: process.version },
  brokerPeakRssMiB: ctx.peakRssKiB.value / 1024,
  rows: rows.map((r) => ({
    ...r,
    median: median(r.values),
    min: min(r.values),
    max: max(r.values),
    ratioMedian: r.ratios?.length ? median(r.ratios) : undefined,
  })),
  failures,
};
const dir = fileURLToPath(new URL('../bench-results/', import.meta.url));
mkdirSync(dir, { recursive: true });
const stamp = new Date(started).toISOString().replace(/[:.]/g, '-');
writeFileSync(`${dir}${stamp}.json`, JSON.stringify(out, null, 2));
writeFileSync(`${dir}latest.json`, JSON.stringify(out, null, 2));
process.stdout.write(`results: bench-results/${stamp}.json\n`);
process.exit(failures.length ? 1 : 0);
