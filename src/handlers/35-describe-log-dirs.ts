// DescribeLogDirs (key 35), v0-5 (v0 removed in Kafka 4.0).
// v1: same as v0. v2: flexible. v3: top-level error code. v4: total and
// usable bytes. v5: is cordoned. There is one "log dir": the PostgreSQL
// schema holding the batches; a partition's size is the bytes of its stored
// batches, and the total is the database's size. Offset lag is always 0
// (there are no future replicas).
import { ErrorCode } from '../protocol/errors.js';
import { DescribeLogDirsApi } from '../protocol/messages/index.js';
import type { Topic } from '../log/topic-manager.js';
import { AclOperation, clusterAllowed } from './authorization.js';
import { defineHandler } from './types.js';

export default defineHandler({
  codec: DescribeLogDirsApi,
  minVersion: 0,
  maxVersion: 5,
  async handle(ctx, request) {
    const { topics: topicManager, logs, config } = ctx.broker;
    if (!clusterAllowed(ctx, AclOperation.DESCRIBE)) return { throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, results: [] };
    const all = await topicManager.list();
    let wanted: { topic: Topic; partitions: Set<number> | null }[];
    if (request.topics === null) {
      wanted = all.map((topic) => ({ topic, partitions: null }));
    } else {
      const byName = new Map(all.map((t) => [t.name, t]));
      wanted = request.topics.flatMap((t) => {
        const topic = byName.get(t.topic);
        return topic ? [{ topic, partitions: new Set(t.partitions) }] : [];
      });
    }
    const { partitions, totalBytes } = await logs.storedSizes(wanted.map((w) => w.topic.topicId));
    const sizes = new Map(partitions.map((p) => [`${p.topicId}:${p.partition}`, p.bytes]));
    const topics = wanted.map(({ topic, partitions: only }) => ({
      name: topic.name,
      partitions: Array.from({ length: topic.partitionCount }, (_, i) => i)
        .filter((i) => only === null || only.has(i))
        .map((i) => ({ partitionIndex: i, partitionSize: sizes.get(`${topic.topicId}:${i}`) ?? 0n, offsetLag: 0n, isFutureKey: false })),
    }));
    return {
      throttleTimeMs: 0,
      errorCode: ErrorCode.NONE,
      results: [{ errorCode: ErrorCode.NONE, logDir: `postgresql:${config.schema}`, topics, totalBytes, usableBytes: -1n, isCordoned: false }],
    };
  },
});
