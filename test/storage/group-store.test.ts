// The stored group through its one codec, against PostgreSQL: what the
// coordinator writes is what it restores and what the lag readers see, bytes
// and all; rows older than the type column read as classic groups.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/observability/logger.js';
import type { StoredClassicGroup } from '../../src/storage/pg/group-codec.js';
import { GroupStore } from '../../src/storage/pg/group-store.js';
import { LeaseLostError, type CoordinatorLease } from '../../src/storage/coordinator-lease.js';
import { LagStore } from '../../src/storage/pg/lag-store.js';
import { migrate } from '../../src/storage/pg/migrate.js';
import { createPool } from '../../src/storage/pg/pool.js';
import { slotOf } from '../../src/coordinator/coordination.js';
import { testDatabaseUrl } from '../support/broker.js';

let url: string;
let schema: string;
let pool: pg.Pool;
let store: GroupStore;
const INSTANCE = 'instance-under-test';

/** Leases every slot to this test's instance, as a coordinator holds them. */
const holdEverySlot = () => pool.query("UPDATE coordinator_slots SET instance_id = $1, node_id = 1, expires_at = now() + interval '1 hour'", [INSTANCE]);
/** The lease as the coordinator loaded the group's slot: at the slot's first epoch. */
const lease = (groupId: string): CoordinatorLease => ({ slot: slotOf(groupId), instanceId: INSTANCE, epoch: 0n });

// Bytes that are no valid UTF-8: a codec that passed them through a string would change them.
const binary = Buffer.from([0x00, 0xff, 0xfe, 0x80, 0x01]);

const group = (groupId: string): StoredClassicGroup => ({
  type: 'classic',
  groupId,
  protocolType: 'consumer',
  protocolName: 'range',
  generation: 4,
  leaderId: 'm-1',
  state: 'Stable',
  stateSince: new Date('2026-01-02T03:04:05.678Z'),
  members: [
    {
      memberId: 'm-1',
      groupInstanceId: 'static-1',
      clientId: 'client-1',
      clientHost: '/10.0.0.1',
      sessionTimeoutMs: 45_000,
      rebalanceTimeoutMs: 300_000,
      protocols: [
        { name: 'range', metadata: binary },
        { name: 'cooperative-sticky', metadata: Buffer.from('sticky') },
      ],
      assignment: Buffer.concat([binary, binary]),
    },
    { memberId: 'm-2', groupInstanceId: null, clientId: 'client-2', clientHost: '/10.0.0.2', sessionTimeoutMs: 10_000, rebalanceTimeoutMs: 60_000, protocols: [], assignment: Buffer.alloc(0) },
  ],
});

beforeAll(async () => {
  url = testDatabaseUrl();
  schema = `test_${randomBytes(6).toString('hex')}`;
  await migrate(url, schema, createLogger('silent'));
  pool = createPool({ connectionString: url, schema, max: 2 });
  store = new GroupStore(pool);
});

afterAll(async () => {
  await pool?.end();
  if (schema) {
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  }
});

describe('the stored group', () => {
  it('is restored as it was saved, and the lag readers see the same group', async () => {
    await holdEverySlot();
    const saved = group('billing');
    await store.saveGroup(saved, lease('billing'));
    expect((await store.loadGroups()).find((g) => g.groupId === 'billing')).toEqual(saved);
    expect(await new LagStore(pool).groups(['billing'])).toEqual([saved]);
    const [row] = (await pool.query<{ type: string }>('SELECT type FROM groups WHERE group_id = $1', ['billing'])).rows;
    expect(row!.type).toBe('classic');
  });

  it('replaces the stored group on the next save', async () => {
    await holdEverySlot();
    await store.saveGroup(group('orders'), lease('orders'));
    const emptied: StoredClassicGroup = { ...group('orders'), generation: 5, leaderId: null, protocolName: null, state: 'Empty', members: [] };
    await store.saveGroup(emptied, lease('orders'));
    expect((await store.loadGroups()).filter((g) => g.groupId === 'orders')).toEqual([emptied]);
  });

  it('is not written without the slot lease', async () => {
    await pool.query("UPDATE coordinator_slots SET expires_at = '-infinity'");
    await expect(store.saveGroup(group('unleased'), lease('unleased'))).rejects.toBeInstanceOf(LeaseLostError);
    expect((await store.loadGroups()).some((g) => g.groupId === 'unleased')).toBe(false);
  });

  it('is not written under a lease epoch the slot has moved on from, even while the same instance holds the slot again', async () => {
    await holdEverySlot();
    const stale = lease('moved');
    // Another broker took the slot while this one was paused, then handed it back: this instance holds it, at a newer epoch.
    await pool.query('UPDATE coordinator_slots SET epoch = epoch + 2 WHERE slot = $1', [stale.slot]);
    await expect(store.saveGroup(group('moved'), stale)).rejects.toBeInstanceOf(LeaseLostError);
    const offset = { topic: 't', partition: 0, committedOffset: 5n, leaderEpoch: -1, metadata: null };
    await expect(store.commitOffsets('moved', [offset], stale)).rejects.toBeInstanceOf(LeaseLostError);
    expect((await store.loadGroups()).some((g) => g.groupId === 'moved')).toBe(false);
    expect(await store.fetchOffsets('moved')).toEqual([]);
    await store.saveGroup(group('moved'), { ...stale, epoch: stale.epoch + 2n });
    await pool.query('UPDATE coordinator_slots SET epoch = 0 WHERE slot = $1', [stale.slot]);
  });

  it('reads a row written without a type as a classic group, with defaults for the member fields it leaves out', async () => {
    await pool.query(
      `INSERT INTO groups (group_id, protocol_type, protocol_name, generation, leader_id, state, members)
       VALUES ('legacy', 'consumer', 'range', 2, 'm', 'Stable', '[{"memberId": "m", "clientId": "c", "clientHost": "/h", "assignment": "AAE="}]')`,
    );
    const [legacy] = (await store.loadGroups()).filter((g) => g.groupId === 'legacy');
    expect(legacy).toMatchObject({ type: 'classic', generation: 2, leaderId: 'm', state: 'Stable' });
    expect(legacy!.members).toEqual([
      { memberId: 'm', groupInstanceId: null, clientId: 'c', clientHost: '/h', sessionTimeoutMs: 0, rebalanceTimeoutMs: 0, protocols: [], assignment: Buffer.from([0, 1]) },
    ]);
  });

  it('leaves out a row of a type this broker does not know, for the coordinator and the lag readers alike', async () => {
    await pool.query("INSERT INTO groups (group_id, type, state, members) VALUES ('from-a-newer-broker', 'share', 'Stable', '{}')");
    expect((await store.loadGroups()).some((g) => g.groupId === 'from-a-newer-broker')).toBe(false);
    expect(await new LagStore(pool).groups(['from-a-newer-broker'])).toEqual([]);
  });
});
