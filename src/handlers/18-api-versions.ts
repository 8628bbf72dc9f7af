// ApiVersions (key 18), v0-4.
// v1: throttle time. v3: flexible; client software name/version; supported and
// finalized features as tagged fields. The response always uses header v0,
// and a request at an unknown version is answered in the v0 format by the
// connection (KIP-511), never here.
import { ApiVersionsApi } from '../protocol/messages/index.js';
import { ErrorCode } from '../protocol/errors.js';
import { defineHandler } from './types.js';

// The features pgkafka serves, as Kafka 4.3.1 names them (v3+). A Kafka 4 broker always finalizes
// metadata.version (7 is 3.3-IV3, the lowest Kafka 4 accepts; 30 is the level Kafka 4.3.1 formats
// a cluster at). The others Kafka 4.3 finalizes name protocols pgkafka does not serve, and clients
// switch on them: transaction.version 2 (KIP-890 part 2 transactions), group.version 1 (KIP-848
// consumer groups), share.version and streams.version (share and streams groups). Clients keep the
// features of the highest epoch they have seen, from -1: the table never changes, so its epoch is 0.
const FEATURES: { name: string; minVersion: number; maxVersion: number; finalizedLevel: number }[] = [{ name: 'metadata.version', minVersion: 7, maxVersion: 30, finalizedLevel: 30 }];
const supportedFeatures = FEATURES.map(({ name, minVersion, maxVersion }) => ({ name, minVersion, maxVersion }));
const finalizedFeatures = FEATURES.map(({ name, finalizedLevel }) => ({ name, minVersionLevel: finalizedLevel, maxVersionLevel: finalizedLevel }));

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
    if (ctx.apiVersion < 3) return { errorCode: ErrorCode.NONE, apiKeys, throttleTimeMs: 0 };
    return { errorCode: ErrorCode.NONE, apiKeys, throttleTimeMs: 0, supportedFeatures, finalizedFeaturesEpoch: 0n, finalizedFeatures };
  },
});
