// `pgkafka topic …` run as a process against a real broker: create with
// partitions and configs (and a dry run), list, describe as text and JSON,
// alter-config, add-partitions, delete, and Kafka's errors as one line.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../support/broker.js';
import { pgkafka } from '../support/cli-process.js';

let broker: TestBroker;
const run = (...args: string[]) => pgkafka(args, { env: { PGKAFKA_BROKERS: broker.bootstrap } });

beforeAll(async () => {
  broker = await startTestBroker({ autoCreateTopicsEnable: false });
});
afterAll(async () => {
  await broker?.destroy();
});

interface Described {
  name: string;
  partitions: { partition: number; leader: number; logStartOffset: number; highWatermark: number }[];
  configs: { name: string; value: string | null; source: string }[];
}

const describeJson = async (topic: string) => JSON.parse((await run('topic', 'describe', topic, '-f', 'json')).out) as Described[];

describe('pgkafka topic', { timeout: 180_000 }, () => {
  it('creates a topic with -p and -c; a dry run creates nothing', async () => {
    const dry = await run('topic', 'create', 'dry', '-p', '2', '--dry-run');
    expect(dry).toMatchObject({ code: 0, out: 'TOPIC  STATUS\ndry    OK (dry run)\n' });
    expect((await run('topic', 'list')).out).not.toMatch(/\bdry\b/);

    const created = await run('topic', 'create', 'orders', '-p', '3', '-r', '1', '-c', 'retention.ms=60000', '--topic-config', 'cleanup.policy=compact');
    expect(created).toMatchObject({ code: 0, out: 'TOPIC   STATUS\norders  OK\n', err: '' });
    const [orders] = await describeJson('orders');
    expect(orders!.partitions.map((p) => p.partition)).toEqual([0, 1, 2]);
    expect(orders!.partitions.every((p) => p.logStartOffset === 0 && p.highWatermark === 0 && p.leader === 1)).toBe(true);
    expect(orders!.configs).toContainEqual({ name: 'retention.ms', value: '60000', source: 'DYNAMIC_TOPIC_CONFIG' });
    expect(orders!.configs).toContainEqual({ name: 'cleanup.policy', value: 'compact', source: 'DYNAMIC_TOPIC_CONFIG' });
  });

  it('answers Kafka errors per topic with exit code 1', async () => {
    const again = await run('topic', 'create', 'orders');
    expect(again.code).toBe(1);
    expect(again.out).toMatch(/^orders +TOPIC_ALREADY_EXISTS/m);
    const badConfig = await run('topic', 'create', 'badcfg', '-c', 'no.such.config=1');
    expect(badConfig.code).toBe(1);
    expect(badConfig.out).toMatch(/badcfg +INVALID_CONFIG/);
    const missing = await run('topic', 'describe', 'nope');
    expect(missing.code).toBe(1);
    expect(missing.err).toBe('topic nope: UNKNOWN_TOPIC_OR_PARTITION\n');
  });

  it('lists topics as a table and as JSON', async () => {
    await run('topic', 'create', 'payments', '-p', '1');
    const text = await run('topic', 'list');
    expect(text.out).toBe('NAME      PARTITIONS  REPLICAS\norders    3           1\npayments  1           1\n');
    const json = await run('topic', 'list', '--format', 'json');
    expect(JSON.parse(json.out)).toEqual([
      { name: 'orders', partitions: 3, replicas: 1 },
      { name: 'payments', partitions: 1, replicas: 1 },
    ]);
  });

  it('describes a topic as text with its summary, configs and partition offsets', async () => {
    const out = (await run('topic', 'describe', 'payments')).out;
    expect(out).toMatch(/^SUMMARY\n=======\nNAME {8}payments\nPARTITIONS {2}1\n/);
    expect(out).toMatch(/\nPARTITIONS\n==========\nPARTITION {2}LEADER {2}EPOCH {2}REPLICAS {2}LOG-START-OFFSET {2}HIGH-WATERMARK\n0 +1 +\d+ +\[1\] +0 +0\n$/);
  });

  it('sets and deletes configs with alter-config', async () => {
    expect((await run('topic', 'alter-config', 'orders', '--set', 'retention.ms=1234', '-d', 'cleanup.policy')).code).toBe(0);
    const [orders] = await describeJson('orders');
    expect(orders!.configs).toContainEqual({ name: 'retention.ms', value: '1234', source: 'DYNAMIC_TOPIC_CONFIG' });
    expect(orders!.configs).toContainEqual({ name: 'cleanup.policy', value: 'delete', source: 'DEFAULT_CONFIG' });
    const none = await run('topic', 'alter-config', 'orders');
    expect(none.code).toBe(2);
  });

  it('adds partitions', async () => {
    expect((await run('topic', 'add-partitions', 'orders', '-n', '2')).out).toBe('TOPIC   STATUS\norders  OK\n');
    const [orders] = await describeJson('orders');
    expect(orders!.partitions).toHaveLength(5);
    expect((await run('topic', 'add-partitions', 'orders')).code).toBe(2);
  });

  it('deletes topics', async () => {
    expect((await run('topic', 'delete', 'payments')).out).toBe('TOPIC     STATUS\npayments  OK\n');
    expect((await run('topic', 'list', '-f', 'json')).out).not.toMatch(/payments/);
    const gone = await run('topic', 'delete', 'payments');
    expect(gone.code).toBe(1);
    expect(gone.out).toMatch(/payments +UNKNOWN_TOPIC_OR_PARTITION/);
  });
});
