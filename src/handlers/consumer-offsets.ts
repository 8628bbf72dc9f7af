// The seam between Metadata, Fetch and ListOffsets and the read-only
// __consumer_offsets (coordinator/consumer-offsets-topic.ts): that topic has
// no PartitionLog, its partitions are read from the committed offsets.
import type { Input } from '../protocol/codec/types.js';
import { ErrorCode } from '../protocol/errors.js';
import type { FetchResponse, MetadataResponse } from '../protocol/messages/index.js';
import { CONSUMER_OFFSETS_PARTITIONS, CONSUMER_OFFSETS_TOPIC, CONSUMER_OFFSETS_TOPIC_ID, ConsumerOffsetsTopic } from '../coordinator/consumer-offsets-topic.js';
import { LogCode } from '../observability/log-codes.js';
import { NOT_REQUESTED, ResourceType, authorizedOperations } from './authorization.js';
import type { RequestContext } from './types.js';

export { CONSUMER_OFFSETS_TOPIC, CONSUMER_OFFSETS_TOPIC_ID };

/** Whether a request names __consumer_offsets, by name or by its topic id. */
export const namesConsumerOffsets = (name: string | null | undefined, topicId?: string): boolean => ConsumerOffsetsTopic.is(name) || topicId === CONSUMER_OFFSETS_TOPIC_ID;

export const isConsumerOffsetsPartition = (partition: number): boolean => partition >= 0 && partition < CONSUMER_OFFSETS_PARTITIONS;

/** Metadata's entry for the topic: internal, 50 partitions led by this broker (any broker reads them from PostgreSQL). */
export function describeConsumerOffsets(ctx: RequestContext, includeOperations: boolean): Input<MetadataResponse['topics'][number]> {
  const { nodeId } = ctx.broker;
  return {
    errorCode: ErrorCode.NONE,
    name: CONSUMER_OFFSETS_TOPIC,
    topicId: CONSUMER_OFFSETS_TOPIC_ID,
    isInternal: true,
    partitions: Array.from({ length: CONSUMER_OFFSETS_PARTITIONS }, (_, i) => ({
      errorCode: ErrorCode.NONE,
      partitionIndex: i,
      leaderId: nodeId,
      leaderEpoch: 0,
      replicaNodes: [nodeId],
      isrNodes: [nodeId],
      offlineReplicas: [],
    })),
    topicAuthorizedOperations: includeOperations ? authorizedOperations(ctx, ResourceType.TOPIC, CONSUMER_OFFSETS_TOPIC) : NOT_REQUESTED,
  };
}

type PartitionData = Input<FetchResponse['responses'][number]['partitions'][number]>;

/** Fetch of one partition of the topic (the caller checked READ and the partition index). */
export async function fetchConsumerOffsets(ctx: RequestContext, partition: number, fetchOffset: bigint, maxBytes: number, minOne: boolean): Promise<{ data: PartitionData; bytes: number }> {
  const base = { partitionIndex: partition, abortedTransactions: null, preferredReadReplica: -1, records: Buffer.alloc(0) };
  try {
    const read = await ctx.broker.consumerOffsets.read(partition, fetchOffset, maxBytes, minOne);
    if (read.errorCode !== ErrorCode.NONE) return { data: { ...base, errorCode: read.errorCode, highWatermark: -1n, lastStableOffset: -1n, logStartOffset: -1n }, bytes: 0 };
    return {
      data: { ...base, errorCode: ErrorCode.NONE, highWatermark: read.highWatermark, lastStableOffset: read.highWatermark, logStartOffset: read.logStartOffset, records: read.records ?? base.records },
      bytes: read.bytes,
    };
  } catch (err) {
    ctx.log.warn({ err: (err as Error).message, partition, code: LogCode.FETCH_READ_FAILED }, 'fetch of __consumer_offsets failed');
    return { data: { ...base, errorCode: ErrorCode.KAFKA_STORAGE_ERROR, highWatermark: -1n, lastStableOffset: -1n, logStartOffset: -1n }, bytes: 0 };
  }
}
