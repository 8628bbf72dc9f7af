// What a coordinator API answers when PostgreSQL fails under it (a restart,
// a lost connection): a retriable Kafka code, as Kafka answers when its
// internal topics cannot be written, rather than a closed connection. The
// failure is logged; nothing was stored.
import { ErrorCode } from '../protocol/errors.js';
import type { RequestContext } from './types.js';

export function storageFailure(ctx: RequestContext, err: unknown, errorCode: number = ErrorCode.COORDINATOR_NOT_AVAILABLE): number {
  ctx.log.warn({ err: (err as Error).message, errorCode, code: 'PGKAFKA_COORDINATOR_STORAGE_FAILED' }, 'PostgreSQL failed under a coordinator request; answered with a retriable error');
  return errorCode;
}
