// AlterConfigs (key 33), v0-2.
// v1: throttle on quota violation (none here). v2: flexible.
// The legacy API: a topic's explicit config set is replaced by the request's
// (names left out revert to the defaults). Checked as Kafka's broker and
// controller check it: duplicate resources, duplicate names and null values
// (INVALID_REQUEST), then the resulting set (INVALID_CONFIG, the first bad
// config in Kafka's order), then that the topic exists. validate_only checks
// without storing. A broker resource ("" for the cluster-wide default, or
// this broker's id) has its whole dynamic config set replaced, checked as
// Kafka's ConfigAdminManager checks it (log/broker-configs.ts). A group
// (type 32) has its config set replaced, checked as Kafka's GroupConfig
// (coordinator/group-configs.ts).
import { ErrorCode } from '../protocol/errors.js';
import { AlterConfigsApi } from '../protocol/messages/index.js';
import { alterRequestErrors, brokerResourceNameError, ConfigResourceType } from '../log/config-values.js';
import { configsAlterAuthorizationError } from './authorization.js';
import { defineHandler } from './types.js';

export default defineHandler({
  codec: AlterConfigsApi,
  minVersion: 0,
  maxVersion: 2,
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
        const configs = Object.fromEntries(r.configs.map((c) => [c.name, c.value!]));
        const outcome = await topics.alterConfigs(r.resourceName, () => ({ configs }), request.validateOnly);
        if (outcome.errorCode === ErrorCode.NONE && !request.validateOnly) ctx.log.info({ topic: r.resourceName, configs }, 'altered topic configs');
        responses.push(answer(outcome.errorCode, outcome.errorMessage));
      } else if (r.resourceType === ConfigResourceType.BROKER) {
        const nameError = brokerResourceNameError(r.resourceName, nodeId);
        if (nameError) {
          responses.push(answer(ErrorCode.INVALID_REQUEST, nameError));
          continue;
        }
        const configs = Object.fromEntries(r.configs.map((c) => [c.name, c.value!]));
        const outcome = await brokerConfigs.alter(r.resourceName, { replace: configs }, request.validateOnly);
        if (outcome.errorCode !== ErrorCode.NONE) ctx.log.info({ broker: r.resourceName, configs: Object.keys(configs), error: outcome.errorMessage }, 'broker config change refused');
        else if (!request.validateOnly) ctx.log.info({ broker: r.resourceName, configs: Object.keys(configs) }, 'altered broker configs');
        responses.push(answer(outcome.errorCode, outcome.errorMessage));
      } else if (r.resourceType === ConfigResourceType.GROUP) {
        const configs = Object.fromEntries(r.configs.map((c) => [c.name, c.value!]));
        const outcome = await ctx.broker.groupConfigs.alter(r.resourceName, { replace: configs }, request.validateOnly);
        if (outcome.errorCode === ErrorCode.NONE && !request.validateOnly) ctx.log.info({ group: r.resourceName, configs }, 'altered group configs');
        responses.push(answer(outcome.errorCode, outcome.errorMessage));
      } else {
        responses.push(answer(ErrorCode.INVALID_REQUEST, `Unknown resource type ${r.resourceType}`));
      }
    }
    return { throttleTimeMs: 0, responses };
  },
});
