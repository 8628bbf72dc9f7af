// Every storage contract: one test body per store interface, run by
// memory.test.ts (unit) and pg.test.ts (integration) alike, as Tansu runs one
// body under `mod pg` and `mod in_memory`.
import { aclStorageContract } from './acl-store.contract.js';
import { announcementContract } from './announcement.contract.js';
import { brokerConfigStorageContract } from './broker-config-store.contract.js';
import { clusterStorageContract } from './cluster-store.contract.js';
import { groupConfigStorageContract } from './group-config-store.contract.js';
import type { HarnessRef } from './harness.js';
import { logStorageContract } from './log-store.contract.js';
import { topicStorageContract } from './topic-store.contract.js';
import { transactionStorageContract } from './transaction-store.contract.js';
import { userStorageContract } from './user-store.contract.js';

export const contracts: ((h: HarnessRef) => void)[] = [
  transactionStorageContract,
  topicStorageContract,
  brokerConfigStorageContract,
  groupConfigStorageContract,
  aclStorageContract,
  userStorageContract,
  clusterStorageContract,
  announcementContract,
  logStorageContract,
];
