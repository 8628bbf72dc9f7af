// Committed offsets of a group at its coordinator: OffsetFetch and OffsetCommit
// (the simple form, generation -1, as AdminClient's alterConsumerGroupOffsets
// sends it, or a member's commit).
import { ErrorCode } from '../../protocol/errors.js';
import { OffsetCommitApi, OffsetFetchApi } from '../../protocol/messages/index.js';
import { sleep } from './client.js';
import { check } from '../errors.js';
import type { Connection } from './connection.js';

/** OffsetFetch v8+ batches groups and v10 names topics by id; v7 asks for one group by name. */
const OFFSET_FETCH_CAP = 7;
/** OffsetCommit v10 names topics by id. */
const OFFSET_COMMIT_CAP = 9;

/** topic → partition → committed offset (-1n: none), for these topics or (null) every topic the group committed. */
export async function fetchCommitted(coordinator: Connection, groupId: string, topics: { name: string; partitions: number[] }[] | null): Promise<Map<string, Map<number, bigint>>> {
  let answer = await coordinator.request(OffsetFetchApi, { groupId, topics: topics?.map((t) => ({ name: t.name, partitionIndexes: t.partitions })) ?? null, requireStable: false }, OFFSET_FETCH_CAP);
  // A coordinator still loading the group's offsets (a fresh Kafka) answers so for a few seconds.
  for (let attempt = 0; answer.errorCode === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS && attempt < 40; attempt++) {
    await sleep(250);
    answer = await coordinator.request(OffsetFetchApi, { groupId, topics: topics?.map((t) => ({ name: t.name, partitionIndexes: t.partitions })) ?? null, requireStable: false }, OFFSET_FETCH_CAP);
  }
  check(answer.errorCode, `group ${groupId}: OffsetFetch`);
  const result = new Map<string, Map<number, bigint>>();
  for (const t of answer.topics) {
    const partitions = new Map<number, bigint>();
    for (const p of t.partitions) {
      check(p.errorCode, `group ${groupId} topic ${t.name} partition ${p.partitionIndex}: OffsetFetch`);
      partitions.set(p.partitionIndex, p.committedOffset);
    }
    result.set(t.name, partitions);
  }
  return result;
}

export interface Member {
  generationId: number;
  memberId: string;
}

/** Commits offsets (topic → partition → offset); without a member, as an admin commit that only an empty group accepts. */
export async function commitOffsets(coordinator: Connection, groupId: string, offsets: Map<string, Map<number, bigint>>, member: Member = { generationId: -1, memberId: '' }): Promise<void> {
  const answer = await coordinator.request(
    OffsetCommitApi,
    {
      groupId,
      generationIdOrMemberEpoch: member.generationId,
      memberId: member.memberId,
      groupInstanceId: null,
      retentionTimeMs: -1n,
      topics: [...offsets].map(([name, partitions]) => ({
        name,
        partitions: [...partitions].map(([partitionIndex, committedOffset]) => ({ partitionIndex, committedOffset, committedLeaderEpoch: -1, committedMetadata: '' })),
      })),
    },
    OFFSET_COMMIT_CAP,
  );
  for (const t of answer.topics) for (const p of t.partitions) check(p.errorCode, `group ${groupId} topic ${t.name} partition ${p.partitionIndex}: OffsetCommit`);
}
