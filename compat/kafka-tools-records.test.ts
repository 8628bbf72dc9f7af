// Kafka 4.3.1's tools for offsets, records and transactions against pgkafka:
// kafka-get-offsets.sh, kafka-delete-records.sh, kafka-transactions.sh (after
// a kafkajs transactional producer) and the two perf tests, checking what
// each prints and what is in the log afterwards.
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../test/support/broker.js';
import { runToolOk, table, toolFile } from './support/kafka-tools.js';

let broker: TestBroker;
let bootstrap: string[];

beforeAll(async () => {
  broker = await startTestBroker({ autoCreateTopicsEnable: false });
  bootstrap = ['--bootstrap-server', broker.bootstrap];
  for (const [topic, partitions] of [
    ['tools-log', 2],
    ['tools-timed', 1],
    ['tools-txn', 1],
    ['tools-perf', 3],
    ['tools-perf-tx', 1],
  ] as const)
    await runToolOk('kafka-topics', [...bootstrap, '--create', '--topic', topic, '--partitions', String(partitions)]);
});
afterAll(() => broker?.destroy());

const tool = (name: Parameters<typeof runToolOk>[0], ...args: string[]) => runToolOk(name, [...bootstrap, ...args]);
const produce = (topic: string, lines: string[], ...props: string[]) =>
  runToolOk('kafka-console-producer', [...bootstrap, '--topic', topic, ...props.flatMap((p) => ['--reader-property', p])], { input: lines.map((l) => `${l}\n`).join('') });
/** kafka-get-offsets prints `topic:partition:offset` lines. */
const offsets = async (...args: string[]) => (await tool('kafka-get-offsets', ...args)).stdout.split('\n').filter(Boolean);

const stored = (topic: string) =>
  broker.query<{ partition: number; next_offset: string; log_start_offset: string }>(
    'SELECT p.partition, p.next_offset::text, p.log_start_offset::text FROM partitions p JOIN topics t USING (topic_id) WHERE t.name = $1 ORDER BY p.partition',
    [topic],
  );

describe('kafka-get-offsets and kafka-delete-records', () => {
  it('print the latest, earliest and by-timestamp offsets, and move the log start', async () => {
    await produce(
      'tools-log',
      Array.from({ length: 10 }, (_, i) => `k${i}:v${i}`),
      'parse.key=true',
      'key.separator=:',
    );
    await produce('tools-timed', ['e0', 'e1', 'e2']);
    await produce('tools-timed', ['e3', 'e4']);

    const log = await stored('tools-log');
    expect(log.reduce((n, p) => n + Number(p.next_offset), 0)).toBe(10);
    expect(await offsets('--topic', 'tools-log')).toEqual(log.map((p) => `tools-log:${p.partition}:${p.next_offset}`));
    expect(await offsets('--topic-partitions', 'tools-log:1,tools-timed:0', '--time', 'earliest')).toEqual(['tools-log:1:0', 'tools-timed:0:0']);

    const [{ ts }] = await broker.query<{ ts: string }>("SELECT max(b.max_timestamp)::text AS ts FROM batches b JOIN topics t USING (topic_id) WHERE t.name = 'tools-timed' AND b.base_offset < 3");
    expect(await offsets('--topic', 'tools-timed', '--time', String(Number(ts) + 1))).toEqual(['tools-timed:0:3']);
    // No record at or after a future time: the partition is left out.
    expect(await offsets('--topic', 'tools-timed', '--time', String(Date.now() + 3_600_000))).toEqual([]);

    const plan = toolFile(
      'offsets.json',
      JSON.stringify({
        version: 1,
        partitions: [
          { topic: 'tools-timed', partition: 0, offset: 2 },
          { topic: 'tools-log', partition: 1, offset: -1 },
        ],
      }),
    );
    const deleted = await tool('kafka-delete-records', '--offset-json-file', plan);
    expect(deleted.stdout).toContain('Records delete operation completed:');
    const lowWatermarks = [...deleted.stdout.matchAll(/^partition: (\S+)\tlow_watermark: (\d+)$/gm)].map((m) => `${m[1]}=${m[2]}`).sort();
    expect(lowWatermarks).toEqual([`tools-log-1=${log[1]!.next_offset}`, 'tools-timed-0=2']);

    expect(await offsets('--topic-partitions', 'tools-log:1,tools-timed:0', '--time', 'earliest')).toEqual([`tools-log:1:${log[1]!.next_offset}`, 'tools-timed:0:2']);
    expect((await stored('tools-timed'))[0]!.log_start_offset).toBe('2');
    const rest = await tool('kafka-console-consumer', '--topic', 'tools-timed', '--from-beginning', '--max-messages', '3', '--timeout-ms', '20000');
    expect(rest.stdout).toBe('e2\ne3\ne4\n');
    // From an exact offset of one partition, without a group.
    const fromOffset = await tool(
      'kafka-console-consumer',
      '--topic',
      'tools-timed',
      '--partition',
      '0',
      '--offset',
      '3',
      '--max-messages',
      '2',
      '--timeout-ms',
      '20000',
      '--formatter-property',
      'print.offset=true',
    );
    expect(fromOffset.stdout).toBe('Offset:3\te3\nOffset:4\te4\n');
  }, 90_000);
});

describe('kafka-transactions', () => {
  it("lists and describes a transactional producer's transactions and the producers of a partition", async () => {
    const kafka = new Kafka({ brokers: [broker.bootstrap], logLevel: logLevel.NOTHING });
    const producer = kafka.producer({ transactionalId: 'tools-tx', idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    try {
      const committed = await producer.transaction();
      await committed.send({ topic: 'tools-txn', messages: [{ value: 'c0' }, { value: 'c1' }] });
      await committed.commit();
      const open = await producer.transaction();
      await open.send({ topic: 'tools-txn', messages: [{ value: 'o0' }] });

      const listed = table((await tool('kafka-transactions', 'list')).stdout, 'TransactionalId');
      expect(listed).toEqual([{ TransactionalId: 'tools-tx', Coordinator: '1', ProducerId: expect.stringMatching(/^\d+$/), TransactionState: 'Ongoing' }]);
      const producerId = listed[0]!.ProducerId;

      const ongoing = table((await tool('kafka-transactions', 'describe', '--transactional-id', 'tools-tx')).stdout, 'CoordinatorId');
      expect(ongoing).toEqual([
        expect.objectContaining({
          CoordinatorId: '1',
          TransactionalId: 'tools-tx',
          ProducerId: producerId,
          ProducerEpoch: '0',
          TransactionState: 'Ongoing',
          TransactionTimeoutMs: '60000',
          TopicPartitions: 'tools-txn-0',
        }),
      ]);
      expect(Number(ongoing[0]!.CurrentTransactionStartTimeMs)).toBeGreaterThan(0);

      // The open transaction starts after the committed one's two records and its marker.
      const producers = table((await tool('kafka-transactions', 'describe-producers', '--topic', 'tools-txn', '--partition', '0')).stdout, 'ProducerId');
      // LastTimestamp: the max timestamp of the producer's newest batch.
      const [last] = await broker.query<{ ts: string }>(
        "SELECT b.max_timestamp::text AS ts FROM batches b JOIN topics t USING (topic_id) WHERE t.name = 'tools-txn' AND NOT b.is_control ORDER BY b.base_offset DESC LIMIT 1",
      );
      expect(producers).toEqual([{ ProducerId: producerId, ProducerEpoch: '0', LatestCoordinatorEpoch: '0', LastSequence: '2', LastTimestamp: last!.ts, CurrentTransactionStartOffset: '3' }]);

      await open.abort();
      const aborted = table((await tool('kafka-transactions', 'describe', '--transactional-id', 'tools-tx')).stdout, 'CoordinatorId');
      // A completed transaction keeps its start time, as Kafka's transaction metadata does…
      expect(aborted).toEqual([
        expect.objectContaining({ TransactionalId: 'tools-tx', ProducerId: producerId, TransactionState: 'CompleteAbort', CurrentTransactionStartTimeMs: ongoing[0]!.CurrentTransactionStartTimeMs }),
      ]);
      // …and --duration-filter compares with it.
      const listedFor = async (ms: number) => table((await tool('kafka-transactions', 'list', '--duration-filter', String(ms))).stdout, 'TransactionalId').map((t) => t.TransactionalId);
      expect(await listedFor(0)).toEqual(['tools-tx']);
      expect(await listedFor(86_400_000)).toEqual([]);
      // After the abort marker: no transaction open, and the marker's timestamp is the producer's last (as Kafka's ProducerStateEntry).
      const [marker] = await broker.query<{ ts: string }>(
        "SELECT b.max_timestamp::text AS ts FROM batches b JOIN topics t USING (topic_id) WHERE t.name = 'tools-txn' AND b.is_control ORDER BY b.base_offset DESC LIMIT 1",
      );
      const after = table((await tool('kafka-transactions', 'describe-producers', '--topic', 'tools-txn', '--partition', '0')).stdout, 'ProducerId');
      // The Java consumer skips the aborted record read_committed, and shows it read_uncommitted; never the markers.
      // (read_committed runs until it has been idle for --timeout-ms, so that nothing after c1 goes unseen.)
      const read = async (isolation: string, ...until: string[]) =>
        (
          await tool(
            'kafka-console-consumer',
            '--topic',
            'tools-txn',
            '--partition',
            '0',
            '--offset',
            'earliest',
            '--isolation-level',
            isolation,
            '--formatter-property',
            'print.offset=true',
            ...until,
          )
        ).stdout;
      expect(await read('read_committed', '--timeout-ms', '3000')).toBe('Offset:0\tc0\nOffset:1\tc1\n');
      expect(await read('read_uncommitted', '--max-messages', '3', '--timeout-ms', '20000')).toBe('Offset:0\tc0\nOffset:1\tc1\nOffset:3\to0\n');
      expect(after).toEqual([{ ProducerId: producerId, ProducerEpoch: '0', LatestCoordinatorEpoch: '0', LastSequence: '2', LastTimestamp: marker!.ts, CurrentTransactionStartOffset: 'None' }]);
    } finally {
      await producer.disconnect();
    }
  }, 60_000);
});

describe('kafka-producer-perf-test and kafka-consumer-perf-test', () => {
  it('write 20,000 records and read them back, and report it', async () => {
    const produced = await runToolOk(
      'kafka-producer-perf-test',
      [...bootstrap, '--topic', 'tools-perf', '--num-records', '20000', '--record-size', '100', '--throughput', '-1', '--command-property', 'acks=all'],
      { timeoutMs: 60_000 },
    );
    expect(produced.stdout.trim().split('\n').at(-1)).toMatch(/^20000 records sent, [\d.]+ records\/sec \([\d.]+ MB\/sec\), [\d.]+ ms avg latency/);
    const [{ n }] = await broker.query<{ n: string }>("SELECT sum(b.record_count)::text AS n FROM batches b JOIN topics t USING (topic_id) WHERE t.name = 'tools-perf'");
    expect(n).toBe('20000');
    expect((await stored('tools-perf')).reduce((sum, p) => sum + Number(p.next_offset), 0)).toBe(20000);

    const consumed = await runToolOk('kafka-consumer-perf-test', [...bootstrap, '--topic', 'tools-perf', '--num-records', '20000', '--timeout', '30000'], { timeoutMs: 60_000 });
    const [header, row] = consumed.stdout
      .trim()
      .split('\n')
      .slice(-2)
      .map((l) => l.split(', '));
    const report = Object.fromEntries(header!.map((h, i) => [h, row![i]]));
    expect(report['data.consumed.in.nMsg']).toBe('20000');
    expect(Number(report['data.consumed.in.MB'])).toBeCloseTo((20000 * 100) / (1024 * 1024), 3);
  }, 120_000);

  it('writes in transactions with --transactional-id, and a read_committed consumer reads every record', async () => {
    const produced = await runToolOk(
      'kafka-producer-perf-test',
      [...bootstrap, '--topic', 'tools-perf-tx', '--num-records', '5000', '--record-size', '100', '--throughput', '-1', '--transactional-id', 'tools-perf-tx', '--transaction-duration-ms', '200'],
      { timeoutMs: 60_000 },
    );
    expect(produced.stdout.trim().split('\n').at(-1)).toMatch(/^5000 records sent, /);
    const [batches] = await broker.query<{ records: string; markers: string; plain: string }>(
      `SELECT sum(record_count) FILTER (WHERE NOT is_control)::text AS records, count(*) FILTER (WHERE is_control)::text AS markers, count(*) FILTER (WHERE NOT is_transactional)::text AS plain
       FROM batches b JOIN topics t USING (topic_id) WHERE t.name = 'tools-perf-tx'`,
    );
    expect(batches).toMatchObject({ records: '5000', plain: '0' });
    expect(Number(batches!.markers)).toBeGreaterThan(0);
    expect(table((await tool('kafka-transactions', 'list')).stdout, 'TransactionalId').find((t) => t.TransactionalId === 'tools-perf-tx')).toMatchObject({ TransactionState: 'CompleteCommit' });

    const consumed = await runToolOk(
      'kafka-consumer-perf-test',
      [...bootstrap, '--topic', 'tools-perf-tx', '--num-records', '5000', '--timeout', '30000', '--command-property', 'isolation.level=read_committed'],
      { timeoutMs: 60_000 },
    );
    const [header, row] = consumed.stdout
      .trim()
      .split('\n')
      .slice(-2)
      .map((l) => l.split(', '));
    expect(row![header!.indexOf('data.consumed.in.nMsg')]).toBe('5000');
  }, 120_000);
});
