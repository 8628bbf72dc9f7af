import { ErrorCode } from '../protocol/errors.js';

export type GroupState = 'Empty' | 'PreparingRebalance' | 'CompletingRebalance' | 'Stable' | 'Dead';
export const GROUP_STATES: readonly GroupState[] = ['Empty', 'PreparingRebalance', 'CompletingRebalance', 'Stable', 'Dead'];

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
