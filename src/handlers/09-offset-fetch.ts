// OffsetFetch (key 9), v0-10.
// v0 (removed in Kafka 4.0; Kafka 3.9 read it from ZooKeeper): the same
// committed offsets as v1, since OffsetCommit v0 stores them like the others.
// v2: null topics means every committed partition; top-level error. v3:
// throttle time. v5: committed leader epoch. v6: flexible. v7: require
// stable: partitions with offsets staged by an open transaction answer
// UNSTABLE_OFFSET_COMMIT (retriable) instead of their committed offset. v8: several groups
// per request (KIP-709). v9: member id and epoch (KIP-848 groups; unused by
// classic groups). v10: topic ids.
// Authorization, as Kafka's KafkaApis: DESCRIBE on the group, else
// GROUP_AUTHORIZATION_FAILED (the group's error from v2, every requested
// partition's in v1, which has no top-level error); requested partitions of
// topics without DESCRIBE answer TOPIC_AUTHORIZATION_FAILED, after the
// others; asked for every partition (null topics), those topics are left out.
import { ZERO_UUID } from '../protocol/codec/types.js';
import { ErrorCode } from '../protocol/errors.js';
import { OffsetFetchApi } from '../protocol/messages/index.js';
import type { FetchedOffset } from '../coordinator/group-coordinator.js';
import { AclOperation, ResourceType } from './authorization.js';
import { authorizedNames } from './authorized-names.js';
import { routeGroup } from './group-routing.js';
import { storageFailure } from './storage-failure.js';
import { defineHandler, type RequestContext } from './types.js';

interface WantedTopic {
  name: string;
  topicId: string;
  partitions: number[];
}

function groupByTopic(offsets: FetchedOffset[]): Map<string, FetchedOffset[]> {
  const byTopic = new Map<string, FetchedOffset[]>();
  for (const o of offsets) {
    const list = byTopic.get(o.topic) ?? [];
    list.push(o);
    byTopic.set(o.topic, list);
  }
  return byTopic;
}

/** The group's offsets for the wanted topics (null: every topic with a committed offset), once DESCRIBE on the group is granted. */
async function fetchGroup(ctx: RequestContext, groupId: string, wanted: WantedTopic[] | null, requireStable: boolean) {
  if (wanted === null) {
    const topics = await fetchAuthorized(ctx, groupId, null, requireStable);
    const describable = authorizedNames(
      ctx,
      AclOperation.DESCRIBE,
      ResourceType.TOPIC,
      topics.map((t) => t.name),
    );
    return topics.filter((t) => describable.has(t.name));
  }
  const describable = authorizedNames(
    ctx,
    AclOperation.DESCRIBE,
    ResourceType.TOPIC,
    wanted.map((t) => t.name),
  );
  const granted = wanted.filter((t) => describable.has(t.name));
  const topics = granted.length > 0 ? await fetchAuthorized(ctx, groupId, granted, requireStable) : [];
  for (const t of wanted) {
    if (describable.has(t.name)) continue;
    topics.push({
      name: t.name,
      topicId: t.topicId,
      partitions: t.partitions.map((partitionIndex) => ({ partitionIndex, committedOffset: -1n, committedLeaderEpoch: -1, metadata: '', errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED })),
    });
  }
  return topics;
}

async function fetchAuthorized(ctx: RequestContext, groupId: string, wanted: WantedTopic[] | null, requireStable: boolean) {
  const offsets = await ctx.broker.groups.fetchOffsets(groupId, wanted && wanted.map((t) => ({ name: t.name, partitions: t.partitions })));
  if (requireStable) {
    // Offsets an open transaction has staged: the committed offset is about to change (KIP-447).
    const pending = await ctx.broker.transactions.pendingOffsets(groupId);
    if (pending.size > 0) {
      for (const o of offsets) {
        if (pending.has(`${o.topic}\u0000${o.partition}`)) Object.assign(o, { committedOffset: -1n, leaderEpoch: -1, metadata: '', errorCode: ErrorCode.UNSTABLE_OFFSET_COMMIT });
      }
    }
  }
  const byTopic = groupByTopic(offsets);
  const ids = new Map(wanted?.map((t) => [t.name, t.topicId]));
  const topics = [];
  for (const [name, list] of byTopic) {
    const topicId = ids.get(name) ?? (await ctx.broker.topics.get(name))?.topicId ?? ZERO_UUID;
    topics.push({
      name,
      topicId,
      partitions: list.map((o) => ({
        partitionIndex: o.partition,
        committedOffset: o.committedOffset,
        committedLeaderEpoch: o.leaderEpoch,
        metadata: o.metadata ?? '',
        errorCode: o.errorCode,
      })),
    });
  }
  return topics;
}

export default defineHandler({
  codec: OffsetFetchApi,
  minVersion: 0,
  maxVersion: 10,
  async handle(ctx, request) {
    if (ctx.apiVersion < 8) {
      const wanted = request.topics && request.topics.map((t) => ({ name: t.name, topicId: ZERO_UUID, partitions: t.partitionIndexes }));
      // v2+ answer a refused group once; v1, which has no group error, in every requested partition (an invalid id: nowhere).
      const refused = (errorCode: number) => {
        if (ctx.apiVersion >= 2 || errorCode === ErrorCode.INVALID_GROUP_ID) return { throttleTimeMs: 0, errorCode, topics: [] };
        const partitions = (t: WantedTopic) => t.partitions.map((partitionIndex) => ({ partitionIndex, committedOffset: -1n, committedLeaderEpoch: -1, metadata: '', errorCode }));
        return { throttleTimeMs: 0, errorCode, topics: (wanted ?? []).map((t) => ({ name: t.name, topicId: ZERO_UUID, partitions: partitions(t) })) };
      };
      const groups = routeGroup(ctx, request.groupId, { operation: AclOperation.DESCRIBE, invalidGroupId: 'serveEmpty' });
      if (typeof groups === 'number') return refused(groups);
      const groupError = groups.validateOffsetFetch(request.groupId, null, -1);
      if (groupError !== ErrorCode.NONE) return refused(groupError);
      try {
        return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, topics: await fetchGroup(ctx, request.groupId, wanted, ctx.apiVersion >= 7 && request.requireStable) };
      } catch (err) {
        return refused(storageFailure(ctx, err));
      }
    }
    const groups = [];
    for (const g of request.groups) {
      let wanted: WantedTopic[] | null = null;
      if (g.topics) {
        wanted = [];
        for (const t of g.topics) {
          const name = ctx.apiVersion >= 10 ? ((await ctx.broker.topics.getByIdLoading(t.topicId))?.name ?? null) : t.name;
          if (name !== null) wanted.push({ name, topicId: t.topicId, partitions: t.partitionIndexes });
        }
      }
      const routed = routeGroup(ctx, g.groupId, { operation: AclOperation.DESCRIBE, invalidGroupId: 'serveEmpty' });
      const groupError = typeof routed === 'number' ? routed : routed.validateOffsetFetch(g.groupId, g.memberId, g.memberEpoch);
      if (groupError !== ErrorCode.NONE) groups.push({ groupId: g.groupId, errorCode: groupError, topics: [] });
      else {
        try {
          groups.push({ groupId: g.groupId, errorCode: ErrorCode.NONE, topics: await fetchGroup(ctx, g.groupId, wanted, request.requireStable) });
        } catch (err) {
          groups.push({ groupId: g.groupId, errorCode: storageFailure(ctx, err), topics: [] });
        }
      }
    }
    return { throttleTimeMs: 0, groups };
  },
});
