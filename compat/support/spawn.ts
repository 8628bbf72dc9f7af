// Runs a client process with a hard timeout and collects its output as bytes.
// Every child is killed (SIGKILL) when the timeout passes, so no test can hang
// on a client that waits for something the broker never sends.
import { spawn } from 'node:child_process';

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: Buffer;
  stderr: string;
  timedOut: boolean;
}

export interface RunOptions {
  input?: Buffer | string;
  timeoutMs?: number;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

export function run(cmd: string, args: string[], opts: RunOptions = {}): Promise<RunResult> {
  const timeoutMs = opts.timeoutMs ?? 20_000;
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: { ...process.env, ...opts.env }, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => err.push(d));
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString('utf8'), timedOut });
    });
    child.stdin.on('error', () => {}); // a client that exits early must not crash the test with EPIPE
    child.stdin.end(opts.input ?? '');
  });
}

/** Like run, but fails (with the client's stderr) unless the process exited 0 in time. */
export async function runOk(cmd: string, args: string[], opts: RunOptions = {}): Promise<RunResult> {
  const r = await run(cmd, args, opts);
  if (r.timedOut || r.code !== 0) {
    const why = r.timedOut ? `timed out after ${opts.timeoutMs ?? 20_000} ms` : `exited with ${r.code ?? r.signal}`;
    throw new Error(`${cmd} ${args.join(' ')} ${why}\n--- stderr ---\n${r.stderr.slice(-4000)}\n--- stdout ---\n${r.stdout.toString('utf8').slice(-2000)}`);
  }
  return r;
}

/** The Debian python3 (the first python3 on PATH lacks Debian's kafka modules). */
export const PYTHON = '/usr/bin/python3';

/** Runs one of compat/python/*.py with a JSON request on stdin and parses its JSON answer from stdout. */
export async function runPythonJson<T>(script: string, command: string, request: unknown, timeoutMs = 30_000): Promise<T> {
  const r = await runOk(PYTHON, [new URL(`../python/${script}`, import.meta.url).pathname, command], { input: JSON.stringify(request), timeoutMs });
  return JSON.parse(r.stdout.toString('utf8')) as T;
}
