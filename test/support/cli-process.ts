// Runs the pgkafka CLI as a user does: a separate process (node with tsx, as
// bin/pgkafka.js runs it), arguments, stdin, environment; collects stdout as
// bytes, stderr as text and the exit code.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

export interface CliResult {
  code: number | null;
  out: string;
  /** stdout's bytes exactly (binary output). */
  bytes: Buffer;
  err: string;
}

export function pgkafka(args: string[], options: { stdin?: string | Buffer; env?: Record<string, string | undefined>; timeoutMs?: number } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
      cwd: root,
      env: { ...process.env, PGKAFKA_BROKERS: undefined, PGKAFKA_CONFIG: undefined, ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    let err = '';
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      const bytes = Buffer.concat(out);
      resolve({ code, out: bytes.toString(), bytes, err });
    });
    child.stdin.end(options.stdin ?? '');
  });
}

/** The JSON lines of an output, parsed. */
export function jsonLines(out: string): Record<string, unknown>[] {
  return out
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}
