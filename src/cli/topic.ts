// `pgkafka topic create|list|describe|alter-config|delete|add-partitions`, as
// rpk topic spells them, over CreateTopics, Metadata, DescribeConfigs,
// IncrementalAlterConfigs, DeleteTopics and CreatePartitions.
import { flag, flagList, has, intFlag, type Parsed } from './args.js';
import type { Command, CommandTree, Context } from './command.js';
import { CliError, UsageError } from './errors.js';
import { formatTable, toJson } from './format.js';
import { EARLIEST, LATEST, listOffsets } from './kafka/offsets.js';
import { errorName } from '../protocol/errors.js';
import { CreatePartitionsApi, CreateTopicsApi, DeleteTopicsApi, DescribeConfigsApi, IncrementalAlterConfigsApi } from '../protocol/messages/index.js';

const TOPIC_RESOURCE = 2;
const CONFIG_SOURCES = [
  'UNKNOWN',
  'DYNAMIC_TOPIC_CONFIG',
  'DYNAMIC_BROKER_CONFIG',
  'DYNAMIC_DEFAULT_BROKER_CONFIG',
  'STATIC_BROKER_CONFIG',
  'DEFAULT_CONFIG',
  'DYNAMIC_BROKER_LOGGER_CONFIG',
  'CLIENT_METRICS_CONFIG',
  'GROUP_CONFIG',
];
const json = { format: { short: 'f', value: 'text|json', doc: 'output format (default text)' } };

function topics(p: Parsed, command: string): string[] {
  if (p.positionals.length === 0) throw new UsageError(`${command}: name at least one topic`);
  return p.positionals;
}

function isJson(p: Parsed, command: string): boolean {
  const format = flag(p, 'format') ?? 'text';
  if (format !== 'text' && format !== 'json') throw new UsageError(`${command}: --format must be text or json, not ${format}`);
  return format === 'json';
}

/** `key=value` pairs of -c/--topic-config (or alter-config's --set). */
function configPairs(values: readonly string[], command: string, name: string): { name: string; value: string }[] {
  return values.map((kv) => {
    const eq = kv.indexOf('=');
    if (eq <= 0) throw new UsageError(`${command}: --${name} takes key=value, not ${kv}`);
    return { name: kv.slice(0, eq), value: kv.slice(eq + 1) };
  });
}

/** Prints one result row per topic and returns 1 if any failed. */
function report(ctx: Context, rows: { name: string; errorCode: number; errorMessage: string | null }[], okText: string): number {
  const table = [['TOPIC', 'STATUS'], ...rows.map((r) => [r.name, r.errorCode === 0 ? okText : `${errorName(r.errorCode)}${r.errorMessage ? `: ${r.errorMessage}` : ''}`])];
  ctx.out.write(formatTable(table, 2));
  return rows.some((r) => r.errorCode !== 0) ? 1 : 0;
}

const create: Command = {
  summary: 'create topics',
  args: '<topic>...',
  flags: {
    partitions: { short: 'p', value: 'n', doc: "partitions per topic (default -1: the broker's num.partitions)" },
    replicas: { short: 'r', value: 'n', doc: "replication factor (default -1: the broker's default)" },
    'topic-config': { short: 'c', value: 'key=value', multiple: true, doc: 'a topic config (repeatable)' },
    'dry-run': { short: 'd', boolean: true, doc: 'validate only; create nothing' },
  },
  async run(ctx, p) {
    const names = topics(p, 'topic create');
    const numPartitions = flag(p, 'partitions') === '-1' ? -1 : (intFlag(p, 'partitions', 'topic create', 1) ?? -1);
    const replicationFactor = flag(p, 'replicas') === '-1' ? -1 : (intFlag(p, 'replicas', 'topic create', 1) ?? -1);
    const configs = configPairs(flagList(p, 'topic-config'), 'topic create', 'topic-config');
    const client = await ctx.client();
    const answer = await client.request(CreateTopicsApi, {
      topics: names.map((name) => ({ name, numPartitions, replicationFactor, assignments: [], configs })),
      timeoutMs: 30_000,
      validateOnly: has(p, 'dry-run'),
    });
    return report(ctx, answer.topics, has(p, 'dry-run') ? 'OK (dry run)' : 'OK');
  },
};

const list: Command = {
  summary: 'list topics',
  flags: { ...json, internal: { short: 'i', boolean: true, doc: 'include internal topics' } },
  async run(ctx, p) {
    const asJson = isJson(p, 'topic list');
    const meta = await (await ctx.client()).metadata();
    const rows = meta.topics
      .filter((t) => has(p, 'internal') || !t.isInternal)
      .map((t) => ({ name: t.name ?? '', partitions: t.partitions.length, replicas: t.partitions[0]?.replicaNodes.length ?? 0 }))
      .sort((a, b) => a.name.localeCompare(b.name));
    if (asJson) ctx.out.write(`${toJson(rows)}\n`);
    else ctx.out.write(formatTable([['NAME', 'PARTITIONS', 'REPLICAS'], ...rows.map((r) => [r.name, String(r.partitions), String(r.replicas)])], 2));
  },
};

const describe: Command = {
  summary: 'describe topics: partitions (leaders, offsets) and configs',
  args: '<topic>...',
  flags: { ...json },
  async run(ctx, p) {
    const asJson = isJson(p, 'topic describe');
    const names = topics(p, 'topic describe');
    const client = await ctx.client();
    const meta = await client.metadata(names);
    const configs = await client.request(DescribeConfigsApi, {
      resources: names.map((resourceName) => ({ resourceType: TOPIC_RESOURCE, resourceName, configurationKeys: null })),
      includeSynonyms: false,
      includeDocumentation: false,
    });
    const described = [];
    let failed = 0;
    for (const name of names) {
      const t = meta.topics.find((x) => x.name === name);
      if (!t || t.errorCode !== 0) {
        ctx.err.write(`topic ${name}: ${errorName(t?.errorCode ?? 3)}\n`);
        failed = 1;
        continue;
      }
      const ids = t.partitions.map((x) => x.partitionIndex).sort((a, b) => a - b);
      const [start, end] = await Promise.all([listOffsets(client, name, ids, EARLIEST), listOffsets(client, name, ids, LATEST)]);
      const c = configs.results.find((r) => r.resourceName === name);
      described.push({
        name,
        topicId: t.topicId,
        internal: t.isInternal,
        partitions: ids.map((id) => {
          const x = t.partitions.find((q) => q.partitionIndex === id)!;
          return { partition: id, leader: x.leaderId, epoch: x.leaderEpoch, replicas: x.replicaNodes, logStartOffset: start.get(id)!, highWatermark: end.get(id)! };
        }),
        configs: (c?.configs ?? []).map((k) => ({ name: k.name, value: k.isSensitive ? null : k.value, source: CONFIG_SOURCES[k.configSource] ?? String(k.configSource) })),
      });
    }
    if (asJson) {
      ctx.out.write(`${toJson(described)}\n`);
      return failed;
    }
    for (const d of described) {
      ctx.out.write(
        `SUMMARY\n=======\n${formatTable(
          [
            ['NAME', d.name],
            ['PARTITIONS', String(d.partitions.length)],
            ['REPLICAS', String(d.partitions[0]?.replicas.length ?? 0)],
            ['ID', d.topicId],
          ],
          2,
        )}\n`,
      );
      ctx.out.write(`CONFIGS\n=======\n${formatTable([['KEY', 'VALUE', 'SOURCE'], ...d.configs.map((k) => [k.name, k.value ?? '(sensitive)', k.source])], 2)}\n`);
      const rows = d.partitions.map((x) => [String(x.partition), String(x.leader), String(x.epoch), `[${x.replicas.join(' ')}]`, String(x.logStartOffset), String(x.highWatermark)]);
      ctx.out.write(`PARTITIONS\n==========\n${formatTable([['PARTITION', 'LEADER', 'EPOCH', 'REPLICAS', 'LOG-START-OFFSET', 'HIGH-WATERMARK'], ...rows], 2)}`);
    }
    return failed;
  },
};

const alterConfig: Command = {
  summary: 'set, delete, append to or subtract from topic configs (IncrementalAlterConfigs)',
  args: '<topic>...',
  flags: {
    set: { short: 's', value: 'key=value', multiple: true, doc: 'set a config (repeatable)' },
    delete: { short: 'd', value: 'key', multiple: true, doc: 'delete a config, back to its default (repeatable)' },
    append: { value: 'key=value', multiple: true, doc: 'append to a list config (repeatable)' },
    subtract: { value: 'key=value', multiple: true, doc: 'remove from a list config (repeatable)' },
    'dry-run': { boolean: true, doc: 'validate only' },
  },
  async run(ctx, p) {
    const names = topics(p, 'topic alter-config');
    const ops = [
      ...configPairs(flagList(p, 'set'), 'topic alter-config', 'set').map((c) => ({ ...c, configOperation: 0 })),
      ...flagList(p, 'delete').map((name) => ({ name, value: null, configOperation: 1 })),
      ...configPairs(flagList(p, 'append'), 'topic alter-config', 'append').map((c) => ({ ...c, configOperation: 2 })),
      ...configPairs(flagList(p, 'subtract'), 'topic alter-config', 'subtract').map((c) => ({ ...c, configOperation: 3 })),
    ];
    if (ops.length === 0) throw new UsageError('topic alter-config: give at least one of --set, --delete, --append, --subtract');
    const answer = await (
      await ctx.client()
    ).request(IncrementalAlterConfigsApi, {
      resources: names.map((resourceName) => ({ resourceType: TOPIC_RESOURCE, resourceName, configs: ops })),
      validateOnly: has(p, 'dry-run'),
    });
    return report(
      ctx,
      answer.responses.map((r) => ({ name: r.resourceName, errorCode: r.errorCode, errorMessage: r.errorMessage })),
      has(p, 'dry-run') ? 'OK (dry run)' : 'OK',
    );
  },
};

const del: Command = {
  summary: 'delete topics',
  args: '<topic>...',
  flags: {},
  async run(ctx, p) {
    const names = topics(p, 'topic delete');
    const answer = await (await ctx.client()).request(DeleteTopicsApi, { topics: names.map((name) => ({ name })), topicNames: names, timeoutMs: 30_000 });
    return report(
      ctx,
      answer.responses.map((r) => ({ name: r.name ?? r.topicId, errorCode: r.errorCode, errorMessage: r.errorMessage })),
      'OK',
    );
  },
};

const addPartitions: Command = {
  summary: 'add partitions to topics',
  args: '<topic>...',
  flags: { num: { short: 'n', value: 'n', doc: 'how many partitions to add (required)' } },
  async run(ctx, p) {
    const names = topics(p, 'topic add-partitions');
    const add = intFlag(p, 'num', 'topic add-partitions', 1);
    if (add === undefined) throw new UsageError('topic add-partitions: --num is required');
    const client = await ctx.client();
    const meta = await client.metadata(names);
    const counts = names.map((name) => {
      const t = meta.topics.find((x) => x.name === name);
      if (!t || t.errorCode !== 0) throw new CliError(`topic ${name}: ${errorName(t?.errorCode ?? 3)}`);
      return { name, count: t.partitions.length + add, assignments: null };
    });
    const answer = await client.request(CreatePartitionsApi, { topics: counts, timeoutMs: 30_000, validateOnly: false });
    return report(ctx, answer.results, 'OK');
  },
};

export const topicCommands: CommandTree = { create, list, describe, 'alter-config': alterConfig, delete: del, 'add-partitions': addPartitions };
