// SyncGroup (key 14), v0-5.
// v1: throttle time. v3: group instance id. v4: flexible. v5: protocol type
// and name. From v5 both are mandatory: as Kafka (KafkaApis), a request
// without either answers INCONSISTENT_GROUP_PROTOCOL before anything else,
// authorization included. Given ones are checked against the group's after
// the member and generation (ClassicGroup.sync).
// Authorization, as Kafka: READ on the group, else GROUP_AUTHORIZATION_FAILED.
import { ErrorCode } from '../protocol/errors.js';
import { SyncGroupApi } from '../protocol/messages/index.js';
import { syncError } from '../coordinator/group-types.js';
import { AclOperation } from './authorization.js';
import { routeGroup } from './group-routing.js';
import { defineHandler } from './types.js';

export default defineHandler({
  codec: SyncGroupApi,
  minVersion: 0,
  maxVersion: 5,
  async handle(ctx, request) {
    if (ctx.apiVersion >= 5 && (request.protocolType === null || request.protocolName === null)) return { throttleTimeMs: 0, ...syncError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL) };
    const groups = routeGroup(ctx, request.groupId, { operation: AclOperation.READ });
    if (typeof groups === 'number') return { throttleTimeMs: 0, ...syncError(groups) };
    const result = await groups.syncGroup(request.groupId, {
      groupId: request.groupId,
      generationId: request.generationId,
      memberId: request.memberId,
      groupInstanceId: request.groupInstanceId,
      protocolType: request.protocolType,
      protocolName: request.protocolName,
      // Copies: the request buffer is not kept once the response is sent.
      assignments: request.assignments.map((a) => ({ memberId: a.memberId, assignment: Buffer.from(a.assignment) })),
    });
    return { throttleTimeMs: 0, ...result };
  },
});
