// `pgkafka cluster info`, as rpk cluster info: the cluster id, the controller
// and the brokers (DescribeCluster where the broker serves it, else Metadata)
// with how many partitions each leads (Metadata), and the topics with their
// partition counts.
import { flag } from './args.js';
import type { Command, CommandTree } from './command.js';
import { formatTable, toJson } from './format.js';
import { DescribeClusterApi } from '../protocol/messages/index.js';

const info: Command = {
  summary: 'the cluster id, controller, brokers and topics',
  flags: { format: { short: 'f', value: 'text|json', doc: 'output format (default text)' } },
  async run(ctx, p) {
    const client = await ctx.client();
    const meta = await client.metadata();
    let brokers = meta.brokers.map((b) => ({ id: b.nodeId, host: b.host, port: b.port, rack: b.rack }));
    let clusterId = meta.clusterId;
    let controllerId = meta.controllerId;
    if (client.bootstrap.versions.has(DescribeClusterApi.apiKey)) {
      const d = await client.request(DescribeClusterApi, { includeClusterAuthorizedOperations: false, endpointType: 1, includeFencedBrokers: false });
      if (d.errorCode === 0) {
        brokers = d.brokers.map((b) => ({ id: b.brokerId, host: b.host, port: b.port, rack: b.rack }));
        clusterId = d.clusterId;
        controllerId = d.controllerId;
      }
    }
    brokers.sort((a, b) => a.id - b.id);
    const led = new Map<number, number>();
    for (const t of meta.topics) for (const p of t.partitions) if (p.leaderId >= 0) led.set(p.leaderId, (led.get(p.leaderId) ?? 0) + 1);
    const withLeaders = brokers.map((b) => ({ ...b, leaders: led.get(b.id) ?? 0 }));
    const offline = meta.topics.reduce((n, t) => n + t.partitions.filter((p) => p.leaderId < 0).length, 0);
    const topics = meta.topics
      .filter((t) => !t.isInternal)
      .map((t) => ({ name: t.name ?? '', partitions: t.partitions.length, replicas: t.partitions[0]?.replicaNodes.length ?? 0 }))
      .sort((a, b) => a.name.localeCompare(b.name));
    if (flag(p, 'format') === 'json') {
      ctx.out.write(`${toJson({ clusterId, controllerId, brokers: withLeaders, offlinePartitions: offline, topics })}\n`);
      return;
    }
    ctx.out.write(`CLUSTER\n=======\n${clusterId ?? '-'}\n\n`);
    ctx.out.write(
      `BROKERS\n=======\n${formatTable([['ID', 'HOST', 'PORT', 'RACK', 'LEADERS'], ...withLeaders.map((b) => [`${b.id}${b.id === controllerId ? '*' : ''}`, b.host, String(b.port), b.rack ?? '-', String(b.leaders)])], 2)}\n`,
    );
    if (offline > 0) ctx.out.write(`OFFLINE PARTITIONS (no live leader): ${offline}\n\n`);
    ctx.out.write(`TOPICS\n======\n${formatTable([['NAME', 'PARTITIONS', 'REPLICAS'], ...topics.map((t) => [t.name, String(t.partitions), String(t.replicas)])], 2)}`);
  },
};

export const clusterCommands: CommandTree = { info };
