import { pino, type Logger } from 'pino';

export type { Logger };

export function createLogger(level: string, destination: NodeJS.WritableStream = process.stdout): Logger {
  // A reader that goes away (`pgkafka start | head`, a parent process that
  // died) must not turn every log line into an uncaught EPIPE, which the
  // uncaught-exception handler would log again, spinning: the lines are dropped.
  if (destination.listenerCount('error') === 0) destination.on('error', () => {});
  return pino({ level, base: { service: 'pgkafka' } }, destination);
}
