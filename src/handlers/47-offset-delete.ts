// OffsetDelete (key 47), v0 (KIP-496).
// Removes committed offsets of partitions the group no longer consumes;
// partitions of topics its members subscribe to get GROUP_SUBSCRIBED_TO_TOPIC.
// Authorization, as Kafka: DELETE on the group, else the request's error is
// GROUP_AUTHORIZATION_FAILED; READ on each topic, else its partitions answer
// TOPIC_AUTHORIZATION_FAILED and keep their offsets.
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
    const readable = authorizedNames(ctx, AclOperation.READ, ResourceType.TOPIC, request.topics.map((t) => t.name));
    const partitions = request.topics.filter((t) => readable.has(t.name)).flatMap((t) => t.partitions.map((p) => ({ topic: t.name, partition: p.partitionIndex })));
    const { errorCode, partitionErrors } = typeof groups === 'number' ? { errorCode: groups, partitionErrors: [] } : await groups.deleteOffsets(request.groupId, partitions);
    if (errorCode !== ErrorCode.NONE) return { errorCode, throttleTimeMs: 0, topics: [] };
    let i = 0;
    return {
      errorCode,
      throttleTimeMs: 0,
      topics: request.topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: readable.has(t.name) ? partitionErrors[i++]! : ErrorCode.TOPIC_AUTHORIZATION_FAILED })),
      })),
    };
  },
});
