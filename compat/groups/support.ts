// Helpers of the consumer-group suite: child processes that report JSON lines
// while they run (so a test can follow a member and SIGKILL it mid-batch), a
// kafkajs admin/producer for setup and for the group's view through the wire
// (OffsetFetch, ListOffsets, DescribeGroups), the /metrics gauges and the
// `pgkafka groups` CLI.
import { spawn, type ChildProcess } from 'node:child_process';
import { PassThrough } from 'node:stream';
import { Kafka, logLevel, type Admin, type Producer } from 'kafkajs';
import { expect } from 'vitest';
import { runGroupsCommand } from '../../src/cli/groups.js';
import type { TestBroker } from '../../test/support/broker.js';
import { PYTHON, runOk } from '../support/spawn.js';
import { VENV_PYTHON } from '../support/python.js';
import { javaArgs } from '../support/java.js';

export type Ev = { ev: string } & Record<string, unknown>;

/** What a group member reports, in order; waits on it are bounded. */
export class EventLog {
  readonly events: Ev[] = [];
  stderr = '';
  protected done = false;
  private listeners: (() => void)[] = [];

  push(ev: Ev) {
    this.events.push(ev);
    this.notify();
  }

  protected notify() {
    for (const l of this.listeners.splice(0)) l();
  }

  /**
   * Resolves with the first event matching `pred` (looking at those seen already too); fails after timeoutMs or when the member ends first.
   * `pred` is checked again only when this member reports: a condition over several members is a case for `eventually`.
   */
  async waitFor(pred: (e: Ev) => boolean, timeoutMs: number, what: string): Promise<Ev> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const hit = this.events.find(pred);
      if (hit) return hit;
      if (this.done) throw new Error(`member ended before ${what}\n${this.tail()}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out (${timeoutMs} ms) waiting for ${what}\n${this.tail()}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.listeners.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  /** Resolves with the n-th event matching `pred`. */
  async waitCount(pred: (e: Ev) => boolean, n: number, timeoutMs: number, what: string): Promise<Ev> {
    await this.waitFor(() => this.events.filter(pred).length >= n, timeoutMs, `${what} (${n} events)`);
    return this.events.filter(pred)[n - 1]!;
  }

  msgs(): { p: number; o: number; k: string | null }[] {
    return this.events.filter((e) => e.ev === 'msg') as never;
  }

  /** The records processed (as "partition:offset") up to this member's last commit event, and those processed after it. */
  processedAroundLastCommit(): { committed: string[]; uncommitted: string[] } {
    const lastCommit = this.events.map((e) => e.ev).lastIndexOf('commit');
    const keys = (evs: Ev[]) => evs.filter((e) => e.ev === 'msg').map((e) => `${e.p as number}:${e.o as number}`);
    return { committed: keys(this.events.slice(0, lastCommit + 1)), uncommitted: keys(this.events.slice(lastCommit + 1)) };
  }

  tail() {
    return `--- events ---\n${this.events
      .slice(-15)
      .map((e) => JSON.stringify(e))
      .join('\n')}\n--- stderr ---\n${this.stderr.slice(-3000)}`;
  }
}

/** A group member: a child process (Proc) or one in this process. */
export interface Member extends EventLog {
  /** closes the member cleanly */
  stop(): Promise<unknown>;
  /** ends it without a goodbye (SIGKILL for a process) */
  kill(): Promise<unknown>;
}

/** A child process whose stdout is JSON lines (events); killed with SIGKILL after hardTimeoutMs whatever happens. */
export class Proc extends EventLog implements Member {
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly child: ChildProcess;
  private buf = '';
  private raw = '';

  /** stdout as text (for a client whose output is not JSON lines). */
  stdoutText() {
    return this.raw;
  }

  constructor(cmd: string, args: string[], hardTimeoutMs = 40_000, env: NodeJS.ProcessEnv = {}) {
    super();
    this.child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    const timer = setTimeout(() => this.child.kill('SIGKILL'), hardTimeoutMs);
    this.child.stdin!.on('error', () => {});
    this.child.stdout!.on('data', (d: Buffer) => {
      this.buf += d.toString('utf8');
      this.raw += d.toString('utf8');
      let nl;
      while ((nl = this.buf.indexOf('\n')) >= 0) {
        const line = this.buf.slice(0, nl);
        this.buf = this.buf.slice(nl + 1);
        if (line.trim() === '') continue;
        try {
          this.events.push(JSON.parse(line) as Ev);
        } catch {
          // not an event line
        }
      }
      this.notify();
    });
    this.child.stderr!.on('data', (d: Buffer) => {
      this.stderr += d.toString('utf8');
      this.notify();
    });
    this.exited = new Promise((resolve) =>
      this.child.on('close', (code, signal) => {
        clearTimeout(timer);
        this.done = true;
        this.notify();
        resolve({ code, signal });
      }),
    );
  }

  send(line: string) {
    this.child.stdin!.write(`${line}\n`);
  }

  /** Asks for a clean stop ("stop" on stdin) and waits for the exit (SIGKILL after graceMs). */
  async stop(graceMs = 15_000) {
    if (this.done) return this.exited;
    this.send('stop');
    const t = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    const r = await this.exited;
    clearTimeout(t);
    return r;
  }

  kill() {
    this.child.kill('SIGKILL');
    return this.exited;
  }
}

const DRIVER = new URL('./groups_driver.py', import.meta.url).pathname;
const KAFKAJS_CHILD = new URL('./kafkajs_child.mjs', import.meta.url).pathname;

export type PyClient = 'confluent' | 'kafka-python';

export interface MemberRequest {
  client?: PyClient;
  bootstrap: string;
  topic: string;
  group: string;
  name?: string;
  reset?: 'earliest' | 'latest';
  session_ms?: number;
  heartbeat_ms?: number;
  max_poll_ms?: number;
  instance_id?: string;
  strategy?: string;
  /** 'consumer': KIP-848 (group.protocol=consumer; the client must be librdkafka 2.12+, the PyPI venv's). */
  group_protocol?: 'consumer';
  /** assign, revoke and msg events carry their wall-clock time (t, seconds) */
  stamp?: boolean;
  commit_every?: number;
  stall_after?: number;
  stall_s?: number;
  seek_zero_after?: number;
  process_ms?: number;
  max_s?: number;
  produce_when_ready?: [string, string][];
}

/** One Python group member (groups_driver.py consume). */
export const pyMember = (req: MemberRequest, hardTimeoutMs = 45_000) => new Proc(PYTHON, [DRIVER, 'consume', JSON.stringify(req)], hardTimeoutMs);

/** One KIP-848 member: groups_driver.py under the PyPI venv's confluent-kafka (librdkafka 2.12+), group.protocol=consumer. */
export const pyConsumerProtocolMember = (req: MemberRequest, hardTimeoutMs = 45_000) =>
  new Proc(VENV_PYTHON, [DRIVER, 'consume', JSON.stringify({ ...req, client: 'confluent', group_protocol: 'consumer' })], hardTimeoutMs);

/** The same client with the classic protocol (librdkafka's default range assignor), to compare with. */
export const pyVenvClassicMember = (req: MemberRequest, hardTimeoutMs = 45_000) => new Proc(VENV_PYTHON, [DRIVER, 'consume', JSON.stringify({ ...req, client: 'confluent' })], hardTimeoutMs);

/** One kafkajs group member in a child Node.js process (kafkajs_child.mjs), same events as the Python driver. */
export const kjsMember = (req: MemberRequest, hardTimeoutMs = 45_000) => new Proc(process.execPath, [KAFKAJS_CHILD, JSON.stringify(req)], hardTimeoutMs);

/** One Java client member (kafka-clients, compat/java/client's GroupMember) in a JVM of its own, group.protocol=consumer: the same events. */
export const javaConsumerProtocolMember = (req: MemberRequest, hardTimeoutMs = 45_000) =>
  new Proc('java', javaArgs('dev.pgkafka.compat.GroupMember', JSON.stringify({ ...req, group_protocol: 'consumer' })), hardTimeoutMs);

export interface MembersAnswer {
  stable: boolean;
  current: (number[] | null)[];
  assigns: number[][][];
  consumed: [number, number, number, string][];
  errors: string[];
}

/** n Python members in threads of one process (groups_driver.py members). */
export async function pyMembers(req: MemberRequest & { n: number; partitions: number; records: number }, timeoutMs = 90_000): Promise<MembersAnswer> {
  const r = await runOk(PYTHON, [DRIVER, 'members', JSON.stringify(req)], { timeoutMs });
  return JSON.parse(r.stdout.toString('utf8')) as MembersAnswer;
}

// ---------------------------------------------------------------- kafkajs admin / producer

export interface Kit {
  kafka: Kafka;
  admin: Admin;
  producer: Producer;
  close(): Promise<void>;
}

export async function kit(broker: TestBroker, clientId = 'groups-kit'): Promise<Kit> {
  const kafka = new Kafka({ clientId, brokers: [broker.bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 3 } });
  const admin = kafka.admin();
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await Promise.all([admin.connect(), producer.connect()]);
  return {
    kafka,
    admin,
    producer,
    async close() {
      await Promise.allSettled([admin.disconnect(), producer.disconnect()]);
    },
  };
}

export async function createTopic(k: Kit, topic: string, numPartitions: number) {
  expect(await k.admin.createTopics({ topics: [{ topic, numPartitions }], waitForLeaders: true })).toBe(true);
}

/** Produces `perPartition` records to every partition (explicit partitions); keys `p<p>-<i>`. */
export async function produceEach(k: Kit, topic: string, partitions: number, perPartition: number, tag = 'r') {
  const messages = [];
  for (let p = 0; p < partitions; p++) for (let i = 0; i < perPartition; i++) messages.push({ partition: p, key: `${tag}-${p}-${i}`, value: `${tag}-value-${p}-${i}` });
  await k.producer.send({ topic, acks: -1, messages });
}

/** High watermark per partition (ListOffsets latest). */
export async function highWatermarks(k: Kit, topic: string): Promise<Map<number, number>> {
  const res = await k.admin.fetchTopicOffsets(topic);
  return new Map(res.map((r) => [r.partition, Number(r.high)]));
}

/** Committed offsets per partition (OffsetFetch); -1 when none. */
export async function committed(k: Kit, group: string, topic: string): Promise<Map<number, number>> {
  const [res] = await k.admin.fetchOffsets({ groupId: group, topics: [topic] });
  return new Map(res!.partitions.map((p) => [p.partition, Number(p.offset)]));
}

/** Lag per partition from OffsetFetch + ListOffsets, as kafka-consumer-groups computes it. */
export async function wireLag(k: Kit, group: string, topic: string): Promise<Map<number, number>> {
  const [hw, co] = await Promise.all([highWatermarks(k, topic), committed(k, group, topic)]);
  return new Map([...hw].map(([p, h]) => [p, co.get(p)! < 0 ? h : h - co.get(p)!]));
}

/** The generation the coordinator last persisted for a group. */
export async function generation(broker: TestBroker, group: string): Promise<number> {
  const [row] = await broker.query<{ generation: number }>(`SELECT generation FROM groups WHERE group_id = $1`, [group]);
  return row?.generation ?? -1;
}

/** Polls `check` until it returns without throwing (or fails with its last error after timeoutMs). */
export async function eventually<T>(check: () => Promise<T> | T, timeoutMs: number, everyMs = 200): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (e) {
      if (Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, everyMs));
    }
  }
}

// ---------------------------------------------------------------- /metrics and the CLI

/** kafka_consumergroup_lag samples of one group: partition → lag. */
export async function metricsLag(broker: TestBroker, group: string, topic: string): Promise<Map<number, number>> {
  const res = await fetch(`http://127.0.0.1:${broker.metricsPort}/metrics`);
  expect(res.status).toBe(200);
  const text = await res.text();
  const out = new Map<number, number>();
  const re = /^kafka_consumergroup_lag\{([^}]*)\} (\S+)$/gm;
  for (const m of text.matchAll(re)) {
    const labels = Object.fromEntries([...m[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (labels.consumergroup === group && labels.topic === topic) out.set(Number(labels.partition), Number(m[2]));
  }
  return out;
}

/** The broker's request histogram counts per API and its append-commit count (cumulative since it started). */
export async function requestMetrics(broker: TestBroker): Promise<{ requests: Map<string, number>; commits: number }> {
  const res = await fetch(`http://127.0.0.1:${broker.metricsPort}/metrics`);
  expect(res.status).toBe(200);
  const text = await res.text();
  const requests = new Map<string, number>();
  for (const m of text.matchAll(/^pgkafka_request_duration_seconds_count\{api="([^"]+)"\} (\S+)$/gm)) requests.set(m[1]!, Number(m[2]));
  const commits = Number(/^pgkafka_produce_commit_duration_seconds_count (\S+)$/m.exec(text)?.[1] ?? NaN);
  return { requests, commits };
}

export interface CliPartition {
  topic: string;
  partition: number;
  currentOffset: number | null;
  logEndOffset: number | null;
  lag: number | null;
  consumerId: string | null;
}

/** `pgkafka groups --group g --json` against the broker's schema; also returns the table output. */
export async function cliGroup(broker: TestBroker, group: string): Promise<{ state: string; members: number; partitions: CliPartition[]; table: string }> {
  const env = { DATABASE_URL: broker.databaseUrl, PGKAFKA_SCHEMA: broker.schema };
  const capture = async (args: string[]) => {
    const out = new PassThrough();
    const err = new PassThrough();
    const chunks: Buffer[] = [];
    const errs: Buffer[] = [];
    out.on('data', (d: Buffer) => chunks.push(d));
    err.on('data', (d: Buffer) => errs.push(d));
    const code = await runGroupsCommand(args, env, out, err);
    expect(code, Buffer.concat(errs).toString()).toBe(0);
    return Buffer.concat(chunks).toString('utf8');
  };
  const json = JSON.parse(await capture(['--group', group, '--json'])) as { group: string; state: string; members: number; partitions: CliPartition[] }[];
  const table = await capture(['--group', group]);
  expect(json).toHaveLength(1);
  return { ...json[0]!, table };
}

/** Lag per partition of one topic from the CLI's table output (LAG column). */
export function tableLag(table: string, topic: string): Map<number, number> {
  const lines = table.split('\n').filter((l) => l.trim() !== '');
  const header = lines.findIndex((l) => l.startsWith('GROUP '));
  const cols = lines[header]!.split(/\s+/);
  const out = new Map<number, number>();
  for (const l of lines.slice(header + 1)) {
    const cells = l.split(/\s+/);
    if (cells[cols.indexOf('TOPIC')] !== topic) continue;
    out.set(Number(cells[cols.indexOf('PARTITION')]), Number(cells[cols.indexOf('LAG')]));
  }
  return out;
}

/** Every offset 0..hw-1 of every partition appears in `seen` ("p:o" strings). */
export function expectCovers(seen: Iterable<string>, hw: Map<number, number>) {
  const set = new Set(seen);
  const missing: string[] = [];
  for (const [p, h] of hw) for (let o = 0; o < h; o++) if (!set.has(`${p}:${o}`)) missing.push(`${p}:${o}`);
  expect(missing).toEqual([]);
}

export const sorted = <T>(xs: Iterable<T>) => [...xs].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
export const entries = (m: Map<number, number>) => [...m].sort((a, b) => a[0] - b[0]);
