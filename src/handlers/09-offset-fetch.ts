// OffsetFetch (key 9), v1-10.
// v2: null topics means every committed partition; top-level error. v3:
// throttle time. v5: committed leader epoch. v6: flexible. v7: require
// stable: partitions with offsets staged by an open transaction answer
// UNSTABLE_OFFSET_COMMIT (retriable) instead of their committed offset. v8: several groups
// per request (KIP-709). v9: member id and epoch (KIP-848 groups; unused by
// classic groups). v10: topic ids.
import { ZERO_UUID } from '../protocol/codec/types.js';
import { isValidGroupId } from '../coordinator/group-types.js';
import { ErrorCode } from '../protocol/errors.js';
import { OffsetFetchApi } from '../protocol/messages/index.js';
import type { FetchedOffset } from '../coordinator/group-coordinator.js';
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

async function fetchGroup(ctx: RequestContext, groupId: string, wanted: WantedTopic[] | null, requireStable: boolean) {
  const offsets = await ctx.broker.groups.fetchOffsets(groupId, wanted && wanted.map((t) => ({ name: t.name, partitions: t.partitions })));
  if (requireStable) {
    // Offsets an open transaction has staged: the committed offset is about to change (KIP-447).
    const pending = ctx.broker.transactions.pendingOffsets(groupId);
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
  minVersion: 1,
  maxVersion: 10,
  async handle(ctx, request) {
    if (ctx.apiVersion < 8) {
      const wanted = request.topics && request.topics.map((t) => ({ name: t.name, topicId: ZERO_UUID, partitions: t.partitionIndexes }));
      if (!isValidGroupId(request.groupId)) return { throttleTimeMs: 0, errorCode: ErrorCode.INVALID_GROUP_ID, topics: [] };
      return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, topics: await fetchGroup(ctx, request.groupId, wanted, ctx.apiVersion >= 7 && request.requireStable) };
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
      groups.push(
        !isValidGroupId(g.groupId)
          ? { groupId: g.groupId, errorCode: ErrorCode.INVALID_GROUP_ID, topics: [] }
          : { groupId: g.groupId, errorCode: ErrorCode.NONE, topics: await fetchGroup(ctx, g.groupId, wanted, request.requireStable) },
      );
    }
    return { throttleTimeMs: 0, groups };
  },
});
