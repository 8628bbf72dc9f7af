// Long fuzz runs of the broker (the same cases as test/fuzz/broker-fuzz.test.ts):
//   npm run fuzz -- --cases 2000000 --seed 1 [--connections 6] [--batch 24] [--show 1234]
// Starts an in-process broker in a fresh schema of DATABASE_URL (default: the
// local PostgreSQL at 127.0.0.1:5432/test), seeds a topic, fuzzes, checks the
// seeded topic is unchanged, prints figures and the broker's internal errors.
// --show N prints case N's bytes (hex) and what the broker must do with it.
// Exit status 1 on an uncaught exception, a bystander failure, a bad answer,
// or a change to the seeded topic.
import { parseArgs } from 'node:util';
import { makeCase } from '../test/fuzz/cases.js';
import { SEEDED_TOPIC, seedTopic, snapshotSeededTopic, startFuzzBroker, summarizeErrors } from '../test/fuzz/fuzz-broker.js';
import { formatStats, runFuzz } from '../test/fuzz/harness.js';

const { values } = parseArgs({
  options: {
    cases: { type: 'string', default: '1000000' },
    seed: { type: 'string' },
    connections: { type: 'string', default: '6' },
    batch: { type: 'string', default: '24' },
    show: { type: 'string' },
  },
});
const seed = Number(values.seed ?? Math.floor(Math.random() * 2 ** 31));

if (values.show !== undefined) {
  const c = makeCase(seed, Number(values.show));
  process.stdout.write(`case ${c.index} (seed ${seed}): API ${c.apiKey} v${c.version}, ${c.kind}, expect ${c.expect}\n${c.frame.toString('hex')}\n`);
  process.exit(0);
}

const uncaught: unknown[] = [];
process.on('uncaughtException', (e) => uncaught.push(e));
process.on('unhandledRejection', (e) => uncaught.push(e));

const databaseUrl = process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/test';
const fuzz = await startFuzzBroker(databaseUrl);
let failed = false;
try {
  process.stdout.write(`fuzzing ${fuzz.bootstrap} (schema ${fuzz.schema}): seed ${seed}, ${values.cases} cases\n`);
  await seedTopic(fuzz.bootstrap);
  const before = await snapshotSeededTopic(fuzz);
  const stats = await runFuzz({
    bootstrap: fuzz.bootstrap,
    seed,
    cases: Number(values.cases),
    connections: Number(values.connections),
    batch: Number(values.batch),
    seededTopic: SEEDED_TOPIC,
    progress: (done, s) => {
      if (done % 100_000 < 10_000) process.stdout.write(`  ${done} cases, ${(s.elapsedMs / 1000).toFixed(0)} s, anomalies ${JSON.stringify(s.anomalyCounts)}\n`);
    },
  });
  process.stdout.write(`${formatStats(stats)}\n`);
  if (fuzz.errors.length > 0) process.stdout.write(`broker error logs:\n${summarizeErrors(fuzz.errors)}\n`);
  const after = await snapshotSeededTopic(fuzz);
  const problems = [
    ...uncaught.map((e) => `uncaught: ${e instanceof Error ? e.stack : String(e)}`),
    ...(after !== before ? ['the seeded topic changed'] : []),
    ...stats.anomalies.filter((a) => a.kind === 'bystander' || a.kind === 'bad-answer' || a.kind === 'answered-undecodable').map((a) => `${a.kind}: case ${a.caseIndex}: ${a.detail}`),
  ];
  if (problems.length > 0) {
    failed = true;
    process.stdout.write(`FAILED:\n  ${problems.join('\n  ')}\n`);
  } else {
    process.stdout.write('OK: broker up, bystander answered throughout, seeded topic unchanged\n');
  }
} finally {
  await fuzz.destroy();
}
process.exit(failed ? 1 : 0);
