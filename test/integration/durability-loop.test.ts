// A broker child process under acks=all production from several idempotent
// producers (one record per request), SIGKILLed at random moments 20 times and
// restarted, plus one PostgreSQL-side disruption (its backends terminated)
// from which it must recover by itself. Afterwards every acknowledged offset
// holds its value, offsets are dense, and no record is stored twice.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { ErrorCode, isRetriable } from '../../src/protocol/errors.js';
import { CreateTopicsApi, InitProducerIdApi } from '../../src/protocol/messages/index.js';
import { scratchSchema, testDatabaseUrl } from '../support/broker.js';
import { freePort, spawnBroker, type BrokerProcess } from '../support/broker-process.js';
import { compareWithLog, produceIdempotent, readLog } from '../support/durability.js';
import { RawClient } from '../support/raw-client.js';
import { mulberry32 } from '../protocol/messages/spec.js';

const KILLS = 20;
const WRITERS = 4;
const TOPIC = 'loop';
const SEED = Number(process.env.DURABILITY_SEED ?? Math.floor(Math.random() * 2 ** 31));

const schema = scratchSchema();

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Local ports of the process's TCP connections to port dbPort (Linux /proc),
 * so only this broker's PostgreSQL backends are terminated, never those of
 * other test files' brokers sharing the database.
 */
function clientPortsOf(pid: number, dbPort: number): number[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]!);
    } catch {
      /* closed meanwhile */
    }
  }
  const ports: number[] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10) continue;
      const local = parseInt(f[1]!.split(':')[1]!, 16);
      const remote = parseInt(f[2]!.split(':')[1]!, 16);
      if (remote === dbPort && inodes.has(f[9]!)) ports.push(local);
    }
  }
  return ports;
}

describe('durability loop', () => {
  it(`loses nothing acknowledged and duplicates nothing across ${KILLS} SIGKILLs and a PostgreSQL disruption (DURABILITY_SEED=${SEED})`, { timeout: 240_000 }, async () => {
    const rnd = mulberry32(SEED);
    const port = await freePort();
    const bootstrap = `127.0.0.1:${port}`;
    const databaseUrl = testDatabaseUrl();
    const dbPort = Number(new URL(databaseUrl).port || 5432);
    const env = { DATABASE_URL: databaseUrl, PGKAFKA_SCHEMA: schema, PGKAFKA_PORT: String(port) };
    const started = Date.now();

    let broker: BrokerProcess = await spawnBroker(env);
    {
      const admin = await RawClient.connect(bootstrap);
      const created = await admin.request(CreateTopicsApi, 7, { topics: [{ name: TOPIC, numPartitions: 1, replicationFactor: 1 }], timeoutMs: 5000 });
      expect(created.topics[0]!.errorCode).toBe(0);
      admin.close();
    }

    const acknowledged = new Map<bigint, string>(); // offset -> value
    const ackedValues = new Set<string>();
    const errors: Record<string, number> = {};
    const nonRetriable: string[] = [];
    let phase: 'kills' | 'disruption' = 'kills';
    const count = (kind: string) => (errors[`${phase}: ${kind}`] = (errors[`${phase}: ${kind}`] ?? 0) + 1);
    let stop = false;
    let acksSinceMark = 0;

    const writer = async (w: number) => {
      let client: RawClient | null = null;
      let producerId = -1n;
      let producerEpoch = -1;
      let sequence = 0;
      while (!stop) {
        try {
          if (!client || client.closed) {
            client?.close();
            client = null;
            client = await RawClient.connect(bootstrap);
          }
          if (producerId < 0n) {
            const init = await client.request(InitProducerIdApi, 4, { transactionalId: null, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
            if (init.errorCode !== 0) {
              count(`InitProducerId error ${init.errorCode}`);
              if (!isRetriable(init.errorCode)) nonRetriable.push(`InitProducerId error ${init.errorCode}`);
              await sleep(20);
              continue;
            }
            producerId = init.producerId;
            producerEpoch = init.producerEpoch;
          }
          // The unacknowledged batch is retried with the same sequence (and value) until it is acknowledged.
          const value = `w${w}-p${producerId}-s${sequence}`;
          const p = await produceIdempotent(client, TOPIC, producerId, producerEpoch, sequence, value);
          if (p.errorCode === ErrorCode.NONE) {
            acknowledged.set(p.baseOffset, value);
            ackedValues.add(value);
            acksSinceMark++;
            sequence++;
          } else if (p.errorCode === ErrorCode.DUPLICATE_SEQUENCE_NUMBER) {
            // Already stored by an earlier attempt: acknowledged, offset unknown (checked by value below).
            count('DUPLICATE_SEQUENCE_NUMBER');
            ackedValues.add(value);
            sequence++;
          } else {
            count(`Produce error ${p.errorCode}`);
            if (!isRetriable(p.errorCode)) nonRetriable.push(`Produce error ${p.errorCode} for ${value}`);
            await sleep(20);
          }
        } catch (err) {
          // Connection refused (broker down) or closed mid-request: retried after reconnecting.
          const msg = (err as Error).message;
          count(/ECONNREFUSED/.test(msg) ? 'connection refused' : /closed/.test(msg) ? 'connection closed' : `other: ${msg}`);
          client?.close();
          client = null;
          await sleep(25);
        }
      }
      client?.close();
    };

    const writers = Array.from({ length: WRITERS }, (_, w) => writer(w));
    const disruptionAt = Math.floor(KILLS / 2);
    let recoveredIn = -1;
    let listenBack = false;
    let terminated = 0;
    try {
      for (let k = 0; k < KILLS; k++) {
        await sleep(150 + rnd() * 450);
        if (k === disruptionAt) {
          // Under load, terminate this broker's PostgreSQL backends (pool and LISTEN) without restarting anything.
          phase = 'disruption';
          const ports = clientPortsOf(broker.child.pid!, dbPort);
          expect(ports.length).toBeGreaterThan(0);
          const admin = new pg.Client({ connectionString: databaseUrl });
          await admin.connect();
          try {
            const res = await admin.query(
              `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                WHERE application_name LIKE 'pgkafka%' AND datname = current_database() AND pid <> pg_backend_pid() AND client_port = ANY($1::int[])`,
              [ports],
            );
            terminated = res.rowCount ?? 0;
            expect(terminated).toBeGreaterThan(0);
            const t0 = Date.now();
            acksSinceMark = 0;
            while (acksSinceMark < 20 && Date.now() - t0 < 15_000) await sleep(10);
            recoveredIn = Date.now() - t0;
            expect(acksSinceMark).toBeGreaterThanOrEqual(20);
            // The LISTEN connection is back.
            while (!listenBack && Date.now() - t0 < 15_000) {
              const now = clientPortsOf(broker.child.pid!, dbPort);
              const listen = await admin.query(`SELECT 1 FROM pg_stat_activity WHERE application_name = 'pgkafka-listen' AND datname = current_database() AND client_port = ANY($1::int[])`, [now]);
              listenBack = listen.rows.length > 0;
              if (!listenBack) await sleep(100);
            }
            expect(listenBack).toBe(true);
            expect(broker.child.exitCode).toBeNull();
          } finally {
            await admin.end();
          }
          phase = 'kills';
          await sleep(100 + rnd() * 300);
        }
        broker.child.kill('SIGKILL');
        await broker.exited;
        await sleep(rnd() * 100);
        broker = await spawnBroker(env);
      }
      await sleep(500);
    } finally {
      stop = true;
      await Promise.all(writers);
    }

    const stored = await readLog(bootstrap, TOPIC);
    broker.child.kill('SIGTERM');
    await broker.exited;

    const { lost, lostValues, duplicates } = compareWithLog(stored, acknowledged, ackedValues);
    process.stdout.write(
      `durability loop (DURABILITY_SEED=${SEED}): ${KILLS} SIGKILLs, ${terminated} PostgreSQL backends terminated (recovered in ${recoveredIn} ms, LISTEN back: ${listenBack}), ` +
        `${acknowledged.size} acknowledged, ${stored.length} stored, lost ${lost.length + lostValues.length}, duplicates ${duplicates.length}, ` +
        `${((Date.now() - started) / 1000).toFixed(1)} s\nerrors seen: ${JSON.stringify(errors)}\n`,
    );
    expect(acknowledged.size).toBeGreaterThan(100);
    expect(lost).toEqual([]);
    expect(lostValues).toEqual([]);
    expect(duplicates).toEqual([]);
    expect(nonRetriable).toEqual([]);
    // Offsets are dense from 0.
    expect(stored.map((r) => r.offset)).toEqual(stored.map((_, i) => BigInt(i)));
  });
});
