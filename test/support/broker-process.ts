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

export interface LaunchOptions {
  /** Working directory (the repository's root by default). */
  cwd?: string;
  /** The command and its arguments; `node --import tsx src/cli/main.ts start` by default. */
  command?: string[];
}

/** Starts `pgkafka start` (or `command`) without waiting for it. */
export function launchBroker(env: Record<string, string>, options: LaunchOptions = {}): BrokerProcess {
  const [file, ...args] = options.command ?? [process.execPath, '--import', 'tsx', 'src/cli/main.ts', 'start'];
  const child = spawn(file!, args, {
    cwd: options.cwd ?? root,
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
  return { child, output: () => output, exited };
}

/** Resolves once the broker logs that it is listening; rejects if it exits first or takes longer than `ms`. */
export function whenListening(broker: BrokerProcess, ms = 30_000): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`broker did not start:\n${broker.output()}`)), ms);
    const check = () => {
      if (broker.output().includes('pgkafka broker listening')) {
        clearTimeout(timer);
        resolve();
      }
    };
    broker.child.stdout!.on('data', check);
    check();
    broker.child.on('exit', () => {
      clearTimeout(timer);
      reject(new Error(`broker exited during start-up:\n${broker.output()}`));
    });
  });
}

/** Starts `pgkafka start` and resolves once it is listening. */
export async function spawnBroker(env: Record<string, string>, options: LaunchOptions = {}): Promise<BrokerProcess> {
  const broker = launchBroker(env, options);
  await whenListening(broker);
  return broker;
}

/** The repository's root (where `npm start` runs). */
export const repositoryRoot = root;
