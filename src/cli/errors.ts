// The CLI's two kinds of failure, each a one-line message and an exit code:
// usage (2: unknown command or flag, bad value) and everything else (1: the
// broker unreachable, or it answered an error).
import { errorName } from '../protocol/errors.js';

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

export class UsageError extends CliError {
  constructor(message: string) {
    super(message, 2);
  }
}

/** Throws a CliError naming Kafka's error when `code` is not NONE. */
export function check(code: number, what: string, message?: string | null): void {
  if (code !== 0) throw new CliError(`${what}: ${errorName(code)}${message ? ` (${message})` : ''}`);
}
