// Brokers on one schema for the multi-broker tests: node 1 in this process
// (its TestBroker runs SQL for assertions), the others as child processes
// that can be killed; a raw client to each; and which broker coordinates
// which key (transactional id or group id) by FindCoordinator.
import { COORDINATOR_SLOTS } from '../../src/coordinator/coordination.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { FindCoordinatorApi } from '../../src/protocol/messages/index.js';
import type { OptionName } from '../../src/config/schema.js';
import { startTestBroker, type TestBroker } from './broker.js';
import { freePort, spawnBroker, type BrokerProcess } from './broker-process.js';
import { RawClient } from './raw-client.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const TRANSACTION = 1;

export class BrokerCluster {
  /** Keys spread over every coordinator slot, to find one coordinated by a given node. */
  readonly keys = Array.from({ length: 4 * COORDINATOR_SLOTS }, (_, i) => `cluster-key-${i}`);
  private readonly nodes = new Map<number, { bootstrap: string; process?: BrokerProcess; client: RawClient }>();
  private readonly used = new Set<string>();

  private constructor(readonly first: TestBroker) {}

  /** Node 1 in this process, nodes 2..size as child processes, all on one schema. */
  static async start(size: number, overrides: Partial<Record<OptionName, unknown>> = {}): Promise<BrokerCluster> {
    const first = await startTestBroker({ ...overrides, nodeId: 1 });
    const cluster = new BrokerCluster(first);
    cluster.nodes.set(1, { bootstrap: first.bootstrap, client: await RawClient.connect(first.bootstrap) });
    await Promise.all(
      Array.from({ length: size - 1 }, async (_, i) => {
        const port = await freePort();
        const child = await spawnBroker({ DATABASE_URL: first.databaseUrl, PGKAFKA_SCHEMA: first.schema, PGKAFKA_NODE_ID: String(i + 2), PGKAFKA_PORT: String(port) });
        cluster.nodes.set(i + 2, { bootstrap: `127.0.0.1:${port}`, process: child, client: await RawClient.connect(`127.0.0.1:${port}`) });
      }),
    );
    return cluster;
  }

  client(node: number): RawClient {
    return this.nodes.get(node)!.client;
  }

  bootstrap(node: number): string {
    return this.nodes.get(node)!.bootstrap;
  }

  /** kill -9 of a child-process node. */
  async kill(node: number): Promise<void> {
    const n = this.nodes.get(node)!;
    n.client.close();
    n.process!.child.kill('SIGKILL');
    await n.process!.exited;
    this.nodes.delete(node);
  }

  /** Waits until the live nodes name the same coordinator for every transactional id of `keys`, each node coordinating some; returns key → node. */
  async settled(deadlineMs = 30_000): Promise<Map<string, number>> {
    const live = [...this.nodes.keys()];
    const deadline = Date.now() + deadlineMs;
    for (;;) {
      const answers = await Promise.all(
        live.map(async (node) => {
          const res = await this.client(node).request(FindCoordinatorApi, 4, { keyType: TRANSACTION, coordinatorKeys: this.keys });
          return new Map(res.coordinators.map((c) => [c.key, c.errorCode === ErrorCode.NONE ? c.nodeId : -1]));
        }),
      );
      const agreed = this.keys.every((k) => answers.every((a) => a.get(k) === answers[0]!.get(k)));
      const holders = new Set(answers[0]!.values());
      if (agreed && holders.size === live.length && live.every((n) => holders.has(n))) return answers[0]!;
      if (Date.now() > deadline) throw new Error('transaction coordinators did not settle');
      await sleep(200);
    }
  }

  /** A key whose coordinator is `node` by `answer`, not handed out before. */
  keyOn(answer: Map<string, number>, node: number): string {
    const key = this.keys.find((k) => answer.get(k) === node && !this.used.has(k));
    if (!key) throw new Error(`no key left on node ${node}`);
    this.used.add(key);
    return key;
  }

  async stop(): Promise<void> {
    for (const n of this.nodes.values()) {
      n.client.close();
      if (n.process && n.process.child.exitCode === null && n.process.child.signalCode === null) n.process.child.kill('SIGKILL');
    }
    await this.first.destroy();
  }
}
