// What a subcommand is: its flags, its help, and what it runs with the parsed
// flags and a context that opens the Kafka client on first use.
import { BROKERS_ENV, flag, type FlagSpecs, type Parsed } from './args.js';
import { KafkaClient } from './kafka/client.js';

export interface Context {
  env: NodeJS.ProcessEnv;
  out: NodeJS.WritableStream;
  err: NodeJS.WritableStream;
  stdin: NodeJS.ReadableStream;
  /** The Kafka client for --brokers (or PGKAFKA_BROKERS, or the local broker's address), connected on first use. */
  client(): Promise<KafkaClient>;
}

export interface Command {
  summary: string;
  /** Positional arguments, as the usage line shows them. */
  args?: string;
  flags: FlagSpecs;
  /** Extra help text after the flags. */
  more?: string;
  run(ctx: Context, p: Parsed): Promise<number | void>;
}

export type CommandTree = { [name: string]: Command | CommandTree };

export function isCommand(node: Command | CommandTree): node is Command {
  return typeof (node as Command).run === 'function';
}

/** A lazily connected client over the brokers the flags or environment name. */
export function clientFactory(p: Parsed, env: NodeJS.ProcessEnv, defaultBrokers: () => string): { client(): Promise<KafkaClient>; close(): Promise<void> } {
  let client: Promise<KafkaClient> | null = null;
  return {
    client() {
      const brokers = (flag(p, 'brokers') ?? env[BROKERS_ENV] ?? defaultBrokers())
        .split(',')
        .map((b) => b.trim())
        .filter((b) => b !== '');
      client ??= KafkaClient.connect(brokers);
      return client;
    },
    async close() {
      if (client)
        await client.then(
          (c) => c.close(),
          () => {},
        );
    },
  };
}
