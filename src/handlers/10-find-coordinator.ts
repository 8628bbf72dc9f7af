// FindCoordinator (key 10), v0-6.
// v1: key type (0 group, 1 transaction), error message. v3: flexible.
// v4: batched coordinator keys (KIP-699). v6: share-group keys (type 2),
// which this broker does not serve.
// This broker coordinates every group itself.
import { ErrorCode } from '../protocol/errors.js';
import { FindCoordinatorApi } from '../protocol/messages/index.js';
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
      if (key === '' && request.keyType === GROUP) return { key, errorCode: ErrorCode.INVALID_GROUP_ID, errorMessage: null, nodeId: -1, host: '', port: -1 };
      return { key, errorCode: ErrorCode.NONE, errorMessage: null, nodeId: self.nodeId, host: self.host, port: self.port };
    };
    if (ctx.apiVersion >= 4) return { throttleTimeMs: 0, coordinators: request.coordinatorKeys.map(answer) };
    const { key: _key, ...single } = answer(request.key);
    return { throttleTimeMs: 0, ...single };
  },
});
