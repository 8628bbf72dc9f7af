// A small Kafka client for the CLI: a bootstrap connection, one connection per
// broker it is routed to (partition leaders, group coordinators), Metadata
// and FindCoordinator. Requests go at the highest version both sides serve,
// capped where a later version switches from topic names to topic ids.
import type { ApiCodec, Input } from '../../protocol/codec/types.js';
import { ErrorCode, errorName } from '../../protocol/errors.js';
import { FindCoordinatorApi, MetadataApi, type MetadataResponse } from '../../protocol/messages/index.js';
import { CliError } from '../errors.js';
import { Connection } from './connection.js';

const CONNECT_TIMEOUT_MS = 10_000;
/** Metadata v12+ may answer topic ids only; v11 names every topic. */
const METADATA_CAP = 12;
/** v4+ of FindCoordinator batches keys; v3 asks for one. */
const FIND_COORDINATOR_CAP = 3;

export type Metadata = MetadataResponse;

export class KafkaClient {
  private readonly nodes = new Map<number, Promise<Connection>>();
  private metadataCache: Metadata | null = null;

  private constructor(readonly bootstrap: Connection) {}

  /** Connects to the first reachable address of `brokers`; none reachable is a one-line CliError. */
  static async connect(brokers: readonly string[]): Promise<KafkaClient> {
    const failures: string[] = [];
    for (const address of brokers) {
      try {
        return new KafkaClient(await Connection.open(address, CONNECT_TIMEOUT_MS));
      } catch (err) {
        if (!(err instanceof CliError) || err.exitCode === 2) throw err;
        failures.push(err.message);
      }
    }
    throw new CliError(failures.length === 1 ? failures[0]! : `cannot reach any broker: ${failures.join('; ')}`);
  }

  request<Req, Res>(codec: ApiCodec<Req, Res>, body: Input<Req>, cap = Infinity): Promise<Res> {
    return this.bootstrap.request(codec, body, cap);
  }

  /** Metadata for these topics (null: every topic). Cached per invocation when asked for every topic. */
  async metadata(topics: readonly string[] | null = null, allowAutoTopicCreation = false): Promise<Metadata> {
    const answer = await this.request(MetadataApi, { topics: topics === null ? null : topics.map((name) => ({ name })), allowAutoTopicCreation }, METADATA_CAP);
    if (topics === null) this.metadataCache = answer;
    return answer;
  }

  /** The connection to broker `nodeId`, opened once. */
  async node(nodeId: number): Promise<Connection> {
    let conn = this.nodes.get(nodeId);
    if (!conn) {
      const meta = this.metadataCache ?? (await this.metadata());
      const broker = meta.brokers.find((b) => b.nodeId === nodeId);
      if (!broker) throw new CliError(`broker ${nodeId} is not in the cluster's metadata`);
      conn = Connection.open(`${broker.host}:${broker.port}`, CONNECT_TIMEOUT_MS);
      this.nodes.set(nodeId, conn);
    }
    return conn;
  }

  /** The group coordinator's connection (FindCoordinator, retried while the coordinator loads). */
  async coordinator(groupId: string): Promise<Connection> {
    for (let attempt = 0; ; attempt++) {
      const answer = await this.request(FindCoordinatorApi, { key: groupId, keyType: 0 }, FIND_COORDINATOR_CAP);
      if (answer.errorCode === 0) {
        let conn = this.nodes.get(answer.nodeId);
        if (!conn) {
          conn = Connection.open(`${answer.host}:${answer.port}`, CONNECT_TIMEOUT_MS);
          this.nodes.set(answer.nodeId, conn);
        }
        return conn;
      }
      const retriable = answer.errorCode === ErrorCode.COORDINATOR_NOT_AVAILABLE || answer.errorCode === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS;
      if (!retriable || attempt >= 20) throw new CliError(`group ${groupId}: no coordinator (${errorName(answer.errorCode)})`);
      await sleep(250);
    }
  }

  /** Partition → leader node of a topic, or a CliError when the topic does not exist. */
  async leaders(topic: string): Promise<Map<number, number>> {
    const meta = await this.metadata([topic]);
    this.metadataCache ??= meta;
    const t = meta.topics[0];
    if (!t || t.errorCode !== 0) throw new CliError(`topic ${topic}: ${errorName(t?.errorCode ?? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)}`);
    return new Map(t.partitions.map((p) => [p.partitionIndex, p.leaderId]));
  }

  async close(): Promise<void> {
    this.bootstrap.close();
    for (const conn of this.nodes.values()) {
      await conn.then(
        (c) => c.close(),
        () => {},
      );
    }
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
