// What a request answers when something fails inside the broker (PostgreSQL
// restarting or unreachable): the code Kafka's broker gives when the store
// behind that API fails, written into the API's error response (the
// generated `errorResponse`, Kafka's getErrorResponse), so the client retries
// on the same connection. Kafka's RequestHandlerHelper.handleError answers a
// thrown exception the same way, with Errors.forException(e).
import { ErrorCode } from '../protocol/errors.js';
import type { RequestContext } from './types.js';
import { LogCode } from '../observability/log-codes.js';

const { KAFKA_STORAGE_ERROR, COORDINATOR_NOT_AVAILABLE, REQUEST_TIMED_OUT, UNKNOWN_SERVER_ERROR } = ErrorCode;

/** Close the connection instead of answering (the SASL exchange, as Kafka's authenticator does; Metadata). */
export const CLOSE = null;

/**
 * By API key. The log (a partition whose log directory failed on Kafka):
 * KAFKA_STORAGE_ERROR. The group and transaction coordinators (their
 * internal topic cannot be read or written): COORDINATOR_NOT_AVAILABLE. The
 * metadata the controller owns (topics, configs, ACLs, credentials, tokens,
 * reassignments), for which PostgreSQL plays the controller quorum's part:
 * REQUEST_TIMED_OUT, Kafka's answer when a forwarded request gets no answer
 * from the controller. All three are retriable.
 */
export const INTERNAL_FAILURE_CODES: ReadonlyMap<number, number | typeof CLOSE> = new Map([
  [0, KAFKA_STORAGE_ERROR], // Produce
  [1, KAFKA_STORAGE_ERROR], // Fetch
  [2, KAFKA_STORAGE_ERROR], // ListOffsets
  // Kafka's Metadata never fails (its metadata cache answers); an answer without brokers makes clients
  // give up (kafkajs: KafkaJSBrokerNotFound), a closed connection they retry.
  [3, CLOSE], // Metadata
  [8, COORDINATOR_NOT_AVAILABLE], // OffsetCommit
  [9, COORDINATOR_NOT_AVAILABLE], // OffsetFetch
  [10, COORDINATOR_NOT_AVAILABLE], // FindCoordinator
  [11, COORDINATOR_NOT_AVAILABLE], // JoinGroup
  [12, COORDINATOR_NOT_AVAILABLE], // Heartbeat
  [13, COORDINATOR_NOT_AVAILABLE], // LeaveGroup
  [14, COORDINATOR_NOT_AVAILABLE], // SyncGroup
  [15, COORDINATOR_NOT_AVAILABLE], // DescribeGroups
  [16, COORDINATOR_NOT_AVAILABLE], // ListGroups
  [17, CLOSE], // SaslHandshake
  [18, UNKNOWN_SERVER_ERROR], // ApiVersions: needs no store; Kafka's answer to an unexpected exception
  [19, REQUEST_TIMED_OUT], // CreateTopics
  [20, REQUEST_TIMED_OUT], // DeleteTopics
  [21, KAFKA_STORAGE_ERROR], // DeleteRecords
  [22, COORDINATOR_NOT_AVAILABLE], // InitProducerId
  [23, KAFKA_STORAGE_ERROR], // OffsetForLeaderEpoch
  [24, COORDINATOR_NOT_AVAILABLE], // AddPartitionsToTxn
  [25, COORDINATOR_NOT_AVAILABLE], // AddOffsetsToTxn
  [26, COORDINATOR_NOT_AVAILABLE], // EndTxn
  [28, COORDINATOR_NOT_AVAILABLE], // TxnOffsetCommit
  [29, REQUEST_TIMED_OUT], // DescribeAcls
  [30, REQUEST_TIMED_OUT], // CreateAcls
  [31, REQUEST_TIMED_OUT], // DeleteAcls
  [32, REQUEST_TIMED_OUT], // DescribeConfigs
  [33, REQUEST_TIMED_OUT], // AlterConfigs
  [34, KAFKA_STORAGE_ERROR], // AlterReplicaLogDirs
  [35, KAFKA_STORAGE_ERROR], // DescribeLogDirs
  [36, CLOSE], // SaslAuthenticate
  [37, REQUEST_TIMED_OUT], // CreatePartitions
  [38, REQUEST_TIMED_OUT], // CreateDelegationToken
  [39, REQUEST_TIMED_OUT], // RenewDelegationToken
  [40, REQUEST_TIMED_OUT], // ExpireDelegationToken
  [41, REQUEST_TIMED_OUT], // DescribeDelegationToken
  [42, COORDINATOR_NOT_AVAILABLE], // DeleteGroups
  [43, REQUEST_TIMED_OUT], // ElectLeaders
  [44, REQUEST_TIMED_OUT], // IncrementalAlterConfigs
  [45, REQUEST_TIMED_OUT], // AlterPartitionReassignments
  [46, REQUEST_TIMED_OUT], // ListPartitionReassignments
  [47, COORDINATOR_NOT_AVAILABLE], // OffsetDelete
  [48, REQUEST_TIMED_OUT], // DescribeClientQuotas
  [50, REQUEST_TIMED_OUT], // DescribeUserScramCredentials
  [51, REQUEST_TIMED_OUT], // AlterUserScramCredentials
  [60, REQUEST_TIMED_OUT], // DescribeCluster
  [61, KAFKA_STORAGE_ERROR], // DescribeProducers
  [65, COORDINATOR_NOT_AVAILABLE], // DescribeTransactions
  [66, COORDINATOR_NOT_AVAILABLE], // ListTransactions
  [68, COORDINATOR_NOT_AVAILABLE], // ConsumerGroupHeartbeat
  [69, COORDINATOR_NOT_AVAILABLE], // ConsumerGroupDescribe
  [74, REQUEST_TIMED_OUT], // ListConfigResources
  [75, REQUEST_TIMED_OUT], // DescribeTopicPartitions
]);

/** The code a thrown internal failure of `apiKey` is answered with, or CLOSE; an API not in the table answers as Kafka does an unexpected exception. */
export function internalFailureCode(apiKey: number): number | typeof CLOSE {
  const code = INTERNAL_FAILURE_CODES.get(apiKey);
  return code === undefined ? UNKNOWN_SERVER_ERROR : code;
}

/**
 * For a handler that answers a storage failure itself, per resource (a
 * group of an OffsetFetch, one partition of a Fetch): logs it and returns
 * the code to write.
 */
export function storageFailure(ctx: RequestContext, err: unknown, errorCode: number = ErrorCode.COORDINATOR_NOT_AVAILABLE): number {
  ctx.log.warn({ err: (err as Error).message, errorCode, code: LogCode.COORDINATOR_STORAGE_FAILED }, 'PostgreSQL failed under a coordinator request; answered with a retriable error');
  return errorCode;
}
