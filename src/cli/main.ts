// pgkafka's command line: `pgkafka start` (the default) runs the broker until
// SIGTERM or SIGINT, then shuts down gracefully; `pgkafka groups` shows
// consumer-group lag; `pgkafka users` manages SASL users.
import { parseArgs } from 'node:util';
import { runGroupsCommand } from './groups.js';
import { runUsersCommand } from './users.js';
import { runStartCommand } from './start.js';
import { options } from '../config/schema.js';

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
  await runStartCommand();
}

await main();
