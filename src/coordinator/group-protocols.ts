// Which assignment protocol a classic group runs: the ones every member
// supports, chosen by Kafka's vote. Pure functions of the members.
import type { Member, Protocol } from './group-types.js';

const EMPTY = Buffer.alloc(0);

/** Protocols every member supports, in the first member's order of preference. */
function candidateProtocols(members: readonly Member[]): string[] {
  if (members.length === 0) return [];
  return members[0]!.protocols.map((p) => p.name).filter((name) => members.every((m) => m.protocols.some((p) => p.name === name)));
}

/** Kafka's supportsProtocols: may a member with these protocols join a group of these members? */
export function supportsProtocols(members: readonly Member[], groupProtocolType: string | null, protocolType: string, protocols: Protocol[]): boolean {
  if (protocols.length === 0 || protocolType === '') return false;
  if (members.length === 0) return true;
  if (protocolType !== groupProtocolType) return false;
  const names = new Set(protocols.map((p) => p.name));
  return candidateProtocols(members).some((p) => names.has(p));
}

/** Kafka's vote: each member votes for its most preferred candidate; the most votes win (ties: first candidate). */
export function selectProtocol(members: readonly Member[]): string {
  const candidates = candidateProtocols(members);
  const votes = new Map<string, number>(candidates.map((c) => [c, 0]));
  for (const m of members) {
    const choice = m.protocols.find((p) => votes.has(p.name))!.name;
    votes.set(choice, votes.get(choice)! + 1);
  }
  let best = candidates[0]!;
  for (const c of candidates) if (votes.get(c)! > votes.get(best)!) best = c;
  return best;
}

/** The member's metadata for the group's protocol (what the leader is shown). */
export function protocolMetadata(member: Member, protocolName: string | null): Buffer {
  return member.protocols.find((p) => p.name === protocolName)?.metadata ?? EMPTY;
}

/** Kafka's MemberMetadata.matches: the same protocols, in the same order, with the same metadata. */
export function sameProtocols(member: Member, protocols: Protocol[]): boolean {
  return member.protocols.length === protocols.length && member.protocols.every((p, i) => p.name === protocols[i]!.name && p.metadata.equals(protocols[i]!.metadata));
}

/** A SyncGroup protocol type or name that differs from the group's; either side null is no conflict. */
export function protocolInconsistent(fromRequest: string | null, ofGroup: string | null): boolean {
  return fromRequest !== null && ofGroup !== null && fromRequest !== ofGroup;
}
