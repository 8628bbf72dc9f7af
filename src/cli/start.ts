// `pgkafka start`: loads the configuration, runs the broker until SIGTERM or
// SIGINT, then shuts down gracefully.
import { startBroker } from '../broker.js';
import { ConfigError, loadConfig } from '../config/schema.js';
import { createLogger } from '../observability/logger.js';
import { LogCode } from '../observability/log-codes.js';

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
  const log = createLogger(config.logLevel);
  process.on('uncaughtException', (err) => {
    // The log's reader went away (EPIPE on stdout): logging that would fail the same way, again and again.
    if (isClosedOutput(err)) return;
    log.fatal({ err: err.message, stack: err.stack }, 'uncaught exception');
  });
  process.on('unhandledRejection', (err) => log.error({ err: String(err) }, 'unhandled rejection'));
  let broker;
  try {
    broker = await startBroker(config, log);
  } catch (err) {
    log.fatal({ err: (err as Error).message, code: LogCode.START_FAILED }, 'pgkafka could not start');
    process.exit(1);
  }
  const shutdown = (signal: string) => {
    log.info({ signal }, 'shutting down');
    broker.stop().then(
      () => process.exit(0),
      (err: Error) => {
        log.error({ err: err.message }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

function isClosedOutput(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'EPIPE' || code === 'ERR_STREAM_DESTROYED';
}
