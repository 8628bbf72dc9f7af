// ApiVersions (key 18), v0-4.
// v1: throttle time. v3: flexible; client software name/version; supported and
// finalized features as tagged fields. The response always uses header v0,
// and a request at an unknown version is answered in the v0 format by the
// connection (KIP-511), never here.
import { ApiVersionsApi } from '../protocol/messages/index.js';
import { ErrorCode } from '../protocol/errors.js';
import { defineHandler } from './types.js';

// Kafka's request validation for v3+: non-empty, [a-zA-Z0-9._-] with alphanumeric ends.
const SOFTWARE_FIELD = /^[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?$/;

export default defineHandler({
  codec: ApiVersionsApi,
  minVersion: 0,
  maxVersion: 4,
  async handle(ctx, request) {
    const apiKeys = ctx.broker.apiVersions;
    if (ctx.apiVersion >= 3 && (!SOFTWARE_FIELD.test(request.clientSoftwareName) || !SOFTWARE_FIELD.test(request.clientSoftwareVersion))) {
      return { errorCode: ErrorCode.INVALID_REQUEST, apiKeys };
    }
    return { errorCode: ErrorCode.NONE, apiKeys, throttleTimeMs: 0 };
  },
});
