// ListOffsets routed to each partition's leader: the earliest and latest
// offsets (log start, high watermark) and the offset for a timestamp.
import { ListOffsetsApi } from '../../protocol/messages/index.js';
import { check } from '../errors.js';
import type { KafkaClient } from './client.js';

export const EARLIEST = -2n;
export const LATEST = -1n;

/** Offset per partition for `timestamp` (EARLIEST, LATEST or epoch ms); -1n where no record is that late. */
export async function listOffsets(client: KafkaClient, topic: string, partitions: readonly number[], timestamp: bigint): Promise<Map<number, bigint>> {
  const leaders = await client.leaders(topic);
  const byLeader = new Map<number, number[]>();
  for (const p of partitions) {
    const leader = leaders.get(p);
    if (leader === undefined) check(3, `topic ${topic} partition ${p}`);
    byLeader.set(leader!, [...(byLeader.get(leader!) ?? []), p]);
  }
  const result = new Map<number, bigint>();
  await Promise.all(
    [...byLeader].map(async ([leader, ps]) => {
      const conn = await client.node(leader);
      const answer = await conn.request(ListOffsetsApi, {
        replicaId: -1,
        isolationLevel: 0,
        topics: [{ name: topic, partitions: ps.map((partitionIndex) => ({ partitionIndex, currentLeaderEpoch: -1, timestamp })) }],
      });
      for (const t of answer.topics) {
        for (const p of t.partitions) {
          check(p.errorCode, `topic ${topic} partition ${p.partitionIndex}: ListOffsets`);
          result.set(p.partitionIndex, p.offset);
        }
      }
    }),
  );
  return result;
}
