// Runs the broker as a real child process (the CLI), for tests that kill it.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

export interface BrokerProcess {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/** Children still running when the test process exits (a timed-out test never reaches its cleanup) are killed with it. */
const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** Starts `pgkafka start` and resolves once it is listening. */
export async function spawnBroker(env: Record<string, string>): Promise<BrokerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'start'], {
    cwd: root,
    env: { ...process.env, PGKAFKA_HOST: '127.0.0.1', PGKAFKA_ADVERTISED_HOST: '127.0.0.1', PGKAFKA_LOG_LEVEL: 'info', PGKAFKA_METRICS_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  running.add(child);
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      running.delete(child);
      resolve(code);
    }),
  );
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`broker did not start:\n${output}`)), 30_000);
    const check = () => {
      if (output.includes('pgkafka broker listening')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', check);
    child.on('exit', () => {
      clearTimeout(timer);
      reject(new Error(`broker exited during start-up:\n${output}`));
    });
  });
  return { child, output: () => output, exited };
}
