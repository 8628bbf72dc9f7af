// A cluster of broker processes (the CLI, as users run it) on one fresh
// schema of the tests' PostgreSQL, each on its own port and node id, for
// tests that spread partitions over brokers and kill them.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { MetadataApi } from '../../src/protocol/messages/index.js';
import { testDatabaseUrl } from './broker.js';
import { freePort, spawnBroker, type BrokerProcess } from './broker-process.js';
import { RawClient } from './raw-client.js';

export interface ClusterNode {
  nodeId: number;
  port: number;
  bootstrap: string;
  /** The process, replaced when the node is restarted. */
  process: BrokerProcess;
  /** The port of its /metrics endpoint. */
  metricsPort: number;
}

export interface BrokerCluster {
  databaseUrl: string;
  schema: string;
  nodes: ClusterNode[];
  /** Every node's address, comma-separated (a client's bootstrap list). */
  bootstrap: string;
  node(nodeId: number): ClusterNode;
  /** kill -9 of the node's process. */
  kill(nodeId: number): Promise<void>;
  /** Starts the node again (same node id and port). */
  restart(nodeId: number): Promise<void>;
  /** Runs SQL against the cluster's schema. */
  query<T extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params?: unknown[]): Promise<T[]>;
  /** Stops every node (SIGTERM, SIGKILL after 10 s) and drops the schema. */
  stop(): Promise<void>;
}

function metricsPortOf(output: string): number {
  const line = output.split('\n').find((l) => l.includes('pgkafka broker listening'));
  const port = line ? (JSON.parse(line) as { metricsPort?: number }).metricsPort : undefined;
  if (!port) throw new Error(`no metrics port in the broker's log:\n${output}`);
  return port;
}

/** Starts `size` brokers (node ids 1..size) on one new schema; resolves once all listen. */
export async function startCluster(size = 3, env: Record<string, string> = {}): Promise<BrokerCluster> {
  const databaseUrl = testDatabaseUrl();
  const schema = `test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Pool({ connectionString: databaseUrl, max: 2, options: `-c search_path=${schema}` });
  const launch = async (nodeId: number, port: number): Promise<ClusterNode> => {
    const process = await spawnBroker({ DATABASE_URL: databaseUrl, PGKAFKA_SCHEMA: schema, PGKAFKA_NODE_ID: String(nodeId), PGKAFKA_PORT: String(port), ...env });
    return { nodeId, port, bootstrap: `127.0.0.1:${port}`, process, metricsPort: metricsPortOf(process.output()) };
  };
  // The first creates the schema (migrations run under an advisory lock, but one at a time starts faster on 2 cores).
  const nodes = [await launch(1, await freePort())];
  nodes.push(...(await Promise.all(Array.from({ length: size - 1 }, async (_, i) => launch(i + 2, await freePort())))));
  const node = (nodeId: number) => nodes.find((n) => n.nodeId === nodeId)!;
  const stopProcess = async (p: BrokerProcess) => {
    if (p.child.exitCode !== null || p.child.signalCode !== null) return;
    p.child.kill('SIGTERM');
    const timer = setTimeout(() => p.child.kill('SIGKILL'), 10_000);
    await p.exited;
    clearTimeout(timer);
  };
  return {
    databaseUrl,
    schema,
    nodes,
    bootstrap: nodes.map((n) => n.bootstrap).join(','),
    node,
    async kill(nodeId) {
      const n = node(nodeId);
      n.process.child.kill('SIGKILL');
      await n.process.exited;
    },
    async restart(nodeId) {
      const n = node(nodeId);
      Object.assign(n, await launch(nodeId, n.port));
    },
    async query<T extends pg.QueryResultRow>(sql: string, params?: unknown[]) {
      return (await admin.query<T>(sql, params)).rows;
    },
    async stop() {
      await Promise.all(nodes.map((n) => stopProcess(n.process)));
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => {});
      await admin.end();
    },
  };
}

/** Each partition's leader and epoch as the broker at `bootstrap` answers Metadata (leader -1 for an offline partition). */
export async function leadersOf(bootstrap: string, topic: string): Promise<{ leader: number; epoch: number; errorCode: number }[]> {
  const client = await RawClient.connect(bootstrap);
  try {
    const res = await client.request(MetadataApi, 12, {
      topics: [{ name: topic, topicId: '00000000-0000-0000-0000-000000000000' }],
      allowAutoTopicCreation: false,
      includeTopicAuthorizedOperations: false,
    });
    const t = res.topics[0]!;
    return [...t.partitions].sort((a, b) => a.partitionIndex - b.partitionIndex).map((p) => ({ leader: p.leaderId, epoch: p.leaderEpoch, errorCode: p.errorCode }));
  } finally {
    client.close();
  }
}

/** Partitions led per node id. */
export function spread(leaders: readonly { leader: number }[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const l of leaders) counts[l.leader] = (counts[l.leader] ?? 0) + 1;
  return counts;
}

/** Polls `check` every 100 ms until it holds; throws naming `what` after `ms`. */
export async function until(what: string, check: () => Promise<boolean> | boolean, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
