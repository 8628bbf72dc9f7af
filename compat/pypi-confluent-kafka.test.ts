// confluent-kafka 2.16.1 from PyPI (its wheel bundles librdkafka 2.16.0), in
// the project's venv (compat/support/python.ts), through
// compat/python/pypi_confluent.py, which reuses confluent_client.py (the 1.7
// runner: the API is the same) and adds consumer groups, KIP-848, admin
// configs/partitions/groups and offsets. Idempotence and transactions reuse
// idempotent_producer.py and transactional.py under the venv's python.
// Several commands share one process ("batch") to keep process starts few.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../test/support/broker.js';
import { runScenarios, type ScenarioFns } from './scenarios.js';
import { SASL_PASSWORD, SASL_USER, startSaslSslBroker, type SaslSslBroker } from './support/sasl-ssl.js';
import { expectTwoMemberGroupRun, GROUP_RUN_MS, runVenvPythonJson, runVenvScript, type TwoMemberGroupRun } from './support/python.js';
import { dataset, expectRecords, expectStoredCodec, fromJson, readStored, toJson, type Codec, type JsonRead, type Rec } from './support/records.js';

let broker: TestBroker;
beforeAll(async () => {
  broker = await startTestBroker({ autoCreateTopicsEnable: false, groupInitialRebalanceDelayMs: 300 });
});
afterAll(async () => {
  await broker?.destroy();
});

const py = <T>(command: string, request: Record<string, unknown>, timeoutMs = 40_000) => runVenvPythonJson<T>('pypi_confluent.py', command, { bootstrap: broker.bootstrap, ...request }, timeoutMs);

type Step = [string, Record<string, unknown>];
const batch = (steps: Step[]) => py<unknown[]>('batch', { steps });

interface Created {
  errors: [string, string | null][];
}
interface Produced {
  delivered: { error: string | null; partition: number; offset: number; key: string }[];
  undelivered: number;
}
interface Consumed {
  records: JsonRead[];
  errors: string[];
  eof: number[];
}

const createStep = (name: string, partitions = 3): Step => ['create', { topics: [{ name, partitions }] }];
const produceStep = (topic: string, recs: Rec[], codec: Codec = 'none'): Step => ['produce', { topic, codec, records: toJson(recs) }];

function expectDelivered(res: Produced, recs: Rec[]) {
  expect(res.undelivered).toBe(0);
  // Delivery reports: one per record, no error, offsets 0..n-1 per partition in produce order.
  const parts = [...new Set(recs.map((r) => r.partition))];
  const got = parts.map((p) => res.delivered.filter((d) => d.partition === p).map((d) => [d.error, d.offset, d.key]));
  const want = parts.map((p) => recs.filter((r) => r.partition === p).map((r, i) => [null, i, r.key!.toString('base64')]));
  expect(got).toEqual(want);
}

async function roundtrip(codec: Codec) {
  const topic = `pck-${codec}`;
  const recs = dataset(topic);
  const [created, produced, consumed] = (await batch([createStep(topic), produceStep(topic, recs, codec), ['consume', { topic, partitions: [0, 1, 2], offset: null }]])) as [
    Created,
    Produced,
    Consumed,
  ];
  expect(created.errors).toEqual([[topic, null]]);
  expectDelivered(produced, recs);
  expect(consumed.errors).toEqual([]);
  expect(consumed.eof).toEqual([0, 1, 2]);
  expectRecords(fromJson(consumed.records), recs);
  const stored = await readStored(broker, topic);
  expectRecords(
    stored.flatMap((b) => b.records),
    recs,
  );
  if (codec !== 'none') expectStoredCodec(stored, codec);
}

const scenarios: ScenarioFns = {
  'admin: create topics': async () => {
    const [first, again, list] = (await batch([createStep('pck-admin', 4), createStep('pck-admin', 4), ['list', { describe: ['pck-admin'] }]])) as [
      Created,
      Created,
      { partitions: Record<string, unknown[]> },
    ];
    expect(first.errors).toEqual([['pck-admin', null]]);
    // A second create of the same name is refused with TOPIC_ALREADY_EXISTS.
    expect(again.errors[0]![1]).toMatch(/TOPIC_ALREADY_EXISTS/);
    expect(list.partitions['pck-admin']).toHaveLength(4);
  },
  'admin: list topics and metadata': async () => {
    const [, res] = (await batch([createStep('pck-list'), ['list', { describe: ['pck-list'] }]])) as [
      Created,
      { topics: string[]; brokers: [number, string, number][]; partitions: Record<string, unknown[]> },
    ];
    expect(res.topics).toContain('pck-list');
    expect(res.brokers).toEqual([[1, '127.0.0.1', broker.port]]);
    expect(res.partitions['pck-list']).toEqual([0, 1, 2].map((p) => [p, 1, [1], [1]]));
  },
  'admin: delete topics': async () => {
    const [, del, list] = (await batch([createStep('pck-del'), ['delete', { topics: ['pck-del'] }], ['list', {}]])) as [Created, Created, { topics: string[] }];
    expect(del.errors).toEqual([['pck-del', null]]);
    expect(list.topics).not.toContain('pck-del');
  },
  'offsets: earliest and latest': async () => {
    const [, , res] = (await batch([
      createStep('pck-wm'),
      produceStep(
        'pck-wm',
        dataset('pck-wm').filter((r) => r.partition === 1),
      ),
      ['offsets', { topic: 'pck-wm', partitions: [0, 1, 2] }],
    ])) as [Created, Produced, { watermarks: number[][] }];
    expect(res.watermarks).toEqual([
      [0, 0],
      [0, 5],
      [0, 0],
    ]);
  },
  'offsets: by timestamp': async () => {
    const past = Date.now() - 60_000;
    const future = Date.now() + 3_600_000;
    const [, , res] = (await batch([
      createStep('pck-ts'),
      produceStep(
        'pck-ts',
        dataset('pck-ts').filter((r) => r.partition !== 2),
      ),
      ['offsets', { topic: 'pck-ts', partitions: [0, 1, 2], timestamps: [past, future] }],
    ])) as [Created, Produced, { by_timestamp: Record<string, number[]> }];
    // Past: the first record of each partition; an empty partition or a future timestamp: -1 (librdkafka's OFFSET_END).
    expect(res.by_timestamp).toEqual({ [past]: [0, 0, -1], [future]: [-1, -1, -1] });
  },
  'roundtrip: none': () => roundtrip('none'),
  'roundtrip: gzip': () => roundtrip('gzip'),
  'roundtrip: snappy': () => roundtrip('snappy'),
  'roundtrip: lz4': () => roundtrip('lz4'),
  'roundtrip: zstd': () => roundtrip('zstd'),
  'read: from an absolute offset': async () => {
    const recs = dataset('pck-seek');
    const [, , res] = (await batch([createStep('pck-seek'), produceStep('pck-seek', recs, 'zstd'), ['consume', { topic: 'pck-seek', partitions: [0, 2], offset: 2 }]])) as [
      Created,
      Produced,
      Consumed,
    ];
    expect(res.errors).toEqual([]);
    expectRecords(
      fromJson(res.records),
      recs.filter((r) => r.partition !== 1),
      { from: { 0: 2, 2: 2 } },
    );
  },
  'read: relative to the end': async () => {
    const recs = dataset('pck-tail');
    // librdkafka's OFFSET_TAIL(2) is the logical offset -2000 - 2: the last two records of each partition.
    const [, , res] = (await batch([createStep('pck-tail'), produceStep('pck-tail', recs, 'gzip'), ['consume', { topic: 'pck-tail', partitions: [0, 1, 2], offset: -2002 }]])) as [
      Created,
      Produced,
      Consumed,
    ];
    expect(res.errors).toEqual([]);
    expect(res.eof).toEqual([0, 1, 2]);
    expectRecords(fromJson(res.records), recs, { from: { 0: 3, 1: 3, 2: 3 } });
  },
  'consume: consumer group': async () => {
    const topic = 'pck-group';
    const first = dataset(topic);
    const second = dataset(`${topic}-2`);
    await batch([createStep(topic), produceStep(topic, first)]);
    const res = await py<TwoMemberGroupRun & { errors: string[]; produced: number }>('group', { topic, group: 'pck-g', partitions: 3, first: first.length, records: toJson(second) }, GROUP_RUN_MS);
    expect(res.errors).toEqual([]);
    expect(res.produced).toBe(0);
    expectTwoMemberGroupRun(res, first, second);
  },
};

describe('confluent-kafka 2.16.1 (PyPI)', () => {
  runScenarios('pypi-confluent-kafka', scenarios, GROUP_RUN_MS + 10_000);
});

const range = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

describe('confluent-kafka 2.16.1 (PyPI): admin, KIP-848, idempotence, transactions', () => {
  it('AdminClient: describe and incrementally alter configs, add partitions, list offsets, list/describe/delete groups and their offsets', async () => {
    const topic = 'pck-adm';
    const recs = dataset(topic).filter((r) => r.partition === 1);
    const [, , res] = (await batch([createStep(topic), produceStep(topic, recs), ['admin', { topic, group: 'pck-adm-g' }]])) as [Created, Produced, Record<string, unknown>];
    // Config sources as librdkafka numbers them: 5 DEFAULT_CONFIG, 1 DYNAMIC_TOPIC_CONFIG.
    expect(res.describe).toEqual([null, { 'cleanup.policy': ['delete', 5, true], 'compression.type': ['producer', 5, true], 'retention.ms': ['604800000', 5, true] }]);
    expect(res.incremental_alter).toEqual([null]);
    expect(res.after_alter).toEqual({ 'cleanup.policy': ['compact', 1], 'retention.ms': ['3600000', 1] });
    expect(res.bad_config).toEqual([expect.stringMatching(/INVALID_CONFIG/)]);
    expect(res.create_partitions).toEqual([null]);
    expect(res.fewer_partitions).toEqual([expect.stringMatching(/INVALID_PARTITIONS/)]);
    expect(res.partitions).toEqual([0, 1, 2, 3, 4]);
    // Partition 0 earliest, partition 1 latest (5 records), partition 2 max_timestamp of an empty partition.
    expect(res.list_offsets).toEqual({ 0: 0, 1: 5, 2: -1 });
    // The group exists through its committed offsets only: empty, no members.
    expect(res.list_groups).toContain('pck-adm-g');
    expect(res.describe_group).toEqual([null, { state: 'ConsumerGroupState.EMPTY', members: 0, simple: true, type: 'ConsumerGroupType.CLASSIC' }]);
    expect(res.group_offsets).toEqual([
      [0, 3],
      [1, 1],
    ]);
    expect(res.delete_group).toEqual([null]);
    expect(res.groups_after_delete).not.toContain('pck-adm-g');
  });

  it('group.protocol=consumer (KIP-848): the member joins with ConsumerGroupHeartbeat, is assigned every partition and reads every record', async () => {
    const recs = dataset('pck-848');
    await batch([createStep('pck-848'), produceStep('pck-848', recs)]);
    const res = await py<{ records: number; assigned: number[]; errors: unknown[]; logs: string[] }>('kip848', { topic: 'pck-848', group: 'pck-848-g', seconds: 6 });
    expect(res).toMatchObject({ records: recs.length, assigned: [0, 1, 2], errors: [] });
    expect(res.logs.join('\n')).not.toContain('not supported by broker');
  });

  it('idempotent producer: every record delivered once, batches carry a producer id and sequences', async () => {
    await batch([createStep('pck-idem', 1)]);
    const r = await runVenvScript('idempotent_producer.py', [broker.bootstrap, 'pck-idem', '200'], 40_000);
    expect(JSON.parse(r.stdout.toString())).toEqual({ delivered: 200, errors: [], undelivered: 0 });
    const rows = await broker.query<{ producer_id: string; base_sequence: number; record_count: number }>(
      `SELECT b.producer_id, b.base_sequence, b.record_count FROM batches b JOIN topics t USING (topic_id) WHERE t.name = 'pck-idem' ORDER BY b.base_offset`,
    );
    expect(new Set(rows.map((x) => x.producer_id)).size).toBe(1);
    expect(Number(rows[0]!.producer_id)).toBeGreaterThanOrEqual(0);
    // Sequences run on without a gap or a repeat: 0, then each batch's base is the previous one's end.
    let next = 0;
    for (const row of rows) {
      expect(row.base_sequence).toBe(next);
      next += row.record_count;
    }
    expect(next).toBe(200);
  });

  it('transactions: init/begin/commit, abort, send_offsets_to_transaction, fencing; read_committed sees committed records only', async () => {
    await batch([createStep('pck-txn', 1)]);
    const r = await runVenvScript('transactional.py', [broker.bootstrap, 'pck-txn', 'pck-txn-id', 'pck-txn-group'], 90_000);
    const summary = JSON.parse(r.stdout.toString());
    expect(summary.group_offset).toBe(7);
    // The fenced producer's commit fails with a fatal PRODUCER_FENCED (or its epoch is refused).
    expect(summary.zombie_commit).toEqual({ fatal: true, code: expect.stringMatching(/FENCED/) });
    expect(summary.read_committed).toEqual([...range('c', 10), ...range('o', 5), 'fresh']);
    expect(summary.read_uncommitted).toEqual([...range('c', 10), ...range('a', 5), ...range('o', 5), 'zombie', 'fresh']);
  });
});

describe('confluent-kafka 2.16.1 (PyPI): SASL over TLS', () => {
  let secure: SaslSslBroker;
  beforeAll(async () => {
    secure = await startSaslSslBroker();
  });
  afterAll(async () => {
    await secure?.destroy();
  });
  const run = (mechanism: string, password: string, topic: string) =>
    runVenvPythonJson<Record<string, unknown>>('pypi_confluent.py', 'secure', {
      bootstrap: secure.bootstrap,
      ca: secure.pki.caCert,
      mechanism,
      username: SASL_USER,
      password,
      topic,
      values: ['s1', 's2'],
    });

  for (const mechanism of ['PLAIN', 'SCRAM-SHA-512']) {
    it(`${mechanism} over SASL_SSL: produces and reads back`, async () => {
      const res = await run(mechanism, SASL_PASSWORD, `pck-sasl-${mechanism.toLowerCase()}`);
      expect(res).toEqual({ delivered: [null, null], values: ['s1', 's2'], errors: [] });
    });
  }

  it('a wrong password is refused: error_cb gets _AUTHENTICATION, the records time out undelivered', async () => {
    const res = (await run('SCRAM-SHA-512', 'wrong', 'pck-sasl-wrong')) as { delivered: string[]; errors: string[]; values: string[] };
    expect(res.errors).toContain('_AUTHENTICATION');
    expect(res.delivered).toEqual(['_MSG_TIMED_OUT', '_MSG_TIMED_OUT']);
    expect(res.values).toEqual([]);
  });
});
