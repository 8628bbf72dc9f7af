import { Writer } from '../protocol/codec/writer.js';
import { ErrorCode } from '../protocol/errors.js';
import { ApiVersionsApi, writeResponseHeader } from '../protocol/messages/index.js';
import type { Handler } from './types.js';
import produce from './00-produce.js';
import fetch from './01-fetch.js';
import listOffsets from './02-list-offsets.js';
import metadata from './03-metadata.js';
import offsetCommit from './08-offset-commit.js';
import offsetFetch from './09-offset-fetch.js';
import findCoordinator from './10-find-coordinator.js';
import joinGroup from './11-join-group.js';
import heartbeat from './12-heartbeat.js';
import leaveGroup from './13-leave-group.js';
import syncGroup from './14-sync-group.js';
import describeGroups from './15-describe-groups.js';
import listGroups from './16-list-groups.js';
import saslHandshake from './17-sasl-handshake.js';
import apiVersions from './18-api-versions.js';
import createTopics from './19-create-topics.js';
import deleteTopics from './20-delete-topics.js';
import deleteRecords from './21-delete-records.js';
import initProducerId from './22-init-producer-id.js';
import offsetForLeaderEpoch from './23-offset-for-leader-epoch.js';
import addPartitionsToTxn from './24-add-partitions-to-txn.js';
import addOffsetsToTxn from './25-add-offsets-to-txn.js';
import endTxn from './26-end-txn.js';
import txnOffsetCommit from './28-txn-offset-commit.js';
import describeAcls from './29-describe-acls.js';
import createAcls from './30-create-acls.js';
import deleteAcls from './31-delete-acls.js';
import describeConfigs from './32-describe-configs.js';
import alterConfigs from './33-alter-configs.js';
import alterReplicaLogDirs from './34-alter-replica-log-dirs.js';
import describeLogDirs from './35-describe-log-dirs.js';
import saslAuthenticate from './36-sasl-authenticate.js';
import createPartitions from './37-create-partitions.js';
import createDelegationToken from './38-create-delegation-token.js';
import renewDelegationToken from './39-renew-delegation-token.js';
import expireDelegationToken from './40-expire-delegation-token.js';
import describeDelegationToken from './41-describe-delegation-token.js';
import deleteGroups from './42-delete-groups.js';
import electLeaders from './43-elect-leaders.js';
import incrementalAlterConfigs from './44-incremental-alter-configs.js';
import alterPartitionReassignments from './45-alter-partition-reassignments.js';
import listPartitionReassignments from './46-list-partition-reassignments.js';
import offsetDelete from './47-offset-delete.js';
import describeClientQuotas from './48-describe-client-quotas.js';
import describeUserScramCredentials from './50-describe-user-scram-credentials.js';
import alterUserScramCredentials from './51-alter-user-scram-credentials.js';
import describeCluster from './60-describe-cluster.js';
import describeProducers from './61-describe-producers.js';
import describeTransactions from './65-describe-transactions.js';
import listTransactions from './66-list-transactions.js';
import consumerGroupHeartbeat from './68-consumer-group-heartbeat.js';
import consumerGroupDescribe from './69-consumer-group-describe.js';
import listConfigResources from './74-list-config-resources.js';
import describeTopicPartitions from './75-describe-topic-partitions.js';

export const handlers: Handler[] = [
  produce,
  fetch,
  listOffsets,
  metadata,
  offsetCommit,
  offsetFetch,
  findCoordinator,
  joinGroup,
  heartbeat,
  leaveGroup,
  syncGroup,
  describeGroups,
  listGroups,
  apiVersions,
  createTopics,
  deleteTopics,
  deleteRecords,
  initProducerId,
  offsetForLeaderEpoch,
  addPartitionsToTxn,
  addOffsetsToTxn,
  endTxn,
  txnOffsetCommit,
  describeAcls,
  createAcls,
  deleteAcls,
  describeConfigs,
  alterConfigs,
  alterReplicaLogDirs,
  describeLogDirs,
  createPartitions,
  createDelegationToken,
  renewDelegationToken,
  expireDelegationToken,
  describeDelegationToken,
  deleteGroups,
  electLeaders,
  incrementalAlterConfigs,
  alterPartitionReassignments,
  listPartitionReassignments,
  offsetDelete,
  describeClientQuotas,
  describeCluster,
  describeProducers,
  describeTransactions,
  listTransactions,
  consumerGroupHeartbeat,
  consumerGroupDescribe,
  listConfigResources,
  describeTopicPartitions,
  saslHandshake,
  saslAuthenticate,
  describeUserScramCredentials,
  alterUserScramCredentials,
];

export interface RegistryOptions {
  /**
   * Serve only the versions Kafka 4.x defines (PGKAFKA_KAFKA4_VERSIONS_ONLY):
   * each handler's range starts no lower than its codec's Kafka 4 minimum, so
   * ApiVersions advertises Kafka 4's ranges and an older version gets Kafka
   * 4's answer (the connection closes; ApiVersions answers UNSUPPORTED_VERSION).
   */
  kafka4VersionsOnly?: boolean;
}

export class HandlerRegistry {
  private readonly byKey = new Map<number, Handler>();

  /**
   * Refuses, as kfake's regKey panics, a second handler for one API key and a
   * version range the codec cannot read and write: the broker would otherwise
   * advertise versions it cannot serve.
   */
  constructor(list: Handler[] = handlers, options: RegistryOptions = {}) {
    for (const served of list) {
      const h = options.kafka4VersionsOnly ? kafka4Only(served) : served;
      const { apiKey, name, minVersion, maxVersion } = h.codec;
      const other = this.byKey.get(apiKey);
      if (other) throw new Error(`two handlers for API key ${apiKey} (${other.codec.name} and ${name})`);
      if (!Number.isInteger(h.minVersion) || !Number.isInteger(h.maxVersion) || h.minVersion > h.maxVersion) {
        throw new Error(`${name} handler serves an empty or malformed version range ${h.minVersion}-${h.maxVersion}`);
      }
      if (h.minVersion < minVersion || h.maxVersion > maxVersion) {
        throw new Error(`${name} handler serves versions ${h.minVersion}-${h.maxVersion}, beyond its codec's ${minVersion}-${maxVersion}`);
      }
      if (h.advertisedMinVersion !== undefined && h.advertisedMinVersion > h.minVersion) {
        throw new Error(`${name} handler advertises from v${h.advertisedMinVersion}, above the v${h.minVersion} it serves`);
      }
      this.byKey.set(apiKey, h);
    }
  }

  get(apiKey: number): Handler | undefined {
    return this.byKey.get(apiKey);
  }

  /** What ApiVersions advertises: exactly the ranges the handlers serve. */
  apiVersions(): { apiKey: number; minVersion: number; maxVersion: number }[] {
    return [...this.byKey.values()].map((h) => ({ apiKey: h.codec.apiKey, minVersion: h.advertisedMinVersion ?? h.minVersion, maxVersion: h.maxVersion })).sort((a, b) => a.apiKey - b.apiKey);
  }

  /**
   * The answer to ApiVersions at a version this broker does not know: v0
   * format, header v0, UNSUPPORTED_VERSION, and the supported ranges, so the
   * client retries at a version we serve (KIP-511).
   */
  unsupportedApiVersionsResponse(correlationId: number): Buffer[] {
    const w = new Writer();
    const sizeAt = w.reserveInt32();
    writeResponseHeader(w, 0, { correlationId });
    ApiVersionsApi.writeResponse(w, 0, { errorCode: ErrorCode.UNSUPPORTED_VERSION, apiKeys: this.apiVersions() });
    w.patchInt32(sizeAt, w.length - 4);
    return w.toBuffers();
  }
}

/** The handler limited to the versions Kafka 4.x defines (Produce keeps advertising v0, as Kafka 4 does, KAFKA-18659). */
function kafka4Only(h: Handler): Handler {
  const minVersion = Math.max(h.minVersion, h.codec.kafka4MinVersion);
  return minVersion === h.minVersion ? h : { ...h, minVersion };
}
