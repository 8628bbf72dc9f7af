// Scenarios 2, 3, 4, 7 and 8 written once over "a group member in a child
// process" (groups_driver.py for confluent-kafka-python and kafka-python,
// kafkajs_child.mjs for kafkajs): each member reports assign / msg / commit
// events as JSON lines, and the test checks them against what the broker says
// through the wire (OffsetFetch, ListOffsets, DescribeGroups), /metrics and
// the `pgkafka groups` CLI.
import { expect } from 'vitest';
import type { TestBroker } from '../../test/support/broker.js';
import {
  cliGroup,
  committed,
  createTopic,
  entries,
  eventually,
  expectCovers,
  highWatermarks,
  metricsLag,
  produceEach,
  requestMetrics,
  tableLag,
  wireLag,
  type Ev,
  type Kit,
  type MemberRequest,
  type Member,
} from './support.js';

export interface MemberEnv {
  broker: () => TestBroker;
  kit: () => Kit;
  /** starts one member of the client under test */
  spawn: (req: MemberRequest) => Member;
  /** a short tag for topic and group names */
  tag: string;
  /** the member's session timeout (the broker minimum is lowered for the suite) */
  sessionMs: number;
}

const isMsg = (e: Ev) => e.ev === 'msg';
const lastOffsets = (p: Member) => {
  const m = new Map<number, number>();
  for (const e of p.msgs()) m.set(e.p, Math.max(m.get(e.p) ?? -1, e.o));
  return m;
};
/** Resolves when the member has seen offset hw-1 of every partition. */
const reachedEnd = (p: Member, hw: Map<number, number>, timeoutMs: number, what: string) =>
  p.waitFor(() => [...hw].every(([part, h]) => h === 0 || (lastOffsets(p).get(part) ?? -1) >= h - 1), timeoutMs, what);

function base(env: MemberEnv, name: string, extra: Partial<MemberRequest> = {}): MemberRequest {
  return { bootstrap: env.broker().bootstrap, topic: `${env.tag}-${name}`, group: `${env.tag}-${name}`, session_ms: env.sessionMs, heartbeat_ms: 500, max_s: 40, ...extra };
}

/** 2: two groups on one topic; the slow one's lag grows while the fast one stays at 0. */
export async function independentGroups(env: MemberEnv) {
  const k = env.kit();
  const topic = `${env.tag}-indep`;
  await createTopic(k, topic, 3);
  await produceEach(k, topic, 3, 10, 'a');
  const fast = env.spawn(base(env, 'indep', { group: `${topic}-fast`, name: 'fast', commit_every: 1 }));
  // The slow group's member processes 3 records and then hangs on the 4th (it stops polling).
  const slow = env.spawn(base(env, 'indep', { group: `${topic}-slow`, name: 'slow', commit_every: 1, stall_after: 3, stall_s: 30, max_poll_ms: 60_000 }));
  try {
    let hw = await highWatermarks(k, topic);
    await reachedEnd(fast, hw, 30_000, 'fast group at the end');
    await slow.waitFor((e) => e.ev === 'stall', 30_000, 'slow member stalled');
    const fastGroup = `${topic}-fast`;
    const slowGroup = `${topic}-slow`;
    await eventually(
      async () =>
        expect(entries(await wireLag(k, fastGroup, topic))).toEqual([
          [0, 0],
          [1, 0],
          [2, 0],
        ]),
      10_000,
    );
    const slowLag1 = await wireLag(k, slowGroup, topic);
    expect([...slowLag1.values()].reduce((a, b) => a + b)).toBe(30 - 3);

    await produceEach(k, topic, 3, 10, 'b');
    hw = await highWatermarks(k, topic);
    expect(entries(hw)).toEqual([
      [0, 20],
      [1, 20],
      [2, 20],
    ]);
    await reachedEnd(fast, hw, 30_000, 'fast group at the new end');
    await eventually(
      async () =>
        expect(entries(await wireLag(k, fastGroup, topic))).toEqual([
          [0, 0],
          [1, 0],
          [2, 0],
        ]),
      10_000,
    );
    const slowLag2 = await wireLag(k, slowGroup, topic);
    expect([...slowLag2.values()].reduce((a, b) => a + b)).toBe(60 - 3);
    for (const [p, l] of slowLag2) expect(l).toBe(slowLag1.get(p)! + 10);
    // The fast group read every record exactly once.
    expect(fast.msgs().length).toBe(60);
    expectCovers(
      fast.msgs().map((m) => `${m.p}:${m.o}`),
      hw,
    );

    // /metrics: the fast group at 0 on every partition; the slow one as OffsetFetch vs ListOffsets says,
    // on the partitions it has committed (Kafka's exporter has no sample for a partition never committed).
    expect(entries(await metricsLag(env.broker(), fastGroup, topic))).toEqual([
      [0, 0],
      [1, 0],
      [2, 0],
    ]);
    const slowCommitted = await committed(k, slowGroup, topic);
    const metricSlow = await metricsLag(env.broker(), slowGroup, topic);
    for (const [p, c] of slowCommitted) if (c >= 0) expect(metricSlow.get(p), `partition ${p}`).toBe(slowLag2.get(p));
    expect(metricSlow.size).toBeGreaterThan(0);
  } finally {
    await Promise.all([fast.stop(), slow.kill()]);
  }
}

/**
 * 3: a member stops polling past max.poll.interval.ms (kafkajs: blocks in eachMessage past its
 * session timeout); a second member gets the partition and receives again the records after the
 * first member's last commit.
 */
export async function maxPollExceeded(env: MemberEnv) {
  const k = env.kit();
  const req = base(env, 'maxpoll', { max_poll_ms: 3000 });
  await createTopic(k, req.topic, 1);
  await produceEach(k, req.topic, 1, 20);
  const a = env.spawn({ ...req, name: 'a', commit_every: 5, stall_after: 8, stall_s: 30 });
  let b: Member | undefined;
  try {
    await a.waitFor((e) => e.ev === 'stall', 20_000, 'member a stalled');
    // a committed after its 5th record, then processed 3 more (a member in this process may report the
    // commit's acknowledgement late: its callback needs a poll): ask the broker.
    await eventually(async () => expect(entries(await committed(k, req.group, req.topic))).toEqual([[0, 5]]), 10_000);
    expect(a.msgs().map((m) => m.o)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    b = env.spawn({ ...req, name: 'b', commit_every: 1 });
    await reachedEnd(b, new Map([[0, 20]]), 30_000, 'member b at the end');
    // b starts at a's last commit: 5, 6 and 7 are delivered a second time (at-least-once), nothing is skipped.
    expect(b.msgs().map((m) => m.o)).toEqual(Array.from({ length: 15 }, (_, i) => 5 + i));
    expect(b.events.find((e) => e.ev === 'assign' && (e.partitions as number[]).length > 0)!.partitions).toEqual([0]);
    // a is no longer a member: the group has exactly b.
    const { groups } = await k.admin.describeGroups([req.group]);
    expect(groups[0]!.state).toBe('Stable');
    expect(groups[0]!.members.map((m) => m.clientId)).toEqual(['b']);
    await eventually(async () => expect(entries(await committed(k, req.group, req.topic))).toEqual([[0, 20]]), 10_000);
  } finally {
    await Promise.all([a.kill(), b?.stop()]);
  }
}

/** 4: commit after processing (every 5 records); SIGKILL mid-batch; the restarted member gets every uncommitted record. */
export async function killMidBatch(env: MemberEnv) {
  const k = env.kit();
  const req = base(env, 'kill', { commit_every: 5, process_ms: 10 });
  await createTopic(k, req.topic, 3);
  await produceEach(k, req.topic, 3, 30);
  const hw = await highWatermarks(k, req.topic);
  const first = env.spawn({ ...req, name: 'first' });
  let second: Member | undefined;
  try {
    await first.waitCount(isMsg, 23, 30_000, '23 records processed');
    await first.kill();
    // What the first member processed, and which of those it committed (the events are in order).
    const { committed: committedByFirst, uncommitted } = first.processedAroundLastCommit();
    expect(committedByFirst.length).toBeGreaterThanOrEqual(20);
    expect(uncommitted.length).toBeGreaterThan(0); // killed mid-batch
    const co = await committed(k, req.group, req.topic);
    const fromCommits = new Map<number, number>();
    for (const e of first.events.filter((x) => x.ev === 'commit')) for (const [p, o] of e.offsets as [number, number][]) fromCommits.set(p, o);
    for (const [p, o] of fromCommits) expect(co.get(p), `committed offset of partition ${p}`).toBe(o);

    second = env.spawn({ ...req, name: 'second' });
    await reachedEnd(second, hw, 30_000, 'restarted member at the end');
    // The restarted member starts at the committed offsets, so it gets every uncommitted record again.
    for (let p = 0; p < 3; p++) {
      const firstOffset = second.msgs().find((m) => m.p === p)?.o;
      expect(firstOffset, `first offset of partition ${p}`).toBe(Math.max(co.get(p)!, 0));
    }
    const secondKeys = new Set(second.msgs().map((m) => `${m.p}:${m.o}`));
    for (const u of uncommitted) expect(secondKeys.has(u), `uncommitted ${u} redelivered`).toBe(true);
    expectCovers([...committedByFirst, ...secondKeys], hw);
  } finally {
    await Promise.all([first.kill(), second?.stop()]);
  }
}

/** 7: seek back to 0 reads the same records again; new groups with earliest read everything, with latest only newer records. */
export async function replay(env: MemberEnv) {
  const k = env.kit();
  const topic = `${env.tag}-replay`;
  await createTopic(k, topic, 2);
  await produceEach(k, topic, 2, 10);
  const hw = await highWatermarks(k, topic);
  const all = [...hw].flatMap(([p, h]) => Array.from({ length: h }, (_, o) => `${p}:${o}`)).sort();

  const seeker = env.spawn(base(env, 'replay', { topic, group: `${topic}-seek`, seek_zero_after: 20, commit_every: 1 }));
  const earliest = env.spawn(base(env, 'replay', { topic, group: `${topic}-earliest`, reset: 'earliest' }));
  const late = Array.from({ length: 6 }, (_, i) => [`late-${i}`, `late-value-${i}`] as [string, string]);
  let latest: Member | undefined;
  try {
    await seeker.waitCount(isMsg, 40, 30_000, 'seeker read everything twice');
    const seen = seeker.msgs().map((m) => `${m.p}:${m.o}`);
    expect(seen.slice(0, 20).sort()).toEqual(all);
    expect(seen.slice(20, 40).sort()).toEqual(all);
    expect(seeker.events.some((e) => e.ev === 'seeked')).toBe(true);

    await earliest.waitCount(isMsg, 20, 30_000, 'earliest group read everything');
    expect(
      earliest
        .msgs()
        .map((m) => `${m.p}:${m.o}`)
        .sort(),
    ).toEqual(all);

    // latest: the member produces 6 records once its positions are known; it must read exactly those.
    latest = env.spawn(base(env, 'replay', { topic, group: `${topic}-latest`, reset: 'latest', produce_when_ready: late }));
    await latest.waitFor((e) => e.ev === 'produced', 30_000, 'latest member produced');
    await latest.waitCount(isMsg, 6, 20_000, 'latest group read the new records');
    await new Promise((r) => setTimeout(r, 1000));
    expect(
      latest
        .msgs()
        .map((m) => m.k)
        .sort(),
    ).toEqual(late.map(([kk]) => kk).sort());
    // The earliest group got nothing twice, and sees the new records too.
    await earliest.waitCount(isMsg, 26, 20_000, 'earliest group read the new records');
    expect(new Set(earliest.msgs().map((m) => `${m.p}:${m.o}`)).size).toBe(earliest.msgs().length);
  } finally {
    await Promise.all([seeker.stop(), earliest.stop(), latest?.stop()]);
  }
}

/** 8: a group that is behind: CLI (JSON and table) and /metrics agree with OffsetFetch + ListOffsets. */
export async function lagViews(env: MemberEnv) {
  const k = env.kit();
  const req = base(env, 'lag', { commit_every: 1, stall_after: 30, stall_s: 30, max_poll_ms: 60_000 });
  await createTopic(k, req.topic, 3);
  await produceEach(k, req.topic, 3, 10);
  const m = env.spawn(req);
  try {
    await m.waitFor((e) => e.ev === 'stall', 30_000, 'member read everything');
    await eventually(
      async () =>
        expect(entries(await committed(k, req.group, req.topic))).toEqual([
          [0, 10],
          [1, 10],
          [2, 10],
        ]),
      10_000,
    );
    // Now the group falls behind by 5, 10 and 15 records.
    const before = await requestMetrics(env.broker());
    for (let p = 0; p < 3; p++) {
      await k.producer.send({ topic: req.topic, acks: -1, messages: Array.from({ length: 5 * (p + 1) }, (_, i) => ({ partition: p, key: `more-${p}-${i}`, value: 'x' })) });
    }
    // The request and commit histograms saw those sends, and the member's own client's requests.
    const after = await requestMetrics(env.broker());
    expect(after.requests.get('Produce')! - (before.requests.get('Produce') ?? 0)).toBeGreaterThanOrEqual(3);
    expect(after.commits - before.commits).toBeGreaterThanOrEqual(3);
    for (const api of ['JoinGroup', 'SyncGroup', 'Fetch', 'OffsetCommit']) expect(after.requests.get(api), api).toBeGreaterThan(0);
    const wire = await wireLag(k, req.group, req.topic);
    expect(entries(wire)).toEqual([
      [0, 5],
      [1, 10],
      [2, 15],
    ]);
    const hw = await highWatermarks(k, req.topic);
    const cli = await cliGroup(env.broker(), req.group);
    expect(cli.partitions.filter((r) => r.topic === req.topic).map((r) => [r.partition, r.currentOffset, r.logEndOffset, r.lag])).toEqual([0, 1, 2].map((p) => [p, 10, hw.get(p), wire.get(p)]));
    expect(entries(tableLag(cli.table, req.topic))).toEqual(entries(wire));
    expect(entries(await metricsLag(env.broker(), req.group, req.topic))).toEqual(entries(wire));
  } finally {
    await m.kill();
  }
}
