// aiokafka 0.14.0 from PyPI (asyncio; codecs from cramjam), in the project's
// venv (compat/support/python.ts), through compat/python/pypi_aiokafka.py:
// AIOKafkaAdminClient, AIOKafkaProducer (every codec, idempotence,
// transactions), AIOKafkaConsumer without a group (assign + seek) and in a
// group of two members. Several commands share one process ("batch").
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

const py = <T>(command: string, request: Record<string, unknown>, timeoutMs = 40_000) => runVenvPythonJson<T>('pypi_aiokafka.py', command, { bootstrap: broker.bootstrap, ...request }, timeoutMs);

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
}

const createStep = (name: string, partitions = 3): Step => ['create', { topics: [{ name, partitions }] }];
const produceStep = (topic: string, recs: Rec[], codec: Codec = 'none'): Step => ['produce', { topic, codec, records: toJson(recs) }];

/** Each send's future reports its record's own offset: 0..n-1 per partition. */
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
  const topic = `aio-${codec}`;
  const recs = dataset(topic);
  const [created, produced, consumed] = (await batch([createStep(topic), produceStep(topic, recs, codec), ['consume', { topic, partitions: [0, 1, 2] }]])) as [Created, Produced, Consumed];
  expect(created.errors).toEqual([[topic, 0]]);
  expectDelivered(produced, recs);
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
    const [a, again, list] = (await batch([createStep('aio-admin', 4), createStep('aio-admin', 4), ['list', { describe: ['aio-admin'] }]])) as [
      Created,
      Created,
      { partitions: Record<string, unknown[]> },
    ];
    expect(a.errors).toEqual([['aio-admin', 0]]);
    expect(again.errors).toEqual([['aio-admin', 36]]); // TOPIC_ALREADY_EXISTS
    expect(list.partitions['aio-admin']).toEqual([0, 1, 2, 3].map((p) => [p, 1, [1]]));
  },
  'admin: list topics and metadata': async () => {
    const [, res] = (await batch([createStep('aio-list'), ['list', { describe: ['aio-list'] }]])) as [Created, { topics: string[]; partitions: Record<string, unknown[]> }];
    expect(res.topics).toContain('aio-list');
    // [partition, leader, replicas]
    expect(res.partitions).toEqual({ 'aio-list': [0, 1, 2].map((p) => [p, 1, [1]]) });
  },
  'admin: delete topics': async () => {
    const [, del, list] = (await batch([createStep('aio-del'), ['delete', { topics: ['aio-del'] }], ['list', {}]])) as [Created, Created, { topics: string[] }];
    expect(del.errors).toEqual([['aio-del', 0]]);
    expect(list.topics).not.toContain('aio-del');
  },
  'offsets: earliest and latest': async () => {
    const recs = dataset('aio-offsets').filter((r) => r.partition !== 2);
    const [, , res] = (await batch([createStep('aio-offsets'), produceStep('aio-offsets', recs), ['offsets', { topic: 'aio-offsets', partitions: [0, 1, 2] }]])) as [
      Created,
      Produced,
      { earliest: number[]; latest: number[] },
    ];
    expect(res).toMatchObject({ earliest: [0, 0, 0], latest: [5, 5, 0] });
  },
  'offsets: by timestamp': async () => {
    const past = Date.now() - 60_000;
    const future = Date.now() + 3_600_000;
    const recs = dataset('aio-ts').filter((r) => r.partition !== 2);
    const [, , res] = (await batch([createStep('aio-ts'), produceStep('aio-ts', recs), ['offsets', { topic: 'aio-ts', partitions: [0, 1, 2], timestamps: [past, future] }]])) as [
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
    const recs = dataset('aio-seek');
    const [, , res] = (await batch([createStep('aio-seek'), produceStep('aio-seek', recs, 'lz4'), ['consume', { topic: 'aio-seek', partitions: [0, 2], offset: 2 }]])) as [Created, Produced, Consumed];
    expectRecords(
      fromJson(res.records),
      recs.filter((r) => r.partition !== 1),
      { from: { 0: 2, 2: 2 } },
    );
  },
  'read: relative to the end': async () => {
    const recs = dataset('aio-tail');
    const [, , res] = (await batch([createStep('aio-tail'), produceStep('aio-tail', recs, 'gzip'), ['consume', { topic: 'aio-tail', partitions: [0, 1, 2], from_end: 2 }]])) as [
      Created,
      Produced,
      Consumed,
    ];
    // end_offsets() - 2, then seek(): the last two records of each partition.
    expectRecords(fromJson(res.records), recs, { from: { 0: 3, 1: 3, 2: 3 } });
  },
  'consume: consumer group': async () => {
    const topic = 'aio-group';
    const first = dataset(topic);
    const second = dataset(`${topic}-2`);
    await batch([createStep(topic), produceStep(topic, first)]);
    const res = await py<TwoMemberGroupRun & { early: JsonRead[] }>('group', { topic, group: 'aio-g', partitions: 3, first: first.length, records: toJson(second) }, GROUP_RUN_MS);
    // B joins: nothing is read again (everything was committed).
    expect(res.early).toEqual([]);
    expectTwoMemberGroupRun(res, first, second);
  },
};

describe('aiokafka 0.14.0 (PyPI)', () => {
  runScenarios('aiokafka', scenarios, GROUP_RUN_MS + 10_000);
});

describe('aiokafka 0.14.0 (PyPI): admin, idempotence, transactions', () => {
  it('AIOKafkaAdminClient: describe and alter configs, add partitions, list/describe groups and their offsets', async () => {
    const topic = 'aio-adm';
    const [, , res] = (await batch([
      createStep(topic),
      produceStep(
        topic,
        dataset(topic).filter((r) => r.partition === 1),
      ),
      ['admin', { topic, group: 'aio-adm-g' }],
    ])) as [Created, Produced, Record<string, unknown>];
    expect(res.describe).toEqual([
      null,
      [
        0,
        [
          ['cleanup.policy', 'delete'],
          ['compression.type', 'producer'],
          ['retention.ms', '604800000'],
        ],
      ],
    ]);
    // AlterConfigs (the non-incremental API: aiokafka has no IncrementalAlterConfigs).
    expect(res.alter).toEqual([null, [0]]);
    expect(res.after_alter).toEqual([
      null,
      [
        0,
        [
          ['cleanup.policy', 'compact'],
          ['compression.type', 'producer'],
          ['retention.ms', '3600000'],
        ],
      ],
    ]);
    expect(res.create_partitions).toEqual([null, [0]]);
    expect(res.fewer_partitions).toEqual([expect.stringMatching(/^InvalidPartitionsError: \[Error 37\]/), null]);
    expect(res.partitions).toEqual([0, 1, 2, 3, 4].map((p) => [p, 1, [1]]));
    // A group that only committed offsets: listed, Empty, no protocol type, no members.
    expect((res.list_groups as [null, string[]])[1]).toContain('aio-adm-g');
    expect(res.describe_group).toEqual([null, { error: 0, group: 'aio-adm-g', state: 'Empty', protocol_type: '', members: 0 }]);
    expect(res.group_offsets).toEqual([
      null,
      [
        [0, 3],
        [1, 1],
      ],
    ]);
  });

  it('idempotent producer: offsets 0..n-1, batches carry a producer id and sequences from 0', async () => {
    const recs = dataset('aio-idem', { partitions: 1, perPartition: 8 });
    const [, produced] = (await batch([createStep('aio-idem', 1), ['idempotent', { topic: 'aio-idem', records: toJson(recs) }]])) as [Created, Produced];
    expectDelivered(produced, recs);
    const rows = await broker.query<{ producer_id: string; base_sequence: number; record_count: number }>(
      `SELECT b.producer_id, b.base_sequence, b.record_count FROM batches b JOIN topics t USING (topic_id) WHERE t.name = 'aio-idem' ORDER BY b.base_offset`,
    );
    expect(new Set(rows.map((x) => x.producer_id)).size).toBe(1);
    expect(Number(rows[0]!.producer_id)).toBeGreaterThanOrEqual(0);
    let next = 0;
    for (const row of rows) {
      expect(row.base_sequence).toBe(next);
      next += row.record_count;
    }
    expect(next).toBe(recs.length);
    expectRecords(
      (await readStored(broker, 'aio-idem')).flatMap((b) => b.records),
      recs,
    );
  });

  it('transactions: commit, abort, send_offsets_to_transaction; read_committed sees committed records only', async () => {
    const [, res] = (await batch([createStep('aio-txn', 1), ['txn', { topic: 'aio-txn', group: 'aio-txn-g', txn_id: 'aio-txn-id' }]])) as [
      Created,
      { group_offset: number; read_committed: { values: string[]; end: number; lso: number }; read_uncommitted: { values: string[]; end: number } },
    ];
    expect(res.group_offset).toBe(4);
    // 5 + marker + 3 aborted + marker + 2 + marker = 13.
    expect(res.read_committed).toEqual({ values: ['c0', 'c1', 'c2', 'c3', 'c4', 'o0', 'o1'], end: 13, lso: 13 });
    expect(res.read_uncommitted.values).toEqual(['c0', 'c1', 'c2', 'c3', 'c4', 'a0', 'a1', 'a2', 'o0', 'o1']);
  });
});

describe('aiokafka 0.14.0 (PyPI): SASL over TLS', () => {
  let secure: SaslSslBroker;
  beforeAll(async () => {
    secure = await startSaslSslBroker();
  });
  afterAll(async () => {
    await secure?.destroy();
  });
  const run = (mechanism: string, password: string, topic: string) =>
    runVenvPythonJson<Record<string, unknown>>('pypi_aiokafka.py', 'secure', {
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
      const res = await run(mechanism, SASL_PASSWORD, `aio-sasl-${mechanism.toLowerCase()}`);
      expect(res).toEqual({ offsets: [0, 1], values: ['s1', 's2'], error: null });
    });
  }

  it('a wrong password is refused: SaslAuthenticationFailed (58) logged, start() raises KafkaConnectionError', async () => {
    const res = (await run('SCRAM-SHA-512', 'wrong', 'aio-sasl-wrong')) as { error: string; logged: string[] };
    // aiokafka's bootstrap logs each host's failure and raises KafkaConnectionError once none is left.
    expect(res.error).toBe('KafkaConnectionError');
    expect(
      res.logged.some((m) => m.includes('[Error 58] SaslAuthenticationFailed') && m.includes('invalid credentials')),
      res.logged.join('\n'),
    ).toBe(true);
  });
});
