// The pgkafka CLI against a real Apache Kafka 4.3.1: it speaks only the Kafka
// protocol, so topic create, produce, consume (alone and as a group member)
// and group describe work against any broker, not just pgkafka.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonLines, pgkafka } from '../test/support/cli-process.js';
import { startApacheKafka, type ApacheKafka } from './support/apache-kafka.js';

let kafka: ApacheKafka;
const run = (args: string[], stdin?: string) => pgkafka(args, { stdin, env: { PGKAFKA_BROKERS: kafka.bootstrap } });

beforeAll(async () => {
  kafka = await startApacheKafka({ 'group.initial.rebalance.delay.ms': 0 });
}, 180_000);
afterAll(async () => {
  await kafka?.stop();
});

describe('pgkafka CLI against Apache Kafka 4.3.1', { timeout: 180_000 }, () => {
  it('creates a topic, produces, consumes and describes a group', async () => {
    const created = await run(['topic', 'create', 'cli-orders', '-p', '2', '-c', 'retention.ms=3600000']);
    expect(created, kafka.output()).toMatchObject({ code: 0, out: 'TOPIC       STATUS\ncli-orders  OK\n' });
    const described = JSON.parse((await run(['topic', 'describe', 'cli-orders', '-f', 'json'])).out) as { partitions: unknown[]; configs: { name: string; value: string }[] }[];
    expect(described[0]!.partitions).toHaveLength(2);
    expect(described[0]!.configs).toContainEqual(expect.objectContaining({ name: 'retention.ms', value: '3600000' }));

    const produced = await run(['produce', 'cli-orders', '-K', '=', '-H', 'via:cli', '-z', 'zstd'], 'k1=one\nk2=two\nk1=three\n');
    expect(produced.code, produced.err).toBe(0);
    const records = jsonLines((await run(['consume', 'cli-orders', '-o', ':end', '-f', 'json'])).out);
    expect(records.map((r) => `${String(r.key)}=${String(r.value)}`).sort()).toEqual(['k1=one', 'k1=three', 'k2=two']);
    expect(records.every((r) => JSON.stringify(r.headers) === '[{"key":"via","value":"cli"}]')).toBe(true);

    const member = await run(['consume', 'cli-orders', '-g', 'cli-group', '-n', '3']);
    expect(member.code, member.err).toBe(0);
    expect(member.out.trim().split('\n').sort()).toEqual(['one', 'three', 'two']);
    await run(['produce', 'cli-orders', '-k', 'k2'], 'four\n');
    const group = JSON.parse((await run(['group', 'describe', 'cli-group', '-f', 'json'])).out) as { state: string; partitions: { lag: number }[] }[];
    expect(group[0]!.state).toBe('Empty');
    expect(group[0]!.partitions.reduce((sum, p) => sum + p.lag, 0)).toBe(1);
    expect((await run(['group', 'list'])).out).toMatch(/^cli-group +Empty +consumer$/m);
  });
});
