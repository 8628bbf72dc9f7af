// `pgkafka start`: loads the configuration, runs the broker until SIGTERM or
// SIGINT (or, under npm, until npm's process goes away), then shuts down
// gracefully. Every start-up failure exits with a non-zero code.
import { startBroker, type RunningBroker } from '../broker.js';
import { ConfigError, loadConfig } from '../config/schema.js';
import { createLogger, type Logger } from '../observability/logger.js';
import { LogCode } from '../observability/log-codes.js';

/** How often a broker started by npm looks whether npm's process is still its parent. */
const PARENT_CHECK_MS = 500;

export async function runStartCommand(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`pgkafka: invalid configuration: ${err.message}\n`);
      process.exitCode = 2;
      return;
    }
    throw err;
  }
  const log = createLogger(config.logLevel, process.stdout, config.logFormat);
  process.on('uncaughtException', (err) => {
    // The log's reader went away (EPIPE on stdout): logging that would fail the same way, again and again.
    if (isClosedOutput(err)) return;
    log.fatal({ err: err.message, stack: err.stack }, 'uncaught exception');
  });
  process.on('unhandledRejection', (err) => log.error({ err: String(err) }, 'unhandled rejection'));

  let broker: RunningBroker | undefined;
  // A signal during start-up: nothing is served yet, so nothing to drain (the embedded PostgreSQL stops with the process).
  const exitNow = (signal: NodeJS.Signals) => {
    log.info({ signal }, broker === undefined ? 'stopping during start-up' : 'stopping without draining');
    process.exit(128 + (signal === 'SIGINT' ? 2 : 15));
  };
  // One listener per signal for the process's life: removing a signal's last listener drops a signal already
  // received and not yet dispatched, so a SIGTERM sent right after 'listening' would be lost.
  let onSignal: (signal: NodeJS.Signals) => void = exitNow;
  process.on('SIGTERM', (signal) => onSignal(signal));
  process.on('SIGINT', (signal) => onSignal(signal));
  try {
    broker = await startBroker(config, log);
  } catch (err) {
    log.fatal({ err: err instanceof Error ? err.message : String(err), code: LogCode.START_FAILED }, 'pgkafka could not start');
    process.exit(1);
  }

  let stopping = false;
  const shutdown = (reason: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ reason }, 'shutting down');
    broker.stop().then(
      () => process.exit(0),
      (err: Error) => {
        log.error({ err: err.message }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  // A second signal while draining ends the process at once, as the signal's default action would.
  onSignal = (signal) => (stopping ? exitNow(signal) : shutdown(signal));
  watchNpmParent(log, () => shutdown('npm exited'));
}

/**
 * `npm start` runs the broker under `sh -c`, and npm hands SIGTERM to that
 * shell only, which dies of it without passing it on: the broker would run
 * on, re-parented. So a broker started by npm (or npx) stops when the
 * process that started it is gone. Started otherwise (nohup, a service
 * manager, a container), it keeps running whatever happens to its parent.
 */
function watchNpmParent(log: Logger, stop: () => void): void {
  if (process.env.npm_lifecycle_event === undefined && process.env.npm_command === undefined) return;
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    log.info({ parent }, 'the npm process that started the broker is gone');
    stop();
  }, PARENT_CHECK_MS);
  timer.unref();
}

function isClosedOutput(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'EPIPE' || code === 'ERR_STREAM_DESTROYED';
}
