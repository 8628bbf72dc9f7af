// FindCoordinator (key 10), v0-6.
// v1: key type (0 group, 1 transaction), error message. v3: flexible.
// v4: batched coordinator keys (KIP-699). v6: share-group keys (type 2),
// which this broker does not serve.
// A group's or transactional id's coordinator is the broker holding its
// slot (coordination.ts; one slot family for both, as Kafka hashes both
// alike over 50 partitions), which may be another broker sharing the database.
// Authorization, as Kafka's KafkaApis, per key: DESCRIBE on the group
// (GROUP_AUTHORIZATION_FAILED) or on the transactional id
// (TRANSACTIONAL_ID_AUTHORIZATION_FAILED); below v4 the error carries
// Kafka's message for it.
import { ErrorCode } from '../protocol/errors.js';
import { FindCoordinatorApi } from '../protocol/messages/index.js';
import { AclOperation, ResourceType, allowed } from './authorization.js';
import { defineHandler } from './types.js';

const GROUP = 0;
const TRANSACTION = 1;

export default defineHandler({
  codec: FindCoordinatorApi,
  minVersion: 0,
  maxVersion: 6,
  async handle(ctx, request) {
    const self = ctx.broker.advertised(ctx.listener);
    const answer = (key: string) => {
      if (request.keyType !== GROUP && request.keyType !== TRANSACTION) {
        return { key, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `Unsupported key type ${request.keyType}`, nodeId: -1, host: '', port: -1 };
      }
      const refused = (errorCode: number, message: string) => ({ key, errorCode, errorMessage: ctx.apiVersion < 4 ? message : null, nodeId: -1, host: '', port: -1 });
      if (request.keyType === GROUP && !allowed(ctx, AclOperation.DESCRIBE, ResourceType.GROUP, key)) return refused(ErrorCode.GROUP_AUTHORIZATION_FAILED, 'Group authorization failed.');
      if (request.keyType === TRANSACTION && !allowed(ctx, AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, key)) {
        return refused(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, 'Transactional Id authorization failed.');
      }
      if (key === '' && request.keyType === GROUP) return { key, errorCode: ErrorCode.INVALID_GROUP_ID, errorMessage: null, nodeId: -1, host: '', port: -1 };
      const node = ctx.broker.coordination.coordinatorOf(key);
      const coordinator = node === self.nodeId ? self : ctx.broker.liveBrokers(ctx.listener).find((b) => b.nodeId === node);
      if (!coordinator) return refused(ErrorCode.COORDINATOR_NOT_AVAILABLE, 'The coordinator is not available.');
      return { key, errorCode: ErrorCode.NONE, errorMessage: null, nodeId: coordinator.nodeId, host: coordinator.host, port: coordinator.port };
    };
    if (ctx.apiVersion >= 4) return { throttleTimeMs: 0, coordinators: request.coordinatorKeys.map(answer) };
    const { key: _key, ...single } = answer(request.key);
    return { throttleTimeMs: 0, ...single };
  },
});
