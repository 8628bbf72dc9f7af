// The storage contracts against the PostgreSQL stores, in a fresh schema
// whose tables are emptied before each test.
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe } from 'vitest';
import { createLogger } from '../../../src/observability/logger.js';
import { AclStore } from '../../../src/storage/pg/acl-store.js';
import { BrokerConfigStore } from '../../../src/storage/pg/broker-config-store.js';
import { brokerApplicationName, ClusterStore } from '../../../src/storage/pg/cluster-store.js';
import { CoordinatorStore } from '../../../src/storage/pg/coordinator-store.js';
import { GroupConfigStore } from '../../../src/storage/pg/group-config-store.js';
import { metadataBytes, metadataString } from '../../../src/storage/pg/group-store.js';
import { LogStore } from '../../../src/storage/pg/log-store.js';
import { migrate } from '../../../src/storage/pg/migrate.js';
import { PartitionStore } from '../../../src/storage/pg/partition-store.js';
import { createClient, createPool } from '../../../src/storage/pg/pool.js';
import { ProducerStore } from '../../../src/storage/pg/producer-store.js';
import { TopicStore } from '../../../src/storage/pg/topic-store.js';
import { TransactionStore } from '../../../src/storage/pg/transaction-store.js';
import { UserStore } from '../../../src/storage/pg/user-store.js';
import { testDatabaseUrl } from '../../support/broker.js';
import { contracts } from './contracts.js';
import type { Announcement, StorageHarness } from './harness.js';

const schema = `test_${randomBytes(6).toString('hex')}`;
let url: string;
let pool: pg.Pool;
let harness: StorageHarness;

beforeAll(async () => {
  url = testDatabaseUrl();
  await migrate(url, schema, createLogger('silent'));
  pool = createPool({ connectionString: url, schema, max: 8 });
  const channels = { topics: `${schema}_topics`, acls: `${schema}_acls`, brokerConfigs: `${schema}_broker_configs`, groupConfigs: `${schema}_group_configs` } as const;
  const coordinators = new CoordinatorStore(pool, `${schema}_coordinators`);
  harness = {
    transactions: new TransactionStore(pool),
    producerIds: new ProducerStore(pool),
    topics: new TopicStore(pool, channels.topics),
    brokerConfigs: new BrokerConfigStore(pool, channels.brokerConfigs),
    groupConfigs: new GroupConfigStore(pool, channels.groupConfigs),
    acls: new AclStore(pool, channels.acls),
    users: new UserStore(pool),
    log: new LogStore(pool),
    partitions: new PartitionStore(pool, `${schema}_append`, channels.topics),
    producers: new ProducerStore(pool),
    async cluster(instanceId) {
      // Named as a broker names its pool: its open session is what "connected" means.
      const own = createPool({ connectionString: url, schema, max: 2, applicationName: brokerApplicationName(instanceId) });
      await own.query('SELECT 1');
      return { store: new ClusterStore(own), close: () => own.end() };
    },
    async committedOffsets(groupId) {
      const { rows } = await pool.query<{ group_id: string; topic: string; partition: number; committed_offset: bigint; leader_epoch: number; metadata: Buffer | null }>(
        'SELECT group_id, topic, partition, committed_offset, leader_epoch, metadata FROM committed_offsets WHERE group_id = $1 ORDER BY topic, partition',
        [groupId],
      );
      return rows.map((r) => ({ groupId: r.group_id, topic: r.topic, partition: r.partition, committedOffset: r.committed_offset, leaderEpoch: r.leader_epoch, metadata: metadataString(r.metadata) }));
    },
    async listen() {
      const client = createClient({ connectionString: url, schema });
      await client.connect();
      const byChannel = new Map<string, Announcement['channel']>(Object.entries(channels).map(([name, channel]) => [channel, name as Announcement['channel']]));
      const seen: Announcement[] = [];
      client.on('notification', (n) => seen.push({ channel: byChannel.get(n.channel)!, payload: n.payload ?? '' }));
      for (const channel of byChannel.keys()) await client.query(`LISTEN ${channel}`);
      return { seen, close: () => client.end() };
    },
    async commitOffset(o) {
      await pool.query(
        `INSERT INTO committed_offsets (group_id, topic, partition, committed_offset, leader_epoch, metadata) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (group_id, topic, partition) DO UPDATE SET committed_offset = $4, leader_epoch = $5, metadata = $6`,
        [o.groupId, o.topic, o.partition, o.committedOffset, o.leaderEpoch, metadataBytes(o.metadata)],
      );
    },
    async takeSlot(slot, instanceId) {
      // The table was emptied: the slot's row comes back first. Another instance's lease lapses by the database's clock.
      await pool.query(
        `INSERT INTO coordinator_slots (slot) VALUES ($1)
         ON CONFLICT (slot) DO UPDATE SET expires_at = CASE WHEN coordinator_slots.instance_id = $2 THEN coordinator_slots.expires_at ELSE '-infinity' END`,
        [slot, instanceId],
      );
      const [lease] = await coordinators.claim(1, instanceId, [slot], 60_000, 10_000);
      return { slot, instanceId, epoch: lease!.epoch };
    },
  };
});

beforeEach(async () => {
  const { rows } = await pool.query<{ tablename: string }>("SELECT tablename FROM pg_tables WHERE schemaname = $1 AND tablename <> 'schema_migrations'", [schema]);
  await pool.query(`TRUNCATE ${rows.map((r) => r.tablename).join(', ')}`);
});

afterAll(async () => {
  await pool?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await pool?.end();
});

describe('storage contracts: PostgreSQL', () => {
  for (const contract of contracts) contract(() => harness);
});
