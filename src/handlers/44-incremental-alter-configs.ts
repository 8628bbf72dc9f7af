// IncrementalAlterConfigs (key 44), v0-1.
// v1: flexible. Per config: SET (0), DELETE (1, back to the default), APPEND
// (2) and SUBTRACT (3) on list configs only (else INVALID_CONFIG), applied to
// the topic's stored configs under its row lock. Checked as Kafka checks it:
// duplicate resources, duplicate names and null values other than DELETE's
// (INVALID_REQUEST), then the resulting set (INVALID_CONFIG), then that the
// topic exists. validate_only checks without storing. Broker resources (""
// for the cluster-wide default, or this broker's id) take the same operations
// on their dynamic configs, checked as Kafka's ConfigAdminManager checks them
// (log/broker-configs.ts). There are no per-logger levels: BROKER_LOGGER is
// refused with INVALID_REQUEST. Groups (type 32) take SET and DELETE on their
// configs (coordinator/group-configs.ts).
import { ErrorCode } from '../protocol/errors.js';
import { IncrementalAlterConfigsApi } from '../protocol/messages/index.js';
import { alterRequestErrors, brokerResourceNameError, ConfigResourceType } from '../log/config-values.js';
import { applyIncrementalAlter } from '../log/topic-configs.js';
import { configsAlterAuthorizationError } from './authorization.js';
import { defineHandler } from './types.js';

export default defineHandler({
  codec: IncrementalAlterConfigsApi,
  minVersion: 0,
  maxVersion: 1,
  async handle(ctx, request) {
    const { topics, nodeId, brokerConfigs } = ctx.broker;
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
        const outcome = await topics.alterConfigs(r.resourceName, (current) => applyIncrementalAlter(current, r.configs, brokerConfigs), request.validateOnly);
        if (outcome.errorCode === ErrorCode.NONE && !request.validateOnly) ctx.log.info({ topic: r.resourceName, ops: r.configs }, 'altered topic configs');
        responses.push(answer(outcome.errorCode, outcome.errorMessage));
      } else if (r.resourceType === ConfigResourceType.BROKER) {
        const nameError = brokerResourceNameError(r.resourceName, nodeId);
        if (nameError) {
          responses.push(answer(ErrorCode.INVALID_REQUEST, nameError));
          continue;
        }
        const outcome = await brokerConfigs.alter(r.resourceName, { ops: r.configs }, request.validateOnly);
        if (outcome.errorCode !== ErrorCode.NONE)
          ctx.log.info({ broker: r.resourceName, ops: r.configs.map((c) => [c.name, c.configOperation]), error: outcome.errorMessage }, 'broker config change refused');
        else if (!request.validateOnly) ctx.log.info({ broker: r.resourceName, ops: r.configs.map((c) => [c.name, c.configOperation]) }, 'altered broker configs');
        responses.push(answer(outcome.errorCode, outcome.errorMessage));
      } else if (r.resourceType === ConfigResourceType.GROUP) {
        const outcome = await ctx.broker.groupConfigs.alter(r.resourceName, { ops: r.configs }, request.validateOnly);
        if (outcome.errorCode === ErrorCode.NONE && !request.validateOnly) ctx.log.info({ group: r.resourceName, ops: r.configs }, 'altered group configs');
        responses.push(answer(outcome.errorCode, outcome.errorMessage));
      } else if (r.resourceType === ConfigResourceType.BROKER_LOGGER) {
        responses.push(answer(ErrorCode.INVALID_REQUEST, 'pgkafka has no per-logger log levels; set PGKAFKA_LOG_LEVEL instead'));
      } else {
        responses.push(answer(ErrorCode.INVALID_REQUEST, `Unknown resource type ${r.resourceType}`));
      }
    }
    return { throttleTimeMs: 0, responses };
  },
});
