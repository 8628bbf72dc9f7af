// kafka-python 3.0.12 from PyPI (pure Python; codecs from lz4, python-snappy,
// zstandard), in the project's venv (compat/support/python.ts), through
// compat/python/pypi_kafka_python.py, which reuses kafka_python_client.py (the
// 2.0.2 runner) for the producer and the group-less reader and adds 3.0's
// KafkaAdminClient, offsets_for_times, consumer groups, transactions and SASL
// over TLS. Several commands share one process ("batch") to keep process starts few.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../test/support/broker.js';
import { runScenarios, type ScenarioFns } from './scenarios.js';
import { SASL_PASSWORD, SASL_USER, startSaslSslBroker, type SaslSslBroker } from './support/sasl-ssl.js';
import { expectTwoMemberGroupRun, GROUP_RUN_MS, runVenvPythonJson, type TwoMemberGroupRun } from './support/python.js';
import { dataset, expectRecords, expectStoredCodec, fromJson, readStored, toJson, type Codec, type JsonRead, type Rec } from './support/records.js';

let broker: TestBroker;
beforeAll(async () => {
  broker = await startTestBroker({ autoCreateTopicsEnable: false, groupInitialRebalanceDelayMs: 300 });
});
afterAll(async () => {
  await broker?.destroy();
});

const py = <T>(command: string, request: Record<string, unknown>, timeoutMs = 40_000) => runVenvPythonJson<T>('pypi_kafka_python.py', command, { bootstrap: broker.bootstrap, ...request }, timeoutMs);

type Step = [string, Record<string, unknown>];
const batch = (steps: Step[]) => py<unknown[]>('batch', { steps });

interface Created {
  errors: [string, number][];
}
interface Produced {
  delivered: { partition: number; offset: number }[];
}
interface Consumed {
  records: JsonRead[];
  error: string | null;
  warnings: string[];
  api_version: number[];
}

const createStep = (name: string, partitions = 3): Step => ['create', { topics: [{ name, partitions }] }];
const produceStep = (topic: string, recs: Rec[], codec: Codec = 'none'): Step => ['produce', { topic, codec, records: toJson(recs) }];

/** Each record's future reports its own offset: 0..n-1 per partition. */
function expectDelivered(res: Produced, recs: Rec[]) {
  const seen = new Map<number, number>();
  const want = recs.map((r) => {
    const o = seen.get(r.partition) ?? 0;
    seen.set(r.partition, o + 1);
    return { partition: r.partition, offset: o };
  });
  expect(res.delivered).toEqual(want);
}

async function roundtrip(codec: Codec) {
  const topic = `pkp-${codec}`;
  const recs = dataset(topic);
  const [created, produced, consumed] = (await batch([createStep(topic), produceStep(topic, recs, codec), ['consume', { topic, partitions: [0, 1, 2] }]])) as [Created, Produced, Consumed];
  expect(created.errors).toEqual([[topic, 0]]);
  expectDelivered(produced, recs);
  expect(consumed.error).toBeNull();
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
    const [a, b, again, list] = (await batch([createStep('pkp-admin-a', 2), createStep('pkp-admin-b', 5), createStep('pkp-admin-a', 2), ['list', { describe: ['pkp-admin-a', 'pkp-admin-b'] }]])) as [
      Created,
      Created,
      Created,
      { partitions: Record<string, number[]> },
    ];
    expect([a.errors, b.errors]).toEqual([[['pkp-admin-a', 0]], [['pkp-admin-b', 0]]]);
    expect(again.errors).toEqual([['pkp-admin-a', 36]]); // TOPIC_ALREADY_EXISTS
    expect(list.partitions).toEqual({ 'pkp-admin-a': [0, 1], 'pkp-admin-b': [0, 1, 2, 3, 4] });
  },
  'admin: list topics and metadata': async () => {
    const [, res] = (await batch([createStep('pkp-list'), ['list', { describe: ['pkp-list'] }]])) as [Created, { topics: string[]; partitions: Record<string, number[]> }];
    expect(res.topics).toContain('pkp-list');
    expect(res.partitions).toEqual({ 'pkp-list': [0, 1, 2] });
  },
  'admin: delete topics': async () => {
    const [, del, list] = (await batch([createStep('pkp-del'), ['delete', { topics: ['pkp-del'] }], ['list', {}]])) as [Created, Created, { topics: string[] }];
    expect(del.errors).toEqual([['pkp-del', 0]]);
    expect(list.topics).not.toContain('pkp-del');
  },
  'offsets: earliest and latest': async () => {
    const recs = dataset('pkp-offsets').filter((r) => r.partition !== 2);
    const [, , res] = (await batch([createStep('pkp-offsets'), produceStep('pkp-offsets', recs), ['offsets', { topic: 'pkp-offsets', partitions: [0, 1, 2] }]])) as [
      Created,
      Produced,
      { earliest: number[]; latest: number[] },
    ];
    expect(res).toMatchObject({ earliest: [0, 0, 0], latest: [5, 5, 0] });
  },
  'offsets: by timestamp': async () => {
    const past = Date.now() - 60_000;
    const future = Date.now() + 3_600_000;
    const recs = dataset('pkp-ts').filter((r) => r.partition !== 2);
    const [, , res] = (await batch([createStep('pkp-ts'), produceStep('pkp-ts', recs), ['offsets', { topic: 'pkp-ts', partitions: [0, 1, 2], timestamps: [past, future] }]])) as [
      Created,
      Produced,
      { by_timestamp: Record<string, (number | null)[]> },
    ];
    // Past: the first record of each partition; an empty partition or a future timestamp: None (Kafka's -1).
    expect(res.by_timestamp).toEqual({ [past]: [0, 0, null], [future]: [null, null, null] });
  },
  'roundtrip: none': () => roundtrip('none'),
  'roundtrip: gzip': () => roundtrip('gzip'),
  'roundtrip: snappy': () => roundtrip('snappy'),
  'roundtrip: lz4': () => roundtrip('lz4'),
  'roundtrip: zstd': () => roundtrip('zstd'),
  'read: from an absolute offset': async () => {
    const recs = dataset('pkp-seek');
    const [, , res] = (await batch([createStep('pkp-seek'), produceStep('pkp-seek', recs, 'zstd'), ['consume', { topic: 'pkp-seek', partitions: [1], offset: 3 }]])) as [Created, Produced, Consumed];
    expect(res.error).toBeNull();
    expectRecords(
      fromJson(res.records),
      recs.filter((r) => r.partition === 1),
      { from: { 1: 3 } },
    );
  },
  'consume: consumer group': async () => {
    const topic = 'pkp-group';
    const first = dataset(topic);
    const second = dataset(`${topic}-2`);
    await batch([createStep(topic), produceStep(topic, first)]);
    const res = await py<TwoMemberGroupRun & { errors: string[]; early: JsonRead[] }>('group', { topic, group: 'pkp-g', partitions: 3, first: first.length, records: toJson(second) }, GROUP_RUN_MS);
    expect(res.errors).toEqual([]);
    // B joins: nothing is read again (everything was committed).
    expect(res.early).toEqual([]);
    expectTwoMemberGroupRun(res, first, second);
  },
};

describe('kafka-python 3.0.12 (PyPI)', () => {
  runScenarios('pypi-kafka-python', scenarios, GROUP_RUN_MS + 10_000);
});

describe('kafka-python 3.0.12 (PyPI): admin', () => {
  it('KafkaAdminClient: describe and alter configs, add partitions, list/describe/delete groups and their offsets', async () => {
    const topic = 'pkp-adm';
    const [, , res] = (await batch([
      createStep(topic),
      produceStep(
        topic,
        dataset(topic).filter((r) => r.partition === 1),
      ),
      ['admin', { topic, group: 'pkp-adm-g' }],
    ])) as [Created, Produced, Record<string, unknown>];
    expect(res.describe).toEqual([null, { 'retention.ms': ['604800000', 'DEFAULT_CONFIG'], 'cleanup.policy': ['delete', 'DEFAULT_CONFIG'], 'compression.type': ['producer', 'DEFAULT_CONFIG'] }]);
    // alter_configs uses IncrementalAlterConfigs when the broker advertises it (it does).
    expect(res.alter).toEqual([null, "{'topic': {'pkp-adm': 'OK'}}"]);
    expect(res.after_alter).toEqual([
      null,
      { 'retention.ms': ['3600000', 'DYNAMIC_TOPIC_CONFIG'], 'cleanup.policy': ['compact', 'DYNAMIC_TOPIC_CONFIG'], 'compression.type': ['producer', 'DEFAULT_CONFIG'] },
    ]);
    expect(res.create_partitions).toEqual([null, [{ name: topic, error_code: 0, error_message: null }]]);
    expect(res.fewer_partitions).toEqual([null, [{ name: topic, error_code: 37, error_message: expect.stringContaining('higher than the requested 2') }]]); // INVALID_PARTITIONS
    expect(res.partitions).toEqual([0, 1, 2, 3, 4]);
    // A group that only committed offsets: listed, Empty, no protocol type, no members.
    expect((res.list_groups as [null, string[]])[1]).toContain('pkp-adm-g');
    expect(res.describe_group).toEqual([null, { group_state: 'Empty', protocol_type: '', members: [], error: null }]);
    expect(res.group_offsets).toEqual([
      null,
      [
        [0, 3],
        [1, 1],
      ],
    ]);
    expect(res.delete_group).toEqual([null, [['pkp-adm-g', 'OK']]]);
    expect((res.groups_after_delete as [null, string[]])[1]).not.toContain('pkp-adm-g');
  });
});

describe('kafka-python 3.0.12 (PyPI): transactions', () => {
  it('commit, abort, send_offsets_to_transaction; read_committed sees committed records only', async () => {
    const [, res] = (await batch([createStep('pkp-txn', 1), ['txn', { topic: 'pkp-txn', group: 'pkp-txn-g', txn_id: 'pkp-txn-id' }]])) as [
      Created,
      { group_offset: number; read_committed: { values: string[]; end: number; position: number }; read_uncommitted: { values: string[]; end: number } },
    ];
    expect(res.group_offset).toBe(4);
    // 5 + marker + 3 aborted + marker + 2 + marker = 13; a read_committed reader's end is the last stable offset.
    expect(res.read_committed).toEqual({ values: ['c0', 'c1', 'c2', 'c3', 'c4', 'o0', 'o1'], end: 13, position: 13 });
    expect(res.read_uncommitted.values).toEqual(['c0', 'c1', 'c2', 'c3', 'c4', 'a0', 'a1', 'a2', 'o0', 'o1']);
  });
});

describe('kafka-python 3.0.12 (PyPI): SASL over TLS', () => {
  let secure: SaslSslBroker;
  beforeAll(async () => {
    secure = await startSaslSslBroker();
  });
  afterAll(async () => {
    await secure?.destroy();
  });
  const run = (mechanism: string, password: string, topic: string) =>
    runVenvPythonJson<{ offsets?: number[]; values?: string[]; error: string | null; logged?: string[] }>('pypi_kafka_python.py', 'secure', {
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
      const res = await run(mechanism, SASL_PASSWORD, `pkp-sasl-${mechanism.toLowerCase()}`);
      expect(res).toEqual({ offsets: [0, 1], values: ['s1', 's2'], error: null });
    });
  }

  it('a wrong password is refused: SaslAuthenticationFailedError (58) logged, the bootstrap times out', async () => {
    const res = await run('SCRAM-SHA-512', 'wrong', 'pkp-sasl-wrong');
    // kafka-python 3 retries a refused login until bootstrap_timeout_ms and raises KafkaTimeoutError; the
    // authentication error itself reaches the application through its log.
    expect(res.error).toBe('KafkaTimeoutError');
    expect(
      res.logged!.some((m) => m.includes('[Error 58] SaslAuthenticationFailedError') && m.includes('invalid credentials')),
      res.logged!.join('\n'),
    ).toBe(true);
  });
});
