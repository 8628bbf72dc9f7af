// `pgkafka produce` and `pgkafka consume` run as processes against a real
// broker: keys split off lines, headers, Kafka's default partitioner,
// compression stored as asked, acks=0, every -o form, count, templates, JSON
// lines and raw bytes (binary values round-trip through JSON as base64).
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { murmur2 } from '../../src/cli/produce.js';
import { readBatchHeaderAt } from '../../src/protocol/records/index.js';
import { startTestBroker, type TestBroker } from '../support/broker.js';
import { jsonLines, pgkafka } from '../support/cli-process.js';

let broker: TestBroker;
const run = (args: string[], stdin?: string | Buffer) => pgkafka(args, { stdin, env: { PGKAFKA_BROKERS: broker.bootstrap } });

beforeAll(async () => {
  broker = await startTestBroker({ autoCreateTopicsEnable: true });
});
afterAll(async () => {
  await broker?.destroy();
});

describe('pgkafka produce and consume', { timeout: 180_000 }, () => {
  it("partitions keys as the Java client's default partitioner (murmur2, as kafkajs's JavaCompatible one)", () => {
    const kafkajsMurmur2 = createRequire(import.meta.url)('kafkajs/src/producer/partitioners/default/murmur2.js') as (key: Buffer) => number;
    for (const key of ['', 'a', 'ab', 'abc', 'orders-42', 'a-little-bit-longer-string', '\u00ff\u0000x']) {
      expect(murmur2(Buffer.from(key))).toBe(kafkajsMurmur2(Buffer.from(key)));
    }
  });

  it('produces stdin lines with keys and headers, and consumes them as JSON lines', async () => {
    expect((await run(['topic', 'create', 'orders', '-p', '3'])).code).toBe(0);
    const produced = await run(['produce', 'orders', '-K', ':', '-H', 'source:cli', '-H', 'trace:1'], 'k1:v1\nk2:v2\nk1:v3\nno-key-here\n');
    expect(produced.code).toBe(0);
    expect(produced.out.trim().split('\n')).toHaveLength(4);
    for (const line of produced.out.trim().split('\n')) expect(line).toMatch(/^Produced to partition [0-2] at offset \d+ with timestamp \d+\.$/);

    const consumed = await run(['consume', 'orders', '-n', '4', '-f', 'json']);
    expect(consumed.code).toBe(0);
    const records = jsonLines(consumed.out);
    expect(records.map((r) => `${String(r.key)}=${String(r.value)}`).sort()).toEqual(['k1=v1', 'k1=v3', 'k2=v2', 'null=no-key-here']);
    const k1 = records.filter((r) => r.key === 'k1');
    expect(k1.map((r) => r.partition)).toEqual([(murmur2(Buffer.from('k1')) & 0x7fffffff) % 3, (murmur2(Buffer.from('k1')) & 0x7fffffff) % 3]);
    expect(k1.map((r) => r.value)).toEqual(['v1', 'v3']);
    for (const r of records) {
      expect(r.topic).toBe('orders');
      expect(r.headers).toEqual([
        { key: 'source', value: 'cli' },
        { key: 'trace', value: '1' },
      ]);
      expect(typeof r.offset).toBe('number');
      expect(Math.abs(Number(r.timestamp) - Date.now())).toBeLessThan(120_000);
    }
  });

  it('reads from start, end, an offset, +N, -N, a time, with :end and -p, and prints templates', async () => {
    await run(['topic', 'create', 'log', '-p', '1']);
    const produced = await run(['produce', 'log', '-p', '0'], 'zero\none\ntwo\nthree\nfour\n');
    expect(produced.code).toBe(0);
    const template = ['-f', '%p/%o %v\\n'];
    expect((await run(['consume', 'log', '-o', 'start:end', ...template])).out).toBe('0/0 zero\n0/1 one\n0/2 two\n0/3 three\n0/4 four\n');
    expect((await run(['consume', 'log', '-o', '3:end', ...template])).out).toBe('0/3 three\n0/4 four\n');
    expect((await run(['consume', 'log', '-o', '+1', '-n', '2', ...template])).out).toBe('0/1 one\n0/2 two\n');
    expect((await run(['consume', 'log', '-o', '-2:end', ...template])).out).toBe('0/3 three\n0/4 four\n');
    expect((await run(['consume', 'log', '-o', 'end:end', ...template])).out).toBe('');
    expect((await run(['consume', 'log', '-p', '0', '-o', ':end', '-f', '%v,'])).out).toBe('zero,one,two,three,four,');
    const future = Date.now() + 3_600_000;
    expect((await run(['consume', 'log', '-o', `@${future}:end`])).out).toBe('');
    expect((await run(['consume', 'log', '-o', '@0', '-n', '1'])).out).toBe('zero\n');
    expect((await run(['consume', 'log', '-o', 'sideways'])).code).toBe(2);
    expect((await run(['consume', 'log', '-p', '7'])).err).toBe('pgkafka: topic log has no partition 7\n');
  });

  it('stores the compression asked for, and reads every codec back', async () => {
    for (const codec of ['gzip', 'snappy', 'lz4', 'zstd'] as const) {
      const topic = `z-${codec}`;
      expect((await run(['produce', topic, '-z', codec], `${codec}-1\n${codec}-2\n`)).code).toBe(0);
      const rows = await broker.query<{ data: Buffer }>('SELECT b.data FROM batches b JOIN topics t USING (topic_id) WHERE t.name = $1', [topic]);
      expect(rows.map((r) => readBatchHeaderAt(r.data, 0)!.compression)).toEqual([{ gzip: 1, snappy: 2, lz4: 3, zstd: 4 }[codec]]);
      expect((await run(['consume', topic, '-o', ':end'])).out).toBe(`${codec}-1\n${codec}-2\n`);
    }
    expect((await run(['produce', 'z-none', '-z', 'brotli'], 'x\n')).code).toBe(2);
  });

  it('keeps binary keys and values intact through JSON (base64) and raw output', async () => {
    const value = Buffer.from([0x00, 0xff, 0xfe, 0x0a, 0x80, 0x41]);
    const key = Buffer.from([0xc3, 0x28]);
    const line = JSON.stringify({ key: key.toString('base64'), keyEncoding: 'base64', value: value.toString('base64'), valueEncoding: 'base64', headers: [{ key: 'h', value: 'text' }] });
    expect((await run(['produce', 'bin', '-f', 'json'], `${line}\n{"key":null,"value":"plain"}\n`)).code).toBe(0);
    const [first, second] = jsonLines((await run(['consume', 'bin', '-o', ':end', '-f', 'json'])).out);
    expect(first).toMatchObject({ key: key.toString('base64'), keyEncoding: 'base64', value: value.toString('base64'), valueEncoding: 'base64', headers: [{ key: 'h', value: 'text' }] });
    expect(second).toMatchObject({ key: null, value: 'plain', headers: [] });
    expect(second).not.toHaveProperty('valueEncoding');
    const raw = await run(['consume', 'bin', '-n', '1', '-f', 'raw']);
    expect(raw.bytes.equals(value)).toBe(true);
    // What consume -f json wrote, produce -f json reads: a copy has the same bytes.
    const copied = await run(['produce', 'bin-copy', '-f', 'json'], (await run(['consume', 'bin', '-o', ':end', '-f', 'json'])).out);
    expect(copied.code).toBe(0);
    expect((await run(['consume', 'bin-copy', '-n', '1', '-f', 'raw'])).bytes.equals(value)).toBe(true);
  });

  it('produces with acks=0 and acks=1, and with a fixed key', async () => {
    const zero = await run(['produce', 'acks', '--acks', '0', '-k', 'fixed'], 'a\nb\n');
    expect(zero).toMatchObject({ code: 0, out: expect.stringMatching(/^Produced 2 record\(s\) to partition 0 \(acks=0: no offsets\)\.\n$/) as unknown });
    expect((await run(['produce', 'acks', '--acks', '1'], 'c\n')).out).toMatch(/^Produced to partition 0 at offset 2 /);
    expect((await run(['consume', 'acks', '-o', ':end', '-f', '%k=%v\\n'])).out).toBe('fixed=a\nfixed=b\n=c\n');
    expect((await run(['produce', 'acks', '--acks', '2'], 'x\n')).code).toBe(2);
  });
});
