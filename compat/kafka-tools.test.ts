// Apache Kafka 4.3.1's own command-line tools against pgkafka, run as a user
// runs bin/kafka-topics.sh, kafka-console-producer.sh,
// kafka-console-consumer.sh and kafka-consumer-groups.sh (same main classes,
// same arguments), checking what each prints and what it did.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../test/support/broker.js';
import { readStored } from './support/records.js';
import { runTool, runToolOk, table, toolFile } from './support/kafka-tools.js';

let broker: TestBroker;
let bootstrap: string[];

beforeAll(async () => {
  broker = await startTestBroker({ autoCreateTopicsEnable: false });
  bootstrap = ['--bootstrap-server', broker.bootstrap];
});
afterAll(() => broker?.destroy());

const topics = (...args: string[]) => runTool('kafka-topics', [...bootstrap, ...args]);
const groups = (...args: string[]) => runToolOk('kafka-consumer-groups', [...bootstrap, ...args]);
const produce = (topic: string, lines: string[], ...props: string[]) =>
  runToolOk('kafka-console-producer', [...bootstrap, '--topic', topic, ...props.flatMap((p) => ['--reader-property', p])], { input: lines.map((l) => `${l}\n`).join('') });
const consume = (topic: string, ...args: string[]) =>
  runToolOk('kafka-console-consumer', [...bootstrap, '--topic', topic, ...(args.includes('--timeout-ms') ? [] : ['--timeout-ms', '20000']), ...args]);

/** kafka-topics --describe: a line of tab-separated `Name: value` fields per topic, then one per partition. */
function describeLines(stdout: string): Record<string, string>[] {
  return stdout
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) =>
      Object.fromEntries(
        l
          .replace(/^\t/, '')
          .split('\t')
          .map((f) => [f.slice(0, f.indexOf(':')), f.slice(f.indexOf(':') + 1).trim()]),
      ),
    );
}

/** Kafka prints a topic id as the URL-safe base64 of its 16 bytes. */
const kafkaUuid = (uuid: string) => Buffer.from(uuid.replace(/-/g, ''), 'hex').toString('base64url');

describe('kafka-topics', () => {
  it('creates, lists, describes, alters and deletes topics', async () => {
    const created = await topics('--create', '--topic', 'tools-orders', '--partitions', '3', '--replication-factor', '1', '--config', 'retention.ms=86400000', '--config', 'cleanup.policy=compact');
    expect(created.stdout).toBe('Created topic tools-orders.\n');
    expect((await topics('--create', '--topic', 'tools-audit', '--partitions', '1')).code).toBe(0);

    const again = await topics('--create', '--topic', 'tools-orders', '--partitions', '1');
    expect(again.code).toBe(1);
    expect(again.stdout + again.stderr).toContain("Topic 'tools-orders' already exists.");

    expect((await topics('--list')).stdout.split('\n').filter(Boolean)).toEqual(['tools-audit', 'tools-orders']);

    const [stored] = await broker.query<{ topic_id: string }>("SELECT topic_id::text FROM topics WHERE name = 'tools-orders'");
    const described = describeLines((await topics('--describe', '--topic', 'tools-orders')).stdout);
    const [head, ...partitions] = described;
    expect(head).toMatchObject({ Topic: 'tools-orders', TopicId: kafkaUuid(stored!.topic_id), PartitionCount: '3', ReplicationFactor: '1' });
    expect(new Set(head!.Configs!.split(','))).toEqual(new Set(['cleanup.policy=compact', 'retention.ms=86400000']));
    expect(partitions).toEqual([0, 1, 2].map((p) => ({ Topic: 'tools-orders', Partition: String(p), Leader: '1', Replicas: '1', Isr: '1', Elr: '', LastKnownElr: '' })));

    expect((await topics('--alter', '--topic', 'tools-orders', '--partitions', '5')).code).toBe(0);
    const shrink = await topics('--alter', '--topic', 'tools-orders', '--partitions', '2');
    expect(shrink.code).toBe(1);
    expect(shrink.stdout + shrink.stderr).toContain('Topic currently has 5 partitions, which is higher than the requested 2.');
    const altered = describeLines((await topics('--describe', '--topic', 'tools-orders')).stdout);
    expect(altered[0]).toMatchObject({ PartitionCount: '5' });
    expect(altered.slice(1).map((p) => p.Partition)).toEqual(['0', '1', '2', '3', '4']);

    // Every topic, described at once.
    expect(
      describeLines((await topics('--describe')).stdout)
        .filter((l) => l.TopicId !== undefined)
        .map((l) => l.Topic),
    ).toEqual(['tools-audit', 'tools-orders']);

    expect((await topics('--delete', '--topic', 'tools-orders')).code).toBe(0);
    expect((await topics('--list')).stdout).toBe('tools-audit\n');
    const gone = await topics('--describe', '--topic', 'tools-orders');
    expect(gone.code).toBe(1);
    expect(gone.stdout + gone.stderr).toContain("Topic 'tools-orders' does not exist as expected");
  });
});

describe('kafka-console-producer and kafka-console-consumer', () => {
  it('produce keys and headers from lines, and print them back', async () => {
    await topics('--create', '--topic', 'tools-console', '--partitions', '1');
    await produce(
      'tools-console',
      ['trace:abc,lang:en\tk1=hello', 'trace:def\tk2=world=again', '<null>\t<null>=no key, no headers'],
      'parse.key=true',
      'key.separator==',
      'parse.headers=true',
      'null.marker=<null>',
    );

    const stored = (await readStored(broker, 'tools-console')).flatMap((b) => b.records);
    expect(stored.map((r) => [r.key?.toString() ?? null, r.value?.toString() ?? null, r.headers.map(([k, v]) => `${k}=${v?.toString()}`)])).toEqual([
      ['k1', 'hello', ['trace=abc', 'lang=en']],
      ['k2', 'world=again', ['trace=def']],
      [null, 'no key, no headers', []],
    ]);

    const read = await consume(
      'tools-console',
      '--from-beginning',
      '--max-messages',
      '3',
      '--formatter-property',
      'print.key=true',
      '--formatter-property',
      'print.headers=true',
      '--formatter-property',
      'print.offset=true',
      '--formatter-property',
      'print.partition=true',
    );
    expect(read.stdout).toBe(
      ['Partition:0\tOffset:0\ttrace:abc,lang:en\tk1\thello', 'Partition:0\tOffset:1\ttrace:def\tk2\tworld=again', 'Partition:0\tOffset:2\tNO_HEADERS\tnull\tno key, no headers', ''].join('\n'),
    );
    expect(read.stderr).toContain('Processed a total of 3 messages');

    // Without --from-beginning a consumer starts at the end: nothing until the timeout.
    const latest = await consume('tools-console', '--timeout-ms', '3000');
    expect(latest.stdout).toBe('');
    expect(latest.stderr).toContain('Processed a total of 0 messages');
  });
});

describe('kafka-consumer-groups', () => {
  const group = 'tools-readers';
  const describeGroupOf = async (id: string) => table((await groups('--describe', '--group', id)).stdout, 'GROUP');
  const describeGroup = () => describeGroupOf(group);
  const reset = async (...args: string[]) => table((await groups('--group', group, '--reset-offsets', '--topic', 'tools-events', ...args)).stdout, 'GROUP');

  it('a console consumer in a group commits, and the group is listed and described with its lag', async () => {
    await topics('--create', '--topic', 'tools-events', '--partitions', '1');
    await produce('tools-events', ['e0', 'e1', 'e2']);
    await produce('tools-events', ['e3', 'e4']);

    expect((await consume('tools-events', '--group', group, '--from-beginning', '--max-messages', '3')).stdout).toBe('e0\ne1\ne2\n');
    expect((await groups('--list')).stdout.split('\n')).toContain(group);
    expect(await describeGroup()).toEqual([
      { GROUP: group, TOPIC: 'tools-events', PARTITION: '0', 'CURRENT-OFFSET': '3', 'LOG-END-OFFSET': '5', LAG: '2', 'CONSUMER-ID': '-', HOST: '-', 'CLIENT-ID': '-' },
    ]);

    // The committed offset wins over --from-beginning.
    expect((await consume('tools-events', '--group', group, '--from-beginning', '--max-messages', '2')).stdout).toBe('e3\ne4\n');
    expect(await describeGroup()).toMatchObject([{ 'CURRENT-OFFSET': '5', 'LOG-END-OFFSET': '5', LAG: '0' }]);
    expect(table((await groups('--describe', '--group', group, '--state')).stdout, 'GROUP')).toMatchObject([{ GROUP: group, STATE: 'Empty', '#MEMBERS': '0' }]);
  }, 90_000);

  it('resets offsets in every mode, with --dry-run and --execute', async () => {
    // Records produced by two runs: --to-datetime between them lands on the second run's first record.
    const [{ ts }] = await broker.query<{ ts: string }>("SELECT max(b.max_timestamp)::text AS ts FROM batches b JOIN topics t USING (topic_id) WHERE t.name = 'tools-events' AND b.base_offset < 3");
    const between = new Date(Number(ts) + 1).toISOString();
    const newOffset = (rows: Record<string, string>[]) => rows.map((r) => [r.TOPIC, r.PARTITION, r['NEW-OFFSET']]);

    expect(newOffset(await reset('--to-earliest', '--dry-run'))).toEqual([['tools-events', '0', '0']]);
    expect(await describeGroup()).toMatchObject([{ 'CURRENT-OFFSET': '5' }]); // a dry run changes nothing
    expect(newOffset(await reset('--to-earliest', '--execute'))).toEqual([['tools-events', '0', '0']]);
    expect(await describeGroup()).toMatchObject([{ 'CURRENT-OFFSET': '0', LAG: '5' }]);
    expect(newOffset(await reset('--shift-by', '2', '--execute'))).toEqual([['tools-events', '0', '2']]);
    expect(newOffset(await reset('--to-offset', '4', '--execute'))).toEqual([['tools-events', '0', '4']]);
    expect(newOffset(await reset('--shift-by', '-3', '--dry-run'))).toEqual([['tools-events', '0', '1']]);
    expect(newOffset(await reset('--to-latest', '--execute'))).toEqual([['tools-events', '0', '5']]);
    // --export prints the plan as CSV, and --from-file applies such a file.
    expect((await groups('--group', group, '--reset-offsets', '--all-topics', '--to-current', '--dry-run', '--export')).stdout.trim()).toBe('tools-events,0,5');
    const plan = toolFile('reset.csv', 'tools-events,0,1\n');
    expect(newOffset(table((await groups('--group', group, '--reset-offsets', '--from-file', plan, '--execute')).stdout, 'GROUP'))).toEqual([['tools-events', '0', '1']]);
    expect(await describeGroup()).toMatchObject([{ 'CURRENT-OFFSET': '1', LAG: '4' }]);
    expect(newOffset(await reset('--to-datetime', between, '--execute'))).toEqual([['tools-events', '0', '3']]);
    expect(await describeGroup()).toMatchObject([{ 'CURRENT-OFFSET': '3', 'LOG-END-OFFSET': '5', LAG: '2' }]);
    // The consumer resumes where the reset put it.
    expect((await consume('tools-events', '--group', group, '--max-messages', '1')).stdout).toBe('e3\n');
  }, 90_000);

  it('describes a group with a member, whose offsets cannot be reset while it is active', async () => {
    const live = 'tools-live';
    const running = runTool(
      'kafka-console-consumer',
      [...bootstrap, '--topic', 'tools-events', '--group', live, '--max-messages', '1', '--timeout-ms', '30000', '--command-property', 'client.id=tools-live-client'],
      { timeoutMs: 60_000 },
    );
    let state: Record<string, string>[] = [];
    for (let i = 0; i < 20 && state[0]?.STATE !== 'Stable'; i++) {
      const r = await runTool('kafka-consumer-groups', [...bootstrap, '--describe', '--group', live, '--state']);
      state = r.code === 0 && r.stdout.includes('STATE') ? table(r.stdout, 'GROUP') : [];
    }
    expect(state).toMatchObject([{ GROUP: live, 'ASSIGNMENT-STRATEGY': 'range', STATE: 'Stable', '#MEMBERS': '1' }]);
    const members = table((await groups('--describe', '--group', live, '--members', '--verbose')).stdout, 'GROUP');
    expect(members).toEqual([
      expect.objectContaining({
        GROUP: live,
        'CONSUMER-ID': expect.stringMatching(/^tools-live-client-/),
        HOST: '/127.0.0.1',
        'CLIENT-ID': 'tools-live-client',
        '#PARTITIONS': '1',
        'CURRENT-ASSIGNMENT': 'tools-events:0',
      }),
    ]);
    expect(await describeGroupOf(live)).toEqual([expect.objectContaining({ TOPIC: 'tools-events', PARTITION: '0', 'CONSUMER-ID': members[0]!['CONSUMER-ID'], 'CLIENT-ID': 'tools-live-client' })]);

    const refused = await runTool('kafka-consumer-groups', [...bootstrap, '--group', live, '--reset-offsets', '--topic', 'tools-events', '--to-earliest', '--execute']);
    expect(refused.stdout + refused.stderr).toContain(`Assignments can only be reset if the group '${live}' is inactive, but the current state is Stable.`);

    await produce('tools-events', ['e5']);
    const done = await running;
    expect(done.stdout).toBe('e5\n');
    expect(table((await groups('--describe', '--group', live, '--state')).stdout, 'GROUP')).toMatchObject([{ STATE: 'Empty', '#MEMBERS': '0' }]);
  }, 90_000);

  it('describes a consumer-protocol (KIP-848) group: its member, assignor and lag (issue 17, scenario 6)', async () => {
    const kip848 = 'tools-kip848';
    await topics('--create', '--topic', kip848, '--partitions', '2');
    await produce(kip848, ['k0', 'k1', 'k2']);
    const running = runTool(
      'kafka-console-consumer',
      [
        ...bootstrap,
        ...['--topic', kip848, '--group', kip848, '--from-beginning', '--max-messages', '4', '--timeout-ms', '60000'],
        ...['--command-property', 'group.protocol=consumer', '--command-property', 'client.id=tools-kip848-client', '--command-property', 'auto.commit.interval.ms=200'],
      ],
      { timeoutMs: 90_000 },
    );
    // The member in the group, and the three records read and committed.
    let rows: Record<string, string>[] = [];
    for (let i = 0; i < 20 && !(rows.length === 2 && rows.every((r) => r['CURRENT-OFFSET'] === r['LOG-END-OFFSET'] && r['CONSUMER-ID'] !== '-')); i++) {
      const r = await runTool('kafka-consumer-groups', [...bootstrap, '--describe', '--group', kip848]);
      rows = r.code === 0 && r.stdout.includes('LOG-END-OFFSET') ? table(r.stdout, 'GROUP') : [];
    }
    const ends = rows.map((r) => Number(r['LOG-END-OFFSET']));
    expect(ends.reduce((a, b) => a + b, 0)).toBe(3);
    expect(rows).toEqual([0, 1].map((p) => expect.objectContaining({ TOPIC: kip848, PARTITION: String(p), 'CURRENT-OFFSET': String(ends[p]), LAG: '0', 'CLIENT-ID': 'tools-kip848-client' })));
    expect(table((await groups('--describe', '--group', kip848, '--state')).stdout, 'GROUP')).toMatchObject([{ GROUP: kip848, 'ASSIGNMENT-STRATEGY': 'uniform', STATE: 'Stable', '#MEMBERS': '1' }]);
    const members = table((await groups('--describe', '--group', kip848, '--members', '--verbose')).stdout, 'GROUP');
    expect(members).toEqual([expect.objectContaining({ GROUP: kip848, 'CONSUMER-ID': rows[0]!['CONSUMER-ID'], 'CLIENT-ID': 'tools-kip848-client', '#PARTITIONS': '2' })]);
    // The member reads one more record and leaves; records beyond its commit show as lag.
    await produce(kip848, ['k3']);
    expect((await running).stdout.split('\n').filter((l) => l !== '')).toHaveLength(4);
    await produce(kip848, ['k4', 'k5']);
    const lagging = table((await groups('--describe', '--group', kip848)).stdout, 'GROUP');
    expect(lagging.reduce((sum, r) => sum + Number(r.LAG), 0)).toBe(2);
  }, 240_000);

  it("deletes a topic's offsets, then the group", async () => {
    // Offsets for a second topic, set by a reset of a topic the group never read.
    expect(table((await groups('--group', group, '--reset-offsets', '--topic', 'tools-console', '--to-earliest', '--execute')).stdout, 'GROUP')).toMatchObject([
      { TOPIC: 'tools-console', 'NEW-OFFSET': '0' },
    ]);
    const deleted = await groups('--group', group, '--delete-offsets', '--topic', 'tools-events');
    expect(deleted.stdout).toContain(`Request succeeded for deleting offsets from group ${group}.`);
    expect(table(deleted.stdout, 'TOPIC')).toEqual([{ TOPIC: 'tools-events', PARTITION: '0', STATUS: 'Successful' }]);
    expect((await describeGroup()).map((r) => [r.TOPIC, r['CURRENT-OFFSET'], r['LOG-END-OFFSET']])).toEqual([['tools-console', '0', '3']]);

    expect((await groups('--delete', '--group', group)).stdout).toContain(`Deletion of requested consumer groups ('${group}') was successful.`);
    expect((await groups('--list')).stdout.split('\n')).not.toContain(group);
    const missing = await groups('--delete', '--group', group);
    expect(missing.stdout + missing.stderr).toContain(`Group '${group}' could not be deleted due to: org.apache.kafka.common.errors.GroupIdNotFoundException`);
  }, 60_000);
});
