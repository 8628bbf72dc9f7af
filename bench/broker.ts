// Starts a pgkafka broker as a child process (so its CPU and memory are its
// own), waits for it to listen, measures it from /proc, stops it and drops its
// schema.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

export const DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/test';
const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const CLK_TCK = 100; // Linux USER_HZ

export function randomName(prefix: string): string {
  return `${prefix}_${randomBytes(4).toString('hex')}`;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export async function pgClient(): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: DATABASE_URL });
  await c.connect();
  return c;
}

export async function dropSchema(schema: string): Promise<void> {
  const c = await pgClient();
  try {
    await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await c.end();
  }
}

export interface ProcSample {
  rssKiB: number;
  hwmKiB: number;
  /** user + system CPU seconds */
  cpuSec: number;
}

/** A process's parent and its user + system CPU seconds, from /proc/<pid>/stat. */
export function procStat(pid: number): { ppid: number; cpuSec: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state); ppid is field 4, utime field 14, stime field 15
  return { ppid: Number(fields[1]), cpuSec: (Number(fields[11]) + Number(fields[12])) / CLK_TCK };
}

export function procSample(pid: number): ProcSample {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? NaN);
  return { rssKiB: kb('VmRSS'), hwmKiB: kb('VmHWM'), cpuSec: procStat(pid).cpuSec };
}

export class Broker {
  peakHwmKiB = 0;
  private exited = false;
  private stderrTail = '';

  private constructor(
    readonly child: ChildProcess,
    readonly port: number,
    readonly schema: string,
  ) {
    child.on('exit', () => (this.exited = true));
  }

  get bootstrap(): string {
    return `127.0.0.1:${this.port}`;
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** `extraEnv.PGKAFKA_SCHEMA` puts the broker on a given schema (several brokers on one schema: give each its own `PGKAFKA_NODE_ID`). */
  static async start(extraEnv: Record<string, string> = {}, timeoutMs = 30_000): Promise<Broker> {
    const port = await freePort();
    const schema = extraEnv.PGKAFKA_SCHEMA ?? randomName('bench');
    // BENCH_BROKER_NODE_ARGS: extra node flags for the broker, e.g. `--cpu-prof --cpu-prof-dir=prof` (written when it stops).
    const nodeArgs = (process.env.BENCH_BROKER_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');
    const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', 'src/cli/main.ts', 'start'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        DATABASE_URL,
        PGKAFKA_SCHEMA: schema,
        PGKAFKA_PORT: String(port),
        PGKAFKA_HOST: '127.0.0.1',
        PGKAFKA_ADVERTISED_HOST: '127.0.0.1',
        PGKAFKA_METRICS_ENABLED: 'false',
        PGKAFKA_LOG_LEVEL: 'info',
        PGKAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS: '0',
        ...extraEnv,
      },
    });
    const broker = new Broker(child, port, schema);
    await new Promise<void>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`broker did not start within ${timeoutMs} ms: ${out.slice(-2000)}${broker.stderrTail}`));
      }, timeoutMs);
      child.stdout!.on('data', (chunk: Buffer) => {
        if (out !== null) out += chunk.toString();
        if (out.includes('pgkafka broker listening')) {
          clearTimeout(timer);
          out = '';
          resolve();
        } else if (out.length > 100_000) out = out.slice(-10_000);
      });
      child.stderr!.on('data', (chunk: Buffer) => {
        broker.stderrTail = (broker.stderrTail + chunk.toString()).slice(-4000);
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`broker exited with ${code} before listening: ${out.slice(-2000)}${broker.stderrTail}`));
      });
    });
    // Keep draining stdout (warn/error lines) so the pipe never blocks the broker.
    child.stdout!.removeAllListeners('data');
    child.stdout!.on('data', (chunk: Buffer) => {
      const s = chunk.toString();
      if (process.env.BENCH_BROKER_LOG) process.stderr.write(s);
      else if (/"level":(40|50|60)/.test(s)) broker.stderrTail = (broker.stderrTail + s).slice(-4000);
    });
    return broker;
  }

  sample(): ProcSample {
    const s = procSample(this.pid);
    this.peakHwmKiB = Math.max(this.peakHwmKiB, s.hwmKiB);
    return s;
  }

  /** Warning/error log lines and stderr seen so far (last few KiB). */
  get logTail(): string {
    return this.stderrTail;
  }

  /** Stops the broker and drops its schema, unless `keepSchema` (other brokers still use it). */
  async stop(keepSchema = false): Promise<void> {
    if (!this.exited) {
      try {
        this.sample();
      } catch {
        /* already gone */
      }
      const done = new Promise<void>((r) => this.child.once('exit', () => r()));
      this.child.kill('SIGTERM');
      const t = setTimeout(() => this.child.kill('SIGKILL'), 15_000);
      await done;
      clearTimeout(t);
    }
    if (!keepSchema) await dropSchema(this.schema);
  }
}
