// OffsetCommit (key 8), v2-10.
// v2-4: retention time (ignored since Kafka 2.1: retention is the broker's
// offsets.retention.minutes). v3: throttle time. v6: committed leader epoch.
// v7: group instance id. v8: flexible. v10: topic ids.
// Generation -1 with no member id is a commit from outside group management
// (standalone consumers, admin tools), accepted while the group is empty.
import { ZERO_UUID } from '../protocol/codec/types.js';
import { isValidGroupId } from '../coordinator/group-types.js';
import { ErrorCode } from '../protocol/errors.js';
import { OffsetCommitApi } from '../protocol/messages/index.js';
import { defineHandler } from './types.js';

export default defineHandler({
  codec: OffsetCommitApi,
  minVersion: 2,
  maxVersion: 10,
  async handle(ctx, request) {
    const { groups, topics } = ctx.broker;
    const byId = ctx.apiVersion >= 10;
    const names = await Promise.all(
      request.topics.map(async (t) => (byId ? (t.topicId === ZERO_UUID ? null : ((await topics.getByIdLoading(t.topicId))?.name ?? null)) : t.name)),
    );
    const partitions = request.topics.flatMap((t, i) =>
      t.partitions.map((p) => ({
        topic: names[i] ?? '',
        known: names[i] !== null,
        partition: p.partitionIndex,
        committedOffset: p.committedOffset,
        leaderEpoch: p.committedLeaderEpoch,
        metadata: p.committedMetadata,
      })),
    );
    let errors: number[];
    if (!isValidGroupId(request.groupId)) {
      errors = partitions.map(() => ErrorCode.INVALID_GROUP_ID);
    } else {
      const known = partitions.filter((p) => p.known);
      const knownErrors = await groups.commitOffsets(request.groupId, request.memberId, request.groupInstanceId, request.generationIdOrMemberEpoch, known);
      let k = 0;
      errors = partitions.map((p) => (p.known ? knownErrors[k++]! : ErrorCode.UNKNOWN_TOPIC_ID));
    }
    let i = 0;
    return {
      throttleTimeMs: 0,
      topics: request.topics.map((t) => ({
        name: t.name,
        topicId: t.topicId,
        partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: errors[i++]! })),
      })),
    };
  },
});
