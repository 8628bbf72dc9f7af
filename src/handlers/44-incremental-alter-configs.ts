// IncrementalAlterConfigs (key 44), v0-1.
// v1: flexible. Per config: SET (0), DELETE (1, back to the default), APPEND
// (2) and SUBTRACT (3) on list configs only (else INVALID_CONFIG), applied to
// the topic's stored configs under its row lock. Checked as Kafka checks it:
// duplicate resources, duplicate names and null values other than DELETE's
// (INVALID_REQUEST), then the resulting set (INVALID_CONFIG), then that the
// topic exists. validate_only checks without storing. pgkafka's broker
// configs are static and there are no per-logger levels: altering either is
// refused with INVALID_REQUEST.
import { ErrorCode } from '../protocol/errors.js';
import { IncrementalAlterConfigsApi } from '../protocol/messages/index.js';
import { alterRequestErrors, applyIncrementalAlter, brokerAlterError, ConfigResourceType } from '../log/topic-configs.js';
import { configsAlterAuthorizationError } from './authorization.js';
import { defineHandler } from './types.js';

export default defineHandler({
  codec: IncrementalAlterConfigsApi,
  minVersion: 0,
  maxVersion: 1,
  async handle(ctx, request) {
    const { topics, nodeId, config } = ctx.broker;
    const requestErrors = alterRequestErrors(request.resources);
    const responses = [];
    for (const [i, r] of request.resources.entries()) {
      const answer = (errorCode: number, errorMessage: string | null) => ({ errorCode, errorMessage, resourceType: r.resourceType, resourceName: r.resourceName });
      const requestError = requestErrors[i];
      if (requestError) {
        responses.push(answer(ErrorCode.INVALID_REQUEST, requestError));
        continue;
      }
      const refused = configsAlterAuthorizationError(ctx, r.resourceType, r.resourceName);
      if (refused) {
        responses.push(answer(refused.errorCode, refused.errorMessage));
        continue;
      }
      if (r.resourceType === ConfigResourceType.TOPIC) {
        const outcome = await topics.alterConfigs(r.resourceName, (current) => applyIncrementalAlter(current, r.configs, config), request.validateOnly);
        if (outcome.errorCode === ErrorCode.NONE && !request.validateOnly) ctx.log.info({ topic: r.resourceName, ops: r.configs }, 'altered topic configs');
        responses.push(answer(outcome.errorCode, outcome.errorMessage));
      } else if (r.resourceType === ConfigResourceType.BROKER) {
        const error = brokerAlterError(r.resourceName, nodeId, r.configs.map((c) => c.name));
        responses.push(error ? answer(ErrorCode.INVALID_REQUEST, error) : answer(ErrorCode.NONE, null));
      } else if (r.resourceType === ConfigResourceType.BROKER_LOGGER) {
        responses.push(answer(ErrorCode.INVALID_REQUEST, 'pgkafka has no per-logger log levels; set PGKAFKA_LOG_LEVEL instead'));
      } else {
        responses.push(answer(ErrorCode.INVALID_REQUEST, `Unknown resource type ${r.resourceType}`));
      }
    }
    return { throttleTimeMs: 0, responses };
  },
});
