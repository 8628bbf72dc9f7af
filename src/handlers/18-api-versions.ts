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
// a cluster at). transaction.version is finalized at the configured level (Kafka 4's default 2:
// transactions version 2, KIP-890 part 2); clients switch protocols on it, and a level of 0 is
// left out of the finalized features, as Kafka does. The others Kafka 4.3 finalizes name protocols
// pgkafka does not serve or that clients would switch on wrongly: group.version 1 (KIP-848
// consumer groups), share.version and streams.version (share and streams groups). The table never
// changes while the broker runs, alone or beside others on its schema (a partition's leader reaches
// the transaction's coordinator on another broker, coordinator/txn-add-requests.ts), so its epoch is
// 0. As Kafka (KAFKA-17492), v3 leaves out a supported feature whose minimum is 0, which some older
// clients cannot read.
const SUPPORTED_FEATURES = [
  { name: 'metadata.version', minVersion: 7, maxVersion: 30 },
  { name: 'transaction.version', minVersion: 0, maxVersion: 2 },
];

function finalizedFeatures(transactionVersion: number) {
  const levels: [string, number][] = [['metadata.version', 30]];
  if (transactionVersion > 0) levels.push(['transaction.version', transactionVersion]);
  return levels.map(([name, level]) => ({ name, minVersionLevel: level, maxVersionLevel: level }));
}

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
    return {
      errorCode: ErrorCode.NONE,
      apiKeys,
      throttleTimeMs: 0,
      supportedFeatures: ctx.apiVersion >= 4 ? SUPPORTED_FEATURES : SUPPORTED_FEATURES.filter((f) => f.minVersion > 0),
      finalizedFeaturesEpoch: 0n,
      finalizedFeatures: finalizedFeatures(ctx.broker.config.transactionVersion),
    };
  },
});
