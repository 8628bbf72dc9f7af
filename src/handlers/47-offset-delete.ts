// OffsetDelete (key 47), v0 (KIP-496).
// Removes committed offsets of partitions the group no longer consumes;
// partitions of topics its members subscribe to get GROUP_SUBSCRIBED_TO_TOPIC.
// Authorization, as Kafka: DELETE on the group, else the request's error is
// GROUP_AUTHORIZATION_FAILED; READ on each topic, else its partitions answer
// TOPIC_AUTHORIZATION_FAILED and keep their offsets. A partition that does not
// exist answers UNKNOWN_TOPIC_OR_PARTITION.
import { ErrorCode } from '../protocol/errors.js';
import { OffsetDeleteApi } from '../protocol/messages/index.js';
import { AclOperation, ResourceType } from './authorization.js';
import { authorizedNames } from './authorized-names.js';
import { routeGroup } from './group-routing.js';
import { defineHandler } from './types.js';

export default defineHandler({
  codec: OffsetDeleteApi,
  minVersion: 0,
  maxVersion: 0,
  async handle(ctx, request) {
    const groups = routeGroup(ctx, request.groupId, { operation: AclOperation.DELETE });
    if (groups === ErrorCode.GROUP_AUTHORIZATION_FAILED) return { errorCode: groups, throttleTimeMs: 0, topics: [] };
    const readable = authorizedNames(
      ctx,
      AclOperation.READ,
      ResourceType.TOPIC,
      request.topics.map((t) => t.name),
    );
    // As Kafka's request handler: a partition that does not exist is UNKNOWN_TOPIC_OR_PARTITION, never asked of the group.
    const partitionCounts = new Map<string, number>();
    for (const t of request.topics) if (readable.has(t.name)) partitionCounts.set(t.name, (await ctx.broker.topics.get(t.name))?.partitionCount ?? 0);
    const exists = (topic: string, partition: number) => partition >= 0 && partition < (partitionCounts.get(topic) ?? 0);
    const partitions = request.topics
      .filter((t) => readable.has(t.name))
      .flatMap((t) => t.partitions.filter((p) => exists(t.name, p.partitionIndex)).map((p) => ({ topic: t.name, partition: p.partitionIndex })));
    const { errorCode, partitionErrors } = typeof groups === 'number' ? { errorCode: groups, partitionErrors: [] } : await groups.deleteOffsets(request.groupId, partitions);
    if (errorCode !== ErrorCode.NONE) return { errorCode, throttleTimeMs: 0, topics: [] };
    let i = 0;
    return {
      errorCode,
      throttleTimeMs: 0,
      topics: request.topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => ({
          partitionIndex: p.partitionIndex,
          errorCode: !readable.has(t.name) ? ErrorCode.TOPIC_AUTHORIZATION_FAILED : !exists(t.name, p.partitionIndex) ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION : partitionErrors[i++]!,
        })),
      })),
    };
  },
});
