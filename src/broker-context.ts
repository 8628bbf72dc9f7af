import type { GroupConfigs } from './coordinator/group-configs.js';
import type { Config } from './config/schema.js';
import type { Coordination } from './coordinator/coordination.js';
import type { PartitionLeadership } from './coordinator/partition-leadership.js';
import type { ConsumerOffsetsTopic } from './coordinator/consumer-offsets-topic.js';
import type { GroupCoordinator } from './coordinator/group-coordinator.js';
import type { TransactionCoordinator } from './coordinator/transaction-coordinator.js';
import type { TxnAddRequests } from './coordinator/txn-add-requests.js';
import type { BrokerConfigs } from './log/broker-configs.js';
import type { FetchSessionCache } from './log/fetch-sessions.js';
import type { LogManager } from './log/log-manager.js';
import type { TopicManager } from './log/topic-manager.js';
import type { Logger } from './observability/logger.js';
import type { BrokerRow } from './coordinator/cluster-storage.js';
import type { Authorizer } from './security/authorizer.js';
import type { UserStorage } from './security/user-storage.js';

/** The broker-wide services handlers call into. */
export interface BrokerContext {
  config: Config;
  nodeId: number;
  clusterId: string;
  /** This broker's advertised endpoint. */
  self: BrokerRow;
  /**
   * Live brokers sharing the database (refreshed by the registry heartbeat).
   * Given a listener name, each broker's endpoint on that listener (brokers
   * without it are left out), as Kafka answers Metadata per listener.
   */
  liveBrokers(listener?: string): BrokerRow[];
  /** This broker's advertised endpoint on a listener. */
  advertised(listener: string): BrokerRow;
  /** SCRAM credentials (SASL, DescribeUserScramCredentials, AlterUserScramCredentials). */
  users: UserStorage;
  /** ACL decisions and the ACLs themselves (CreateAcls, DescribeAcls, DeleteAcls). */
  authorizer: Authorizer;
  /** Which broker coordinates which group (slots leased in PostgreSQL). */
  coordination: Coordination;
  /** Which broker leads which partition (leases in PostgreSQL); only the leader serves a partition's client requests. */
  leadership: PartitionLeadership;
  /** This broker's configs: static options and the dynamic ones stored in PostgreSQL. */
  brokerConfigs: BrokerConfigs;
  /** Configs set per group (config resource type GROUP), stored in PostgreSQL. */
  groupConfigs: GroupConfigs;
  topics: TopicManager;
  logs: LogManager;
  /** This broker's incremental fetch sessions (KIP-227). */
  fetchSessions: FetchSessionCache;
  groups: GroupCoordinator;
  transactions: TransactionCoordinator;
  /** Transactions version 2's implicit adds, sent to the transaction's coordinator here or on another broker. */
  txnAdds: TxnAddRequests;
  /** The read-only __consumer_offsets, served from the committed offsets. */
  consumerOffsets: ConsumerOffsetsTopic;
  log: Logger;
  /** The API version ranges ApiVersions advertises, built from the handlers. */
  apiVersions: { apiKey: number; minVersion: number; maxVersion: number }[];
  /** Set when graceful shutdown begins: long polls end early. */
  shuttingDown: boolean;
}
