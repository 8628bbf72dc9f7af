// `pgkafka produce <topic>`: one record per stdin line (as rpk topic produce
// and kafka-console-producer), sent in batches to each partition's leader.
// A key by flag or split off each line (--key-delimiter, kcat's -K), headers,
// a fixed partition or Kafka's default partitioner (murmur2 of the key;
// keyless lines stick to one partition per batch), acks and compression.
import { createInterface } from 'node:readline';
import { flag, flagList, intFlag } from './args.js';
import type { Command, Context } from './command.js';
import { CliError, UsageError } from './errors.js';
import { sleep, type KafkaClient } from './kafka/client.js';
import { parseJsonRecord, type InRecord } from './record-format.js';
import { ErrorCode, errorName } from '../protocol/errors.js';
import { ProduceApi } from '../protocol/messages/index.js';
import { buildBatch, COMPRESSION_NAMES, type Compression } from '../protocol/records/index.js';

/** Produce v13 names topics by id only. */
const PRODUCE_CAP = 12;
const BATCH_RECORDS = 1000;
/** How long a partly filled batch waits for more lines (interactive use). */
const LINGER_MS = 20;

/** Kafka's murmur2 (the Java client's default partitioner hash), seed 0x9747b28c. */
export function murmur2(data: Buffer): number {
  const m = 0x5bd1e995;
  let h = (0x9747b28c ^ data.length) | 0;
  let i = 0;
  for (; i + 4 <= data.length; i += 4) {
    let k = data.readInt32LE(i);
    k = Math.imul(k, m);
    k ^= k >>> 24;
    k = Math.imul(k, m);
    h = Math.imul(h, m) ^ k;
  }
  const left = data.length - i;
  if (left >= 3) h ^= data[i + 2]! << 16;
  if (left >= 2) h ^= data[i + 1]! << 8;
  if (left >= 1) h = Math.imul(h ^ data[i]!, m);
  h ^= h >>> 13;
  h = Math.imul(h, m);
  h ^= h >>> 15;
  return h;
}

function compressionOf(name: string): Compression {
  const found = Object.entries(COMPRESSION_NAMES).find(([, n]) => n === name.toLowerCase());
  if (!found) throw new UsageError(`produce: --compression must be one of ${Object.values(COMPRESSION_NAMES).join(', ')}, not ${name}`);
  return Number(found[0]) as Compression;
}

function headerOf(h: string): { key: string; value: Buffer } {
  const at = h.indexOf(':');
  if (at <= 0) throw new UsageError(`produce: --header takes key:value, not ${h}`);
  return { key: h.slice(0, at), value: Buffer.from(h.slice(at + 1)) };
}

/** The partition count and leaders of a topic, created as the Java producer would (Metadata with auto-creation). */
async function topicLeaders(client: KafkaClient, topic: string): Promise<Map<number, number>> {
  for (let attempt = 0; ; attempt++) {
    const meta = await client.metadata([topic], true);
    const t = meta.topics[0];
    const code = t?.errorCode ?? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
    if (code === 0 && t!.partitions.length > 0 && t!.partitions.every((p) => p.leaderId >= 0)) return new Map(t!.partitions.map((p) => [p.partitionIndex, p.leaderId]));
    if ((code !== 0 && code !== ErrorCode.LEADER_NOT_AVAILABLE && code !== ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) || attempt >= 20) {
      throw new CliError(`topic ${topic}: ${errorName(code === 0 ? ErrorCode.LEADER_NOT_AVAILABLE : code)}`);
    }
    await sleep(250);
  }
}

export const produceCommand: Command = {
  summary: 'produce records from stdin, one per line',
  args: '<topic>',
  flags: {
    key: { short: 'k', value: 'key', doc: 'key of every record' },
    'key-delimiter': { short: 'K', value: 'delim', doc: 'split each line at the first delim into key and value' },
    header: { short: 'H', value: 'key:value', multiple: true, doc: 'a header on every record (repeatable)' },
    partition: { short: 'p', value: 'n', doc: "partition to produce to (default: murmur2 of the key, as Kafka's default partitioner)" },
    acks: { value: '-1|0|1', doc: 'acknowledgements to wait for (default -1, all)' },
    compression: { short: 'z', value: 'codec', doc: 'none (default), gzip, snappy, lz4 or zstd' },
    format: { short: 'f', value: 'text|json', doc: 'input: text lines (default), or JSON lines as consume -f json writes them (base64 values round-trip)' },
  },
  async run(ctx, p) {
    const [topic, ...extra] = p.positionals;
    if (!topic) throw new UsageError('produce: name the topic');
    if (extra.length > 0) throw new UsageError(`produce: one topic only (got ${p.positionals.join(', ')})`);
    const acks = Number(flag(p, 'acks') ?? '-1');
    if (acks !== -1 && acks !== 0 && acks !== 1) throw new UsageError(`produce: --acks must be -1, 0 or 1, not ${flag(p, 'acks')}`);
    const compression = compressionOf(flag(p, 'compression') ?? 'none');
    const format = flag(p, 'format') ?? 'text';
    if (format !== 'text' && format !== 'json') throw new UsageError(`produce: --format must be text or json, not ${format}`);
    const fixedPartition = intFlag(p, 'partition', 'produce');
    const fixedKey = flag(p, 'key');
    const delimiter = flag(p, 'key-delimiter');
    const headers = flagList(p, 'header').map(headerOf);

    const client = await ctx.client();
    const leaders = await topicLeaders(client, topic);
    const partitions = leaders.size;
    if (fixedPartition !== undefined && !leaders.has(fixedPartition)) throw new CliError(`topic ${topic} has no partition ${fixedPartition} (it has ${partitions})`);

    const toRecord = (line: string): InRecord => {
      if (format === 'json') {
        const r = parseJsonRecord(line);
        return { ...r, key: r.key ?? (fixedKey === undefined ? null : Buffer.from(fixedKey)), headers: [...headers, ...r.headers] };
      }
      if (delimiter !== undefined) {
        const at = line.indexOf(delimiter);
        if (at >= 0) return { key: Buffer.from(line.slice(0, at)), value: Buffer.from(line.slice(at + delimiter.length)), headers };
      }
      return { key: fixedKey === undefined ? null : Buffer.from(fixedKey), value: Buffer.from(line), headers };
    };

    let sticky = Math.floor(Math.random() * partitions);
    const partitionOf = (r: InRecord): number => {
      const chosen = fixedPartition ?? r.partition ?? (r.key ? (murmur2(r.key) & 0x7fffffff) % partitions : sticky);
      if (!leaders.has(chosen)) throw new CliError(`topic ${topic} has no partition ${chosen}`);
      return chosen;
    };

    let pending: InRecord[] = [];
    let failures = 0;
    const flush = async () => {
      const records = pending;
      pending = [];
      if (records.length === 0) return;
      const byPartition = new Map<number, InRecord[]>();
      for (const r of records) byPartition.set(partitionOf(r), [...(byPartition.get(partitionOf(r)) ?? []), r]);
      sticky = (sticky + 1) % partitions;
      failures += await send(ctx, client, topic, leaders, byPartition, acks, compression);
    };

    let timer: NodeJS.Timeout | null = null;
    let chain = Promise.resolve();
    const enqueue = (fn: () => Promise<void>) => {
      chain = chain.then(fn);
      return chain;
    };
    const lines = createInterface({ input: ctx.stdin, crlfDelay: Infinity });
    for await (const line of lines) {
      if (format === 'json' && line.trim() === '') continue;
      pending.push(toRecord(line));
      if (pending.length >= BATCH_RECORDS) {
        if (timer) clearTimeout(timer);
        timer = null;
        await enqueue(flush);
      } else
        timer ??= setTimeout(() => {
          timer = null;
          void enqueue(flush).catch(() => {});
        }, LINGER_MS);
    }
    if (timer) clearTimeout(timer);
    await enqueue(flush);
    return failures > 0 ? 1 : 0;
  },
};

/** Sends one batch per partition to its leader; prints each record's offset (or the error). Returns the number of records that failed. */
async function send(ctx: Context, client: KafkaClient, topic: string, leaders: Map<number, number>, byPartition: Map<number, InRecord[]>, acks: number, compression: Compression): Promise<number> {
  const byLeader = new Map<number, number[]>();
  for (const partition of byPartition.keys()) byLeader.set(leaders.get(partition)!, [...(byLeader.get(leaders.get(partition)!) ?? []), partition]);
  let failed = 0;
  await Promise.all(
    [...byLeader].map(async ([leader, partitions]) => {
      const conn = await client.node(leader);
      const baseTimestamp = BigInt(Date.now());
      const body = {
        transactionalId: null,
        acks,
        timeoutMs: 30_000,
        topicData: [
          {
            name: topic,
            partitionData: partitions.map((index) => ({
              index,
              records: buildBatch({ compression, baseTimestamp, records: byPartition.get(index)!.map((r) => ({ key: r.key, value: r.value, headers: r.headers })) }),
            })),
          },
        ],
      };
      if (acks === 0) {
        conn.sendOnly(ProduceApi, body, PRODUCE_CAP);
        for (const index of partitions) ctx.out.write(`Produced ${byPartition.get(index)!.length} record(s) to partition ${index} (acks=0: no offsets).\n`);
        return;
      }
      const answer = await conn.request(ProduceApi, body, PRODUCE_CAP);
      for (const r of answer.responses[0]?.partitionResponses ?? []) {
        const records = byPartition.get(r.index)!;
        if (r.errorCode !== 0) {
          failed += records.length;
          ctx.err.write(`pgkafka: produce to ${topic} partition ${r.index}: ${errorName(r.errorCode)}${r.errorMessage ? ` (${r.errorMessage})` : ''}\n`);
          continue;
        }
        const timestamp = r.logAppendTimeMs >= 0n ? r.logAppendTimeMs : baseTimestamp;
        for (let i = 0; i < records.length; i++) ctx.out.write(`Produced to partition ${r.index} at offset ${r.baseOffset + BigInt(i)} with timestamp ${timestamp}.\n`);
      }
    }),
  );
  return failed;
}
