import { ErrorCode } from '../protocol/errors.js';

/** KIP-588: versions below `firstVersion` know PRODUCER_FENCED only as INVALID_PRODUCER_EPOCH. */
export function fencedForVersion(errorCode: number, apiVersion: number, firstVersion: number): number {
  return errorCode === ErrorCode.PRODUCER_FENCED && apiVersion < firstVersion ? ErrorCode.INVALID_PRODUCER_EPOCH : errorCode;
}
