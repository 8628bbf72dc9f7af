// Partition leadership spread over three broker processes on one schema:
// Metadata from any broker names the same leaders, 4/4/4 for 12 partitions;
// a broker that does not lead a partition answers its Produce, Fetch and
// ListOffsets with NOT_LEADER_OR_FOLLOWER naming the leader (KIP-951); a
// kill -9 moves the dead broker's partitions to the survivors with a new
// leader epoch, and a broker that comes back takes only its share back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/protocol/errors.js';
import { CreateTopicsApi, FetchApi, ListOffsetsApi, ProduceApi } from '../../src/protocol/messages/index.js';
import { buildBatch } from '../../src/protocol/records/index.js';
import { leadersOf, spread, startCluster, until, type BrokerCluster } from '../support/cluster.js';
import { RawClient } from '../support/raw-client.js';

const TOPIC = 'spread';
let cluster: BrokerCluster;

beforeAll(async () => {
  cluster = await startCluster(3);
  const client = await RawClient.connect(cluster.node(1).bootstrap);
  const res = await client.request(CreateTopicsApi, 7, { topics: [{ name: TOPIC, numPartitions: 12, replicationFactor: 1 }], timeoutMs: 5000 });
  client.close();
  expect(res.topics[0]!.errorCode).toBe(ErrorCode.NONE);
}, 60_000);
afterAll(async () => {
  await cluster?.stop();
});

/** The leaders once every broker names a live leader for every partition and all three agree. */
async function settledLeaders(nodeIds: number[]) {
  let leaders: Awaited<ReturnType<typeof leadersOf>> = [];
  await until('every broker names the same live leader for every partition', async () => {
    const answers = await Promise.all(nodeIds.map((id) => leadersOf(cluster.node(id).bootstrap, TOPIC)));
    leaders = answers[0]!;
    const counts = Object.values(spread(leaders));
    const even = Math.max(...counts) - Math.min(...counts) <= 1 && counts.length === nodeIds.length;
    return even && leaders.every((l) => nodeIds.includes(l.leader)) && answers.every((a) => JSON.stringify(a) === JSON.stringify(leaders));
  });
  return leaders;
}

describe('three brokers, twelve partitions', () => {
  it('spreads leadership 4/4/4, and every broker names the same leaders', async () => {
    const leaders = await settledLeaders([1, 2, 3]);
    expect(spread(leaders)).toEqual({ 1: 4, 2: 4, 3: 4 });
    expect(leaders.every((l) => l.errorCode === ErrorCode.NONE)).toBe(true);
  });

  it('answers NOT_LEADER_OR_FOLLOWER at a broker that does not lead the partition, naming the leader and its endpoint', async () => {
    const leaders = await settledLeaders([1, 2, 3]);
    const partition = leaders.findIndex((l) => l.leader !== 1);
    const leader = leaders[partition]!;
    const client = await RawClient.connect(cluster.node(1).bootstrap);
    try {
      const records = buildBatch({ records: [{ key: null, value: Buffer.from('x') }] });
      const produced = await client.request(ProduceApi, 11, { acks: -1, timeoutMs: 1000, topicData: [{ name: TOPIC, partitionData: [{ index: partition, records }] }] });
      const p = produced.responses[0]!.partitionResponses[0]!;
      expect(p.errorCode).toBe(ErrorCode.NOT_LEADER_OR_FOLLOWER);
      expect(p.currentLeader).toMatchObject({ leaderId: leader.leader, leaderEpoch: leader.epoch });
      expect(produced.nodeEndpoints.map((e) => [e.nodeId, e.host, e.port])).toEqual([[leader.leader, '127.0.0.1', cluster.node(leader.leader).port]]);

      const fetched = await client.request(FetchApi, 16, {
        replicaId: -1,
        maxWaitMs: 0,
        minBytes: 1,
        maxBytes: 1 << 20,
        sessionEpoch: -1,
        topics: [
          {
            topic: TOPIC,
            topicId: (await cluster.query<{ topic_id: string }>('SELECT topic_id FROM topics WHERE name = $1', [TOPIC]))[0]!.topic_id,
            partitions: [{ partition, fetchOffset: 0n, partitionMaxBytes: 1 << 20 }],
          },
        ],
      });
      const f = fetched.responses[0]!.partitions[0]!;
      expect(f.errorCode).toBe(ErrorCode.NOT_LEADER_OR_FOLLOWER);
      expect(f.currentLeader).toMatchObject({ leaderId: leader.leader, leaderEpoch: leader.epoch });
      expect(fetched.nodeEndpoints.map((e) => [e.nodeId, e.port])).toEqual([[leader.leader, cluster.node(leader.leader).port]]);

      const listed = await client.request(ListOffsetsApi, 7, { replicaId: -1, isolationLevel: 0, topics: [{ name: TOPIC, partitions: [{ partitionIndex: partition, timestamp: -1n }] }] });
      expect(listed.topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.NOT_LEADER_OR_FOLLOWER);
    } finally {
      client.close();
    }
    // The leader itself appends it.
    const atLeader = await RawClient.connect(cluster.node(leader.leader).bootstrap);
    try {
      const records = buildBatch({ records: [{ key: null, value: Buffer.from('x') }] });
      const produced = await atLeader.request(ProduceApi, 11, { acks: -1, timeoutMs: 1000, topicData: [{ name: TOPIC, partitionData: [{ index: partition, records }] }] });
      expect(produced.responses[0]!.partitionResponses[0]!.errorCode).toBe(ErrorCode.NONE);
    } finally {
      atLeader.close();
    }
  });

  it('moves a killed broker’s partitions to the survivors with a new leader epoch, and gives back only its share when it returns', async () => {
    const before = await settledLeaders([1, 2, 3]);
    const killedAt = Date.now();
    await cluster.kill(3);
    const after = await settledLeaders([1, 2]);
    console.log(`partitions of the killed broker led by the survivors after ${Date.now() - killedAt} ms`);
    expect(spread(after)).toEqual({ 1: 6, 2: 6 });
    before.forEach((b, i) => {
      if (b.leader === 3) expect(after[i]!.epoch).toBeGreaterThan(b.epoch);
      else expect(after[i]).toEqual(b); // the survivors' own partitions stay where they were
    });

    await cluster.restart(3);
    const back = await settledLeaders([1, 2, 3]);
    expect(spread(back)).toEqual({ 1: 4, 2: 4, 3: 4 });
    // Only the returning broker's share moved: 4 partitions, 2 from each survivor.
    const moved = back.filter((b, i) => b.leader !== after[i]!.leader);
    expect(moved.length).toBe(4);
    expect(moved.every((m) => m.leader === 3)).toBe(true);
  });
});
