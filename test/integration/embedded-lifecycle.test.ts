// The embedded PostgreSQL never strands anyone: it goes when its broker goes
// (SIGKILL, a parent's SIGTERM), a server left behind is stopped at the next
// start, a second broker on the same data directory is refused by name, two
// brokers pick their own ports, and a broker's SIGTERM drains its requests
// before its database stops.
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { errorName } from '../../src/protocol/errors.js';
import { ProduceApi } from '../../src/protocol/messages/index.js';
import { buildBatch } from '../../src/protocol/records/index.js';
import { freePort, launchBroker, repositoryRoot, spawnBroker, whenListening, type BrokerProcess } from '../support/broker-process.js';
import { readLog } from '../support/durability.js';
import { RawClient } from '../support/raw-client.js';
import { sleep, within } from '../support/wait.js';

const dirs: string[] = [];
/** A data directory of its own; as root, one the "postgres" user can enter. */
function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'pgkafka-lifecycle-'));
  chmodSync(dir, 0o755);
  dirs.push(dir);
  return dir;
}
const brokers: BrokerProcess[] = [];
afterAll(async () => {
  for (const b of brokers) if (b.child.exitCode === null && b.child.signalCode === null) b.child.kill('SIGKILL');
  // Never leave a PostgreSQL running behind a failed test.
  for (const dir of dirs) {
    const pid = postmasterPid(dir);
    if (pid && alive(pid)) process.kill(pid, 'SIGQUIT');
    rmSync(dir, { recursive: true, force: true });
  }
});

function postmasterPid(dir: string): number | null {
  try {
    return Number(readFileSync(join(dir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]) || null;
  } catch {
    return null;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The pids whose parent is `pid` (Linux's /proc). */
function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .filter((e) => {
      try {
        const stat = readFileSync(`/proc/${e}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid;
      } catch {
        return false;
      }
    })
    .map(Number);
}

function env(dir: string, port: number): Record<string, string> {
  return { DATABASE_URL: '', PGKAFKA_DATA_DIR: dir, PGKAFKA_PORT: String(port), PGKAFKA_EMBEDDED_PG_PORT: '' };
}

async function start(dir: string): Promise<BrokerProcess & { bootstrap: string }> {
  const port = await freePort();
  const broker = await spawnBroker(env(dir, port));
  brokers.push(broker);
  return Object.assign(broker, { bootstrap: `127.0.0.1:${port}` });
}

async function stop(broker: BrokerProcess): Promise<number | null> {
  broker.child.kill('SIGTERM');
  return broker.exited;
}

async function produce(bootstrap: string, topic: string, value: string): Promise<number> {
  const client = await RawClient.connect(bootstrap);
  try {
    const res = await client.request(ProduceApi, 9, {
      acks: -1,
      timeoutMs: 5000,
      topicData: [{ name: topic, partitionData: [{ index: 0, records: buildBatch({ records: [{ key: null, value: Buffer.from(value) }] }) }] }],
    });
    return res.responses[0]!.partitionResponses[0]!.errorCode;
  } finally {
    client.close();
  }
}

describe('the embedded PostgreSQL never strands anyone', () => {
  it('goes with a broker killed by SIGKILL, so the next start works and finds the log', { timeout: 90_000 }, async () => {
    const dir = dataDir();
    const first = await start(dir);
    expect(await produce(first.bootstrap, 'kept', 'before the kill')).toBe(0);
    const pid = postmasterPid(dir)!;
    expect(alive(pid)).toBe(true);
    first.child.kill('SIGKILL');
    await first.exited;
    expect(await within(15_000, () => !alive(pid))).toBeGreaterThanOrEqual(0);

    const second = await start(dir);
    expect((await readLog(second.bootstrap, 'kept')).map((r) => r.value)).toEqual(['before the kill']);
    expect(second.output()).not.toContain('PGKAFKA_EMBEDDED_PG_LEFT_RUNNING');
    const secondPid = postmasterPid(dir)!;
    expect(await stop(second)).toBe(0);
    expect(alive(secondPid)).toBe(false);
  });

  it('stops a PostgreSQL that a gone broker left running on the data directory, then starts its own', { timeout: 90_000 }, async () => {
    const dir = dataDir();
    const first = await start(dir);
    expect(await produce(first.bootstrap, 'kept', 'before')).toBe(0);
    const orphan = postmasterPid(dir)!;
    // What an older broker or a kill of everything but PostgreSQL leaves: the server, its broker and the shell between them gone.
    const wrapper = childrenOf(first.child.pid!);
    for (const shell of [...wrapper.flatMap((w) => childrenOf(w).filter((c) => c !== orphan)), ...wrapper]) process.kill(shell, 'SIGKILL');
    first.child.kill('SIGKILL');
    await first.exited;
    await sleep(300);
    expect(alive(orphan)).toBe(true);

    const second = await start(dir);
    expect(second.output()).toContain('PGKAFKA_EMBEDDED_PG_LEFT_RUNNING');
    expect(alive(orphan)).toBe(false);
    expect((await readLog(second.bootstrap, 'kept')).map((r) => r.value)).toEqual(['before']);
    expect(second.output()).not.toMatch(/Cannot read properties|uncaught exception|unhandled rejection/);
    expect(await stop(second)).toBe(0);
  });

  it('refuses a second broker on a data directory in use, naming the first; brokers on two directories pick their own ports', { timeout: 90_000 }, async () => {
    const dir = dataDir();
    const first = await start(dir);
    const firstPort = first.bootstrap.split(':')[1];
    const refused = launchBroker(env(dir, await freePort()));
    brokers.push(refused);
    expect(await refused.exited).toBe(1);
    expect(refused.output()).toContain(`in use by another pgkafka broker (pid ${first.child.pid}, Kafka port ${firstPort}, PostgreSQL port ${postmasterPortOf(dir)})`);
    expect(refused.output()).not.toContain('Cannot read properties');
    expect(await produce(first.bootstrap, 'still', 'served')).toBe(0);

    // No PGKAFKA_EMBEDDED_PG_PORT: each picks a free port (a fixed default made the second fail).
    const other = dataDir();
    const second = await start(other);
    expect(postmasterPortOf(other)).not.toBe(postmasterPortOf(dir));
    expect(await produce(second.bootstrap, 'other', 'served')).toBe(0);
    expect(await stop(second)).toBe(0);
    expect(await stop(first)).toBe(0);
  });

  it('drains in-flight produce requests on SIGTERM before its PostgreSQL stops', { timeout: 90_000 }, async () => {
    const dir = dataDir();
    const broker = await start(dir);
    const outcomes = new Map<string, number>();
    const count = (k: string) => outcomes.set(k, (outcomes.get(k) ?? 0) + 1);
    let terminated = false;
    let ackedBefore = 0;
    const producer = async (id: number) => {
      const client = await RawClient.connect(broker.bootstrap);
      const one = async () => {
        try {
          const res = await client.request(ProduceApi, 9, {
            acks: -1,
            timeoutMs: 30_000,
            topicData: [{ name: 'drained', partitionData: [{ index: 0, records: buildBatch({ records: [{ key: null, value: Buffer.alloc(200, id) }] }) }] }],
          });
          const code = res.responses[0]!.partitionResponses[0]!.errorCode;
          count(code === 0 ? 'acknowledged' : errorName(code));
          if (code === 0 && !terminated) ackedBefore++;
        } catch {
          count('connection closed');
        }
      };
      // Eight requests in flight on each connection until the broker closes it.
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (!client.closed) await one();
        }),
      );
    };
    const producing = Promise.all([0, 1, 2, 3].map(producer));
    await within(10_000, () => ackedBefore > 200);
    terminated = true;
    broker.child.kill('SIGTERM');
    await producing;
    expect(await broker.exited).toBe(0);
    process.stdout.write(`SIGTERM under load (embedded PostgreSQL): ${JSON.stringify(Object.fromEntries(outcomes))}\n`);
    expect(ackedBefore).toBeGreaterThan(200);
    expect([...outcomes.keys()].filter((k) => k !== 'acknowledged' && k !== 'connection closed')).toEqual([]);
    expect(broker.output()).not.toMatch(/"level":(40|50|60)/);
  });

  it('goes, with its PostgreSQL, when `npm start` is stopped with SIGTERM', { timeout: 90_000 }, async () => {
    const dir = dataDir();
    const port = await freePort();
    const npm = launchBroker(env(dir, port), { command: ['npm', 'start', '--silent'], cwd: repositoryRoot });
    brokers.push(npm);
    await whenListening(npm);
    const owner = JSON.parse(readFileSync(join(dir, 'broker.json'), 'utf8')) as { pid: number };
    const postgres = postmasterPid(dir)!;
    expect(alive(owner.pid) && alive(postgres)).toBe(true);
    npm.child.kill('SIGTERM');
    await npm.exited;
    expect(await within(20_000, () => !alive(owner.pid) && !alive(postgres))).toBeGreaterThanOrEqual(0);
  });
});

function postmasterPortOf(dir: string): number {
  return Number(readFileSync(join(dir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[3]);
}

describe('the default data directory as root', () => {
  it('moves out of a directory the postgres user cannot enter, to one it can, and says where', { timeout: 90_000 }, async () => {
    if (process.getuid?.() !== 0) return;
    const closed = mkdtempSync(join(tmpdir(), 'pgkafka-private-'));
    dirs.push(closed);
    const project = join(closed, 'project');
    mkdirSync(project);
    const port = await freePort();
    const broker = launchBroker(
      { DATABASE_URL: '', PGKAFKA_DATA_DIR: '', PGKAFKA_PORT: String(port), PGKAFKA_EMBEDDED_PG_PORT: '' },
      {
        command: [process.execPath, join(repositoryRoot, 'bin', 'pgkafka.js'), 'start'],
        cwd: project,
      },
    );
    brokers.push(broker);
    try {
      await whenListening(broker, 60_000);
      const moved = /"dataDir":"([^"]+)","unreachable":"[^"]*pgkafka-private-[^"]*"/.exec(broker.output());
      expect(moved, broker.output()).not.toBeNull();
      dirs.push(moved![1]!);
      expect(moved![1]).toMatch(/^\/var\/lib\/pgkafka\/project-[0-9a-f]{12}$/);
      expect(await produce(`127.0.0.1:${port}`, 'moved', 'served')).toBe(0);
      expect(await stop(broker)).toBe(0);
    } finally {
      if (broker.child.exitCode === null) broker.child.kill('SIGKILL');
    }
  });
});
