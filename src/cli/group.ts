// `pgkafka group list|describe|seek|delete`, as rpk group and
// kafka-consumer-groups: ListGroups on every broker, DescribeGroups and
// OffsetFetch at the coordinator with ListOffsets for the lag, seek as
// --reset-offsets (a dry run unless --execute), DeleteGroups.
import { flag, has, type Parsed } from './args.js';
import type { Command, CommandTree } from './command.js';
import { parseTime } from './consume.js';
import { CliError, UsageError } from './errors.js';
import { formatTable, toJson } from './format.js';
import type { KafkaClient } from './kafka/client.js';
import { commitOffsets, fetchCommitted } from './kafka/group-offsets.js';
import { readVersioned } from './kafka/group-member.js';
import { EARLIEST, LATEST, listOffsets } from './kafka/offsets.js';
import { errorName } from '../protocol/errors.js';
import { DeleteGroupsApi, DescribeGroupsApi, ListGroupsApi, readConsumerProtocolAssignment } from '../protocol/messages/index.js';

const json = { format: { short: 'f', value: 'text|json', doc: 'output format (default text)' } };

function isJson(p: Parsed, command: string): boolean {
  const format = flag(p, 'format') ?? 'text';
  if (format !== 'text' && format !== 'json') throw new UsageError(`${command}: --format must be text or json, not ${format}`);
  return format === 'json';
}

function oneGroup(p: Parsed, command: string): string {
  if (p.positionals.length !== 1) throw new UsageError(`${command}: name one group`);
  return p.positionals[0]!;
}

const list: Command = {
  summary: 'list consumer groups (every broker asked, as AdminClient does)',
  flags: { ...json },
  async run(ctx, p) {
    const asJson = isJson(p, 'group list');
    const client = await ctx.client();
    const meta = await client.metadata();
    const answers = await Promise.all(meta.brokers.map(async (b) => (await client.node(b.nodeId)).request(ListGroupsApi, { statesFilter: [], typesFilter: [] })));
    const seen = new Map<string, { group: string; state: string; protocolType: string; type: string }>();
    for (const a of answers) {
      if (a.errorCode !== 0) throw new CliError(`ListGroups: ${errorName(a.errorCode)}`);
      for (const g of a.groups) seen.set(g.groupId, { group: g.groupId, state: g.groupState, protocolType: g.protocolType, type: g.groupType });
    }
    const rows = [...seen.values()].sort((a, b) => a.group.localeCompare(b.group));
    if (asJson) ctx.out.write(`${toJson(rows)}\n`);
    else ctx.out.write(formatTable([['GROUP', 'STATE', 'PROTOCOL-TYPE'], ...rows.map((g) => [g.group, g.state || '-', g.protocolType || '-'])], 2));
  },
};

interface PartitionLag {
  topic: string;
  partition: number;
  currentOffset: bigint | null;
  logEndOffset: bigint;
  lag: bigint | null;
  memberId: string | null;
  clientId: string | null;
  host: string | null;
}

async function describeGroup(client: KafkaClient, group: string) {
  const coordinator = await client.coordinator(group);
  const described = (await coordinator.request(DescribeGroupsApi, { groups: [group], includeAuthorizedOperations: false })).groups[0];
  if (!described || described.errorCode !== 0) throw new CliError(`group ${group}: ${errorName(described?.errorCode ?? 69)}${described?.errorMessage ? ` (${described.errorMessage})` : ''}`);
  const owner = new Map<string, { memberId: string; clientId: string; host: string }>();
  for (const m of described.members) {
    const a = described.protocolType === 'consumer' ? readVersioned(m.memberAssignment, readConsumerProtocolAssignment) : null;
    for (const tp of a?.assignedPartitions ?? []) for (const partition of tp.partitions) owner.set(`${tp.topic}\u0000${partition}`, { memberId: m.memberId, clientId: m.clientId, host: m.clientHost });
  }
  const committed = await fetchCommitted(coordinator, group, null);
  for (const key of owner.keys()) {
    const [topic, partition] = key.split('\u0000') as [string, string];
    const partitions = committed.get(topic) ?? new Map<number, bigint>();
    if (!partitions.has(Number(partition))) partitions.set(Number(partition), -1n);
    committed.set(topic, partitions);
  }
  const rows: PartitionLag[] = [];
  for (const [topic, partitions] of [...committed].sort(([a], [b]) => a.localeCompare(b))) {
    const ids = [...partitions.keys()].sort((a, b) => a - b);
    const ends = await listOffsets(client, topic, ids, LATEST);
    for (const partition of ids) {
      const current = partitions.get(partition)!;
      const m = owner.get(`${topic}\u0000${partition}`);
      const end = ends.get(partition)!;
      rows.push({
        topic,
        partition,
        currentOffset: current >= 0n ? current : null,
        logEndOffset: end,
        lag: current >= 0n ? end - current : null,
        memberId: m?.memberId ?? null,
        clientId: m?.clientId ?? null,
        host: m?.host ?? null,
      });
    }
  }
  return { group, state: described.groupState, protocolType: described.protocolType, assignor: described.protocolData, members: described.members.length, partitions: rows };
}

const describe: Command = {
  summary: 'describe groups: state, members, committed offsets and lag',
  args: '<group>...',
  flags: { ...json },
  async run(ctx, p) {
    const asJson = isJson(p, 'group describe');
    if (p.positionals.length === 0) throw new UsageError('group describe: name at least one group');
    const client = await ctx.client();
    const groups = [];
    for (const g of p.positionals) groups.push(await describeGroup(client, g));
    if (asJson) {
      ctx.out.write(`${toJson(groups)}\n`);
      return;
    }
    const cell = (v: bigint | string | null) => (v === null || v === '' ? '-' : String(v));
    ctx.out.write(
      groups
        .map((g) => {
          const head = formatTable(
            [
              ['GROUP', g.group],
              ['STATE', g.state],
              ['MEMBERS', String(g.members)],
              ['TOTAL-LAG', String(g.partitions.reduce((sum, r) => sum + (r.lag ?? 0n), 0n))],
            ],
            2,
          );
          if (g.partitions.length === 0) return head;
          const header = ['TOPIC', 'PARTITION', 'CURRENT-OFFSET', 'LOG-END-OFFSET', 'LAG', 'MEMBER-ID', 'CLIENT-ID', 'HOST'];
          return `${head}\n${formatTable([header, ...g.partitions.map((r) => [r.topic, String(r.partition), cell(r.currentOffset), String(r.logEndOffset), cell(r.lag), cell(r.memberId), cell(r.clientId), cell(r.host)])], 2)}`;
        })
        .join('\n'),
    );
  },
};

const seek: Command = {
  summary: "reset a group's committed offsets (a dry run unless --execute, as kafka-consumer-groups --reset-offsets)",
  args: '<group>',
  flags: {
    to: { value: 'start|end|N|@time', doc: 'the earliest or latest offset, an offset, or the first offset at or after a time (epoch ms or ISO-8601)' },
    'shift-by': { value: 'n', doc: 'move each committed offset by n (negative: back)' },
    topics: { value: 't,…', doc: 'only these topics (default: every topic the group has offsets for)' },
    execute: { boolean: true, doc: 'commit the new offsets (the group must have no active members)' },
    ...json,
  },
  async run(ctx, p) {
    const group = oneGroup(p, 'group seek');
    const asJson = isJson(p, 'group seek');
    const to = flag(p, 'to');
    const shift = flag(p, 'shift-by');
    if ((to === undefined) === (shift === undefined)) throw new UsageError('group seek: give exactly one of --to and --shift-by');
    if (shift !== undefined && !/^[+-]?\d+$/.test(shift)) throw new UsageError(`group seek: --shift-by takes an integer, not ${shift}`);
    const bad = () => new UsageError(`group seek: --to must be start, end, an offset or @time, not ${to}`);
    const target =
      to === undefined
        ? null
        : to === 'start' || to === 'earliest'
          ? EARLIEST
          : to === 'end' || to === 'latest'
            ? LATEST
            : /^\d+$/.test(to)
              ? BigInt(to)
              : to.startsWith('@')
                ? parseTime(to.slice(1), bad)
                : null;
    if (to !== undefined && target === null) throw bad();

    const client = await ctx.client();
    const coordinator = await client.coordinator(group);
    const described = (await coordinator.request(DescribeGroupsApi, { groups: [group], includeAuthorizedOperations: false })).groups[0];
    const state = described?.groupState ?? 'Dead';
    if (has(p, 'execute') && state !== 'Empty' && state !== 'Dead') {
      throw new CliError(`Assignments can only be reset if the group '${group}' is inactive, but the current state is ${state}.`);
    }
    const only = flag(p, 'topics')
      ?.split(',')
      .map((t) => t.trim());
    const committed = await fetchCommitted(coordinator, group, null);
    const topics = only ?? [...committed.keys()];
    if (topics.length === 0) throw new CliError(`group ${group} has no committed offsets; name the topics with --topics`);
    const plan: { topic: string; partition: number; currentOffset: bigint | null; newOffset: bigint }[] = [];
    for (const topic of topics.sort()) {
      const partitions = [...(await client.leaders(topic)).keys()].sort((a, b) => a - b);
      const [lo, hi] = await Promise.all([listOffsets(client, topic, partitions, EARLIEST), listOffsets(client, topic, partitions, LATEST)]);
      const byTarget = target === null ? null : target === EARLIEST ? lo : target === LATEST ? hi : to!.startsWith('@') ? await listOffsets(client, topic, partitions, target) : null;
      for (const partition of partitions) {
        const current = committed.get(topic)?.get(partition) ?? -1n;
        if (shift !== undefined && current < 0n && only === undefined) continue;
        let next = shift !== undefined ? (current < 0n ? lo.get(partition)! : current) + BigInt(shift) : byTarget ? byTarget.get(partition)! : target!;
        // No record at or after the time: the end, as Kafka's tool does.
        if (byTarget && next < 0n) next = hi.get(partition)!;
        // Out-of-range targets are clamped to the log, as kafka-consumer-groups does.
        if (next < lo.get(partition)!) next = lo.get(partition)!;
        if (next > hi.get(partition)!) next = hi.get(partition)!;
        plan.push({ topic, partition, currentOffset: current >= 0n ? current : null, newOffset: next });
      }
    }
    if (has(p, 'execute')) {
      const offsets = new Map<string, Map<number, bigint>>();
      for (const r of plan) offsets.set(r.topic, (offsets.get(r.topic) ?? new Map<number, bigint>()).set(r.partition, r.newOffset));
      await commitOffsets(coordinator, group, offsets);
    }
    if (asJson) ctx.out.write(`${toJson({ group, executed: has(p, 'execute'), partitions: plan })}\n`);
    else {
      ctx.out.write(
        formatTable(
          [
            ['GROUP', 'TOPIC', 'PARTITION', 'CURRENT-OFFSET', 'NEW-OFFSET'],
            ...plan.map((r) => [group, r.topic, String(r.partition), r.currentOffset === null ? '-' : String(r.currentOffset), String(r.newOffset)]),
          ],
          2,
        ),
      );
      if (!has(p, 'execute')) ctx.out.write('\nDry run: nothing committed. Pass --execute to apply.\n');
    }
  },
};

const del: Command = {
  summary: 'delete groups (they must have no active members)',
  args: '<group>...',
  flags: {},
  async run(ctx, p) {
    if (p.positionals.length === 0) throw new UsageError('group delete: name at least one group');
    const client = await ctx.client();
    let failed = 0;
    const rows = [['GROUP', 'STATUS']];
    for (const group of p.positionals) {
      const answer = await (await client.coordinator(group)).request(DeleteGroupsApi, { groupsNames: [group] });
      const code = answer.results[0]?.errorCode ?? 0;
      if (code !== 0) failed = 1;
      rows.push([group, code === 0 ? 'OK' : errorName(code)]);
    }
    ctx.out.write(formatTable(rows, 2));
    return failed;
  },
};

export const groupCommands: CommandTree = { list, describe, seek, delete: del };
