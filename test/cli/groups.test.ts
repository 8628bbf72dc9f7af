// `pgkafka groups` against real PostgreSQL: exact kafka-consumer-groups-style
// text, --list, --json, and the errors a user meets first.
import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runGroupsCommand } from '../../src/cli/groups.js';
import { createLogger } from '../../src/observability/logger.js';
import { Writer } from '../../src/protocol/codec/writer.js';
import { writeConsumerProtocolAssignment } from '../../src/protocol/messages/index.js';
import { buildBatch, readBatchHeaderAt } from '../../src/protocol/records/index.js';
import { migrate } from '../../src/storage/pg/migrate.js';
import { testDatabaseUrl } from '../support/broker.js';
import { runCli } from '../support/cli.js';

const T0 = 1_700_000_000_000;

let url: string;
let schema: string;
let admin: pg.Client;

const run = (args: string[], env: NodeJS.ProcessEnv = { DATABASE_URL: url, PGKAFKA_SCHEMA: schema }) => runCli(runGroupsCommand, args, env);

function assignment(topic: string, partitions: number[]): string {
  const w = new Writer();
  w.int16(1);
  writeConsumerProtocolAssignment(w, 1, { assignedPartitions: [{ topic, partitions }], userData: null });
  return w.toBuffer().toString('base64');
}

beforeAll(async () => {
  url = testDatabaseUrl();
  schema = `test_${randomBytes(6).toString('hex')}`;
  await migrate(url, schema, createLogger('silent'));
  admin = new pg.Client({ connectionString: url, options: `-c search_path=${schema}` });
  await admin.connect();

  // orders: partition 0 holds offsets 0..9 stamped T0 + offset seconds; 1 holds 0..3; 2 is empty.
  const topicId = randomUUID();
  await admin.query("INSERT INTO topics (topic_id, name, partition_count) VALUES ($1, 'orders', 3)", [topicId]);
  await admin.query('INSERT INTO partitions (topic_id, partition, next_offset) VALUES ($1, 0, 10), ($1, 1, 4), ($1, 2, 0)', [topicId]);
  for (const [partition, count] of [
    [0, 10],
    [1, 4],
  ] as const) {
    const records = Array.from({ length: count }, (_, i) => ({ timestampDelta: BigInt(i * 1000), key: null, value: Buffer.from(`v${i}`) }));
    const data = buildBatch({ baseOffset: 0n, baseTimestamp: BigInt(T0), compression: 3, records });
    const h = readBatchHeaderAt(data, 0)!;
    await admin.query(
      `INSERT INTO batches (topic_id, partition, base_offset, last_offset, record_count, first_timestamp, max_timestamp,
         producer_id, producer_epoch, base_sequence, is_transactional, is_control, size, data)
       VALUES ($1, $2, 0, $3::int8, $3::int4 + 1, $4, $5, -1, -1, -1, false, false, $6, $7)`,
      [topicId, partition, h.lastOffsetDelta, h.baseTimestamp, h.maxTimestamp, data.length, data],
    );
  }
  const members = [
    {
      memberId: 'consumer-1-3f9c2a',
      groupInstanceId: null,
      clientId: 'consumer-1',
      clientHost: '/127.0.0.1',
      sessionTimeoutMs: 45000,
      rebalanceTimeoutMs: 300000,
      protocols: [{ name: 'range', metadata: '' }],
      assignment: assignment('orders', [0, 1, 2]),
    },
  ];
  await admin.query(
    `INSERT INTO groups (group_id, protocol_type, protocol_name, generation, leader_id, state, members) VALUES
       ('billing-service', 'consumer', 'range', 5, 'consumer-1-3f9c2a', 'Stable', $1),
       ('audit', 'consumer', NULL, 2, NULL, 'Empty', '[]'),
       ('loaders', 'consumer', 'range', 9, 'x', 'PreparingRebalance', '[]')`,
    [JSON.stringify(members)],
  );
  await admin.query(`INSERT INTO committed_offsets (group_id, topic, partition, committed_offset) VALUES
    ('billing-service', 'orders', 0, 7), ('billing-service', 'orders', 1, 4), ('audit', 'orders', 0, 9)`);
  // lag times: record 7 is 4m12s old, record 9 is 4m10s old
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(T0 + 7000 + 252_000);
});

afterAll(async () => {
  vi.useRealTimers();
  if (admin) {
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  }
});

describe('pgkafka groups', () => {
  it('describes every group as kafka-consumer-groups --describe does, with LAG-TIME', async () => {
    const { code, out, err } = await run([]);
    expect(err).toBe('');
    expect(code).toBe(0);
    expect(out).toBe(
      [
        "Consumer group 'audit' has no active members.",
        'GROUP TOPIC  PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST CLIENT-ID LAG-TIME',
        'audit orders 0         9              10             1   -           -    -         4m10s',
        '',
        'GROUP           TOPIC  PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID       HOST       CLIENT-ID  LAG-TIME',
        'billing-service orders 0         7              10             3   consumer-1-3f9c2a /127.0.0.1 consumer-1 4m12s',
        'billing-service orders 1         4              4              0   consumer-1-3f9c2a /127.0.0.1 consumer-1 0s',
        'billing-service orders 2         -              0              -   consumer-1-3f9c2a /127.0.0.1 consumer-1 -',
        '',
        "Consumer group 'loaders' has no active members.",
        '',
      ].join('\n'),
    );
  });

  it('describes only the groups asked for, and says which do not exist', async () => {
    const { code, out, err } = await run(['--group', 'billing-service', '-g', 'nope']);
    expect(code).toBe(1);
    expect(err).toBe("Error: Consumer group 'nope' does not exist.\n");
    expect(out.split('\n')[1]).toBe('billing-service orders 0         7              10             3   consumer-1-3f9c2a /127.0.0.1 consumer-1 4m12s');
    expect(out.split('\n')).toHaveLength(5);
  });

  it('warns about a rebalancing group that still has members', async () => {
    await admin.query(`UPDATE groups SET members = '[{"memberId": "m", "clientId": "c", "clientHost": "/h", "assignment": ""}]' WHERE group_id = 'loaders'`);
    try {
      const { out } = await run(['--group', 'loaders']);
      expect(out).toBe("Warning: Consumer group 'loaders' is rebalancing.\n");
    } finally {
      await admin.query("UPDATE groups SET members = '[]' WHERE group_id = 'loaders'");
    }
  });

  it('--list prints group ids and states', async () => {
    const { code, out } = await run(['--list']);
    expect(code).toBe(0);
    expect(out).toBe(['GROUP           STATE', 'audit           Empty', 'billing-service Stable', 'loaders         PreparingRebalance', ''].join('\n'));
  });

  it('--json prints offsets as numbers and missing values as null', async () => {
    const { code, out } = await run(['--json', '--group', 'billing-service']);
    expect(code).toBe(0);
    const owner = { consumerId: 'consumer-1-3f9c2a', host: '/127.0.0.1', clientId: 'consumer-1' };
    expect(JSON.parse(out)).toEqual([
      {
        group: 'billing-service',
        state: 'Stable',
        members: 1,
        partitions: [
          { topic: 'orders', partition: 0, currentOffset: 7, logEndOffset: 10, lag: 3, lagMs: 252_000, ...owner },
          { topic: 'orders', partition: 1, currentOffset: 4, logEndOffset: 4, lag: 0, lagMs: 0, ...owner },
          { topic: 'orders', partition: 2, currentOffset: null, logEndOffset: 0, lag: null, lagMs: null, ...owner },
        ],
      },
    ]);
    expect(JSON.parse((await run(['--list', '--json'])).out)).toEqual([
      { group: 'audit', state: 'Empty' },
      { group: 'billing-service', state: 'Stable' },
      { group: 'loaders', state: 'PreparingRebalance' },
    ]);
  });

  it('needs DATABASE_URL and refuses bad usage', async () => {
    const noDb = await run([], {});
    expect(noDb.code).toBe(2);
    expect(noDb.err).toMatch(/DATABASE_URL is not set/);
    expect(noDb.out).toBe('');
    const bad = await run(['--bogus']);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/Unknown option '--bogus'/);
    expect(bad.err).toContain('Usage: pgkafka groups');
    const help = await run(['--help'], {});
    expect(help.code).toBe(0);
    expect(help.out).toContain('--list');
  });

  it('explains a schema without pgkafka tables', async () => {
    const { code, err } = await run([], { DATABASE_URL: url, PGKAFKA_SCHEMA: 'no_such_schema' });
    expect(code).toBe(1);
    expect(err).toMatch(/no pgkafka tables in schema 'no_such_schema'/);
  });
});
