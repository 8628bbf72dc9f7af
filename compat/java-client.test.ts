// Apache Kafka's Java client, kafka-clients 4.4.0 (compat/java/client): its
// KafkaProducer with the defaults (idempotence on, acks=all) and every codec,
// a group-less KafkaConsumer (assign + seek, offsetsForTimes, beginning and
// end offsets), classic consumer groups (rebalance, cooperative-sticky,
// static membership), the Admin API, and read-process-write transactions.
// Each describe runs its operations in one JVM (compat/support/java.ts) and
// its tests check what the client answered and what PostgreSQL holds.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseBatches } from '../src/protocol/records/index.js';
import { startTestBroker, type TestBroker } from '../test/support/broker.js';
import { runScenarios, type ScenarioFns } from './scenarios.js';
import { runJavaClient, type JavaOp, type JavaResults } from './support/java.js';
import { byPartition, dataset, expectRecords, expectStoredCodec, fromJson, readStored, toJson, type Codec, type ReadRec, type Rec } from './support/records.js';

let broker: TestBroker;
beforeAll(async () => {
  broker = await startTestBroker({ autoCreateTopicsEnable: false });
});
afterAll(async () => {
  await broker?.destroy();
});

const CODECS: Codec[] = ['none', 'gzip', 'snappy', 'lz4', 'zstd'];
const create = (id: string, topics: [string, number][], configs: Record<string, string> = {}): JavaOp => ({
  id,
  op: 'createTopics',
  topics: topics.map(([name, partitions]) => ({ name, partitions, configs })),
});
const produce = (id: string, topic: string, recs: Rec[], config: Record<string, string> = {}, timestamps?: number[]): JavaOp => ({
  id,
  op: 'produce',
  topic,
  config,
  records: toJson(recs).map((r, i) => ({ ...r, timestamp: timestamps?.[i] ?? null })),
});
const consume = (id: string, topic: string, partitions: number[], extra: Record<string, unknown> = {}): JavaOp => ({ id, op: 'consume', topic, partitions, ...extra });

/** Offsets 0..n-1 per partition, in the order the records were given. */
function offsetsInOrder(recs: Rec[]) {
  const next = new Map<number, number>();
  return recs.map((r) => {
    const o = next.get(r.partition) ?? 0;
    next.set(r.partition, o + 1);
    return { partition: r.partition, offset: o };
  });
}

/** Producer ids of the stored batches: an idempotent producer writes its id and sequences into every batch. */
async function storedProducers(topic: string) {
  const rows = await broker.query<{ data: Buffer }>('SELECT b.data FROM batches b JOIN topics t USING (topic_id) WHERE t.name = $1', [topic]);
  return rows.flatMap((r) => parseBatches(r.data, { mode: 'log' }).batches.map((h) => ({ producerId: h.producerId, baseSequence: h.baseSequence })));
}

const T0 = 1_700_000_000_000;

describe('records and topics', () => {
  const recs = Object.fromEntries(CODECS.map((c) => [c, dataset(`jc-${c}`)])) as Record<Codec, Rec[]>;
  const offsetsRecs = dataset('jc-offsets').filter((r) => r.partition !== 2);
  const tsRecs = dataset('jc-ts', { partitions: 1 });
  const seekRecs = dataset('jc-seek');
  const TOPICS: [string, number][] = [
    ['jc-admin-a', 2],
    ['jc-admin-b', 5],
    ['jc-list', 3],
    ['jc-del', 3],
    ['jc-offsets', 3],
    ['jc-ts', 1],
    ['jc-seek', 3],
    ['jc-parts', 3],
    ['jc-delrec', 2],
    ['jc-cfg', 1],
    ['jc-many', 2],
    ['jc-null-header', 1],
  ];
  let res: JavaResults;

  beforeAll(async () => {
    res = await runJavaClient(broker.bootstrap, [
      create('create', TOPICS),
      create(
        'create-codecs',
        CODECS.map((c) => [`jc-${c}`, 3]),
      ),
      { id: 'create-again', op: 'createTopics', topics: [{ name: 'jc-admin-a', partitions: 2 }] },
      { id: 'cluster', op: 'describeCluster' },
      { id: 'describe', op: 'describeTopics', topics: ['jc-admin-a', 'jc-admin-b', 'jc-list', 'jc-missing'] },
      { id: 'delete', op: 'deleteTopics', topics: ['jc-del'] },
      { id: 'list', op: 'listTopics' },
      ...CODECS.map((c) => produce(`produce-${c}`, `jc-${c}`, recs[c], c === 'none' ? {} : { 'compression.type': c })),
      ...CODECS.map((c) => consume(`consume-${c}`, `jc-${c}`, [0, 1, 2])),
      produce('produce-offsets', 'jc-offsets', offsetsRecs),
      { id: 'offsets', op: 'offsets', topic: 'jc-offsets', partitions: [0, 1, 2] },
      produce(
        'produce-ts',
        'jc-ts',
        tsRecs,
        {},
        tsRecs.map((_, i) => T0 + i * 1000),
      ),
      { id: 'offsets-ts', op: 'offsets', topic: 'jc-ts', partitions: [0], times: { past: 0, first: T0, middle: T0 + 2500, last: T0 + 4000, future: T0 + 60_000 } },
      produce('produce-seek', 'jc-seek', seekRecs, { 'compression.type': 'gzip' }),
      consume('seek', 'jc-seek', [1], { from: { 1: 3 } }),
      consume('from-end', 'jc-seek', [0, 2], { fromEnd: 2 }),
      // Small batches, no linger: up to five batches in flight per partition, each with its own sequence numbers.
      { id: 'produce-many', op: 'produceMany', topic: 'jc-many', partitions: 2, count: 2000, config: { 'batch.size': '512', 'linger.ms': '0', 'compression.type': 'lz4' } },
      consume('consume-many', 'jc-many', [0, 1]),
      {
        id: 'produce-null-header',
        op: 'produce',
        topic: 'jc-null-header',
        records: [
          {
            partition: 0,
            key: null,
            value: null,
            headers: [
              ['nothing', null],
              ['empty', ''],
            ],
          },
        ],
      },
      consume('consume-null-header', 'jc-null-header', [0]),
      {
        id: 'admin-offsets',
        op: 'listOffsets',
        topic: 'jc-ts',
        partitions: [0],
        specs: { earliest: 'earliest', latest: 'latest', max: 'maxTimestamp', middle: String(T0 + 2500), future: String(T0 + 60_000) },
      },
      { id: 'producers', op: 'describeProducers', topic: 'jc-many', partitions: [0, 1] },
      { id: 'create-partitions', op: 'createPartitions', topic: 'jc-parts', total: 5 },
      { id: 'create-partitions-fewer', op: 'createPartitions', topic: 'jc-parts', total: 4 },
      { id: 'describe-parts', op: 'describeTopics', topics: ['jc-parts'] },
      produce('produce-delrec', 'jc-delrec', dataset('jc-delrec', { partitions: 2 })),
      { id: 'delete-records', op: 'deleteRecords', topic: 'jc-delrec', offsets: { 0: 2, 1: 5 } },
      { id: 'delete-records-beyond', op: 'deleteRecords', topic: 'jc-delrec', offsets: { 0: 99 } },
      { id: 'offsets-delrec', op: 'offsets', topic: 'jc-delrec', partitions: [0, 1] },
      consume('consume-delrec', 'jc-delrec', [0]),
      {
        id: 'alter-configs',
        op: 'incrementalAlterConfigs',
        topic: 'jc-cfg',
        ops: [
          { name: 'retention.ms', value: '3600000', type: 'SET' },
          { name: 'cleanup.policy', value: 'compact', type: 'APPEND' },
        ],
      },
      { id: 'configs', op: 'describeConfigs', topic: 'jc-cfg', names: ['retention.ms', 'cleanup.policy', 'segment.bytes'] },
      { id: 'alter-configs-delete', op: 'incrementalAlterConfigs', topic: 'jc-cfg', ops: [{ name: 'retention.ms', type: 'DELETE' }] },
      { id: 'alter-configs-bad', op: 'incrementalAlterConfigs', topic: 'jc-cfg', ops: [{ name: 'no.such.config', value: '1', type: 'SET' }] },
      { id: 'configs-after', op: 'describeConfigs', topic: 'jc-cfg', names: ['retention.ms', 'cleanup.policy'] },
      { id: 'broker-configs', op: 'describeConfigs', broker: '1', names: ['log.retention.hours', 'auto.create.topics.enable'] },
    ]);
  }, 180_000);

  const ok = (id: string) => expect(res[id], id).not.toHaveProperty('error');

  async function roundtrip(codec: Codec) {
    ok(`produce-${codec}`);
    expect(res[`produce-${codec}`].delivered.map(({ partition, offset }: { partition: number; offset: number }) => ({ partition, offset }))).toEqual(offsetsInOrder(recs[codec]));
    expectRecords(fromJson(res[`consume-${codec}`].records), recs[codec]);
    const stored = await readStored(broker, `jc-${codec}`);
    expectRecords(
      stored.flatMap((b) => b.records),
      recs[codec],
    );
    if (codec !== 'none') expectStoredCodec(stored, codec);
    // The defaults: idempotence on, so every batch carries a producer id and sequences from 0.
    const producers = await storedProducers(`jc-${codec}`);
    expect(new Set(producers.map((p) => p.producerId)).size).toBe(1);
    expect(producers.every((p) => p.producerId >= 0n && p.baseSequence >= 0)).toBe(true);
  }

  const scenarios: ScenarioFns = {
    'admin: create topics': async () => {
      expect(res.create).toEqual(Object.fromEntries(TOPICS.map(([t]) => [t, 'ok'])));
      expect(res['create-again']).toEqual({ 'jc-admin-a': "TopicExistsException: Topic 'jc-admin-a' already exists." });
      expect(res.describe['jc-admin-a'].partitions.map((p: { partition: number }) => p.partition)).toEqual([0, 1]);
      expect(res.describe['jc-admin-b'].partitions.map((p: { partition: number }) => p.partition)).toEqual([0, 1, 2, 3, 4]);
    },
    'admin: list topics and metadata': async () => {
      ok('cluster');
      const node = res.cluster.nodes[0].id;
      expect(res.cluster.nodes).toEqual([{ id: node, host: '127.0.0.1', port: Number(broker.bootstrap.split(':')[1]) }]);
      expect(res.cluster.controller).toBe(node);
      expect(res.list).toContain('jc-list');
      expect(res.describe['jc-list']).toEqual({ internal: false, hasTopicId: true, partitions: [0, 1, 2].map((partition) => ({ partition, leader: node, replicas: [node], isr: [node] })) });
      expect(res.describe['jc-missing'].error).toMatch(/^UnknownTopicOrPartitionException/);
    },
    'admin: delete topics': async () => {
      expect(res.delete).toEqual({ 'jc-del': 'ok' });
      expect(res.list).not.toContain('jc-del');
      expect(res.list).toContain('jc-admin-a');
    },
    'offsets: earliest and latest': async () => {
      ok('produce-offsets');
      expect(res.offsets.beginning).toEqual([0, 0, 0]);
      expect(res.offsets.end).toEqual([5, 5, 0]);
    },
    'offsets: by timestamp': async () => {
      ok('produce-ts');
      expect(res['produce-ts'].delivered.map((d: { timestamp: number }) => d.timestamp)).toEqual([0, 1, 2, 3, 4].map((i) => T0 + i * 1000));
      expect(res['offsets-ts'].forTimes).toEqual({
        past: [{ offset: 0, timestamp: T0 }],
        first: [{ offset: 0, timestamp: T0 }],
        middle: [{ offset: 3, timestamp: T0 + 3000 }],
        last: [{ offset: 4, timestamp: T0 + 4000 }],
        future: [null],
      });
    },
    ...Object.fromEntries(CODECS.map((c) => [`roundtrip: ${c}`, () => roundtrip(c)])),
    'read: from an absolute offset': async () => {
      ok('seek');
      expectRecords(
        fromJson(res.seek.records),
        seekRecs.filter((r) => r.partition === 1),
        { from: { 1: 3 } },
      );
    },
    'read: relative to the end': async () => {
      ok('from-end');
      expectRecords(
        fromJson(res['from-end'].records),
        seekRecs.filter((r) => r.partition !== 1),
        { from: { 0: 3, 2: 3 } },
      );
    },
  };

  runScenarios('java', { ...scenarios, 'consume: consumer group': consumerGroup }, 120_000);

  it('an idempotent producer with many small batches in flight: every record at its place, once', async () => {
    expect(res['produce-many']).toEqual({ sent: 4000, wrongOffsets: [] });
    const read = fromJson(res['consume-many'].records);
    for (const p of [0, 1]) {
      const got = read.filter((r) => r.partition === p);
      expect(got.map((r) => r.offset)).toEqual(Array.from({ length: 2000 }, (_, i) => i));
      expect(got.map((r) => r.value!.toString())).toEqual(Array.from({ length: 2000 }, (_, i) => `${p}-${i}`));
    }
    const producers = await storedProducers('jc-many');
    expect(producers.length).toBeGreaterThan(10);
    expect(new Set(producers.map((b) => b.producerId)).size).toBe(1);
  });

  it('Admin: listOffsets (earliest, latest, max timestamp, by timestamp) and describeProducers', () => {
    expect(res['admin-offsets']).toEqual({
      earliest: [{ offset: 0, timestamp: -1 }],
      latest: [{ offset: 5, timestamp: -1 }],
      max: [{ offset: 4, timestamp: T0 + 4000 }],
      middle: [{ offset: 3, timestamp: T0 + 3000 }],
      future: [{ offset: -1, timestamp: -1 }],
    });
    // The idempotent producer of produce-many: its last sequence per partition is that of its 2000th record.
    const [p0, p1] = [res.producers['jc-many-0'], res.producers['jc-many-1']];
    expect(p0).toEqual([{ producerId: p0[0].producerId, producerEpoch: 0, lastSequence: 1999, currentTransactionStartOffset: -1 }]);
    expect(p1).toEqual([{ ...p0[0], lastSequence: 1999 }]);
  });

  it('a header with a null value, a null key and a null value come back as null; an empty header as empty', () => {
    const [r] = fromJson(res['consume-null-header'].records);
    expect(r).toEqual({
      partition: 0,
      offset: 0,
      key: null,
      value: null,
      headers: [
        ['nothing', null],
        ['empty', Buffer.alloc(0)],
      ],
    });
  });

  it('createPartitions grows a topic and refuses to shrink it', () => {
    expect(res['create-partitions']).toBe('ok');
    expect(res['create-partitions-fewer']).toBe('InvalidPartitionsException: Topic currently has 5 partitions, which is higher than the requested 4.');
    expect(res['describe-parts']['jc-parts'].partitions.map((p: { partition: number }) => p.partition)).toEqual([0, 1, 2, 3, 4]);
  });

  it('deleteRecords moves the log start offset; past the end it is refused', () => {
    expect(res['delete-records']).toEqual({ 0: 2, 1: 5 });
    expect(res['delete-records-beyond'][0]).toMatch(/^OffsetOutOfRangeException/);
    expect(res['offsets-delrec']).toMatchObject({ beginning: [2, 5], end: [5, 5] });
    expectRecords(
      fromJson(res['consume-delrec'].records),
      dataset('jc-delrec', { partitions: 2 }).filter((r) => r.partition === 0),
      { from: { 0: 2 } },
    );
  });

  it("incrementalAlterConfigs sets, appends and deletes topic configs; describeConfigs shows them and the broker's", () => {
    expect(res['alter-configs']).toBe('ok');
    expect(res.configs['retention.ms']).toEqual({ value: '3600000', source: 'DYNAMIC_TOPIC_CONFIG', readOnly: false, sensitive: false });
    expect(res.configs['cleanup.policy']).toEqual({ value: 'delete,compact', source: 'DYNAMIC_TOPIC_CONFIG', readOnly: false, sensitive: false });
    expect(res.configs['segment.bytes']).toMatchObject({ source: 'DEFAULT_CONFIG' });
    expect(res['alter-configs-delete']).toBe('ok');
    expect(res['alter-configs-bad']).toMatch(/^InvalidConfigurationException|^InvalidRequestException/);
    expect(res['configs-after']['retention.ms']).toMatchObject({ value: '604800000', source: 'DEFAULT_CONFIG' });
    expect(res['configs-after']['cleanup.policy']).toMatchObject({ value: 'delete,compact' });
    // The broker's own: set at startup (auto.create.topics.enable=false here), or Kafka's default.
    expect(res['broker-configs']['auto.create.topics.enable']).toMatchObject({ value: 'false', source: 'STATIC_BROKER_CONFIG' });
    expect(res['broker-configs']['log.retention.hours']).toMatchObject({ value: '168', source: 'DEFAULT_CONFIG' });
  });
});

// The group operations run in one JVM, started by the first test that needs them.
const groupRecs = (tag: string, partitions = 3) => dataset(tag, { partitions });
let groupsRun: Promise<JavaResults> | undefined;
const HEARTBEAT = { 'heartbeat.interval.ms': '300' };
const groups = () =>
  (groupsRun ??= runJavaClient(broker.bootstrap, [
    create('create', [
      ['jc-g-eager', 3],
      ['jc-g-coop', 3],
      ['jc-g-static', 4],
      ['jc-g-auto', 3],
    ]),
    produce('produce-auto', 'jc-g-auto', groupRecs('jc-g-auto')),
    { id: 'auto', op: 'autoCommit', topic: 'jc-g-auto', group: 'jc-auto', partitions: 3, expect: 15, config: HEARTBEAT },
    { id: 'auto-offsets', op: 'listConsumerGroupOffsets', group: 'jc-auto' },
    produce('produce-eager', 'jc-g-eager', groupRecs('jc-g-eager')),
    produce('produce-coop', 'jc-g-coop', groupRecs('jc-g-coop')),
    { id: 'eager', op: 'groupRebalance', topic: 'jc-g-eager', group: 'jc-eager', partitions: 3, expect: 15, config: HEARTBEAT },
    { id: 'coop', op: 'groupRebalance', topic: 'jc-g-coop', group: 'jc-coop', partitions: 3, expect: 15, assignor: 'org.apache.kafka.clients.consumer.CooperativeStickyAssignor', config: HEARTBEAT },
    { id: 'static', op: 'staticMembership', topic: 'jc-g-static', group: 'jc-static', partitions: 4, config: HEARTBEAT },
    { id: 'list', op: 'listConsumerGroups' },
    { id: 'describe', op: 'describeConsumerGroups', groups: ['jc-eager', 'jc-static', 'jc-nobody'] },
    { id: 'offsets', op: 'listConsumerGroupOffsets', group: 'jc-eager' },
    { id: 'alter', op: 'alterConsumerGroupOffsets', group: 'jc-eager', topic: 'jc-g-eager', offsets: { 0: 1 } },
    { id: 'offsets-after', op: 'listConsumerGroupOffsets', group: 'jc-eager' },
    { id: 'delete-offsets', op: 'deleteConsumerGroupOffsets', group: 'jc-eager', topic: 'jc-g-eager', partitions: [2] },
    { id: 'offsets-deleted', op: 'listConsumerGroupOffsets', group: 'jc-eager' },
    { id: 'alter-static', op: 'alterConsumerGroupOffsets', group: 'jc-static', topic: 'jc-g-static', offsets: { 0: 0 } },
    { id: 'delete', op: 'deleteConsumerGroups', groups: ['jc-coop', 'jc-static'] },
    { id: 'list-after', op: 'listConsumerGroups' },
  ]));

const consumerGroup = async () => {
  const res = await groups();
  // One member alone gets every partition and reads every record; both members commit what they read when they stop.
  expect(res.eager.alone).toBe(true);
  expect(res.eager.first).toMatchObject({ assignment: [0, 1, 2], consumed: 15, error: null });
  expect(res.offsets).toEqual({ 'jc-g-eager-0': { offset: 5, metadata: '' }, 'jc-g-eager-1': { offset: 5, metadata: '' }, 'jc-g-eager-2': { offset: 5, metadata: '' } });
};

/** A figure of the broker's /metrics (0 when absent). */
async function metric(name: string): Promise<number> {
  const body = await (await fetch(`http://127.0.0.1:${broker.metricsPort}/metrics`)).text();
  return Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(body)?.[1] ?? 0);
}

describe('incremental fetch sessions', () => {
  // 120 partitions read through responses of at most 4 KiB: most records come in incremental fetches of the session.
  const PARTITIONS = 120;
  const recs = dataset('jc-sessions', { partitions: PARTITIONS, perPartition: 3 });
  const all = Array.from({ length: PARTITIONS }, (_, p) => p);

  it('the Java consumer reads every partition through one session and its incremental fetches', async () => {
    const [before, sessionsBefore] = [await metric('pgkafka_fetch_incremental_requests_total'), await metric('pgkafka_fetch_sessions')];
    const res = await runJavaClient(broker.bootstrap, [
      create('create', [['jc-sessions', PARTITIONS]]),
      produce('produce', 'jc-sessions', recs),
      consume('consume', 'jc-sessions', all, { config: { 'fetch.max.bytes': '4096', 'fetch.max.wait.ms': '100' }, idleMs: 1000 }),
    ]);
    expectRecords(fromJson(res.consume.records), recs);
    // A full fetch opens the session; with 4 KiB per response the rest comes incrementally, then idle fetches ask for nothing.
    expect((await metric('pgkafka_fetch_incremental_requests_total')) - before).toBeGreaterThan(10);
    // Closing the consumer closes its session (a fetch with the final epoch).
    expect(await metric('pgkafka_fetch_sessions')).toBe(sessionsBefore);
  });
});

describe('classic consumer groups', () => {
  let res: JavaResults;
  beforeAll(async () => {
    res = await groups();
  }, 180_000);

  it('a second member joins: the eager (range) assignor revokes everything and splits the partitions', () => {
    expect(res.eager.shared).toBe(true);
    const [a, b] = [res.eager.a, res.eager.b];
    expect([...a.assignment, ...b.assignment].sort()).toEqual([0, 1, 2]);
    expect(a.generation).toBe(b.generation);
    expect(a.generation).toBeGreaterThan(res.eager.first.generation);
    expect(a.events).toEqual([{ assigned: [0, 1, 2] }, { revoked: [0, 1, 2] }, { assigned: a.assignment }]);
    expect(b.events).toEqual([{ assigned: b.assignment }]);
    // a committed all it read before b came, so nobody reads a record twice.
    expect(b.consumed).toBe(0);
    const end = res.eager.end;
    expect([end.a.committed, end.b.committed, end.a.error, end.b.error]).toEqual(['ok', 'ok', null, null]);
  });

  it('cooperative-sticky: the first member gives up only the partitions that move', () => {
    expect(res.coop.alone).toBe(true);
    expect(res.coop.shared).toBe(true);
    const [a, b] = [res.coop.a, res.coop.b];
    const moved = [0, 1, 2].filter((p) => !a.assignment.includes(p));
    expect(b.assignment).toEqual(moved);
    expect(a.events[0]).toEqual({ assigned: [0, 1, 2] });
    expect(a.events.slice(1).filter((e: object) => 'revoked' in e)).toEqual([{ revoked: moved }]);
    // Cooperative: no member is revoked what it keeps; b is assigned nothing in the first round, the moved partitions in the second.
    expect(b.events.filter((e: { assigned?: number[] }) => e.assigned?.length)).toEqual([{ assigned: moved }]);
    expect(b.events.filter((e: object) => 'revoked' in e)).toEqual([]);
    expect(b.generation).toBe(a.generation);
    expect(b.consumed).toBe(0);
  });

  it('with the consumer defaults (auto commit), closing commits: the next member resumes after what was read', () => {
    expect(res.auto).toMatchObject({ read: true, assigned: true });
    expect(res.auto.first).toMatchObject({ consumed: 15, error: null });
    expect(res.auto.next).toMatchObject({ assignment: [0, 1, 2], consumed: 0, error: null });
    expect(res['auto-offsets']).toEqual(Object.fromEntries([0, 1, 2].map((p) => [`jc-g-auto-${p}`, { offset: 5, metadata: '' }])));
  });

  it('static membership: a restarted member with the same group.instance.id gets its partitions back without a rebalance', () => {
    expect(res.static.shared).toBe(true);
    expect(res.static.back).toBe(true);
    const { one, two } = res.static.before;
    expect(res.static.again.assignment).toEqual(one.assignment);
    expect(res.static.again.generation).toBe(one.generation);
    expect(res.static.two.generation).toBe(two.generation);
    expect(res.static.two.events.filter((e: object) => 'revoked' in e)).toEqual([]);
    expect(res.static.two.assignment).toEqual(two.assignment);
  });

  it('Admin: list, describe, offsets, alter and delete offsets, delete consumer groups', () => {
    const ids = (list: { groupId: string }[]) => list.map((g) => g.groupId).sort();
    expect(ids(res.list)).toEqual(['jc-auto', 'jc-coop', 'jc-eager', 'jc-static']);
    expect(res.list.find((g: { groupId: string }) => g.groupId === 'jc-eager')).toEqual({ groupId: 'jc-eager', state: 'Empty', type: 'Classic', protocol: 'consumer' });
    expect(res.describe['jc-eager']).toMatchObject({ state: 'Empty', type: 'Classic', members: [] });
    const st = res.describe['jc-static'];
    expect(st).toMatchObject({ state: 'Stable', type: 'Classic', assignor: 'range' });
    expect(st.members.map((m: { groupInstanceId: string }) => m.groupInstanceId).sort()).toEqual(['instance-1', 'instance-2']);
    expect(st.members.flatMap((m: { assignment: string[] }) => m.assignment).sort()).toEqual([0, 1, 2, 3].map((p) => `jc-g-static-${p}`));
    expect(res.describe['jc-nobody']).toEqual({ error: 'GroupIdNotFoundException: Group jc-nobody not found.' });
    expect(res.alter).toBe('ok');
    expect(res['offsets-after']).toEqual({ ...res.offsets, 'jc-g-eager-0': { offset: 1, metadata: '' } });
    expect(res['delete-offsets']).toBe('ok');
    const { 'jc-g-eager-2': _deleted, ...kept } = res['offsets-after'];
    expect(res['offsets-deleted']).toEqual(kept);
    // The group has members: an offset commit from outside it is refused.
    expect(res['alter-static']).toBe('UnknownMemberIdException: Failed altering group offsets for the following partitions: [jc-g-static-0]');
    expect(res.delete).toEqual({ 'jc-coop': 'ok', 'jc-static': 'GroupNotEmptyException: The group is not empty.' });
    expect(ids(res['list-after'])).toEqual(['jc-auto', 'jc-eager', 'jc-static']);
  });
});

describe('transactions', () => {
  const input = dataset('jc-tx-in', { partitions: 2 });
  const aborted = dataset('jc-tx-aborted', { partitions: 2, perPartition: 2 });
  const after = dataset('jc-tx-after', { partitions: 2, perPartition: 1 });
  const zombie = dataset('jc-tx-zombie', { partitions: 1, perPartition: 1 });
  let res: JavaResults;
  beforeAll(async () => {
    res = await runJavaClient(broker.bootstrap, [
      create('create', [
        ['jc-tx-in', 2],
        ['jc-tx-out', 2],
      ]),
      produce('produce', 'jc-tx-in', input),
      {
        id: 'txn',
        op: 'transactions',
        input: 'jc-tx-in',
        output: 'jc-tx-out',
        group: 'jc-tx',
        transactionalId: 'jc-tx-id',
        expect: input.length,
        aborted: toJson(aborted),
        after: toJson(after),
        zombie: toJson(zombie),
      },
      consume('committed', 'jc-tx-out', [0, 1], { config: { 'isolation.level': 'read_committed' } }),
      consume('uncommitted', 'jc-tx-out', [0, 1], { config: { 'isolation.level': 'read_uncommitted' } }),
      { id: 'offsets', op: 'listConsumerGroupOffsets', group: 'jc-tx' },
      { id: 'list', op: 'listTransactions' },
      { id: 'describe', op: 'describeTransactions', ids: ['jc-tx-id'] },
    ]);
  }, 180_000);

  /** Per partition, the records' bytes in order (offsets are not contiguous: each transaction ends with a marker). */
  const contents = (recs: ReadRec[] | Rec[]) =>
    [...byPartition(recs as Rec[]).entries()]
      .sort(([a], [b]) => a - b)
      .map(([p, rs]) => [p, rs.map((r) => [r.key?.toString('hex') ?? null, r.value?.toString('hex') ?? null, r.headers.map(([k, v]) => [k, v?.toString('hex') ?? null])])]);

  it('read-process-write: copies every input record and commits the consumer offsets in the transactions', () => {
    expect(res.txn).toMatchObject({ copied: input.length });
    expect(res.txn.transactions).toBeGreaterThan(0);
    expect(res.offsets).toEqual({ 'jc-tx-in-0': { offset: 5, metadata: '' }, 'jc-tx-in-1': { offset: 5, metadata: '' } });
  });

  it('read_committed sees the committed transactions and not the aborted one; read_uncommitted sees all', () => {
    const committed = fromJson(res.committed.records);
    expect(contents(committed)).toEqual(contents([...input, ...after].sort((a, b) => a.partition - b.partition)));
    const uncommitted = fromJson(res.uncommitted.records);
    expect(contents(uncommitted)).toEqual(contents([...input, ...aborted, ...after].sort((a, b) => a.partition - b.partition)));
    for (const recs of [committed, uncommitted]) {
      for (const rs of byPartition(recs).values()) expect(rs.map((r) => r.offset)).toEqual(rs.map((r) => r.offset).sort((a, b) => a - b));
    }
    // Every offset a reader skips is a transaction marker: the last one sits just below the end offset.
    expect(res.committed.positions).toEqual(res.committed.end);
  });

  it('a second producer with the same transactional.id fences the first; the fenced transaction is not read', () => {
    expect(res.txn.zombie).toMatch(/^ProducerFencedException: /);
    const values = fromJson(res.uncommitted.records).map((r) => r.value?.toString('hex'));
    expect(values).not.toContain(zombie[0]!.value!.toString('hex'));
  });

  it('Admin: listTransactions and describeTransactions show the transactional id after its successor took over', () => {
    const mine = res.list.filter((t: { transactionalId: string }) => t.transactionalId === 'jc-tx-id');
    // The successor's InitProducerId ended the completed transaction's state: Empty, at the next epoch (as on Kafka).
    expect(mine).toEqual([{ transactionalId: 'jc-tx-id', producerId: res.describe['jc-tx-id'].producerId, state: 'Empty' }]);
    expect(res.describe['jc-tx-id']).toEqual({ state: 'Empty', producerId: mine[0].producerId, producerEpoch: 1, coordinatorId: 1, topicPartitions: [] });
  });
});
