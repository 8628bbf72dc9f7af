// Consumer lag, as kafka-consumer-groups --describe reports it: per
// (group, topic, partition) the committed offset, the log end offset (high
// watermark) and LAG = LOG-END-OFFSET − CURRENT-OFFSET; plus lag in time, the
// age of the record at the committed offset (the next one the group will
// read). Members come from the group state the coordinator last persisted.
import { readConsumerProtocolAssignment } from '../protocol/messages/consumer-protocol-assignment.js';
import { Reader } from '../protocol/codec/reader.js';
import { decodeRecords, readBatchHeaderAt, recordTimestamp } from '../protocol/records/index.js';
import type { StoredConsumerGroup } from '../storage/pg/group-codec.js';
import type { LagStore, PersistedMember } from '../storage/pg/lag-store.js';

/** The member a lag row names as the partition's owner. */
type PartitionOwner = Pick<PersistedMember, 'memberId' | 'clientId' | 'clientHost'>;

export type LagSource = Pick<LagStore, 'committedOffsetPositions' | 'partitionOffsets' | 'groups'>;

export interface LagRow {
  group: string;
  topic: string;
  partition: number;
  /** committed offset; null for a partition a member owns but the group never committed */
  currentOffset: bigint | null;
  /** high watermark; null when the topic or partition no longer exists */
  logEndOffset: bigint | null;
  /** max(0, logEndOffset − currentOffset); null when either is unknown */
  lag: bigint | null;
  /** now − timestamp of the record at the committed offset; 0 when lag is 0; null when unknown */
  lagMs: number | null;
  consumerId: string | null;
  host: string | null;
  clientId: string | null;
}

export interface GroupLag {
  group: string;
  state: string;
  members: number;
  partitions: LagRow[];
}

export interface LagOptions {
  /** one group id or several; all groups when absent */
  groupId?: string | readonly string[];
  /** epoch milliseconds; Date.now() when absent */
  now?: number;
}

/** Lag rows of every partition with a committed offset or an owner, ordered by group, topic, partition. */
export async function describeLag(store: LagSource, opts: LagOptions = {}): Promise<LagRow[]> {
  return (await describeGroups(store, opts)).flatMap((g) => g.partitions);
}

/** The groups (ordered by id) with their state, member count and lag rows. */
export async function describeGroups(store: LagSource, opts: LagOptions = {}): Promise<GroupLag[]> {
  const ids = opts.groupId === undefined ? undefined : typeof opts.groupId === 'string' ? [opts.groupId] : opts.groupId;
  const now = opts.now ?? Date.now();
  const [groups, positions] = await Promise.all([store.groups(ids), store.committedOffsetPositions(ids)]);

  const result = new Map<string, GroupLag>();
  const owners = new Map<string, Map<string, PartitionOwner>>();
  for (const g of groups) {
    result.set(g.groupId, { group: g.groupId, state: g.state, members: g.members.length, partitions: [] });
    owners.set(g.groupId, g.type === 'consumer' ? consumerGroupOwners(g) : g.protocolType === 'consumer' ? partitionOwners(g.members) : new Map());
  }

  const committed = new Set<string>();
  for (const p of positions) {
    const group = result.get(p.groupId);
    if (!group) continue; // committed after the groups query read; the next call shows it
    committed.add(`${p.groupId}\0${p.topic}\0${p.partition}`);
    const lag = p.logEndOffset === null ? null : max0(p.logEndOffset - p.committedOffset);
    let lagMs: number | null = null;
    if (lag === 0n) lagMs = 0;
    else if (lag !== null && p.batch !== null) {
      const ts = timestampAtOrAfter(p.batch.data, p.batch.baseOffset, p.committedOffset);
      if (ts !== null) lagMs = Math.max(0, now - Number(ts));
    }
    group.partitions.push(row(p.groupId, p.topic, p.partition, p.committedOffset, p.logEndOffset, lag, lagMs, owners.get(p.groupId)?.get(`${p.topic}\0${p.partition}`)));
  }

  // Partitions a member owns but the group has not committed yet (Kafka shows them with CURRENT-OFFSET "-").
  const uncommitted: { group: string; topic: string; partition: number; member: PartitionOwner }[] = [];
  for (const [group, byPartition] of owners) {
    for (const [key, member] of byPartition) {
      if (committed.has(`${group}\0${key}`)) continue;
      const [topic, partition] = key.split('\0') as [string, string];
      uncommitted.push({ group, topic, partition: Number(partition), member });
    }
  }
  if (uncommitted.length > 0) {
    const offsets = await store.partitionOffsets([...new Set(uncommitted.map((u) => u.topic))]);
    const hw = new Map(offsets.map((o) => [`${o.topic}\0${o.partition}`, o.highWatermark]));
    for (const u of uncommitted) {
      result.get(u.group)!.partitions.push(row(u.group, u.topic, u.partition, null, hw.get(`${u.topic}\0${u.partition}`) ?? null, null, null, u.member));
    }
  }

  for (const g of result.values()) g.partitions.sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition));
  return [...result.values()];
}

function row(
  group: string,
  topic: string,
  partition: number,
  currentOffset: bigint | null,
  logEndOffset: bigint | null,
  lag: bigint | null,
  lagMs: number | null,
  owner: PartitionOwner | undefined,
): LagRow {
  return {
    group,
    topic,
    partition,
    currentOffset,
    logEndOffset,
    lag,
    lagMs,
    consumerId: owner?.memberId ?? null,
    host: owner?.clientHost ?? null,
    clientId: owner?.clientId ?? null,
  };
}

const max0 = (n: bigint) => (n > 0n ? n : 0n);

/** `topic\0partition` → the KIP-848 member that holds it (assigned or still to revoke). */
function consumerGroupOwners(g: StoredConsumerGroup): Map<string, PartitionOwner> {
  const names = new Map(Object.entries(g.subscriptionMetadata).map(([name, t]) => [t.topicId, name]));
  const owners = new Map<string, PartitionOwner>();
  for (const m of g.members) {
    for (const held of [m.assigned, m.pendingRevocation]) {
      for (const [topicId, partitions] of Object.entries(held)) {
        const topic = names.get(topicId);
        if (topic !== undefined) for (const p of Object.keys(partitions)) owners.set(`${topic}\0${p}`, m);
      }
    }
  }
  return owners;
}

/** `topic\0partition` → the member whose consumer-protocol assignment holds it. Undecodable assignments are skipped. */
function partitionOwners(members: readonly PersistedMember[]): Map<string, PartitionOwner> {
  const owners = new Map<string, PartitionOwner>();
  for (const m of members) {
    const buf = m.assignment;
    if (buf.length < 2) continue;
    const r = new Reader(buf, 2);
    const assignment = readConsumerProtocolAssignment(r, buf.readInt16BE(0));
    if (r.error !== null) continue;
    for (const tp of assignment.assignedPartitions) for (const p of tp.partitions) owners.set(`${tp.topic}\0${p}`, m);
  }
  return owners;
}

/**
 * The timestamp of the first record at or after `offset` in a stored batch
 * (offsets may have gaps after compaction), as consumers see it; null if the
 * batch does not decode, holds no such record, or carries no timestamp.
 */
export function timestampAtOrAfter(data: Buffer, baseOffset: bigint, offset: bigint): bigint | null {
  const header = readBatchHeaderAt(data, 0);
  if (header === null) return null;
  let ts: bigint | null = null;
  if (header.timestampType === 1) {
    ts = header.recordCount > 0 ? header.maxTimestamp : null; // LogAppendTime: every record carries maxTimestamp
  } else {
    const { records, error } = decodeRecords(data, header);
    if (error !== null) return null;
    const record = records.find((r) => baseOffset + BigInt(r.offsetDelta) >= offset);
    if (record) ts = recordTimestamp(header, record);
  }
  return ts === null || ts < 0n ? null : ts;
}

/** Lag in time for people: `0s`, `12.3s`, `4m12s`, `2h5m`, `3d4h`; `-` when unknown. */
export function formatLagTime(ms: number | null): string {
  if (ms === null) return '-';
  if (ms < 60_000) {
    const tenths = Math.floor(ms / 100);
    return tenths % 10 === 0 ? `${tenths / 10}s` : `${(tenths / 10).toFixed(1)}s`;
  }
  const s = Math.floor(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)}m${s % 60}s`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h${Math.floor((s % 3600) / 60)}m`;
  return `${Math.floor(s / 86_400)}d${Math.floor((s % 86_400) / 3600)}h`;
}
