// What every kind of group answers, as Kafka's Group interface: the
// coordinator, the offset APIs, ListGroups, DescribeGroups and the group's
// storage see a group only through it. A classic group (classic-group.ts) is
// one implementation; a KIP-848 consumer group and a share group are others,
// each its own class with its own stored form.
import type { StoredGroup } from '../storage/pg/group-codec.js';

/** Kafka's GroupType, as ListGroups filters and names it. */
export type GroupType = 'classic' | 'consumer' | 'share';

/** Who commits offsets, as OffsetCommit and TxnOffsetCommit name them. */
export interface OffsetCommitter {
  memberId: string;
  groupInstanceId: string | null;
  /** A classic group's generation, a consumer group's member epoch; -1 from outside group management. */
  generationIdOrMemberEpoch: number;
  /** TxnOffsetCommit (older producers name neither member nor generation). */
  isTransactional: boolean;
  apiVersion: number;
}

/** A member as DescribeGroups shows it. */
export interface DescribedMember {
  memberId: string;
  groupInstanceId: string | null;
  clientId: string;
  clientHost: string;
  memberMetadata: Buffer;
  memberAssignment: Buffer;
}

/** The group as DescribeGroups answers for it (its id and authorized operations are the handler's). */
export interface DescribedGroup {
  errorCode: number;
  errorMessage: string | null;
  groupState: string;
  protocolType: string;
  protocolData: string;
  members: DescribedMember[];
}

/** The group as ListGroups lists it. */
export interface ListedGroup {
  groupId: string;
  protocolType: string;
  groupState: string;
  groupType: string;
}

export interface Group {
  readonly type: GroupType;
  readonly groupId: string;
  /** The state's name, as ListGroups and DescribeGroups spell it. */
  stateAsString(): string;
  /** Whether the state is one of these (lower-case names, as ListGroups' filter). */
  isInStates(lowerCaseStates: ReadonlySet<string>): boolean;
  /** No members (Kafka's isEmpty): offsets may be committed from outside group management, and the group may be deleted. */
  isEmpty(): boolean;
  /** Deleted or unloaded: the coordinator no longer serves it. */
  isDead(): boolean;
  numMembers(): number;
  hasMember(memberId: string): boolean;
  /**
   * Whether the group is assigning partitions now, or finished doing so
   * after `settledSince` (clock milliseconds): its coordinator slot is then
   * not handed to another broker.
   */
  isRebalancing(settledSince: number): boolean;

  /** The error code OffsetCommit or TxnOffsetCommit answers for this committer, or NONE. */
  validateOffsetCommit(committer: OffsetCommitter): number;
  /** A consumer group's per-partition check (a member's older epoch may commit what it held since then), or NONE. */
  validateOffsetCommitPartition?(committer: OffsetCommitter, topicId: string, partition: number): number;
  /** The error code OffsetFetch answers (member id and epoch: OffsetFetch v9+, null and -1 before), or NONE. */
  validateOffsetFetch(memberId: string | null, memberEpoch: number): number;
  /** The error code OffsetDelete answers for the whole request, or NONE. */
  validateOffsetDelete(): number;
  /** The error code DeleteGroups answers for the group, or NONE. */
  validateDeleteGroup(): number;
  /** Whether a member consumes the topic: OffsetDelete keeps its offsets (GROUP_SUBSCRIBED_TO_TOPIC). */
  isSubscribedToTopic(topic: string): boolean;

  asListedGroup(): ListedGroup;
  describe(): DescribedGroup;
  /** The group as it is stored (group-codec.ts). */
  toStored(): StoredGroup;

  /** DeleteGroups: the group goes (callers check validateDeleteGroup first). */
  markDead(): void;
  /** Its coordinator slot moved to another broker: waiting requests are answered NOT_COORDINATOR. */
  unload(): void;
  /** Cancels every timer (broker shutdown). */
  shutdown(): void;
}
