// pgkafka's command line: `pgkafka start` (the default) runs the broker until
// SIGTERM or SIGINT, then shuts down gracefully; `pgkafka groups` shows
// consumer-group lag; `pgkafka users` manages SASL users.
import { parseArgs } from 'node:util';
import { startBroker } from '../broker.js';
import { runGroupsCommand } from './groups.js';
import { runUsersCommand } from './users.js';
import { ConfigError, loadConfig, options } from '../config/schema.js';
import { createLogger } from '../observability/logger.js';
import { LogCode } from '../observability/log-codes.js';

const USAGE = `Usage: pgkafka [start] [--help]
       pgkafka groups [--list] [--group <id>]... [--json]
       pgkafka users add|remove|list … (pgkafka users --help)

Starts a Kafka-protocol broker that stores everything in PostgreSQL.
Configuration comes from environment variables (or a JSON file named by PGKAFKA_CONFIG):

${Object.entries(options)
  .map(([name, o]) => `  ${o.env.padEnd(34)} ${name} (default: ${o.default === undefined ? 'unset' : String(o.default)})\n      ${o.doc}`)
  .join('\n')}
`;

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv[0] === 'groups') {
    process.exitCode = await runGroupsCommand(argv.slice(1), process.env, process.stdout);
    return;
  }
  if (argv[0] === 'users') {
    process.exitCode = await runUsersCommand(argv.slice(1), process.env, process.stdout);
    return;
  }
  const { positionals, values } = parseArgs({ args: argv, allowPositionals: true, options: { help: { type: 'boolean', short: 'h' } } });
  const command = positionals[0] ?? 'start';
  if (values.help || command === 'help') {
    process.stdout.write(USAGE);
    return;
  }
  if (command !== 'start') {
    process.stderr.write(`unknown command: ${command}\n\n${USAGE}`);
    process.exitCode = 2;
    return;
  }
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

await main();
