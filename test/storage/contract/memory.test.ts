// The storage contracts against the in-memory stores (no PostgreSQL).
import { beforeEach, describe } from 'vitest';
import {
  MemoryAclStore,
  MemoryBrokerConfigStore,
  MemoryClusterStore,
  MemoryDatabase,
  MemoryGroupConfigStore,
  MemoryLogStore,
  MemoryPartitionStore,
  MemoryProducerStore,
  MemoryProducerIds,
  MemoryTopicStore,
  MemoryTransactionStore,
  MemoryUserStore,
} from '../../../src/storage/memory/index.js';
import { compareText } from '../../../src/storage/memory/database.js';
import { FakeClock } from '../../support/fake-clock.js';
import { contracts } from './contracts.js';
import type { Announcement, StorageHarness } from './harness.js';

function memoryHarness(): StorageHarness {
  const db = new MemoryDatabase(new FakeClock());
  return {
    transactions: new MemoryTransactionStore(db),
    producerIds: new MemoryProducerIds(db),
    topics: new MemoryTopicStore(db),
    brokerConfigs: new MemoryBrokerConfigStore(db),
    groupConfigs: new MemoryGroupConfigStore(db),
    acls: new MemoryAclStore(db),
    users: new MemoryUserStore(db),
    log: new MemoryLogStore(db),
    partitions: new MemoryPartitionStore(db),
    producers: new MemoryProducerStore(db),
    async cluster(instanceId) {
      const store = new MemoryClusterStore(db, instanceId);
      return { store, close: async () => store.close() };
    },
    async committedOffsets(groupId) {
      return [...db.committedOffsets.values()]
        .filter((o) => o.groupId === groupId)
        .sort((a, b) => compareText(a.topic, b.topic) || a.partition - b.partition)
        .map(({ commitTimestamp: _t, ...o }) => o);
    },
    async listen() {
      const seen: Announcement[] = [];
      let open = true;
      db.onNotify((channel, payload) => void (open && seen.push({ channel, payload })));
      return { seen, close: async () => void (open = false) };
    },
    async commitOffset(row) {
      db.committedOffsets.set(`${row.groupId}\u0000${row.topic}\u0000${row.partition}`, { ...row, commitTimestamp: new Date(db.clock.now()) });
    },
    async takeSlot(slot, instanceId) {
      return db.leaseSlot(slot, instanceId, 60_000);
    },
  };
}

describe('storage contracts: memory', () => {
  let harness: StorageHarness;
  beforeEach(() => {
    harness = memoryHarness();
  });
  for (const contract of contracts) contract(() => harness);
});
