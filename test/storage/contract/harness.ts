// What a contract test body gets: the stores of one storage implementation,
// over storage emptied before each test, and the few reads and writes of
// tables the store shares with others (committed offsets), done the
// implementation's own way. pg.test.ts and memory.test.ts each provide one.
import type { ClusterStorage } from '../../../src/coordinator/cluster-storage.js';
import type { GroupConfigStorage } from '../../../src/coordinator/group-configs.js';
import type { ProducerIdStorage, TransactionStorage } from '../../../src/coordinator/transaction-storage.js';
import type { BrokerConfigStorage } from '../../../src/log/broker-config-storage.js';
import type { LogStorage, PartitionStorage, ProducerStorage } from '../../../src/log/log-storage.js';
import type { TopicStorage } from '../../../src/log/topic-storage.js';
import type { AclStorage } from '../../../src/security/acl-storage.js';
import type { UserStorage } from '../../../src/security/user-storage.js';
import type { CoordinatorLease } from '../../../src/storage/coordinator-lease.js';

export interface CommittedOffsetRow {
  groupId: string;
  topic: string;
  partition: number;
  committedOffset: bigint;
  leaderEpoch: number;
  metadata: string | null;
}

/** A change announced to every broker (PostgreSQL: NOTIFY), by channel. */
export interface Announcement {
  channel: 'topics' | 'acls' | 'brokerConfigs' | 'groupConfigs';
  payload: string;
}

export interface StorageHarness {
  transactions: TransactionStorage;
  producerIds: ProducerIdStorage;
  topics: TopicStorage;
  brokerConfigs: BrokerConfigStorage;
  groupConfigs: GroupConfigStorage;
  acls: AclStorage;
  users: UserStorage;
  log: LogStorage;
  partitions: PartitionStorage;
  producers: ProducerStorage;
  /** The registry as one broker instance sees it; the instance counts as connected until close(). */
  cluster(instanceId: string): Promise<{ store: ClusterStorage; close(): Promise<void> }>;
  /** The committed offsets of the group, by topic and partition. */
  committedOffsets(groupId: string): Promise<CommittedOffsetRow[]>;
  /** Starts collecting the announcements of changes, in the order they arrive. */
  listen(): Promise<{ seen: Announcement[]; close(): Promise<void> }>;
  /** Writes a committed offset as the group coordinator would. */
  commitOffset(row: CommittedOffsetRow): Promise<void>;
  /**
   * The coordinator slot's lease for the broker instance, taken as a broker
   * takes it: renewed if the instance holds it, else taken once the
   * holder's lease lapsed (made to lapse here), at the next epoch.
   */
  takeSlot(slot: number, instanceId: string): Promise<CoordinatorLease>;
}

/** The harness of the running test (the runner replaces it before each test). */
export type HarnessRef = () => StorageHarness;
