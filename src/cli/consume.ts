// `pgkafka consume <topic>...`, as rpk topic consume: from the start, the end,
// an offset, N before the end or a time (-o start|end|N|+N|-N|@time, with
// `:end` to stop at the end seen when it began), all or some partitions, or as
// a member of a group (-g: committed offsets first, commits what it prints,
// leaves the group when done); -n records at most; text, JSON lines, raw or
// a template.
import { flag, intFlag, type Parsed } from './args.js';
import type { Command, Context } from './command.js';
import { CliError, UsageError } from './errors.js';
import type { KafkaClient } from './kafka/client.js';
import { Fetcher } from './kafka/fetcher.js';
import { fetchCommitted } from './kafka/group-offsets.js';
import { GroupMember } from './kafka/group-member.js';
import { EARLIEST, LATEST, listOffsets } from './kafka/offsets.js';
import { recordWriter, type OutRecord } from './record-format.js';

export interface OffsetSpec {
  kind: 'start' | 'end' | 'exact' | 'fromStart' | 'fromEnd' | 'time';
  value: bigint;
  /** Stop at the high watermark seen when consumption began. */
  untilEnd: boolean;
}

/** Parses -o: start, end, N, +N, -N, @<epoch ms or ISO time>, each optionally followed by `:end` (or `:end` alone). */
export function parseOffsetSpec(raw: string, command = 'consume'): OffsetSpec {
  const untilEnd = raw.endsWith(':end');
  const from = untilEnd ? raw.slice(0, -4) || 'start' : raw;
  const bad = () => new UsageError(`${command}: --offset must be start, end, N, +N, -N or @time (optionally followed by :end), not ${raw}`);
  if (from === 'start' || from === 'oldest') return { kind: 'start', value: 0n, untilEnd };
  if (from === 'end' || from === 'newest') return { kind: 'end', value: 0n, untilEnd };
  if (/^\d+$/.test(from)) return { kind: 'exact', value: BigInt(from), untilEnd };
  if (/^\+\d+$/.test(from)) return { kind: 'fromStart', value: BigInt(from.slice(1)), untilEnd };
  if (/^-\d+$/.test(from)) return { kind: 'fromEnd', value: BigInt(from.slice(1)), untilEnd };
  if (from.startsWith('@')) return { kind: 'time', value: parseTime(from.slice(1), bad), untilEnd };
  throw bad();
}

/** Epoch milliseconds, or an ISO-8601 time. */
export function parseTime(raw: string, bad: () => Error): bigint {
  if (/^\d+$/.test(raw)) return BigInt(raw);
  const ms = Date.parse(raw);
  if (Number.isNaN(ms)) throw bad();
  return BigInt(ms);
}

/** Where each partition starts for `spec`, clamped to [log start, high watermark]. */
export async function resolveOffsets(client: KafkaClient, topic: string, partitions: readonly number[], spec: OffsetSpec): Promise<Map<number, bigint>> {
  const [start, end] = await Promise.all([listOffsets(client, topic, partitions, EARLIEST), listOffsets(client, topic, partitions, LATEST)]);
  const atTime = spec.kind === 'time' ? await listOffsets(client, topic, partitions, spec.value) : null;
  const result = new Map<number, bigint>();
  for (const p of partitions) {
    const lo = start.get(p)!;
    const hi = end.get(p)!;
    let at: bigint;
    if (spec.kind === 'start') at = lo;
    else if (spec.kind === 'end') at = hi;
    else if (spec.kind === 'exact') at = spec.value;
    else if (spec.kind === 'fromStart') at = lo + spec.value;
    else if (spec.kind === 'fromEnd') at = hi - spec.value;
    else at = atTime!.get(p)! < 0n ? hi : atTime!.get(p)!;
    result.set(p, at < lo ? lo : at > hi ? hi : at);
  }
  return result;
}

function partitionsFlag(p: Parsed): number[] | null {
  const raw = flag(p, 'partitions');
  if (raw === undefined) return null;
  const list = raw.split(',').map((s) => Number(s.trim()));
  if (list.some((n) => !Number.isInteger(n) || n < 0)) throw new UsageError(`consume: --partitions takes partition numbers separated by commas, not ${raw}`);
  return list;
}

export const consumeCommand: Command = {
  summary: 'consume records',
  args: '<topic>...',
  flags: {
    offset: { short: 'o', value: 'start|end|N|+N|-N|@time[:end]', doc: 'where to start (default start); :end stops at the current end' },
    num: { short: 'n', value: 'n', doc: 'stop after n records' },
    partitions: { short: 'p', value: 'p,…', doc: 'only these partitions (not with --group)' },
    group: { short: 'g', value: 'group', doc: 'consume as a member of this group: start at its committed offsets (-o where it has none), commit what is printed' },
    format: {
      short: 'f',
      value: 'text|json|raw|template',
      doc: "text: the value and a newline (default); json: one object per line; raw: the values' bytes only; or a template of %t %p %o %k %v %d %h",
    },
  },
  more: `JSON lines hold topic, partition, offset, timestamp, key, value and headers; a key or value that is not UTF-8 is base64 with "keyEncoding"/"valueEncoding": "base64".\n`,
  async run(ctx, p) {
    const topics = [...new Set(p.positionals)];
    if (topics.length === 0) throw new UsageError('consume: name at least one topic');
    const spec = parseOffsetSpec(flag(p, 'offset') ?? 'start');
    const num = intFlag(p, 'num', 'consume', 1);
    const only = partitionsFlag(p);
    const group = flag(p, 'group');
    if (group !== undefined && only) throw new UsageError('consume: --partitions and --group exclude each other (the group assigns partitions)');
    const write = recordWriter(flag(p, 'format') ?? 'text');
    const client = await ctx.client();
    let stopping = false;
    const stop = () => {
      stopping = true;
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    try {
      if (group === undefined) {
        const assigned = new Map<string, number[]>();
        for (const topic of topics) {
          const all = [...(await client.leaders(topic)).keys()].sort((a, b) => a - b);
          const missing = only?.filter((x) => !all.includes(x)) ?? [];
          if (missing.length > 0) throw new CliError(`topic ${topic} has no partition ${missing.join(', ')}`);
          assigned.set(topic, only ?? all);
        }
        await consumeAssigned(ctx, client, assigned, spec, { remaining: num ?? Infinity }, write, () => stopping);
        return 0;
      }
      const member = await GroupMember.join(client, group, topics);
      const budget = { remaining: num ?? Infinity };
      try {
        while (!stopping && budget.remaining > 0) {
          const committed = await fetchCommitted(
            await client.coordinator(group),
            group,
            [...member.assignment].map(([name, partitions]) => ({ name, partitions })),
          );
          const done = await consumeAssigned(
            ctx,
            client,
            member.assignment,
            spec,
            budget,
            write,
            () => stopping || member.rebalancing,
            committed,
            (offsets) => member.commit(offsets),
          );
          if (done) break;
          if (member.rebalancing) await member.rejoin();
        }
      } finally {
        await member.leave();
      }
      return 0;
    } finally {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
    }
  },
};

/**
 * Consumes the assigned partitions until the budget is spent, `:end` is reached
 * (returns true then) or `interrupted()` (returns false). With `commit`, the
 * offsets after the printed records are committed after each round.
 */
async function consumeAssigned(
  ctx: Context,
  client: KafkaClient,
  assigned: Map<string, number[]>,
  spec: OffsetSpec,
  budget: { remaining: number },
  write: (r: OutRecord) => Buffer | string,
  interrupted: () => boolean,
  committed?: Map<string, Map<number, bigint>>,
  commit?: (offsets: Map<string, Map<number, bigint>>) => Promise<void>,
): Promise<boolean> {
  const fetchers: Fetcher[] = [];
  const stopAt = new Map<string, Map<number, bigint>>();
  for (const [topic, partitions] of assigned) {
    if (partitions.length === 0) continue;
    const positions = await resolveOffsets(client, topic, partitions, spec);
    for (const [partition, offset] of committed?.get(topic) ?? []) if (offset >= 0n && partitions.includes(partition)) positions.set(partition, offset);
    fetchers.push(new Fetcher(client, topic, positions));
    if (spec.untilEnd) stopAt.set(topic, await listOffsets(client, topic, partitions, LATEST));
  }
  const open = (f: Fetcher) => [...f.positions.keys()].filter((x) => !spec.untilEnd || f.positions.get(x)! < stopAt.get(f.topic)!.get(x)!);
  while (budget.remaining > 0) {
    if (interrupted()) return false;
    const active = fetchers.filter((f) => open(f).length > 0);
    if (active.length === 0) {
      // Nothing assigned (a group member without partitions) waits for a rebalance; `:end` reached ends.
      if (spec.untilEnd) return true;
      await new Promise((resolve) => setTimeout(resolve, 500));
      continue;
    }
    const rounds = await Promise.all(active.map(async (f) => ({ f, records: await f.poll(open(f)) })));
    const progress = new Map<string, Map<number, bigint>>();
    for (const { f, records } of rounds) {
      for (const r of records) {
        if (budget.remaining <= 0) break;
        if (spec.untilEnd && r.offset >= stopAt.get(f.topic)!.get(r.partition)!) continue;
        ctx.out.write(write(r));
        budget.remaining--;
        const done = progress.get(f.topic) ?? new Map<number, bigint>();
        done.set(r.partition, r.offset + 1n);
        progress.set(f.topic, done);
      }
    }
    if (commit && progress.size > 0) await commit(progress);
  }
  return true;
}
