// TxnOffsetCommit (key 28), v0-5.
// v1: same as v0. v2: committed leader epoch. v3: flexible; the consumer's
// generation, member id and group instance id (KIP-447), checked against
// the group; PRODUCER_FENCED (KIP-588). v4: same as v3 (KIP-890 part 1
// errors). v5: same as v4.
// The offsets are staged under the transaction and become the group's
// committed offsets only when it commits.
// Authorization, as Kafka: WRITE on the transactional id, else every
// partition answers TRANSACTIONAL_ID_AUTHORIZATION_FAILED; READ on the group,
// else GROUP_AUTHORIZATION_FAILED; READ on each topic, else its partitions
// answer TOPIC_AUTHORIZATION_FAILED and are not staged.
import { metadataTooLarge } from '../coordinator/group-coordinator.js';
import { isValidGroupId } from '../coordinator/group-types.js';
import { ErrorCode } from '../protocol/errors.js';
import { TxnOffsetCommitApi } from '../protocol/messages/index.js';
import type { PendingTxnOffset } from '../storage/pg/transaction-store.js';
import { AclOperation, ResourceType, allowed } from './authorization.js';
import { authorizedNames } from './authorized-names.js';
import { fencedForVersion } from './txn-errors.js';
import { defineHandler } from './types.js';

export default defineHandler({
  codec: TxnOffsetCommitApi,
  minVersion: 0,
  maxVersion: 5,
  async handle(ctx, request) {
    const { topics, groups, transactions } = ctx.broker;
    const everyPartition = (errorCode: number) => ({
      throttleTimeMs: 0,
      topics: request.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode })) })),
    });
    if (!allowed(ctx, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, request.transactionalId)) return everyPartition(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
    if (!allowed(ctx, AclOperation.READ, ResourceType.GROUP, request.groupId)) return everyPartition(ErrorCode.GROUP_AUTHORIZATION_FAILED);
    const readable = authorizedNames(ctx, AclOperation.READ, ResourceType.TOPIC, request.topics.map((t) => t.name));
    const errors: number[] = [];
    const accepted: PendingTxnOffset[] = [];
    let requestError: number = !isValidGroupId(request.groupId) ? ErrorCode.INVALID_GROUP_ID : ErrorCode.NONE;
    if (requestError === ErrorCode.NONE) requestError = groups.validateTxnOffsetCommit(request.groupId, request.memberId, request.groupInstanceId, request.generationId);
    for (const t of request.topics) {
      if (!readable.has(t.name)) {
        errors.push(...t.partitions.map(() => ErrorCode.TOPIC_AUTHORIZATION_FAILED));
        continue;
      }
      const topic = await topics.get(t.name);
      for (const p of t.partitions) {
        if (!topic || p.partitionIndex < 0 || p.partitionIndex >= topic.partitionCount) errors.push(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
        else if (metadataTooLarge(p.committedMetadata, groups.settings.offsetMetadataMaxBytes)) errors.push(ErrorCode.OFFSET_METADATA_TOO_LARGE);
        else {
          errors.push(ErrorCode.NONE);
          accepted.push({ groupId: request.groupId, topic: t.name, partition: p.partitionIndex, committedOffset: p.committedOffset, leaderEpoch: p.committedLeaderEpoch, metadata: p.committedMetadata });
        }
      }
    }
    if (requestError === ErrorCode.NONE && accepted.length > 0) {
      // A partition named twice: the last entry wins, as on Kafka.
      const unique = [...new Map(accepted.map((o) => [`${o.topic}\u0000${o.partition}`, o])).values()];
      requestError = await transactions.commitOffsets(request.transactionalId, request.producerId, request.producerEpoch, unique);
    }
    if (requestError === ErrorCode.NONE && accepted.length > 0) groups.noteOffsetsGroup(request.groupId);
    if (requestError !== ErrorCode.NONE) ctx.log.info({ transactionalId: request.transactionalId, group: request.groupId, errorCode: requestError }, 'transactional offset commit refused');
    const finalError = fencedForVersion(requestError, ctx.apiVersion, 3);
    let i = 0;
    return {
      throttleTimeMs: 0,
      topics: request.topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => {
          const own = errors[i++]!;
          return { partitionIndex: p.partitionIndex, errorCode: own !== ErrorCode.NONE ? own : finalError };
        }),
      })),
    };
  },
});
