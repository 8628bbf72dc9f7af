// Fetch for one topic's partitions from their leaders: a long poll per
// leader, record batches decoded with the project's record codec (every
// compression), control batches skipped, positions advanced past each batch.
import { FetchApi } from '../../protocol/messages/index.js';
import { decodeRecords, parseBatches, recordTimestamp } from '../../protocol/records/index.js';
import { ErrorCode, errorName } from '../../protocol/errors.js';
import { CliError } from '../errors.js';
import type { OutRecord } from '../record-format.js';
import type { KafkaClient } from './client.js';

/** Fetch v13 names topics by id. */
const FETCH_CAP = 12;
const MAX_WAIT_MS = 500;

/** Errors on which a partition's leader is looked up again rather than the fetch failing. */
const LEADER_MOVED = new Set<number>([ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.LEADER_NOT_AVAILABLE, ErrorCode.FENCED_LEADER_EPOCH, ErrorCode.UNKNOWN_LEADER_EPOCH]);
const LEADER_RETRY_MS = 200;

export class Fetcher {
  /** partition → next offset to fetch */
  readonly positions: Map<number, bigint>;
  /** partition → high watermark seen in the last answer */
  readonly highWatermarks = new Map<number, bigint>();
  private leaders: Map<number, number> | null = null;

  constructor(
    private readonly client: KafkaClient,
    readonly topic: string,
    positions: Map<number, bigint>,
  ) {
    this.positions = new Map(positions);
  }

  /** One round of fetches (all leaders in parallel); records in offset order per partition. */
  async poll(partitions: readonly number[] = [...this.positions.keys()]): Promise<OutRecord[]> {
    const leaders = (this.leaders ??= await this.client.leaders(this.topic));
    const byLeader = new Map<number, number[]>();
    for (const p of partitions) byLeader.set(leaders.get(p)!, [...(byLeader.get(leaders.get(p)!) ?? []), p]);
    // A partition without a live leader (its broker died a moment ago): looked up again after a pause.
    if (byLeader.delete(-1)) {
      this.leaders = null;
      await new Promise((r) => setTimeout(r, LEADER_RETRY_MS));
    }
    const rounds = await Promise.all([...byLeader].map(([leader, ps]) => this.fetchFrom(leader, ps)));
    return rounds.flat();
  }

  private async fetchFrom(leader: number, partitions: number[]): Promise<OutRecord[]> {
    const conn = await this.client.node(leader);
    const answer = await conn.request(
      FetchApi,
      {
        replicaId: -1,
        maxWaitMs: MAX_WAIT_MS,
        minBytes: 1,
        maxBytes: 52_428_800,
        isolationLevel: 0,
        sessionId: 0,
        sessionEpoch: -1,
        topics: [
          {
            topic: this.topic,
            partitions: partitions.map((partition) => ({ partition, currentLeaderEpoch: -1, fetchOffset: this.positions.get(partition)!, logStartOffset: -1n, partitionMaxBytes: 1_048_576 })),
          },
        ],
        forgottenTopicsData: [],
        rackId: '',
      },
      FETCH_CAP,
    );
    if (answer.errorCode !== 0) throw new CliError(`fetch from broker ${leader}: ${errorName(answer.errorCode)}`);
    const out: OutRecord[] = [];
    for (const t of answer.responses) {
      for (const p of t.partitions) {
        if (p.errorCode === ErrorCode.OFFSET_OUT_OF_RANGE)
          throw new CliError(
            `topic ${this.topic} partition ${p.partitionIndex}: offset ${this.positions.get(p.partitionIndex)} is out of range (log start ${p.logStartOffset}, high watermark ${p.highWatermark})`,
          );
        if (LEADER_MOVED.has(p.errorCode)) {
          this.leaders = null; // the partition moved to another broker: its leader is looked up again
          continue;
        }
        if (p.errorCode !== 0) throw new CliError(`topic ${this.topic} partition ${p.partitionIndex}: ${errorName(p.errorCode)}`);
        this.highWatermarks.set(p.partitionIndex, p.highWatermark);
        const buf = Array.isArray(p.records) ? Buffer.concat(p.records) : p.records;
        if (!buf || buf.length === 0) continue;
        const { batches } = parseBatches(buf, { mode: 'log', allowTrailingPartial: true });
        const from = this.positions.get(p.partitionIndex)!;
        for (const h of batches) {
          const next = h.baseOffset + BigInt(h.lastOffsetDelta) + 1n;
          if (next > this.positions.get(p.partitionIndex)!) this.positions.set(p.partitionIndex, next);
          if (h.isControl) continue;
          const decoded = decodeRecords(buf, h);
          if (decoded.error) throw new CliError(`topic ${this.topic} partition ${p.partitionIndex}: undecodable batch at offset ${h.baseOffset} (${decoded.message})`);
          for (const r of decoded.records) {
            const offset = h.baseOffset + BigInt(r.offsetDelta);
            // A batch may start below the fetch offset (Kafka returns whole batches).
            if (offset < from) continue;
            out.push({ topic: this.topic, partition: p.partitionIndex, offset, timestamp: recordTimestamp(h, r), key: r.key, value: r.value, headers: r.headers });
          }
        }
      }
    }
    return out;
  }
}
