// Consumer lag and the metrics endpoint against real PostgreSQL: rows are
// written straight into a fresh schema, with batches whose record timestamps
// are known, so lag in offsets and in time can be asserted exactly.
import { randomBytes, randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeLag, formatLagTime, timestampAtOrAfter, type LagRow } from '../../src/observability/lag.js';
import { createLogger } from '../../src/observability/logger.js';
import { startMetricsServer } from '../../src/observability/metrics.js';
import { Writer } from '../../src/protocol/codec/writer.js';
import { writeConsumerProtocolAssignment } from '../../src/protocol/messages/index.js';
import { buildBatch, readBatchHeaderAt, type BuildBatchOptions } from '../../src/protocol/records/index.js';
import { LagStore } from '../../src/storage/pg/lag-store.js';
import { migrate } from '../../src/storage/pg/migrate.js';
import { createPool } from '../../src/storage/pg/pool.js';
import { testDatabaseUrl } from '../support/broker.js';

const T0 = 1_700_000_000_000n;
const NOW = Number(T0) + 60_000;
const silent = createLogger('silent');

let url: string;
let schema: string;
let pool: pg.Pool;
let store: LagStore;

async function insertTopic(name: string, partitions: { next: bigint; start: bigint }[]): Promise<string> {
  const id = randomUUID();
  await pool.query('INSERT INTO topics (topic_id, name, partition_count) VALUES ($1, $2, $3)', [id, name, partitions.length]);
  for (const [i, p] of partitions.entries()) {
    await pool.query('INSERT INTO partitions (topic_id, partition, next_offset, log_start_offset) VALUES ($1, $2, $3, $4)', [id, i, p.next, p.start]);
  }
  return id;
}

async function insertBatch(topicId: string, partition: number, opts: BuildBatchOptions): Promise<void> {
  const data = buildBatch(opts);
  const h = readBatchHeaderAt(data, 0)!;
  await pool.query(
    `INSERT INTO batches (topic_id, partition, base_offset, last_offset, record_count, first_timestamp, max_timestamp,
       producer_id, producer_epoch, base_sequence, is_transactional, is_control, size, data)
     VALUES ($1, $2, $3, $4, $5, $6, $7, -1, -1, -1, false, false, $8, $9)`,
    [topicId, partition, h.baseOffset, h.baseOffset + BigInt(h.lastOffsetDelta), h.recordCount, h.baseTimestamp, h.maxTimestamp, data.length, data],
  );
}

const record = (offsetDelta: number, timestampDelta: bigint) => ({ offsetDelta, timestampDelta, key: null, value: Buffer.from(`v${offsetDelta}`) });

function assignment(partitions: { topic: string; partitions: number[] }[]): string {
  const w = new Writer();
  w.int16(0);
  writeConsumerProtocolAssignment(w, 0, { assignedPartitions: partitions, userData: null });
  return w.toBuffer().toString('base64');
}

const member = (memberId: string, clientId: string, host: string, assigned: { topic: string; partitions: number[] }[]) => ({
  memberId,
  groupInstanceId: null,
  clientId,
  clientHost: host,
  sessionTimeoutMs: 30000,
  rebalanceTimeoutMs: 60000,
  protocols: [{ name: 'range', metadata: '' }],
  assignment: assignment(assigned),
});

async function insertGroup(groupId: string, state: string, members: ReturnType<typeof member>[]): Promise<void> {
  await pool.query(
    `INSERT INTO groups (group_id, protocol_type, protocol_name, generation, leader_id, state, members)
     VALUES ($1, 'consumer', 'range', 3, $2, $3, $4)`,
    [groupId, members[0]?.memberId ?? null, state, JSON.stringify(members)],
  );
}

async function commit(groupId: string, topic: string, partition: number, offset: bigint): Promise<void> {
  await pool.query('INSERT INTO committed_offsets (group_id, topic, partition, committed_offset) VALUES ($1, $2, $3, $4)', [groupId, topic, partition, offset]);
}

beforeAll(async () => {
  url = testDatabaseUrl();
  schema = `test_${randomBytes(6).toString('hex')}`;
  await migrate(url, schema, silent);
  pool = createPool({ connectionString: url, schema, max: 4 });
  store = new LagStore(pool);

  // orders-0: offsets 0..2 at T0+0/100/200, then a gzip batch 3..4 at T0+1000/1500.
  // orders-1: compacted: one batch holding offsets 10 and 13 (last offset 14), log start 10.
  const orders = await insertTopic('orders', [
    { next: 5n, start: 0n },
    { next: 15n, start: 10n },
  ]);
  await insertBatch(orders, 0, { baseOffset: 0n, baseTimestamp: T0, records: [record(0, 0n), record(1, 100n), record(2, 200n)] });
  await insertBatch(orders, 0, { baseOffset: 3n, baseTimestamp: T0 + 1000n, compression: 1, records: [record(0, 0n), record(1, 500n)] });
  await insertBatch(orders, 1, { baseOffset: 10n, baseTimestamp: T0 + 2000n, lastOffsetDelta: 4, records: [record(0, 0n), record(3, 300n)] });
  // payments-0: LogAppendTime batch (every record's timestamp is maxTimestamp); payments-1 empty.
  const payments = await insertTopic('payments', [
    { next: 2n, start: 0n },
    { next: 0n, start: 0n },
  ]);
  await insertBatch(payments, 0, { baseOffset: 0n, baseTimestamp: T0, timestampType: 1, maxTimestamp: T0 + 5000n, records: [record(0, 0n), record(1, 0n)] });

  await insertGroup('app', 'Stable', [
    member('m1-uuid', 'client-1', '/10.0.0.1', [{ topic: 'orders', partitions: [0, 1] }]),
    member('m2-uuid', 'client-2', '/10.0.0.2', [{ topic: 'payments', partitions: [0, 1] }]),
  ]);
  await commit('app', 'orders', 0, 1n);
  await commit('app', 'orders', 1, 11n);
  await commit('app', 'payments', 0, 2n);
  await insertGroup('batchers', 'Empty', []);
  await commit('batchers', 'orders', 0, 3n);
  // Offsets only, no group row; one below the log start, one of a topic that is gone.
  await commit('standalone', 'orders', 1, 2n);
  await commit('standalone', 'gone', 0, 5n);
});

afterAll(async () => {
  await pool?.end();
  if (schema) {
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  }
});

const r = (group: string, topic: string, partition: number, cur: bigint | null, leo: bigint | null, lag: bigint | null, lagMs: number | null, owner?: [string, string, string]): LagRow => ({
  group,
  topic,
  partition,
  currentOffset: cur,
  logEndOffset: leo,
  lag,
  lagMs,
  consumerId: owner?.[0] ?? null,
  host: owner?.[1] ?? null,
  clientId: owner?.[2] ?? null,
});
const m1: [string, string, string] = ['m1-uuid', '/10.0.0.1', 'client-1'];
const m2: [string, string, string] = ['m2-uuid', '/10.0.0.2', 'client-2'];

describe('describeLag', () => {
  it('reports offsets, lag, the age of the record at the committed offset and its owner', async () => {
    expect(await describeLag(store, { now: NOW })).toEqual([
      r('app', 'orders', 0, 1n, 5n, 4n, 59_900, m1), // record 1 at T0+100
      r('app', 'orders', 1, 11n, 15n, 4n, 57_700, m1), // 11 and 12 compacted away: record 13 at T0+2300
      r('app', 'payments', 0, 2n, 2n, 0n, 0, m2), // caught up
      r('app', 'payments', 1, null, 0n, null, null, m2), // owned, never committed
      r('batchers', 'orders', 0, 3n, 5n, 2n, 59_000), // first record of the gzip batch
      r('standalone', 'gone', 0, 5n, null, null, null), // topic deleted
      r('standalone', 'orders', 1, 2n, 15n, 13n, 58_000), // below the log start: the oldest record's age
    ]);
  });

  it('filters by group id', async () => {
    const rows = await describeLag(store, { groupId: 'batchers', now: NOW });
    expect(rows).toEqual([r('batchers', 'orders', 0, 3n, 5n, 2n, 59_000)]);
    expect(await describeLag(store, { groupId: ['nope'], now: NOW })).toEqual([]);
  });

  it('takes LogAppendTime batches at their max timestamp', async () => {
    const data = buildBatch({ baseOffset: 7n, baseTimestamp: T0, timestampType: 1, maxTimestamp: T0 + 42n, records: [record(0, 0n), record(1, 9n)] });
    expect(timestampAtOrAfter(data, 7n, 8n)).toBe(T0 + 42n);
    const create = buildBatch({ baseOffset: 7n, baseTimestamp: T0, records: [record(0, 0n), record(1, 9n)] });
    expect(timestampAtOrAfter(create, 7n, 8n)).toBe(T0 + 9n);
    expect(timestampAtOrAfter(create, 7n, 9n)).toBeNull();
    expect(timestampAtOrAfter(Buffer.from('garbage'), 7n, 8n)).toBeNull();
  });

  it('formats lag time for people', () => {
    expect([null, 0, 999, 12_345, 59_999, 60_000, 252_000, 7_380_000, 277_200_000].map(formatLagTime)).toEqual(['-', '0s', '0.9s', '12.3s', '59.9s', '1m0s', '4m12s', '2h3m', '3d5h']);
  });
});

describe('metrics endpoint', () => {
  it('serves kafka_exporter-named gauges computed at scrape time', async () => {
    const server = await startMetricsServer({ host: '127.0.0.1', port: 0, lagStore: store, log: silent, now: () => NOW });
    try {
      const res = await fetch(`http://127.0.0.1:${server.port}/metrics`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      const lines = (await res.text()).split('\n');
      const expected = [
        'kafka_consumergroup_current_offset{consumergroup="app",topic="orders",partition="0"} 1',
        'kafka_consumergroup_current_offset{consumergroup="app",topic="orders",partition="1"} 11',
        'kafka_consumergroup_current_offset{consumergroup="standalone",topic="gone",partition="0"} 5',
        'kafka_consumergroup_current_offset_sum{consumergroup="app",topic="orders"} 12',
        'kafka_consumergroup_lag{consumergroup="app",topic="orders",partition="0"} 4',
        'kafka_consumergroup_lag{consumergroup="app",topic="payments",partition="0"} 0',
        'kafka_consumergroup_lag{consumergroup="standalone",topic="orders",partition="1"} 13',
        'kafka_consumergroup_lag_sum{consumergroup="app",topic="orders"} 8',
        'kafka_consumergroup_lag_seconds{consumergroup="app",topic="orders",partition="0"} 59.9',
        'kafka_consumergroup_lag_seconds{consumergroup="app",topic="orders",partition="1"} 57.7',
        'kafka_consumergroup_lag_seconds{consumergroup="app",topic="payments",partition="0"} 0',
        'kafka_consumergroup_lag_seconds{consumergroup="batchers",topic="orders",partition="0"} 59',
        'kafka_consumergroup_members{consumergroup="app"} 2',
        'kafka_consumergroup_members{consumergroup="batchers"} 0',
        'kafka_consumergroup_members{consumergroup="standalone"} 0',
        'kafka_topic_partitions{topic="orders"} 2',
        'kafka_topic_partitions{topic="payments"} 2',
        'kafka_topic_partition_current_offset{topic="orders",partition="0"} 5',
        'kafka_topic_partition_current_offset{topic="orders",partition="1"} 15',
        'kafka_topic_partition_current_offset{topic="payments",partition="1"} 0',
        'kafka_topic_partition_oldest_offset{topic="orders",partition="1"} 10',
        '# TYPE kafka_consumergroup_lag gauge',
      ];
      for (const line of expected) expect(lines).toContain(line);
      // No lag for an unknown log end (deleted topic) nor for a partition never committed.
      expect(lines.filter((l) => l.startsWith('kafka_consumergroup_lag{'))).toHaveLength(5);
      expect(lines.some((l) => l.includes('topic="gone"') && l.startsWith('kafka_consumergroup_lag'))).toBe(false);
      expect(lines.some((l) => /^pgkafka_process_cpu_user_seconds_total \d/.test(l))).toBe(true);
      expect(lines.some((l) => l.startsWith('process_cpu'))).toBe(false); // own registry, prefixed

      // Values are read at scrape time.
      await commit('batchers', 'payments', 0, 1n);
      const again = (await (await fetch(`http://127.0.0.1:${server.port}/metrics`)).text()).split('\n');
      expect(again).toContain('kafka_consumergroup_lag{consumergroup="batchers",topic="payments",partition="0"} 1');
      expect(again).toContain('kafka_consumergroup_lag_seconds{consumergroup="batchers",topic="payments",partition="0"} 55');
      await pool.query("DELETE FROM committed_offsets WHERE group_id = 'batchers' AND topic = 'payments'");

      expect((await fetch(`http://127.0.0.1:${server.port}/`)).status).toBe(404);
      expect((await fetch(`http://127.0.0.1:${server.port}/metricsx`)).status).toBe(404);
      expect((await fetch(`http://127.0.0.1:${server.port}/metrics`, { method: 'POST' })).status).toBe(405);
    } finally {
      await server.close();
    }
  });

  it('answers 500 and logs when the database is unreachable, and keeps serving', async () => {
    const logged: string[] = [];
    const log = createLogger(
      'warn',
      new Writable({
        write(chunk: Buffer, _enc, done) {
          logged.push(chunk.toString());
          done();
        },
      }),
    );
    const deadPool = createPool({ connectionString: 'postgresql://postgres@127.0.0.1:1/none', schema, max: 1 });
    const server = await startMetricsServer({ host: '127.0.0.1', port: 0, lagStore: new LagStore(deadPool), log });
    try {
      for (let i = 0; i < 2; i++) {
        const res = await fetch(`http://127.0.0.1:${server.port}/metrics`);
        expect(res.status).toBe(500);
        expect(await res.text()).toBe('metrics scrape failed\n');
      }
      expect(logged.length).toBeGreaterThanOrEqual(2);
      expect(JSON.parse(logged[0]!)).toMatchObject({ level: 40, code: 'METRICS_SCRAPE_FAILED', msg: 'metrics scrape failed' });
    } finally {
      await server.close();
      await deadPool.end();
    }
  });
});
