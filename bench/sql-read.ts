// Decoding speed of records() (migrations/0014_sql_read_capture.sql): small records
// written into a scratch schema with the broker's own append statement
// (SqlLimit), then read back through records() in PL/pgSQL, per record shape.
// `npx tsx bench/sql-read.ts [records] [runs]`.
import { pgClient } from './broker.js';
import { SqlLimit } from './sql-limit.js';

const count = Number(process.argv[2] ?? 100_000);
const runs = Number(process.argv[3] ?? 3);

const limit = await SqlLimit.create();
const c = await pgClient();
try {
  // 16-byte keys, 10-byte values, 500 records per batch, one partition.
  await limit.run(1, count, 10, 500, 1);
  await c.query(`SET search_path TO ${limit.schema}`);
  const { rows } = await c.query<{ name: string }>(`SELECT name FROM topics`);
  const topic = rows[0]!.name;
  const cases: [string, string][] = [
    ['count(*)', `SELECT count(*)::int AS n FROM records($1, 0)`],
    ['sum of key and value bytes', `SELECT count(*)::int AS n, sum(length(key) + length(value))::int8 AS bytes FROM records($1, 0)`],
    ['last 100 of one key', `SELECT count(*)::int AS n FROM (SELECT * FROM records($1, 0) WHERE key = (SELECT key FROM records($1, 0, max_records => 1)) ORDER BY "offset" DESC LIMIT 100) x`],
  ];
  for (const [name, sql] of cases) {
    const rates: number[] = [];
    for (let r = 0; r < runs; r++) {
      const t0 = performance.now();
      await c.query(sql, [topic]);
      rates.push(count / ((performance.now() - t0) / 1000));
    }
    rates.sort((a, b) => a - b);
    console.log(`${name}: ${Math.round(rates[Math.floor(rates.length / 2)]!)} records/s decoded (median of ${runs}; min ${Math.round(rates[0]!)}, max ${Math.round(rates.at(-1)!)})`);
  }
} finally {
  await c.end();
  await limit.drop();
}
