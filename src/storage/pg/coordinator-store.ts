import type pg from 'pg';
import { LeaseLostError, type CoordinatorLease } from '../coordinator-lease.js';

export interface SlotLease {
  slot: number;
  epoch: bigint;
}

export interface SlotHolder {
  slot: number;
  nodeId: number;
  /** How long the holder's lease has left, by the database's clock (0: expired or released). */
  expiresInMs: number;
}

/**
 * The fence every write of coordinator state carries, in the same statement
 * as the write: the slot's lease is the writer's instance's, still at the
 * epoch the writer loaded the slot's state with (a lease lost and won back
 * meanwhile has a newer one), and has not lapsed by the database's clock.
 * Arguments are the statement's placeholders for the slot, the instance id
 * and the epoch. `lock` FOR SHARE also holds the slot's row until the write
 * commits, so a claim of the slot waits for it and its new holder loads
 * what was written.
 */
export const leaseHeldSql = (slot: string, instanceId: string, epoch: string, lock: '' | 'FOR SHARE' = '') =>
  `EXISTS (SELECT 1 FROM coordinator_slots WHERE slot = ${slot}::int4 AND instance_id = ${instanceId}::text AND epoch = ${epoch}::int8 AND expires_at > now() ${lock})`;

/** The fence's parameters, in leaseHeldSql's order. */
export const leaseParams = (lease: CoordinatorLease) => [lease.slot, lease.instanceId, lease.epoch.toString()];

export const leaseLost = (lease: CoordinatorLease) => new LeaseLostError(lease.slot);

/** Leases of the coordinator slots (table coordinator_slots); changes are announced on the channel so other brokers rebalance at once. */
export class CoordinatorStore {
  constructor(
    private readonly pool: pg.Pool,
    readonly channel: string,
  ) {}

  /**
   * coordinator_slots_claim: takes or renews the leases of the wanted slots
   * that are free, expired, already this instance's, or held by an earlier
   * incarnation of this node id whose registration lapsed (a broker restarted
   * after a crash takes its slots back without waiting out their leases).
   * A slot held by another live broker is never taken. Returns the slots now
   * held, with their epochs.
   */
  async claim(nodeId: number, instanceId: string, slots: readonly number[], leaseMs: number, livenessMs: number): Promise<SlotLease[]> {
    if (slots.length === 0) return [];
    const { rows } = await this.pool.query<{ slot: number; epoch: string }>(
      `UPDATE coordinator_slots s
       SET epoch = CASE WHEN s.instance_id = $2 THEN s.epoch ELSE s.epoch + 1 END,
           node_id = $1, instance_id = $2, expires_at = now() + make_interval(secs => $4::float8 / 1000)
       WHERE s.slot = ANY($3::int[])
         AND (s.instance_id = $2 OR s.expires_at < now()
              OR (s.node_id = $1 AND NOT EXISTS (
                    SELECT 1 FROM brokers b
                    WHERE b.instance_id::text = s.instance_id AND b.last_seen > now() - make_interval(secs => $5::float8 / 1000))))
       RETURNING s.slot, s.epoch`,
      [nodeId, instanceId, slots, leaseMs, livenessMs],
    );
    return rows.map((r) => ({ slot: r.slot, epoch: BigInt(r.epoch) }));
  }

  /** coordinator_slots_release: gives up this instance's leases of the slots and tells the other brokers. */
  async release(instanceId: string, slots: readonly number[]): Promise<void> {
    if (slots.length === 0) return;
    await this.pool.query(
      `WITH released AS (
         UPDATE coordinator_slots SET expires_at = '-infinity' WHERE instance_id = $1 AND slot = ANY($2::int[]) RETURNING slot
       )
       SELECT pg_notify($3, 'released') FROM (SELECT count(*) FROM released) r`,
      [instanceId, slots, this.channel],
    );
  }

  /** coordinator_slots_announce: asks the other brokers to rebalance the slots now (a broker joined). */
  async announce(): Promise<void> {
    await this.pool.query('SELECT pg_notify($1, $2)', [this.channel, 'joined']);
  }

  /** coordinator_slots_select */
  async holders(): Promise<SlotHolder[]> {
    const { rows } = await this.pool.query<{ slot: number; node_id: number; expires_in_ms: number }>(
      `SELECT slot, node_id, GREATEST(0, extract(epoch FROM expires_at - now()) * 1000)::float8 AS expires_in_ms
       FROM coordinator_slots WHERE expires_at > now() ORDER BY slot`,
    );
    return rows.map((r) => ({ slot: r.slot, nodeId: r.node_id, expiresInMs: r.expires_in_ms }));
  }
}
