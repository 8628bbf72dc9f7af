// The stored form of a group (table groups), one codec for every reader and
// writer: the coordinator's writes and restores (group-store.ts) and the lag
// readers behind `pgkafka groups` and /metrics (lag-store.ts). A row's `type`
// column names the kind of group (Kafka's GroupType); its `members` column is
// that type's JSON. Bytes travel as base64 inside the JSON.

/** The group types a row may name: classic groups and KIP-848 consumer groups. */
export type StoredGroupType = 'classic' | 'consumer';

export interface StoredClassicMember {
  memberId: string;
  groupInstanceId: string | null;
  clientId: string;
  clientHost: string;
  sessionTimeoutMs: number;
  rebalanceTimeoutMs: number;
  protocols: { name: string; metadata: Buffer }[];
  assignment: Buffer;
}

/** A classic group as of its last completed rebalance (or its last change to Empty). */
export interface StoredClassicGroup {
  type: 'classic';
  groupId: string;
  protocolType: string | null;
  protocolName: string | null;
  generation: number;
  leaderId: string | null;
  /** As stored: the coordinator writes Empty or Stable. */
  state: string;
  stateSince: Date;
  members: StoredClassicMember[];
}

/** Topic id → partition → the epoch at which the member was given it. */
export type StoredPartitionEpochs = Record<string, Record<string, number>>;

export interface StoredConsumerMember {
  memberId: string;
  instanceId: string | null;
  rackId: string | null;
  clientId: string;
  clientHost: string;
  rebalanceTimeoutMs: number;
  subscribedTopicNames: string[];
  subscribedTopicRegex: string | null;
  serverAssignor: string | null;
  memberEpoch: number;
  previousMemberEpoch: number;
  state: string;
  assigned: StoredPartitionEpochs;
  pendingRevocation: StoredPartitionEpochs;
  /** The member's partitions in the target assignment: topic id → partitions. */
  target: Record<string, number[]>;
  /** A member speaking the classic protocol: its session timeout and JoinGroup protocols (metadata as base64). Absent for a consumer-protocol member. */
  classic?: { sessionTimeoutMs: number; supportedProtocols: { name: string; metadata: string }[] } | null;
}

/**
 * A KIP-848 consumer group as of its last change (Kafka's consumer group
 * records: group epoch, subscription metadata, target assignment and each
 * member's subscription and current assignment). The `generation` column
 * holds the group epoch; the `members` column holds this whole JSON.
 */
export interface StoredConsumerGroup {
  type: 'consumer';
  groupId: string;
  groupEpoch: number;
  assignmentEpoch: number;
  /** When the target was last computed (epoch ms), 0 for never: group.consumer.assignment.interval.ms counts from it. */
  assignmentTimestamp: number;
  /** The state's name as ListGroups spells it (what the lag readers show). */
  state: string;
  stateSince: Date;
  /** Subscribed topic name → its id and partition count when the target was last computed. */
  subscriptionMetadata: Record<string, { topicId: string; partitionCount: number }>;
  /** Kafka's ConsumerGroupRegularExpression records: each subscribed pattern's topics and when (epoch ms) they were resolved. */
  resolvedRegularExpressions: Record<string, { topics: string[]; timestamp: number }>;
  members: StoredConsumerMember[];
}

export type StoredGroup = StoredClassicGroup | StoredConsumerGroup;

/** A row of table groups, as node-postgres returns it. */
export interface GroupRow {
  group_id: string;
  type: string;
  protocol_type: string | null;
  protocol_name: string | null;
  generation: number;
  leader_id: string | null;
  state: string;
  state_since: Date;
  members: unknown;
}

/** The JSON of one classic member in the members column. */
interface MemberJson {
  memberId: string;
  groupInstanceId?: string | null;
  clientId?: string;
  clientHost?: string;
  sessionTimeoutMs?: number;
  rebalanceTimeoutMs?: number;
  protocols?: { name: string; metadata: string }[];
  assignment?: string;
}

const fromBase64 = (s: string | undefined): Buffer => Buffer.from(s ?? '', 'base64');

/** The row's columns for a group, in the order group-store's upsert names them (members as JSON text). */
export function encodeGroup(
  g: StoredGroup,
): [groupId: string, type: StoredGroupType, protocolType: string | null, protocolName: string | null, generation: number, leaderId: string | null, state: string, stateSince: Date, members: string] {
  if (g.type === 'consumer') {
    const json: ConsumerGroupJson = {
      assignmentEpoch: g.assignmentEpoch,
      assignmentTimestamp: g.assignmentTimestamp,
      subscriptionMetadata: g.subscriptionMetadata,
      resolvedRegularExpressions: g.resolvedRegularExpressions,
      members: g.members,
    };
    return [g.groupId, 'consumer', 'consumer', null, g.groupEpoch, null, g.state, g.stateSince, JSON.stringify(json)];
  }
  const members: MemberJson[] = g.members.map((m) => ({
    memberId: m.memberId,
    groupInstanceId: m.groupInstanceId,
    clientId: m.clientId,
    clientHost: m.clientHost,
    sessionTimeoutMs: m.sessionTimeoutMs,
    rebalanceTimeoutMs: m.rebalanceTimeoutMs,
    protocols: m.protocols.map((p) => ({ name: p.name, metadata: p.metadata.toString('base64') })),
    assignment: m.assignment.toString('base64'),
  }));
  return [g.groupId, g.type, g.protocolType, g.protocolName, g.generation, g.leaderId, g.state, g.stateSince, JSON.stringify(members)];
}

/**
 * The group a row holds, or null for a type this broker does not know (a
 * newer broker sharing the schema wrote it). Fields a hand-written row
 * leaves out read as Kafka's defaults for them.
 */
export function decodeGroup(row: GroupRow): StoredGroup | null {
  if (row.type === 'consumer') return decodeConsumerGroup(row);
  if (row.type !== 'classic') return null;
  const members = Array.isArray(row.members) ? (row.members as MemberJson[]) : [];
  return {
    type: 'classic',
    groupId: row.group_id,
    protocolType: row.protocol_type,
    protocolName: row.protocol_name,
    generation: row.generation,
    leaderId: row.leader_id,
    state: row.state,
    stateSince: row.state_since,
    members: members.map((m) => ({
      memberId: m.memberId,
      groupInstanceId: m.groupInstanceId ?? null,
      clientId: m.clientId ?? '',
      clientHost: m.clientHost ?? '',
      sessionTimeoutMs: m.sessionTimeoutMs ?? 0,
      rebalanceTimeoutMs: m.rebalanceTimeoutMs ?? 0,
      protocols: (m.protocols ?? []).map((p) => ({ name: p.name, metadata: fromBase64(p.metadata) })),
      assignment: fromBase64(m.assignment),
    })),
  };
}

/** The members column of a consumer group. */
interface ConsumerGroupJson {
  assignmentEpoch: number;
  assignmentTimestamp: number;
  subscriptionMetadata: StoredConsumerGroup['subscriptionMetadata'];
  resolvedRegularExpressions: StoredConsumerGroup['resolvedRegularExpressions'];
  members: StoredConsumerMember[];
}

function decodeConsumerGroup(row: GroupRow): StoredConsumerGroup {
  const json = (row.members !== null && typeof row.members === 'object' && !Array.isArray(row.members) ? row.members : {}) as Partial<ConsumerGroupJson>;
  return {
    type: 'consumer',
    groupId: row.group_id,
    groupEpoch: row.generation,
    assignmentEpoch: json.assignmentEpoch ?? 0,
    assignmentTimestamp: json.assignmentTimestamp ?? 0,
    state: row.state,
    stateSince: row.state_since,
    subscriptionMetadata: json.subscriptionMetadata ?? {},
    resolvedRegularExpressions: json.resolvedRegularExpressions ?? {},
    members: json.members ?? [],
  };
}
