// TxnOffsetCommit (key 28), v0-5.
// v1: same as v0. v2: committed leader epoch. v3: flexible; the consumer's
// generation, member id and group instance id (KIP-447), checked against
// the group. v4: TRANSACTION_ABORTABLE (KIP-890 part 1) where v0-3 get
// INVALID_TXN_STATE. v5: transactions version 2 (KIP-890 part 2): the
// request also adds the group to the transaction (what AddOffsetsToTxn does),
// as Kafka's group coordinator asks the transaction coordinator to.
// Kafka's order of checks: topics (KafkaApis), the group id, this broker
// coordinating the group (else NOT_COORDINATOR), the transaction (verified with the transaction coordinator: unknown
// transactional or producer id INVALID_PRODUCER_ID_MAPPING, another epoch
// INVALID_PRODUCER_EPOCH at every version), the group's member and
// generation, then each partition's metadata size.
// The offsets are staged under the transaction and become the group's
// committed offsets only when it commits. As Kafka routes TxnOffsetCommit to
// the group's coordinator, which may be another broker than the
// transaction's: both checks and the staging then go by the transaction's
// stored state, and its coordinator applies the staged offsets at commit.
// Authorization, as Kafka: WRITE on the transactional id, else every
// partition answers TRANSACTIONAL_ID_AUTHORIZATION_FAILED; READ on the group,
// else GROUP_AUTHORIZATION_FAILED; READ on each topic, else its partitions
// answer TOPIC_AUTHORIZATION_FAILED and are not staged.
import { metadataTooLarge } from '../coordinator/group-coordinator.js';
import { isValidGroupId } from '../coordinator/group-types.js';
import type { PendingTxnOffset } from '../coordinator/transaction-coordinator.js';
import { ErrorCode } from '../protocol/errors.js';
import { TxnOffsetCommitApi } from '../protocol/messages/index.js';
import { AclOperation, ResourceType, allowed } from './authorization.js';
import { authorizedNames } from './authorized-names.js';
import { addOffsetsToTransaction } from './txn-implicit-add.js';
import { defineHandler } from './types.js';

/**
 * Kafka's answers when the transaction verification fails (its
 * AddPartitionsToTxnManager): a fenced epoch is INVALID_PRODUCER_EPOCH for
 * every version, and TRANSACTION_ABORTABLE is INVALID_TXN_STATE below v4.
 */
function verificationError(errorCode: number, apiVersion: number): number {
  if (errorCode === ErrorCode.PRODUCER_FENCED) return ErrorCode.INVALID_PRODUCER_EPOCH;
  if (errorCode === ErrorCode.TRANSACTION_ABORTABLE || errorCode === ErrorCode.INVALID_TXN_STATE) return apiVersion >= 4 ? ErrorCode.TRANSACTION_ABORTABLE : ErrorCode.INVALID_TXN_STATE;
  return errorCode;
}

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
    const readable = authorizedNames(
      ctx,
      AclOperation.READ,
      ResourceType.TOPIC,
      request.topics.map((t) => t.name),
    );
    // Per partition, in request order: what Kafka's KafkaApis answers before the group coordinator (null: passed on to it).
    const own: (number | null)[] = [];
    for (const t of request.topics) {
      const topic = readable.has(t.name) ? await topics.get(t.name) : null;
      for (const p of t.partitions) {
        if (!readable.has(t.name)) own.push(ErrorCode.TOPIC_AUTHORIZATION_FAILED);
        else if (!topic || p.partitionIndex < 0 || p.partitionIndex >= topic.partitionCount) own.push(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
        else own.push(null);
      }
    }
    let requestError: number = ErrorCode.NONE;
    if (own.some((e) => e === null)) {
      // The coordinator's order: the group id, this broker holding the group, then the transaction (verified with the transaction coordinator), then the group's member and generation.
      if (!isValidGroupId(request.groupId)) requestError = ErrorCode.INVALID_GROUP_ID;
      else if (!ctx.broker.coordination.owns(request.groupId)) requestError = ErrorCode.NOT_COORDINATOR;
      if (requestError === ErrorCode.NONE && ctx.apiVersion >= 5 && request.transactionalId !== '') {
        // Through the transaction coordinator's queue (here or on another broker), after the producer's earlier requests; the verification below then passes.
        requestError = verificationError(await addOffsetsToTransaction(ctx, request.transactionalId, request.producerId, request.producerEpoch, request.groupId), ctx.apiVersion);
      }
      if (requestError === ErrorCode.NONE)
        requestError = verificationError(await transactions.verifyOffsetCommit(request.transactionalId, request.producerId, request.producerEpoch, request.groupId), ctx.apiVersion);
      if (requestError === ErrorCode.NONE) {
        const committer = { memberId: request.memberId, groupInstanceId: request.groupInstanceId, generationIdOrMemberEpoch: request.generationId, apiVersion: ctx.apiVersion };
        requestError = groups.validateTxnOffsetCommit(request.groupId, committer);
      }
    }
    const accepted: PendingTxnOffset[] = [];
    let k = 0;
    for (const t of request.topics) {
      for (const p of t.partitions) {
        if (own[k] === null && requestError === ErrorCode.NONE) {
          if (metadataTooLarge(p.committedMetadata, groups.settings.offsetMetadataMaxBytes)) own[k] = ErrorCode.OFFSET_METADATA_TOO_LARGE;
          else
            accepted.push({
              groupId: request.groupId,
              topic: t.name,
              partition: p.partitionIndex,
              committedOffset: p.committedOffset,
              leaderEpoch: p.committedLeaderEpoch,
              metadata: p.committedMetadata,
            });
        }
        k++;
      }
    }
    if (accepted.length > 0) {
      // A partition named twice: the last entry wins, as on Kafka.
      const unique = [...new Map(accepted.map((o) => [`${o.topic}\u0000${o.partition}`, o])).values()];
      // Checked again in the transaction's queue: it may have moved on since the verification.
      requestError = verificationError(await transactions.commitOffsets(request.transactionalId, request.producerId, request.producerEpoch, request.groupId, unique), ctx.apiVersion);
      if (requestError === ErrorCode.NONE) groups.noteOffsetsGroup(request.groupId);
    }
    if (requestError !== ErrorCode.NONE) ctx.log.info({ transactionalId: request.transactionalId, group: request.groupId, errorCode: requestError }, 'transactional offset commit refused');
    let i = 0;
    return {
      throttleTimeMs: 0,
      topics: request.topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => {
          const error = own[i++];
          return { partitionIndex: p.partitionIndex, errorCode: error ?? requestError };
        }),
      })),
    };
  },
});
