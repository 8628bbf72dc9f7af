// kcat (the C librdkafka command-line client) as a producer and consumer: the
// fastest clients available here, since no record crosses into JavaScript.
// Each call times the whole kcat process (start, connect, metadata, transfer,
// flush/exit), so the figures include its fixed start-up cost.
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';

export const KCAT = process.env.BENCH_KCAT ?? '/usr/bin/kcat';

/** kcat's and its librdkafka's versions, or undefined when kcat cannot be run (the kcat cases are then skipped). */
export function kcatVersion(): string | undefined {
  const r = spawnSync(KCAT, ['-V'], { encoding: 'utf8', timeout: 5000 });
  if (r.status !== 0) return undefined;
  const m = /Version (\S+) .*?librdkafka (\S+)/.exec(r.stdout);
  return m ? `kcat ${m[1]}, librdkafka ${m[2]}` : 'kcat (version unknown)';
}

/**
 * Writes `count` lines `k%015d:<value>` (16-byte keys, 1,024 distinct ones
 * reused round-robin like the other clients; value = `valueSize` × 'b') to a
 * temp file for `kcat -P -K: -l`. Returns its path.
 */
export function writeKcatInput(count: number, valueSize: number): string {
  const path = join(tmpdir(), `pgkafka-bench-kcat-${randomBytes(4).toString('hex')}-${valueSize}.txt`);
  const fd = openSync(path, 'w');
  try {
    const value = 'b'.repeat(valueSize);
    const chunk = 4096;
    for (let i = 0; i < count; i += chunk) {
      const lines: string[] = [];
      for (let j = i; j < Math.min(count, i + chunk); j++) lines.push(`k${String(j & 1023).padStart(15, '0')}:${value}\n`);
      writeSync(fd, lines.join(''));
    }
  } finally {
    closeSync(fd);
  }
  return path;
}

export function removeKcatInput(path: string): void {
  rmSync(path, { force: true });
}

interface Exit {
  seconds: number;
  code: number | null;
  stderr: string;
}

function runKcat(args: string[], timeoutMs: number, onStdout?: (b: Buffer) => void): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(KCAT, args, { stdio: ['ignore', onStdout ? 'pipe' : 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (s: string) => {
      if (stderr.length < 8192) stderr += s;
    });
    if (onStdout) child.stdout!.on('data', onStdout);
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ seconds: (performance.now() - t0) / 1000, code, stderr: stderr.trim() });
    });
  });
}

/**
 * kcat producer from a pre-written file: acks=all, linger.ms 5,
 * batch.num.messages 10000, queues raised (as the node librdkafka case).
 * One partition: `-p 0`; more: kcat's default (keyed, consistent-hash) partitioner.
 */
export async function produceKcat(bootstrap: string, topic: string, partitions: number, file: string, timeoutMs = 120_000): Promise<Exit> {
  const args = ['-b', bootstrap, '-P', '-t', topic, '-K:', '-l', '-q'];
  if (partitions === 1) args.push('-p', '0');
  args.push(
    '-X',
    'linger.ms=5',
    '-X',
    'batch.num.messages=10000',
    '-X',
    'acks=all',
    '-X',
    'queue.buffering.max.messages=2000000',
    '-X',
    'queue.buffering.max.kbytes=2000000',
    '-X',
    'compression.codec=none',
    '-X',
    'client.id=pgkafka-bench-kcat',
    file,
  );
  return runKcat(args, timeoutMs);
}

/**
 * kcat consumer: all partitions from offset 0 to the end (`-o beginning -e`),
 * one '\n' per record, counted here. fetch.wait.max.ms is 10 ms because `-e`
 * only sees the end of the partition after one empty Fetch, which the broker
 * (correctly) parks for up to max_wait: with the default 500 ms that tail alone
 * is ~0.5 s, half of the whole read of 1 M records. While records remain, every
 * Fetch returns at once, so the setting changes nothing else.
 */
export async function consumeKcat(bootstrap: string, topic: string, timeoutMs = 120_000): Promise<Exit & { received: number }> {
  let received = 0;
  const r = await runKcat(
    ['-b', bootstrap, '-C', '-t', topic, '-o', 'beginning', '-e', '-q', '-f', '\\n', '-X', 'fetch.message.max.bytes=4194304', '-X', 'fetch.wait.max.ms=10', '-X', 'client.id=pgkafka-bench-kcat'],
    timeoutMs,
    (b) => {
      for (let i = b.indexOf(10); i !== -1; i = b.indexOf(10, i + 1)) received++;
    },
  );
  return { ...r, received };
}
