// Exactly-once consume-transform-produce: a librdkafka worker
// (compat/python/eos_worker.py) reads eos-in read_committed in group
// eos-group and, per batch, produces "out-<value>" to eos-out and sends its
// consumer offsets inside one transaction. The worker is killed (SIGKILL) at
// random moments 20 times and restarted with the same transactional.id
// (fencing its predecessor and aborting its open transaction) and the same
// static group.instance.id; a last worker runs to the end. Afterwards a
// read_committed read of eos-out holds every "out-i" exactly once, the group's
// committed offsets are the log-end offsets of eos-in, and a read_uncommitted
// read shows the aborted duplicates the kills left behind.
//
// EOS_SEED=<n> replays a run (the kill times and the worker's sleeps derive
// from it); EOS_DEBUG=1 prints every worker's phase lines; EOS_WORKER_DEBUG=
// <librdkafka debug contexts> turns on client debug logs (printed for the
// final worker with EOS_DEBUG=1).
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../test/support/broker.js';
import { kcatConsume } from './support/kcat.js';
import { PYTHON } from './support/spawn.js';
import { mulberry32 } from '../test/protocol/messages/spec.js';

const N = 600;
const KILLS = 20;
const IN = 'eos-in';
const OUT = 'eos-out';
const GROUP = 'eos-group';
const TXN_ID = 'eos-worker';
const SCRIPT = fileURLToPath(new URL('./python/eos_worker.py', import.meta.url));

let broker: TestBroker;
const live = new Set<ChildProcess>();
beforeAll(async () => {
  broker = await startTestBroker({ groupMinSessionTimeoutMs: 1000, groupInitialRebalanceDelayMs: 0 });
});
afterAll(async () => {
  for (const child of live) child.kill('SIGKILL');
  await broker?.destroy();
});

interface Worker {
  child: ChildProcess;
  /** Phase lines seen so far: "<name> <ms> [detail]". */
  phases: string[];
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function startWorker(seed: number): Worker {
  const child = spawn(PYTHON, [SCRIPT, broker.bootstrap, IN, OUT, GROUP, TXN_ID, String(seed), '3'], { stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child);
  const phases: string[] = [];
  let partial = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => {
    const lines = (partial + d.toString('utf8')).split('\n');
    partial = lines.pop()!;
    for (const l of lines) if (l.startsWith('PHASE ')) phases.push(l.slice(6));
  });
  child.stderr!.on('data', (d: Buffer) => (err += d.toString('utf8')));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => {
      live.delete(child);
      resolve({ code, signal });
    }),
  );
  return { child, phases, stderr: () => err, exited };
}

const phaseName = (line: string | undefined) => line?.split(' ')[0] ?? 'none';

describe('exactly-once consume-transform-produce (librdkafka)', () => {
  it(`a worker killed ${KILLS} times at random moments: every output exactly once, offsets at the end`, { timeout: 150_000 }, async () => {
    const kafka = new Kafka({ brokers: [broker.bootstrap], logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    await admin.connect();
    try {
      await admin.createTopics({
        topics: [
          { topic: IN, numPartitions: 3 },
          { topic: OUT, numPartitions: 3 },
        ],
      });
      const producer = kafka.producer();
      await producer.connect();
      await producer.send({ topic: IN, acks: -1, messages: Array.from({ length: N }, (_, i) => ({ key: `k${i}`, value: String(i) })) });
      await producer.disconnect();

      const seed = Number(process.env.EOS_SEED ?? 20240601);
      const random = mulberry32(seed);
      // Where each kill landed: the last phase the worker had reported.
      const landed: string[] = [];
      // Transactions each killed worker committed before it died.
      const progress: number[] = [];
      /** Killed workers that had finished InitProducerId (under load a kill can land before a worker sends it). */
      let initialized = 0;
      for (let k = 0; k < KILLS; k++) {
        const worker = startWorker(seed + k);
        const delay = 150 + Math.floor(random() * 750);
        const early = await Promise.race([worker.exited, new Promise<null>((r) => setTimeout(() => r(null), delay))]);
        if (early) throw new Error(`worker ${k} exited by itself (${early.code ?? early.signal}) before its kill\n${worker.stderr().slice(-3000)}`);
        worker.child.kill('SIGKILL');
        await worker.exited;
        landed.push(phaseName(worker.phases.at(-1)));
        progress.push(worker.phases.filter((p) => p.startsWith('committed ')).length);
        if (worker.phases.some((p) => phaseName(p) === 'init')) initialized++;
        if (process.env.EOS_DEBUG) console.log(`worker ${k} killed at ${delay} ms:\n${worker.phases.join('\n')}`);
      }

      const last = startWorker(seed + KILLS);
      const finished = await Promise.race([last.exited, new Promise<null>((r) => setTimeout(() => r(null), 60_000))]);
      if (!finished || finished.code !== 0) {
        last.child.kill('SIGKILL');
        throw new Error(`final worker ${finished ? `exited with ${finished.code ?? finished.signal}` : 'did not finish in 60 s'}\n${last.stderr().slice(-3000)}\n${last.phases.slice(-20).join('\n')}`);
      }

      if (process.env.EOS_DEBUG) console.log(`final worker:\n${last.phases.join('\n')}\n${last.stderr()}`);
      const counts = new Map<string, number>();
      for (const p of landed) counts.set(p, (counts.get(p) ?? 0) + 1);
      const open = landed.filter((p) => p === 'begin' || p === 'produced' || p === 'offsets' || p === 'committing').length;
      console.log(
        `eos: seed ${seed}; kills landed after phase: ${JSON.stringify(Object.fromEntries(counts))}; between begin and commit: ${open}/${KILLS}; ` +
          `transactions committed per killed worker: ${progress.join(',')}; final worker: ${last.phases.find((p) => p.startsWith('done ')) ?? '?'}`,
      );

      // read_committed: every "out-i" exactly once.
      const committed = await kcatConsume(broker.bootstrap, OUT, { extra: ['-X', 'isolation.level=read_committed'] });
      const values = committed.map((r) => r.value!.toString());
      const seen = new Map<string, number>();
      for (const v of values) seen.set(v, (seen.get(v) ?? 0) + 1);
      const missing = Array.from({ length: N }, (_, i) => `out-${i}`).filter((v) => !seen.has(v));
      const duplicated = [...seen].filter(([, n]) => n > 1).map(([v]) => v);
      expect({ missing, duplicated, total: values.length }).toEqual({ missing: [], duplicated: [], total: N });
      // Keys travel with their values.
      for (const r of committed) expect(r.key!.toString()).toBe(`k${r.value!.toString().slice(4)}`);

      // The group's committed offsets are the log-end offsets of eos-in.
      const ends = await admin.fetchTopicOffsets(IN);
      const groupOffsets = await admin.fetchOffsets({ groupId: GROUP, topics: [IN] });
      const byPartition = (ps: { partition: number; offset: string }[]) => Object.fromEntries(ps.map((p) => [p.partition, p.offset]));
      expect(byPartition(groupOffsets[0]!.partitions)).toEqual(byPartition(ends.map((e) => ({ partition: e.partition, offset: e.high }))));

      // read_uncommitted: the kills left aborted duplicates behind.
      const everything = await kcatConsume(broker.bootstrap, OUT, { extra: ['-X', 'isolation.level=read_uncommitted'] });
      const aborted = everything.length - values.length;
      console.log(`eos: eos-out holds ${everything.length} records, ${aborted} of them aborted`);
      expect(aborted).toBeGreaterThan(0);
      expect(new Set(everything.map((r) => r.value!.toString())).size).toBe(N);

      // What the broker stored: the last transaction committed, none left open,
      // one aborted-transaction entry per partition an aborted transaction wrote to.
      const [txn] = await broker.query<{ state: string; producer_epoch: number }>(`SELECT state, producer_epoch FROM transactions WHERE transactional_id = $1`, [TXN_ID]);
      expect(txn).toMatchObject({ state: 'CompleteCommit' });
      // Each InitProducerId after the first bumps the epoch: those of the killed workers that got that far, then the final one's.
      expect(txn!.producer_epoch).toBeGreaterThanOrEqual(initialized);
      expect(await broker.query(`SELECT 1 FROM open_txns`)).toEqual([]);
      const [abortedTxns] = await broker.query<{ n: string }>(`SELECT count(*) AS n FROM aborted_txns a JOIN topics t USING (topic_id) WHERE t.name = $1`, [OUT]);
      console.log(`eos: ${abortedTxns!.n} aborted-transaction entries on ${OUT}; producer epoch ${txn!.producer_epoch}`);
    } finally {
      await admin.disconnect();
    }
  });
});
