import { pino, type Logger } from 'pino';
import { prettyFactory } from 'pino-pretty';

export type { Logger };

export type LogFormat = 'auto' | 'json' | 'pretty';

/**
 * The broker's logger: JSON lines (for collectors), or pino-pretty's
 * coloured lines when `format` says so or, with `auto`, when the destination
 * is a terminal. Pretty lines are formatted in-process (pino-pretty's
 * formatter, not its transport), so a fatal line is out before the process
 * exits.
 */
export function createLogger(level: string, destination: NodeJS.WritableStream = process.stdout, format: LogFormat = 'json'): Logger {
  // A reader that goes away (`pgkafka start | head`, a parent process that
  // died) must not turn every log line into an uncaught EPIPE, which the
  // uncaught-exception handler would log again, spinning: the lines are dropped.
  if (destination.listenerCount('error') === 0) destination.on('error', () => {});
  const pretty = format === 'pretty' || (format === 'auto' && (destination as { isTTY?: boolean }).isTTY === true);
  const options = { level, base: { service: 'pgkafka' } };
  if (!pretty) return pino(options, destination);
  const colorize = (destination as { isTTY?: boolean }).isTTY === true && !process.env.NO_COLOR;
  const prettify = prettyFactory({ colorize, ignore: 'service', translateTime: 'SYS:HH:MM:ss.l', singleLine: true });
  return pino(options, { write: (line: string) => destination.write(prettify(line)) });
}
