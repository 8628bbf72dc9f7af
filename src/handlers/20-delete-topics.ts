// DeleteTopics (key 20), v0-6 (v0, removed in Kafka 4.0, is v1 without the throttle time).
// v1: throttle time. v4: flexible. v5: error messages. v6: topics named by
// name or by id. Deleting a topic removes its partitions and every stored
// batch in one transaction.
import { ZERO_UUID } from '../protocol/codec/types.js';
import { ErrorCode } from '../protocol/errors.js';
import { DeleteTopicsApi } from '../protocol/messages/index.js';
import type { Topic } from '../log/topic-manager.js';
import { AclOperation, ResourceType, allowed } from './authorization.js';
import { defineHandler } from './types.js';

/** Kafka's controller answers an unauthorized deletion with the error's own message (ApiError without text). */
const TOPIC_AUTHORIZATION_MESSAGE = 'Topic authorization failed.';

const UNKNOWN_MESSAGES = new Map<number, string>([
  [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'This server does not host this topic-partition.'],
  [ErrorCode.UNKNOWN_TOPIC_ID, 'This server does not host this topic ID.'],
]);

export default defineHandler({
  codec: DeleteTopicsApi,
  minVersion: 0,
  maxVersion: 6,
  async handle(ctx, request) {
    const { topics: topicManager, logs } = ctx.broker;
    const wanted = ctx.apiVersion >= 6 ? request.topics : request.topicNames.map((name) => ({ name, topicId: ZERO_UUID }));
    const responses = [];
    for (const w of wanted) {
      let topic: Topic | null = null;
      let missing: number = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
      if (w.name !== null) {
        topic = await topicManager.get(w.name);
      } else if (w.topicId !== ZERO_UUID) {
        topic = await topicManager.getByIdLoading(w.topicId);
        missing = ErrorCode.UNKNOWN_TOPIC_ID;
      } else {
        missing = ErrorCode.INVALID_REQUEST;
      }
      // Kafka: a topic named in the request is refused before it is looked up; one
      // given by id is refused without its name unless the principal may describe it.
      const name = w.name ?? topic?.name;
      if (name !== undefined && w.name === null && !allowed(ctx, AclOperation.DESCRIBE, ResourceType.TOPIC, name)) {
        responses.push({ name: null, topicId: w.topicId, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, errorMessage: TOPIC_AUTHORIZATION_MESSAGE });
        continue;
      }
      if (name !== undefined && !allowed(ctx, AclOperation.DELETE, ResourceType.TOPIC, name)) {
        responses.push({ name, topicId: w.topicId, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, errorMessage: TOPIC_AUTHORIZATION_MESSAGE });
        continue;
      }
      if (!topic || !(await topicManager.delete(topic))) {
        // Kafka's controller says why for an unknown name or id (the error's own message).
        const errorMessage = UNKNOWN_MESSAGES.get(missing) ?? null;
        responses.push({ name: w.name, topicId: w.topicId, errorCode: missing, errorMessage });
        continue;
      }
      logs.dropTopic(topic.topicId);
      ctx.log.info({ topic: topic.name }, 'deleted topic');
      responses.push({ name: topic.name, topicId: topic.topicId, errorCode: ErrorCode.NONE, errorMessage: null });
    }
    return { throttleTimeMs: 0, responses };
  },
});
