// A member of a classic consumer group (protocol type "consumer", the range
// assignor, as the Java consumer's default): JoinGroup (rejoining with the
// member id on MEMBER_ID_REQUIRED), SyncGroup (the leader assigns), Heartbeat
// in the background, member commits, LeaveGroup.
import { Reader } from '../../protocol/codec/reader.js';
import { Writer } from '../../protocol/codec/writer.js';
import { ErrorCode, errorName } from '../../protocol/errors.js';
import {
  HeartbeatApi,
  JoinGroupApi,
  LeaveGroupApi,
  readConsumerProtocolAssignment,
  readConsumerProtocolSubscription,
  SyncGroupApi,
  writeConsumerProtocolAssignment,
  writeConsumerProtocolSubscription,
} from '../../protocol/messages/index.js';
import { CliError } from '../errors.js';
import { sleep, type KafkaClient } from './client.js';
import type { Connection } from './connection.js';
import { commitOffsets, type Member } from './group-offsets.js';

const COORDINATOR_MOVED = new Set<number>([ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS]);
const SESSION_TIMEOUT_MS = 45_000;
const REBALANCE_TIMEOUT_MS = 60_000;
const HEARTBEAT_MS = 3_000;
const PROTOCOL_TYPE = 'consumer';
const ASSIGNOR = 'range';
/** Subscription/assignment v1: no owned partitions or rack, which every broker and member reads. */
const CONSUMER_PROTOCOL_VERSION = 1;

function subscriptionBytes(topics: string[]): Buffer {
  const w = new Writer();
  w.int16(CONSUMER_PROTOCOL_VERSION);
  writeConsumerProtocolSubscription(w, CONSUMER_PROTOCOL_VERSION, { topics, userData: null });
  return w.toBuffer();
}

function assignmentBytes(assigned: Map<string, number[]>): Buffer {
  const w = new Writer();
  w.int16(CONSUMER_PROTOCOL_VERSION);
  writeConsumerProtocolAssignment(w, CONSUMER_PROTOCOL_VERSION, { assignedPartitions: [...assigned].map(([topic, partitions]) => ({ topic, partitions })), userData: null });
  return w.toBuffer();
}

export function readVersioned<T>(bytes: Buffer, read: (r: Reader, v: number) => T): T | null {
  if (bytes.length < 2) return null;
  const r = new Reader(bytes, 2);
  const value = read(r, Math.min(bytes.readInt16BE(0), 3));
  return r.error ? null : value;
}

export class GroupMember {
  member: Member = { generationId: -1, memberId: '' };
  /** topic → assigned partitions of the current generation. */
  assignment = new Map<string, number[]>();
  /** Set by the heartbeat when the group rebalances (or fences this member): rejoin. */
  rebalancing = false;
  private heartbeat: NodeJS.Timeout | null = null;

  private constructor(
    private readonly client: KafkaClient,
    private coordinator: Connection,
    readonly groupId: string,
    private readonly topics: string[],
  ) {}

  static async join(client: KafkaClient, groupId: string, topics: string[]): Promise<GroupMember> {
    const member = new GroupMember(client, await client.coordinator(groupId), groupId, topics);
    await member.rejoin();
    return member;
  }

  /** JoinGroup and SyncGroup until this member holds an assignment of a stable generation. */
  async rejoin(): Promise<void> {
    this.stopHeartbeat();
    for (let attempt = 0; attempt < 30; attempt++) {
      const joined = await this.coordinator.request(JoinGroupApi, {
        groupId: this.groupId,
        sessionTimeoutMs: SESSION_TIMEOUT_MS,
        rebalanceTimeoutMs: REBALANCE_TIMEOUT_MS,
        memberId: this.member.memberId,
        groupInstanceId: null,
        protocolType: PROTOCOL_TYPE,
        protocols: [{ name: ASSIGNOR, metadata: subscriptionBytes(this.topics) }],
        reason: null,
      });
      if (joined.errorCode === ErrorCode.MEMBER_ID_REQUIRED || joined.errorCode === ErrorCode.UNKNOWN_MEMBER_ID) {
        this.member = { generationId: -1, memberId: joined.errorCode === ErrorCode.MEMBER_ID_REQUIRED ? joined.memberId : '' };
        continue;
      }
      if (joined.errorCode === ErrorCode.REBALANCE_IN_PROGRESS) continue;
      if (COORDINATOR_MOVED.has(joined.errorCode)) {
        // A coordinator still loading its partition of the offsets topic (a fresh Kafka), or moved: find it again.
        await sleep(500);
        this.coordinator = await this.client.coordinator(this.groupId);
        continue;
      }
      if (joined.errorCode !== 0) throw new CliError(`group ${this.groupId}: JoinGroup: ${errorName(joined.errorCode)}`);
      this.member = { generationId: joined.generationId, memberId: joined.memberId };
      const assignments = joined.leader === joined.memberId ? await this.assign(joined.members) : [];
      const synced = await this.coordinator.request(SyncGroupApi, {
        groupId: this.groupId,
        generationId: joined.generationId,
        memberId: joined.memberId,
        groupInstanceId: null,
        protocolType: PROTOCOL_TYPE,
        protocolName: ASSIGNOR,
        assignments,
      });
      if (synced.errorCode === ErrorCode.REBALANCE_IN_PROGRESS) continue;
      if (synced.errorCode !== 0) throw new CliError(`group ${this.groupId}: SyncGroup: ${errorName(synced.errorCode)}`);
      const assignment = readVersioned(synced.assignment, readConsumerProtocolAssignment);
      this.assignment = new Map((assignment?.assignedPartitions ?? []).map((a) => [a.topic, [...a.partitions].sort((x, y) => x - y)]));
      this.rebalancing = false;
      this.startHeartbeat();
      return;
    }
    throw new CliError(`group ${this.groupId}: no stable generation after 30 attempts to join`);
  }

  /** The range assignor: per topic, partitions split into contiguous ranges over the members subscribed to it, in member id order. */
  private async assign(members: { memberId: string; metadata: Buffer }[]): Promise<{ memberId: string; assignment: Buffer }[]> {
    const subscriptions = members.map((m) => ({ memberId: m.memberId, topics: readVersioned(m.metadata, readConsumerProtocolSubscription)?.topics ?? [] }));
    const result = new Map(members.map((m) => [m.memberId, new Map<string, number[]>()]));
    const topics = [...new Set(subscriptions.flatMap((s) => s.topics))].sort();
    for (const topic of topics) {
      const partitions = [...(await this.client.leaders(topic)).keys()].sort((a, b) => a - b);
      const subscribed = subscriptions
        .filter((s) => s.topics.includes(topic))
        .map((s) => s.memberId)
        .sort();
      const per = Math.floor(partitions.length / subscribed.length);
      const extra = partitions.length % subscribed.length;
      subscribed.forEach((memberId, i) => {
        const start = i * per + Math.min(i, extra);
        const count = per + (i < extra ? 1 : 0);
        if (count > 0) result.get(memberId)!.set(topic, partitions.slice(start, start + count));
      });
    }
    return [...result].map(([memberId, assigned]) => ({ memberId, assignment: assignmentBytes(assigned) }));
  }

  private startHeartbeat(): void {
    this.heartbeat = setInterval(() => {
      this.coordinator.request(HeartbeatApi, { groupId: this.groupId, ...this.member, groupInstanceId: null }).then(
        (answer) => {
          if (answer.errorCode !== 0) this.rebalancing = true;
        },
        () => {
          this.rebalancing = true;
        },
      );
    }, HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  private stopHeartbeat(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
  }

  /** Commits the next offsets to consume (topic → partition → offset) for this generation. */
  commit(offsets: Map<string, Map<number, bigint>>): Promise<void> {
    return commitOffsets(this.coordinator, this.groupId, offsets, this.member);
  }

  async leave(): Promise<void> {
    this.stopHeartbeat();
    await this.coordinator
      .request(LeaveGroupApi, { groupId: this.groupId, memberId: this.member.memberId, members: [{ memberId: this.member.memberId, groupInstanceId: null, reason: 'pgkafka consume finished' }] })
      .catch(() => {});
  }
}
