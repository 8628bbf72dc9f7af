// OffsetCommit (key 8), v0-10.
// v0-1 were removed in Kafka 4.0. v0: no generation or member id, a commit
// from outside group management (Kafka 3.9 stored these in ZooKeeper; here
// they are stored like every other commit). v1: a commit timestamp per
// partition (-1: the broker's clock). v2-4: retention time; when not -1 the
// offset expires that long after the commit instead of by
// offsets.retention.minutes, as Kafka 3.9. v3: throttle time. v6: committed leader epoch.
// v7: group instance id. v8: flexible. v10: topic ids.
// Generation -1 with no member id is a commit from outside group management
// (standalone consumers, admin tools), accepted while the group is empty.
// Authorization, as Kafka's KafkaApis: READ on the group, else every
// partition answers GROUP_AUTHORIZATION_FAILED; then READ on each topic,
// else its partitions answer TOPIC_AUTHORIZATION_FAILED and are not committed.
import { ZERO_UUID } from '../protocol/codec/types.js';
import { ErrorCode } from '../protocol/errors.js';
import { OffsetCommitApi } from '../protocol/messages/index.js';
import { AclOperation, ResourceType } from './authorization.js';
import { authorizedNames } from './authorized-names.js';
import { routeGroup } from './group-routing.js';
import { storageFailure } from './storage-failure.js';
import { defineHandler } from './types.js';

export default defineHandler({
  codec: OffsetCommitApi,
  minVersion: 0,
  maxVersion: 10,
  async handle(ctx, request) {
    const { topics } = ctx.broker;
    const respond = (errors: number[]) => {
      let i = 0;
      return {
        throttleTimeMs: 0,
        topics: request.topics.map((t) => ({
          name: t.name,
          topicId: t.topicId,
          partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: errors[i++]! })),
        })),
      };
    };
    // The group's refusals other than its ACL apply only to the partitions the topic checks pass on.
    const groups = routeGroup(ctx, request.groupId, { operation: AclOperation.READ, invalidGroupId: 'serveEmpty' });
    if (groups === ErrorCode.GROUP_AUTHORIZATION_FAILED) return respond(request.topics.flatMap((t) => t.partitions.map(() => groups)));
    const byId = ctx.apiVersion >= 10;
    const names = await Promise.all(request.topics.map(async (t) => (byId ? (t.topicId === ZERO_UUID ? null : ((await topics.getByIdLoading(t.topicId))?.name ?? null)) : t.name)));
    const readable = authorizedNames(
      ctx,
      AclOperation.READ,
      ResourceType.TOPIC,
      names.filter((n) => n !== null),
    );
    const partitions = request.topics.flatMap((t, i) =>
      t.partitions.map((p) => ({
        topic: names[i] ?? '',
        // Unknown topic ids first, then topics the requester may not read; the rest go to the coordinator.
        refused: names[i] === null ? ErrorCode.UNKNOWN_TOPIC_ID : !readable.has(names[i]!) ? ErrorCode.TOPIC_AUTHORIZATION_FAILED : ErrorCode.NONE,
        partition: p.partitionIndex,
        committedOffset: p.committedOffset,
        leaderEpoch: p.committedLeaderEpoch,
        metadata: p.committedMetadata,
        commitTimestampMs: ctx.apiVersion === 1 ? p.commitTimestamp : -1n,
        retentionTimeMs: ctx.apiVersion >= 2 && ctx.apiVersion <= 4 ? request.retentionTimeMs : -1n,
      })),
    );
    const wanted = partitions.filter((p) => p.refused === ErrorCode.NONE);
    let wantedErrors: number[] = [];
    if (typeof groups === 'number') wantedErrors = wanted.map(() => groups);
    else if (wanted.length > 0) {
      try {
        const committer = { memberId: request.memberId, groupInstanceId: request.groupInstanceId, generationIdOrMemberEpoch: request.generationIdOrMemberEpoch, apiVersion: ctx.apiVersion };
        wantedErrors = await groups.commitOffsets(request.groupId, committer, wanted);
      } catch (err) {
        const errorCode = storageFailure(ctx, err);
        wantedErrors = wanted.map(() => errorCode);
      }
    }
    let k = 0;
    return respond(partitions.map((p) => (p.refused !== ErrorCode.NONE ? p.refused : wantedErrors[k++]!)));
  },
});
