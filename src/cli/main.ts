// pgkafka's command line, shaped like Redpanda's rpk: `pgkafka start` runs the
// broker; topic, produce, consume, group, acl, user and cluster talk to any
// Kafka broker over the Kafka protocol; `groups` and `users` read and write
// the broker's PostgreSQL directly (lag in time, users before the first start).
// Every failure is one line on stderr: exit 2 for usage, 1 for the rest.
import { readFileSync } from 'node:fs';
import { flagsHelp, parseFlags, suggest } from './args.js';
import { clientFactory, isCommand, type Command, type CommandTree } from './command.js';
import { CliError } from './errors.js';
import { loadConfig, options } from '../config/schema.js';
import { topicCommands } from './topic.js';
import { produceCommand } from './produce.js';
import { consumeCommand } from './consume.js';
import { groupCommands } from './group.js';
import { aclCommands } from './acl.js';
import { userCommands } from './user.js';
import { clusterCommands } from './cluster.js';

const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** Commands implemented elsewhere with their own argument handling, loaded only when run (the broker's modules take a while to load). */
const STANDALONE: Record<string, { summary: string; run(args: string[]): Promise<void> }> = {
  start: {
    summary: 'run the broker (configured by environment variables or PGKAFKA_CONFIG; `pgkafka start --help`)',
    async run(args) {
      if (args.includes('--help') || args.includes('-h')) process.stdout.write(START_HELP);
      else if (args.length > 0) fail(new CliError(`start: unexpected argument ${args[0]} (the broker is configured by environment variables or PGKAFKA_CONFIG)`, 2));
      else await (await import('./start.js')).runStartCommand();
    },
  },
  groups: {
    summary: 'consumer groups and their lag in offsets and time, read from PostgreSQL',
    async run(args) {
      process.exitCode = await (await import('./groups.js')).runGroupsCommand(args, process.env, process.stdout);
    },
  },
  users: {
    summary: 'SCRAM users written to PostgreSQL directly (works before the first start)',
    async run(args) {
      process.exitCode = await (await import('./users.js')).runUsersCommand(args, process.env, process.stdout);
    },
  },
};

const TREE: CommandTree = {
  topic: topicCommands,
  produce: produceCommand,
  consume: consumeCommand,
  group: groupCommands,
  acl: aclCommands,
  user: userCommands,
  cluster: clusterCommands,
};

const START_HELP = `Usage: pgkafka start

Starts a Kafka-protocol broker that stores everything in PostgreSQL.
Configuration comes from environment variables (or a JSON file named by PGKAFKA_CONFIG):

${Object.entries(options)
  .map(([name, o]) => `  ${o.env.padEnd(34)} ${name} (default: ${o.default === undefined ? 'unset' : String(o.default)})\n      ${o.doc}`)
  .join('\n')}
`;

function treeHelp(path: string[], tree: CommandTree): string {
  const names = Object.keys(tree);
  const top = path.length === 0;
  const entries: [string, string][] = names.map((n) => {
    const node = tree[n]!;
    return [n, isCommand(node) ? node.summary : `${Object.keys(node).join(', ')}`];
  });
  if (top) entries.unshift(...Object.entries(STANDALONE).map(([n, s]) => [n, s.summary] as [string, string]));
  const width = Math.max(...entries.map(([n]) => n.length));
  return (
    `Usage: pgkafka ${[...path, '<command>'].join(' ')} [flags]\n\n` +
    (top ? 'pgkafka: a Kafka broker on PostgreSQL, and a client for any Kafka broker.\n\n' : '') +
    `Commands:\n${entries.map(([n, s]) => `  ${n.padEnd(width)}  ${s}`).join('\n')}\n\n` +
    `Run \`pgkafka ${[...path, '<command>', '--help'].join(' ')}\` for a command's flags.` +
    (top ? ' `pgkafka --version` prints the version.\n' : '\n')
  );
}

function commandHelp(path: string[], command: Command): string {
  return `Usage: pgkafka ${path.join(' ')}${command.args ? ` ${command.args}` : ''} [flags]\n\n${command.summary[0]!.toUpperCase()}${command.summary.slice(1)}.\n\nFlags:\n${flagsHelp(command.flags)}\n${command.more ? `\n${command.more}` : ''}`;
}

/** The local broker's address from its own configuration (env and PGKAFKA_CONFIG), else localhost:9092. */
function localBroker(env: NodeJS.ProcessEnv): string {
  try {
    const config = loadConfig(env);
    return `${config.advertisedHost}:${config.advertisedPort || config.port}`;
  } catch {
    return 'localhost:9092';
  }
}

function fail(err: CliError): void {
  process.stderr.write(`pgkafka: ${err.message}\n`);
  process.exitCode = err.exitCode;
}

async function main(argv: string[]): Promise<void> {
  const first = argv[0];
  if (first === undefined || first === '--help' || first === '-h' || first === 'help') {
    process.stdout.write(treeHelp([], TREE));
    return;
  }
  if (first === '--version' || first === '-v' || first === 'version') {
    process.stdout.write(`pgkafka ${VERSION}\n`);
    return;
  }
  if (STANDALONE[first]) return STANDALONE[first].run(argv.slice(1));

  const path: string[] = [];
  let node: Command | CommandTree = TREE;
  let rest = argv;
  while (!isCommand(node)) {
    const word = rest[0];
    if (word === undefined || word === '--help' || word === '-h') {
      if (word === undefined && path.length > 0) {
        process.stderr.write(`pgkafka: ${path.join(' ')}: a subcommand is required (one of ${Object.keys(node).join(', ')})\n`);
        process.exitCode = 2;
      } else process.stdout.write(treeHelp(path, node));
      return;
    }
    const next: Command | CommandTree | undefined = node[word];
    if (!next) {
      const known = path.length === 0 ? [...Object.keys(STANDALONE), ...Object.keys(node)] : Object.keys(node);
      const what = word.startsWith('-') ? `unknown flag ${word}` : `unknown command "${[...path, word].join(' ')}"`;
      throw new CliError(`${what}${word.startsWith('-') ? '' : suggest(word, known, path.length > 0 ? `${path.join(' ')} ` : '')}; see pgkafka ${[...path, '--help'].join(' ')}`, 2);
    }
    path.push(word);
    node = next;
    rest = rest.slice(1);
  }
  const command = node;
  const parsed = parseFlags(rest, command.flags, path.join(' '));
  if (parsed.flags.has('help')) {
    process.stdout.write(commandHelp(path, command));
    return;
  }
  const clients = clientFactory(parsed, process.env, () => localBroker(process.env));
  try {
    const code = await command.run({ env: process.env, out: process.stdout, err: process.stderr, stdin: process.stdin, client: clients.client }, parsed);
    process.exitCode = code ?? 0;
  } finally {
    await clients.close();
  }
}

try {
  await main(process.argv.slice(2));
} catch (err) {
  if (err instanceof CliError) fail(err);
  else fail(new CliError(`internal error: ${(err as Error).message ?? String(err)}`));
}
