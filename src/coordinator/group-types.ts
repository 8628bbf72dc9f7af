// The requests and answers of the classic group protocol, and its member.
import { ErrorCode } from '../protocol/errors.js';
import type { Timer } from '../clock.js';

export interface Protocol {
  name: string;
  metadata: Buffer;
}

export interface JoinRequest {
  groupId: string;
  memberId: string;
  groupInstanceId: string | null;
  sessionTimeoutMs: number;
  rebalanceTimeoutMs: number;
  protocolType: string;
  protocols: Protocol[];
  reason: string | null;
  clientId: string;
  clientHost: string;
  /** JoinGroup v4+: a new dynamic member must first be given a member id (KIP-394). */
  requireKnownMemberId: boolean;
}

export interface JoinResult {
  errorCode: number;
  generationId: number;
  protocolType: string | null;
  protocolName: string | null;
  leader: string;
  memberId: string;
  skipAssignment: boolean;
  members: { memberId: string; groupInstanceId: string | null; metadata: Buffer }[];
}

export interface SyncRequest {
  groupId: string;
  generationId: number;
  memberId: string;
  groupInstanceId: string | null;
  protocolType: string | null;
  protocolName: string | null;
  assignments: { memberId: string; assignment: Buffer }[];
}

export interface SyncResult {
  errorCode: number;
  protocolType: string | null;
  protocolName: string | null;
  assignment: Buffer;
}

/** A member of a classic group, with what it is waiting for and its session timer. */
export interface Member {
  memberId: string;
  groupInstanceId: string | null;
  clientId: string;
  clientHost: string;
  sessionTimeoutMs: number;
  rebalanceTimeoutMs: number;
  protocols: Protocol[];
  assignment: Buffer;
  awaitingJoin: ((result: JoinResult) => void) | null;
  awaitingSync: ((result: SyncResult) => void) | null;
  /** Joined during the current rebalance (not yet part of a generation). */
  isNew: boolean;
  heartbeatTimer: Timer | null;
}

export interface MemberIdentity {
  memberId: string;
  groupInstanceId: string | null;
}

export const UNKNOWN_MEMBER_ID = '';

/**
 * A group id this broker can keep: Kafka refuses only the empty one, and
 * PostgreSQL text cannot hold a NUL character, so those are refused too
 * (INVALID_GROUP_ID).
 */
export function isValidGroupId(groupId: string): boolean {
  return groupId !== '' && !groupId.includes('\0');
}

export const joinError = (errorCode: number, memberId = UNKNOWN_MEMBER_ID): JoinResult => ({
  errorCode,
  generationId: -1,
  protocolType: null,
  protocolName: null,
  leader: '',
  memberId,
  skipAssignment: false,
  members: [],
});

export const syncError = (errorCode: number): SyncResult => ({ errorCode, protocolType: null, protocolName: null, assignment: Buffer.alloc(0) });

export { ErrorCode };
