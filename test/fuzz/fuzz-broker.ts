// The fuzzed broker (in process, its log captured) and the topic seeded before a
// run, whose contents must be unchanged after it.
import { Writable } from 'node:stream';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { startBroker, type RunningBroker } from '../../src/broker.js';
import { loadConfig, type OptionName } from '../../src/config/schema.js';
import { createLogger } from '../../src/observability/logger.js';
import { buildBatch, type Compression } from '../../src/protocol/records/index.js';
import { RawClient } from '../support/raw-client.js';
import { FUZZ_MAX_FRAME_BYTES } from './cases.js';

export interface BrokerLogLine {
  level: number;
  msg: string;
  [k: string]: unknown;
}

export interface FuzzBroker {
  broker: RunningBroker;
  bootstrap: string;
  schema: string;
  /** Broker log lines at error level and above. */
  errors: BrokerLogLine[];
  query<T extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params?: unknown[]): Promise<T[]>;
  destroy(): Promise<void>;
}

/** An in-process broker in a fresh schema, whose error logs are kept. */
export async function startFuzzBroker(databaseUrl: string, overrides: Partial<Record<OptionName, unknown>> = {}): Promise<FuzzBroker> {
  const schema = `fuzz_${randomBytes(6).toString('hex')}`;
  const errors: BrokerLogLine[] = [];
  let pending = '';
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      pending += chunk.toString();
      let nl;
      while ((nl = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        try {
          const parsed = JSON.parse(line) as BrokerLogLine;
          if (process.env.FUZZ_LOG_LEVEL) process.stderr.write(line + '\n');
          if (parsed.level >= 50 && errors.length < 10_000) errors.push(parsed);
        } catch {
          /* not JSON */
        }
      }
      cb();
    },
  });
  const config = loadConfig(
    {},
    {
      databaseUrl,
      schema,
      port: 0,
      host: '127.0.0.1',
      advertisedHost: '127.0.0.1',
      metricsEnabled: false,
      logLevel: 'error',
      ...(process.env.FUZZ_LOG_LEVEL ? { logLevel: process.env.FUZZ_LOG_LEVEL } : {}),
      socketRequestMaxBytes: FUZZ_MAX_FRAME_BYTES,
      fetchMaxWaitMsCap: 50,
      groupInitialRebalanceDelayMs: 0,
      // The authorizer is on so fuzzed CreateAcls/DescribeAcls/DeleteAcls really store and match; the fuzzing clients are super users so their other requests still reach the handlers' logic.
      authorizerEnabled: true,
      superUsers: 'User:ANONYMOUS',
      ...overrides,
    },
  );
  const broker = await startBroker(config, createLogger(config.logLevel, sink));
  const admin = new pg.Pool({ connectionString: databaseUrl, max: 2, options: `-c search_path=${schema}` });
  return {
    broker,
    bootstrap: `127.0.0.1:${broker.port}`,
    schema,
    errors,
    async query(sql, params) {
      return (await admin.query(sql, params as unknown[])).rows;
    },
    async destroy() {
      await broker.stop();
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.end();
    },
  };
}

/** Broker error logs grouped by message, with the APIs and the first case (correlation id = case index). */
export function summarizeErrors(errors: BrokerLogLine[]): string {
  const groups = new Map<string, { n: number; apis: Set<string>; first: unknown; stack: unknown }>();
  for (const e of errors) {
    const key = `${e.msg}: ${String(e.err)}`;
    const g = groups.get(key) ?? { n: 0, apis: new Set<string>(), first: e.correlationId, stack: e.stack };
    g.n++;
    g.apis.add(`${String(e.api)} v${String(e.v)}`);
    groups.set(key, g);
  }
  return [...groups]
    .map(([m, g]) => `  ${g.n}x ${m}\n    first case ${String(g.first)}; ${[...g.apis].sort().join(', ')}${g.stack ? `\n    ${String(g.stack).split('\n').slice(0, 4).join('\n    ')}` : ''}`)
    .join('\n');
}

/** A name the request generator never produces (its strings come from a fixed list). */
export const SEEDED_TOPIC = { name: 'pgkafka-fuzz-seeded-topic', partitions: 3 };

/** Creates the seeded topic and writes known batches into it. */
export async function seedTopic(bootstrap: string): Promise<void> {
  const { CreateTopicsApi, ProduceApi } = await import('../../src/protocol/messages/index.js');
  const client = await RawClient.connect(bootstrap);
  try {
    const created = await client.request(CreateTopicsApi, 7, { topics: [{ name: SEEDED_TOPIC.name, numPartitions: SEEDED_TOPIC.partitions, replicationFactor: 1 }], timeoutMs: 5000 });
    if (created.topics[0]!.errorCode !== 0) throw new Error(`CreateTopics: error ${created.topics[0]!.errorCode}`);
    for (let round = 0; round < 4; round++) {
      for (let p = 0; p < SEEDED_TOPIC.partitions; p++) {
        const records = Array.from({ length: 1 + round }, (_, i) => ({ key: Buffer.from(`k${p}-${round}-${i}`), value: Buffer.from(`value ${p}/${round}/${i}`) }));
        const res = await client.request(ProduceApi, 9, {
          acks: -1,
          timeoutMs: 5000,
          topicData: [{ name: SEEDED_TOPIC.name, partitionData: [{ index: p, records: buildBatch({ compression: (round % 5) as Compression, records }) }] }],
        });
        const e = res.responses[0]!.partitionResponses[0]!.errorCode;
        if (e !== 0) throw new Error(`Produce to the seeded topic: error ${e}`);
      }
    }
  } finally {
    client.close();
  }
}

/** Everything stored for the seeded topic, as comparable text. */
export async function snapshotSeededTopic(b: Pick<FuzzBroker, 'query'>): Promise<string> {
  const topic = await b.query('SELECT topic_id, name, partition_count, configs FROM topics WHERE name = $1', [SEEDED_TOPIC.name]);
  const parts = await b.query('SELECT p.partition, p.next_offset::text, p.log_start_offset::text, p.leader_epoch FROM partitions p JOIN topics t USING (topic_id) WHERE t.name = $1 ORDER BY 1', [
    SEEDED_TOPIC.name,
  ]);
  const batches = await b.query(
    `SELECT b.partition, b.base_offset::text, b.last_offset::text, b.record_count, b.size, encode(b.data, 'hex') AS data
       FROM batches b JOIN topics t USING (topic_id) WHERE t.name = $1 ORDER BY 1, 2`,
    [SEEDED_TOPIC.name],
  );
  return JSON.stringify({ topic, parts, batches });
}
