// The Go client runners (compat/go/<client>/): built once per test
// file with `go build` into compat/go/bin/ (git-ignored; the Go build cache
// makes a rebuild quick), then run once per scenario with a batch of steps
// as JSON on stdin and their results as JSON on stdout (internal/runner).
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentialFromPassword } from '../../src/security/scram.js';
import { AclOperation, AclPermission, PatternType, ResourceType } from '../../src/security/acl.js';
import { makeTestPki, type TestPki } from '../../test/security/certs.js';
import { startTestBroker, type TestBroker } from '../../test/support/broker.js';
import { addUser } from '../../test/support/sasl.js';
import type { Scenario, ScenarioFns } from '../scenarios.js';
import { dataset, expectRecords, expectStoredCodec, fromJson, readStored, toJson, type Codec, type DatasetOptions, type JsonRead, type Rec } from './records.js';
import { runOk } from './spawn.js';

const GO_DIR = fileURLToPath(new URL('../go/', import.meta.url));

export type GoClient = 'franz' | 'sarama' | 'kafkago' | 'confluent';

/** Builds compat/go/<client> and returns the binary's path. Cold (empty build cache), the cgo build of confluent-kafka-go takes about half a minute. */
export async function buildGo(client: GoClient): Promise<string> {
  const bin = `${GO_DIR}bin/${client}`;
  await runOk('go', ['-C', GO_DIR, 'build', '-o', bin, `./${client}`], { timeoutMs: 240_000 }).catch((e: Error) => {
    throw new Error(`go build ./${client} in compat/go failed (is Go installed? \`(cd compat/go && go mod download)\` fetches the modules)\n${e.message}`);
  });
  return bin;
}

/**
 * Builds a client of compat/go-old/ (Sarama 1.22, kafka-go 0.2): its own
 * module, since kafka-go 0.2 and 0.4 share a module path and cannot both be
 * in compat/go/go.mod.
 */
export async function buildOldGo(client: 'sarama122' | 'kafkago02'): Promise<string> {
  const dir = fileURLToPath(new URL('../go-old/', import.meta.url));
  const bin = `${dir}bin/${client}`;
  await runOk('go', ['-C', dir, 'build', '-o', bin, `./${client}`], { timeoutMs: 240_000 });
  return bin;
}

export interface GoStep {
  op: string;
  [arg: string]: unknown;
}

/** How every client of a run connects (internal/runner's Security); absent, PLAINTEXT. */
export interface GoSecurity {
  protocol: 'SASL_SSL' | 'SASL_PLAINTEXT' | 'SSL';
  mechanism?: 'PLAIN' | 'SCRAM-SHA-256' | 'SCRAM-SHA-512';
  username?: string;
  password?: string;
  /** PEM file of the CA the client trusts (SSL, SASL_SSL). */
  caFile?: string;
}

/** Runs the built client with `steps`; one result per step (the runner exits non-zero, and this throws, when a step fails). */
export async function runGo(bin: string, bootstrap: string, steps: GoStep[], env: NodeJS.ProcessEnv = {}, timeoutMs = 40_000, security?: GoSecurity): Promise<unknown[]> {
  const r = await runOk(bin, [], { input: JSON.stringify({ bootstrap, security, steps }), timeoutMs, env });
  return (JSON.parse(r.stdout.toString('utf8')) as { results: unknown[] }).results;
}

export interface GoScenarioOptions {
  /** Prefix of every topic and group name. */
  tag: string;
  /** The dataset each client can send (empty/null values). */
  dataset?: DatasetOptions;
  /** Starts a broker with the authorizer on (User:ANONYMOUS a super user), for the ACL scenario. */
  aclBroker?: () => Promise<TestBroker>;
  /** The client reports the end offset where ListOffsets by timestamp finds none (Kafka's -1), as kadm does. */
  timestampMissIsEnd?: boolean;
  /** The client's DeleteRecords does not report the low watermark. */
  noLowWatermark?: boolean;
  /** The client's group description has no protocol type. */
  noProtocolType?: boolean;
  /** Scenarios the client has no API for (not applicable, so not implemented). */
  lacks?: Scenario[];
  /** Environment of the runner (e.g. SARAMA_VERSION). */
  env?: NodeJS.ProcessEnv;
}

type Errors = { errors: [string, number][] };
type Delivered = { delivered: { partition: number; offset: number }[] };
type Read = { records: JsonRead[] };

/** Offsets 0..n-1 per partition, in the order the records were given. */
export function expectedDelivery(recs: Rec[]): { partition: number; offset: number }[] {
  const seen = new Map<number, number>();
  return recs.map((r) => {
    const o = seen.get(r.partition) ?? 0;
    seen.set(r.partition, o + 1);
    return { partition: r.partition, offset: o };
  });
}

/**
 * The scenarios every Go runner implements with the same ops and answers
 * (compat/go/<client>/); a test file allow-lists those its client passes.
 */
export function goScenarios(getBin: () => string, getBroker: () => TestBroker, o: GoScenarioOptions): ScenarioFns {
  const all = allGoScenarios(getBin, getBroker, o);
  for (const name of o.lacks ?? []) delete all[name];
  return all;
}

function allGoScenarios(getBin: () => string, getBroker: () => TestBroker, o: GoScenarioOptions): ScenarioFns {
  const go = <T extends unknown[]>(steps: GoStep[], broker = getBroker()) => runGo(getBin(), broker.bootstrap, steps, o.env) as Promise<T>;
  const t = (name: string) => `${o.tag}-${name}`;
  const data = (tag: string, extra: DatasetOptions = {}) => dataset(tag, { ...o.dataset, ...extra });
  const create = (name: string, partitions = 3, configs: Record<string, string> = {}): GoStep => ({ op: 'create', topics: [{ name, partitions, configs }] });
  const produce = (topic: string, recs: Rec[], codec: Codec = 'none'): GoStep => ({ op: 'produce', topic, codec, records: toJson(recs) });
  const fetch = (topic: string, partitions = [0, 1, 2], extra: Record<string, unknown> = {}): GoStep => ({ op: 'fetch', topic, partitions, ...extra });

  async function roundtrip(codec: Codec) {
    const topic = t(`rt-${codec}`);
    const recs = data(topic);
    const [created, sent, read] = await go<[Errors, Delivered, Read]>([create(topic), produce(topic, recs, codec), fetch(topic)]);
    expect(created.errors).toEqual([[topic, 0]]);
    expect(sent.delivered).toEqual(expectedDelivery(recs));
    expectRecords(fromJson(read.records), recs);
    const stored = await readStored(getBroker(), topic);
    expectRecords(
      stored.flatMap((b) => b.records),
      recs,
    );
    if (codec !== 'none') expectStoredCodec(stored, codec);
  }

  return {
    'admin: create topics': async () => {
      const [a, b, dup, list] = await go<[Errors, Errors, Errors, { partitions: Record<string, number[]> }]>([
        create(t('admin-a'), 2),
        create(t('admin-b'), 5),
        create(t('admin-a'), 2),
        { op: 'list', describe: [t('admin-a'), t('admin-b')] },
      ]);
      expect([a.errors, b.errors]).toEqual([[[t('admin-a'), 0]], [[t('admin-b'), 0]]]);
      expect(dup.errors).toEqual([[t('admin-a'), 36]]); // TOPIC_ALREADY_EXISTS
      expect(list.partitions).toEqual({ [t('admin-a')]: [0, 1], [t('admin-b')]: [0, 1, 2, 3, 4] });
    },
    'admin: list topics and metadata': async () => {
      const broker = getBroker();
      const [, list] = await go<[Errors, { topics: string[]; partitions: Record<string, number[]>; leaders: Record<string, number[]>; brokers: { id: number; host: string; port: number }[] }]>([
        create(t('list')),
        { op: 'list', describe: [t('list')] },
      ]);
      expect(list.topics).toContain(t('list'));
      expect(list.partitions).toEqual({ [t('list')]: [0, 1, 2] });
      expect(list.brokers).toHaveLength(1);
      expect(list.brokers[0]).toMatchObject({ host: '127.0.0.1', port: broker.port });
      expect(list.leaders[t('list')]).toEqual([0, 1, 2].map(() => list.brokers[0]!.id));
    },
    'admin: delete topics': async () => {
      const [, del, list] = await go<[Errors, Errors, { topics: string[] }]>([create(t('del')), { op: 'delete', topics: [t('del')] }, { op: 'list', describe: [] }]);
      expect(del.errors).toEqual([[t('del'), 0]]);
      expect(list.topics).not.toContain(t('del'));
    },
    'offsets: earliest and latest': async () => {
      const topic = t('offsets');
      const recs = data(topic).filter((r) => r.partition !== 2);
      const [, , res] = await go<[Errors, Delivered, { earliest: number[]; latest: number[] }]>([create(topic), produce(topic, recs), { op: 'offsets', topic }]);
      expect(res).toEqual({ earliest: [0, 0, 0], latest: [5, 5, 0] });
    },
    'offsets: by timestamp': async () => {
      const topic = t('by-ts');
      const recs = data(topic).filter((r) => r.partition !== 2);
      const [, , past] = await go<[Errors, Delivered, { byTimestamp: number[] }]>([create(topic), produce(topic, recs), { op: 'offsets', topic, timestamp: 0 }]);
      const [future] = await go<[{ byTimestamp: number[] }]>([{ op: 'offsets', topic, timestamp: Date.now() + 3_600_000 }]);
      const none = (end: number) => (o.timestampMissIsEnd ? end : -1);
      expect(past.byTimestamp).toEqual([0, 0, none(0)]);
      expect(future.byTimestamp).toEqual([none(5), none(5), none(0)]);
    },
    'roundtrip: none': () => roundtrip('none'),
    'roundtrip: gzip': () => roundtrip('gzip'),
    'roundtrip: snappy': () => roundtrip('snappy'),
    'roundtrip: lz4': () => roundtrip('lz4'),
    'roundtrip: zstd': () => roundtrip('zstd'),
    'read: from an absolute offset': async () => {
      const topic = t('seek');
      const recs = data(topic);
      const [, , read] = await go<[Errors, Delivered, Read]>([create(topic), produce(topic, recs, 'gzip'), fetch(topic, [1], { offset: 3 })]);
      expectRecords(
        fromJson(read.records),
        recs.filter((r) => r.partition === 1),
        { from: { 1: 3 } },
      );
    },
    'consume: consumer group': async () => {
      const topic = t('group');
      const recs = data(topic);
      const [, , read] = await go<[Errors, Delivered, Read & { committed: Record<string, number> }]>([
        create(topic),
        produce(topic, recs),
        { op: 'group_consume', group: t('g1'), topic, expect: recs.length },
      ]);
      expectRecords(fromJson(read.records), recs);
      expect(read.committed).toEqual({ 0: 5, 1: 5, 2: 5 });
    },
    'group: commit and resume': async () => {
      const topic = t('resume');
      const first = data(`${topic}-1`);
      const second = data(`${topic}-2`, { perPartition: 2 });
      const group = t('g-resume');
      const [, , a, , b] = await go<[Errors, Delivered, Read, Delivered, Read & { committed: Record<string, number> }]>([
        create(topic),
        produce(topic, first),
        { op: 'group_consume', group, topic, expect: first.length },
        produce(topic, second),
        { op: 'group_consume', group, topic, expect: second.length },
      ]);
      expectRecords(fromJson(a.records), first);
      // The second member starts at the first one's commits: offset 5 of each partition.
      expectRecords(fromJson(b.records), [...first, ...second], { from: { 0: 5, 1: 5, 2: 5 } });
      expect(b.committed).toEqual({ 0: 7, 1: 7, 2: 7 });
    },
    'group: rebalance on a second member': async () => {
      const topic = t('rebalance');
      const recs = data(topic, { partitions: 4, perPartition: 3 });
      const [, res] = await go<[Errors, { first: number[]; a: number[]; b: number[]; recordsA: JsonRead[]; recordsB: JsonRead[] }]>([
        create(topic, 4),
        { op: 'rebalance', group: t('g-rebalance'), topic, partitions: 4, records: toJson(recs) },
      ]);
      expect(res.first).toEqual([0, 1, 2, 3]);
      expect(res.a.length).toBeGreaterThan(0);
      expect(res.b.length).toBeGreaterThan(0);
      expect([...res.a, ...res.b].sort()).toEqual([0, 1, 2, 3]);
      // Each member read exactly the partitions it owns, each record once.
      expect([...new Set(res.recordsA.map((r) => r.partition))].sort()).toEqual(res.a);
      expect([...new Set(res.recordsB.map((r) => r.partition))].sort()).toEqual(res.b);
      expectRecords(fromJson([...res.recordsA, ...res.recordsB]), recs);
    },
    'admin: describe and alter configs': async () => {
      const topic = t('configs');
      const names = ['retention.ms', 'cleanup.policy', 'max.message.bytes'];
      const [, res] = await go<[Errors, { before: Record<string, { value: string; source: string }>; alter: number; after: Record<string, { value: string; source: string }> }]>([
        create(topic, 1, { 'cleanup.policy': 'compact' }),
        { op: 'configs', topic, names, set: { 'retention.ms': '3600000' } },
      ]);
      expect(res.alter).toBe(0);
      expect(res.before['cleanup.policy']).toMatchObject({ value: 'compact' });
      expect(res.before['retention.ms']!.value).toBe('604800000');
      expect(res.after['retention.ms']!.value).toBe('3600000');
      expect(res.after['cleanup.policy']!.value).toBe('compact');
      expect(res.after['max.message.bytes']).toEqual(res.before['max.message.bytes']);
      expect(res.after['retention.ms']!.source).toMatch(/topic/i);
      expect(res.before['retention.ms']!.source).not.toMatch(/topic/i);
    },
    'admin: create partitions': async () => {
      const topic = t('grow');
      const [, res] = await go<[Errors, { error: number; partitions: number[] }]>([create(topic, 2), { op: 'partitions', topic, add: 3 }]);
      expect(res).toEqual({ error: 0, partitions: [0, 1, 2, 3, 4] });
    },
    'admin: groups, offsets and lag': async () => {
      const topic = t('lag');
      const recs = data(topic);
      const group = t('g-lag');
      const [, , res] = await go<
        [Errors, Delivered, { listed: string[]; state: string; protocolType: string | null; members: { assigned: number[] }[]; lag: Record<string, number>; totalLag: number }]
      >([create(topic), produce(topic, recs), { op: 'groups', group, topic, consume: 4, expect: 4 }]);
      expect(res.listed).toContain(group);
      expect(res.state).toBe('Stable');
      expect(res.protocolType).toBe(o.noProtocolType ? null : 'consumer');
      expect(res.members).toHaveLength(1);
      expect([...res.members[0]!.assigned].sort()).toEqual([0, 1, 2]);
      expect(res.totalLag).toBe(recs.length - 4);
      expect(Object.values(res.lag).reduce((a, b) => a + b, 0)).toBe(recs.length - 4);
    },
    'admin: delete records': async () => {
      const topic = t('delrec');
      const recs = data(topic);
      const [, , res, read] = await go<[Errors, Delivered, { error: number; lowWatermark: number | null; start: number }, Read]>([
        create(topic),
        produce(topic, recs),
        { op: 'delete_records', topic, partition: 1, before: 3 },
        fetch(topic, [1]),
      ]);
      // lowWatermark is DeleteRecords' answer, null where the client does not report it.
      expect(res).toEqual({ error: 0, lowWatermark: o.noLowWatermark ? null : 3, start: 3 });
      expectRecords(
        fromJson(read.records),
        recs.filter((r) => r.partition === 1),
        { from: { 1: 3 } },
      );
    },
    'admin: ACLs': async () => {
      if (!o.aclBroker) throw new Error('aclBroker not given');
      const broker = await o.aclBroker();
      try {
        const [res] = await go<[{ created: number[]; described: string[]; deleted: number; after: string[] }]>([{ op: 'acls', topic: t('acl'), principal: 'User:alice' }], broker);
        expect(res.created.every((c) => c === 0)).toBe(true);
        expect(res.described).toHaveLength(2);
        expect(res.described.join('\n')).toMatch(/READ/);
        expect(res.described.join('\n')).toMatch(/DESCRIBE/);
        expect(res.deleted).toBe(2);
        expect(res.after).toEqual([]);
      } finally {
        await broker.destroy();
      }
    },
    'admin: describe cluster': async () => {
      const broker = getBroker();
      const [res] = await go<[{ error: number; clusterId: string; controller: number; brokers: { id: number; host: string; port: number }[]; listed: number[] }]>([{ op: 'cluster' }]);
      expect(res.error).toBe(0);
      expect(res.clusterId).toMatch(/.+/);
      expect(res.brokers).toEqual([{ id: res.controller, host: '127.0.0.1', port: broker.port }]);
      expect(res.listed).toEqual([res.controller]);
    },
    'produce: idempotent': async () => {
      const topic = t('idempotent');
      const recs = data(topic);
      const [, sent] = await go<[Errors, Delivered]>([create(topic), { ...produce(topic, recs, 'lz4'), idempotent: true }]);
      expect(sent.delivered).toEqual(expectedDelivery(recs));
      const rows = await getBroker().query<{ partition: number; base_offset: string; producer_id: string; base_sequence: number }>(
        'SELECT b.partition, b.base_offset::text, b.producer_id::text, b.base_sequence FROM batches b JOIN topics t USING (topic_id) WHERE t.name = $1 ORDER BY 1, 2',
        [topic],
      );
      expect(rows.length).toBeGreaterThan(0);
      expect(new Set(rows.map((r) => r.producer_id)).size).toBe(1);
      expect(Number(rows[0]!.producer_id)).toBeGreaterThanOrEqual(0);
      // One producer on a fresh topic: each batch's first sequence is its base offset.
      for (const r of rows) expect(r.base_sequence).toBe(Number(r.base_offset));
    },
    'transactions: commit and abort': async () => {
      const topic = t('txn');
      const committed = data(`${topic}-c`, { perPartition: 3 });
      const aborted = data(`${topic}-a`, { perPartition: 2 });
      const [, , rc, ru] = await go<[Errors, unknown, Read, Read]>([
        create(topic),
        { op: 'transaction', topic, transactionalId: t('txn-id'), commit: toJson(committed), abort: toJson(aborted) },
        fetch(topic, [0, 1, 2], { readCommitted: true }),
        fetch(topic, [0, 1, 2]),
      ]);
      expectRecords(fromJson(rc.records), committed);
      // read_uncommitted also sees the aborted records, after the commit marker (offset 3).
      const all = fromJson(ru.records);
      expectRecords(
        all.filter((r) => r.offset < 3),
        committed,
      );
      const later = all.filter((r) => r.offset >= 3);
      expect(later.map((r) => [r.partition, r.offset])).toEqual(aborted.map((r, i) => [r.partition, 4 + (i % 2)]));
      expect(later.map((r) => r.value?.toString('hex') ?? null)).toEqual(aborted.map((r) => r.value?.toString('hex') ?? null));
    },
    'transactions: consume-transform-produce': async () => {
      const input = t('ctp-in');
      const output = t('ctp-out');
      const recs = data(input);
      const group = t('g-ctp');
      const [, , , res, out] = await go<[Errors, Errors, Delivered, { transformed: number }, Read]>([
        create(input),
        create(output),
        produce(input, recs),
        { op: 'transform', group, input, output, transactionalId: t('ctp-id'), expect: recs.length },
        fetch(output, [0, 1, 2], { readCommitted: true }),
      ]);
      expect(res.transformed).toBe(recs.length);
      const got = fromJson(out.records);
      expect(got.map((r) => [r.partition, r.key?.toString('hex'), r.value?.toString('hex') ?? null])).toEqual(
        recs.map((r) => [r.partition, r.key?.toString('hex'), Buffer.concat([Buffer.from('t:'), r.value ?? Buffer.alloc(0)]).toString('hex')]),
      );
      // The group's offsets were committed inside the transactions.
      const rows = await getBroker().query<{ partition: number; committed_offset: string }>(
        'SELECT partition, committed_offset::text FROM committed_offsets WHERE group_id = $1 AND topic = $2 ORDER BY partition',
        [group, input],
      );
      expect(rows.map((r) => [r.partition, Number(r.committed_offset)])).toEqual([
        [0, 5],
        [1, 5],
        [2, 5],
      ]);
    },
    'admin: delete group offsets and groups': async () => {
      const topic = t('delgroup');
      const recs = data(topic);
      const group = t('g-del');
      const [, , , res] = await go<[Errors, Delivered, Read, { offsetDelete: number; committedAfter: Record<string, number>; deleteGroup: number; listedAfter: string[]; deleteAgain: number }]>([
        create(topic),
        produce(topic, recs),
        { op: 'group_consume', group, topic, expect: recs.length },
        { op: 'delete_groups', group, topic, partition: 1 },
      ]);
      expect(res.offsetDelete).toBe(0);
      expect(res.committedAfter).toEqual({ 0: 5, 2: 5 });
      expect(res.deleteGroup).toBe(0);
      expect(res.listedAfter).not.toContain(group);
      expect(res.deleteAgain).toBe(69); // GROUP_ID_NOT_FOUND
    },
    'admin: producers and transactions': async () => {
      const topic = t('txn-admin');
      const recs = data(topic, { partitions: 2, perPartition: 2 });
      type Txn = { state: string; producerId: number; timeoutMs: number; partitions: Record<string, number[]> };
      const [, res] = await go<
        [Errors, { producers: Record<string, { producerId: number; lastSequence: number; txnStartOffset: number }[]>; listed: { state: string; producerId: number }; during: Txn; after: Txn }]
      >([create(topic), { op: 'txn_admin', topic, transactionalId: t('txn-admin-id'), records: toJson(recs) }]);
      const pid = res.during.producerId;
      expect(pid).toBeGreaterThanOrEqual(0);
      expect(res.during).toMatchObject({ state: 'Ongoing', partitions: { [topic]: [0, 1] } });
      expect(res.listed).toEqual({ state: 'Ongoing', producerId: pid });
      // Two records in each of partitions 0 and 1, none in 2: the open transaction starts at offset 0.
      expect(res.producers).toEqual({ 0: [{ producerId: pid, lastSequence: 1, txnStartOffset: 0 }], 1: [{ producerId: pid, lastSequence: 1, txnStartOffset: 0 }], 2: [] });
      expect(res.after).toMatchObject({ state: 'CompleteCommit', producerId: pid });
      expect(res.after.partitions).toEqual({}); // a completed transaction has no partitions left
    },
  };
}

export interface GoSecurityOptions {
  /** Prefix of every topic name. */
  tag: string;
  /** The kind of error the client reports for a refused login (its runner's `login` op names it). */
  authError: string;
  /** The dataset the client can send (empty/null values). */
  dataset?: DatasetOptions;
  /** The group id the client's group-less reader still names (librdkafka's consumer has one): `app` gets READ on it. */
  readerGroup?: string;
  env?: NodeJS.ProcessEnv;
}

/**
 * SASL and TLS, shared by the Go test files: a broker with a SASL_SSL
 * listener only, the authorizer on and `admin` its super user. `admin`
 * creates the topics (SASL/PLAIN); `app`, allowed to write and read them by
 * prefixed ACLs, produces and fetches back with SASL/PLAIN and with
 * SCRAM-SHA-512, each over TLS trusting the test CA; a wrong password is
 * refused with the client's own authentication error.
 */
export function goSecurityTests(getBin: () => string, o: GoSecurityOptions): void {
  describe('SASL / TLS', () => {
    let pki: TestPki;
    let broker: TestBroker;
    const t = (name: string) => `${o.tag}-sec-${name}`;
    beforeAll(async () => {
      pki = makeTestPki();
      broker = await startTestBroker({
        listeners: 'SASL_SSL://127.0.0.1:0',
        sslCertFile: pki.serverCert,
        sslKeyFile: pki.serverKey,
        authorizerEnabled: true,
        superUsers: 'User:admin',
        autoCreateTopicsEnable: false,
      });
      await addUser(broker, 'admin', 'admin-secret');
      await broker.context.users.alter([
        { kind: 'upsert', user: 'app', mechanism: 'SCRAM-SHA-256', credential: await credentialFromPassword('SCRAM-SHA-256', 'app-secret', 4096) },
        { kind: 'upsert', user: 'app', mechanism: 'SCRAM-SHA-512', credential: await credentialFromPassword('SCRAM-SHA-512', 'app-secret', 4096) },
      ]);
      await broker.context.authorizer.create(
        [AclOperation.WRITE, AclOperation.READ].map((operation) => ({
          resourceType: ResourceType.TOPIC,
          resourceName: t(''),
          patternType: PatternType.PREFIXED,
          principal: 'User:app',
          host: '*',
          operation,
          permissionType: AclPermission.ALLOW,
        })),
      );
      if (o.readerGroup) {
        await broker.context.authorizer.create([
          {
            resourceType: ResourceType.GROUP,
            resourceName: o.readerGroup,
            patternType: PatternType.LITERAL,
            principal: 'User:app',
            host: '*',
            operation: AclOperation.READ,
            permissionType: AclPermission.ALLOW,
          },
        ]);
      }
    }, 60_000);
    afterAll(async () => {
      await broker?.destroy();
      pki?.remove();
    });

    const go = <T extends unknown[]>(security: GoSecurity, steps: GoStep[]) => runGo(getBin(), `127.0.0.1:${broker.ports.SASL_SSL}`, steps, o.env, 40_000, security) as Promise<T>;
    const sasl = (mechanism: 'PLAIN' | 'SCRAM-SHA-512', username: string, password: string): GoSecurity => ({ protocol: 'SASL_SSL', mechanism, username, password, caFile: pki.caCert });

    for (const mechanism of ['PLAIN', 'SCRAM-SHA-512'] as const) {
      it(`${mechanism} over TLS: produces and fetches back under prefixed ACLs`, async () => {
        const topic = t(mechanism.toLowerCase());
        const recs = dataset(topic, { ...o.dataset, perPartition: 2 });
        const [created] = await go<[Errors]>(sasl('PLAIN', 'admin', 'admin-secret'), [{ op: 'create', topics: [{ name: topic, partitions: 3, configs: {} }] }]);
        expect(created.errors).toEqual([[topic, 0]]);
        const [sent, read] = await go<[Delivered, Read]>(sasl(mechanism, 'app', 'app-secret'), [
          { op: 'produce', topic, codec: 'none', records: toJson(recs) },
          { op: 'fetch', topic, partitions: [0, 1, 2] },
        ]);
        expect(sent.delivered).toEqual(expectedDelivery(recs));
        expectRecords(fromJson(read.records), recs);
      }, 45_000);
    }

    it(`a wrong password is refused: ${o.authError}`, async () => {
      const [res] = await go<[{ error: string; message: string }]>(sasl('SCRAM-SHA-512', 'app', 'wrong'), [{ op: 'login' }]);
      expect(res.error, res.message).toBe(o.authError);
    }, 45_000);
  });
}
