// In-memory implementations of the storage interfaces the domain uses, over
// one shared MemoryDatabase: what unit tests build the domain on.
export { MemoryDatabase, MemoryStorageError, type MemoryChannel, type MemoryCommittedOffset } from './database.js';
export { MemoryAclStore } from './acl-store.js';
export { MemoryBrokerConfigStore } from './broker-config-store.js';
export { MemoryClusterStore } from './cluster-store.js';
export { MemoryGroupConfigStore } from './group-config-store.js';
export { MemoryLogStore } from './log-store.js';
export { MemoryPartitionStore } from './partition-store.js';
export { MemoryProducerStore } from './producer-store.js';
export { MemoryTopicStore } from './topic-store.js';
export { MemoryProducerIds, MemoryTransactionStore } from './transaction-store.js';
export { MemoryUserStore } from './user-store.js';
