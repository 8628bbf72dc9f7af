// Prometheus /metrics, named as danielqsj/kafka_exporter names them so its
// dashboards and alerts work unchanged, plus kafka_consumergroup_lag_seconds
// (lag in time) and the process's default metrics prefixed pgkafka_. Every
// gauge is read from PostgreSQL when Prometheus scrapes: one snapshot per
// scrape, shared by all the gauges' collect callbacks. The request and commit
// histograms are fed by the broker as it serves (no query at scrape time).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Logger } from './logger.js';
import { describeGroups, type GroupLag } from './lag.js';
import type { DeletedUnread, LagStore, PartitionOffsets } from '../storage/pg/lag-store.js';

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

export interface MetricsServerOptions {
  host: string;
  port: number;
  lagStore: LagStore;
  log: Logger;
  /** A registry already holding the broker's own metrics (createBrokerMetrics); the gauges join it. */
  registry?: Registry;
  /** epoch milliseconds, for lag in time; Date.now by default (tests inject one) */
  now?: () => number;
  /** The node id leading a partition (-1: none live), as this broker knows it; without it the leadership gauges are left out. */
  leaderOf?: (topicId: string, partition: number) => number;
  /** What /ready checks: null when ready, else why not (served as 503). Without it /ready answers as /health. */
  readiness?: () => Promise<string | null>;
}

interface Snapshot {
  groups: GroupLag[];
  partitions: PartitionOffsets[];
  deletedUnread: DeletedUnread[];
}

type SnapshotSource = () => Promise<Snapshot>;

/** Seconds: from half a millisecond (a commit on a fast disk) to a long poll's 30 s. */
const DURATION_BUCKETS = [0.0005, 0.001, 0.002, 0.003, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** The histograms the broker feeds while it serves, in their own registry (the /metrics server adds its gauges to it). */
export interface BrokerMetrics {
  registry: Registry;
  /** A response was written: its API and the seconds since its request was read. */
  observeRequest(api: string, seconds: number): void;
  /** A flush's append statement finished in PostgreSQL after `seconds`. */
  observeCommit(seconds: number): void;
  /** Where the incremental fetch sessions' figures are read at each scrape. */
  observeFetchSessions(read: () => FetchSessionFigures): void;
}

/** The fetch session cache's figures (Kafka's FetchSessionCache metrics). */
export interface FetchSessionFigures {
  sessions: number;
  partitions: number;
  evictions: number;
  incrementalFetches: number;
}

export function createBrokerMetrics(): BrokerMetrics {
  const registry = new Registry();
  const requests = new Histogram({
    name: 'pgkafka_request_duration_seconds',
    help: "Time from a request being read to its response being written, per API (Kafka's RequestMetrics TotalTimeMs; a Fetch includes its long-poll wait)",
    labelNames: ['api'],
    buckets: DURATION_BUCKETS,
    registers: [registry],
  });
  const commits = new Histogram({
    name: 'pgkafka_produce_commit_duration_seconds',
    help: 'Time of each append statement in PostgreSQL (offsets assigned, batches inserted, committed), one per flush of a partition; acknowledgements wait for it',
    buckets: DURATION_BUCKETS,
    registers: [registry],
  });
  let fetchSessions: (() => FetchSessionFigures) | null = null;
  const sessionGauge = (name: string, help: string, pick: (f: FetchSessionFigures) => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        if (fetchSessions) this.set(pick(fetchSessions()));
      },
    });
  const sessionCounter = (name: string, help: string, pick: (f: FetchSessionFigures) => number) =>
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        if (!fetchSessions) return;
        this.reset();
        this.inc(pick(fetchSessions()));
      },
    });
  sessionGauge('pgkafka_fetch_sessions', "Incremental fetch sessions in this broker's cache (Kafka's NumIncrementalFetchSessions)", (f) => f.sessions);
  sessionGauge('pgkafka_fetch_session_partitions', "Partitions cached over all fetch sessions (Kafka's NumIncrementalFetchPartitionsCached)", (f) => f.partitions);
  sessionCounter('pgkafka_fetch_session_evictions_total', "Fetch sessions evicted to make room for another (Kafka's IncrementalFetchSessionEvictionsPerSec)", (f) => f.evictions);
  sessionCounter('pgkafka_fetch_incremental_requests_total', 'Fetch requests served as incremental fetches of a session', (f) => f.incrementalFetches);
  // One child per API, looked up once: observe() then costs a bucket search and two additions.
  const perApi = new Map<string, Histogram.Internal<'api'>>();
  return {
    registry,
    observeRequest(api, seconds) {
      let h = perApi.get(api);
      if (!h) perApi.set(api, (h = requests.labels({ api })));
      h.observe(seconds);
    },
    observeCommit(seconds) {
      commits.observe(seconds);
    },
    observeFetchSessions(read) {
      fetchSessions = read;
    },
  };
}

/** A registry of the broker's metrics (its own, not prom-client's global one); `snapshot` is called once per scrape. */
export function createMetricsRegistry(snapshot: SnapshotSource, registry = new Registry(), leaderOf?: (topicId: string, partition: number) => number): Registry {
  collectDefaultMetrics({ register: registry, prefix: 'pgkafka_' });

  // Concurrent collect callbacks of one scrape share one snapshot.
  let inflight: Promise<Snapshot> | null = null;
  const current = (): Promise<Snapshot> => {
    inflight ??= snapshot().finally(() => {
      inflight = null;
    });
    return inflight;
  };

  const gauge = <L extends string>(name: string, help: string, labelNames: readonly L[], fill: (g: Gauge<L>, s: Snapshot) => void) =>
    new Gauge<L>({
      name,
      help,
      labelNames,
      registers: [registry],
      async collect() {
        const s = await current();
        this.reset();
        fill(this, s);
      },
    });

  const committed = (s: Snapshot) => s.groups.flatMap((g) => g.partitions).filter((r) => r.currentOffset !== null);
  gauge('kafka_consumergroup_current_offset', 'Current Offset of a ConsumerGroup at Topic/Partition', ['consumergroup', 'topic', 'partition'], (g, s) => {
    for (const r of committed(s)) g.set({ consumergroup: r.group, topic: r.topic, partition: String(r.partition) }, Number(r.currentOffset));
  });
  gauge('kafka_consumergroup_current_offset_sum', 'Current Offset of a ConsumerGroup at Topic for all partitions', ['consumergroup', 'topic'], (g, s) => {
    for (const r of committed(s)) g.inc({ consumergroup: r.group, topic: r.topic }, Number(r.currentOffset));
  });
  gauge('kafka_consumergroup_lag', 'Current Approximate Lag of a ConsumerGroup at Topic/Partition', ['consumergroup', 'topic', 'partition'], (g, s) => {
    for (const r of committed(s)) if (r.lag !== null) g.set({ consumergroup: r.group, topic: r.topic, partition: String(r.partition) }, Number(r.lag));
  });
  gauge('kafka_consumergroup_lag_sum', 'Current Approximate Lag of a ConsumerGroup at Topic for all partitions', ['consumergroup', 'topic'], (g, s) => {
    for (const r of committed(s)) if (r.lag !== null) g.inc({ consumergroup: r.group, topic: r.topic }, Number(r.lag));
  });
  gauge(
    'kafka_consumergroup_lag_seconds',
    'Age of the record at the committed offset of a ConsumerGroup at Topic/Partition (0 when it has no lag)',
    ['consumergroup', 'topic', 'partition'],
    (g, s) => {
      for (const r of committed(s)) if (r.lagMs !== null) g.set({ consumergroup: r.group, topic: r.topic, partition: String(r.partition) }, r.lagMs / 1000);
    },
  );
  gauge('kafka_consumergroup_members', 'Amount of members in a consumer group', ['consumergroup'], (g, s) => {
    for (const grp of s.groups) g.set({ consumergroup: grp.group }, grp.members);
  });
  gauge(
    'pgkafka_consumergroup_records_deleted_unread_total',
    'Records that retention or DeleteRecords removed before the ConsumerGroup had consumed them (since the group first committed)',
    ['consumergroup', 'topic', 'partition'],
    (g, s) => {
      for (const d of s.deletedUnread) g.set({ consumergroup: d.groupId, topic: d.topic, partition: String(d.partition) }, Number(d.records));
    },
  );
  gauge('kafka_topic_partitions', 'Number of partitions for this Topic', ['topic'], (g, s) => {
    for (const p of s.partitions) g.set({ topic: p.topic }, p.partitionCount);
  });
  gauge('kafka_topic_partition_current_offset', 'Current Offset of a Broker at Topic/Partition (the high watermark)', ['topic', 'partition'], (g, s) => {
    for (const p of s.partitions) g.set({ topic: p.topic, partition: String(p.partition) }, Number(p.highWatermark));
  });
  gauge('kafka_topic_partition_oldest_offset', 'Oldest Offset of a Broker at Topic/Partition (the log start offset)', ['topic', 'partition'], (g, s) => {
    for (const p of s.partitions) g.set({ topic: p.topic, partition: String(p.partition) }, Number(p.logStartOffset));
  });
  if (leaderOf) {
    gauge('kafka_topic_partition_leader', 'Leader Broker ID of this Topic/Partition (-1 when no live broker leads it)', ['topic', 'partition'], (g, s) => {
      for (const p of s.partitions) g.set({ topic: p.topic, partition: String(p.partition) }, leaderOf(p.topicId, p.partition));
    });
    gauge('pgkafka_broker_leader_partitions', "Partitions each live broker leads (Kafka's ReplicaManager LeaderCount), as this broker sees them", ['broker'], (g, s) => {
      const led = new Map<number, number>();
      for (const p of s.partitions) {
        const leader = leaderOf(p.topicId, p.partition);
        if (leader >= 0) led.set(leader, (led.get(leader) ?? 0) + 1);
      }
      for (const [broker, n] of led) g.set({ broker: String(broker) }, n);
    });
  }
  return registry;
}

/**
 * Serves, on host:port (0 picks a free port) until close(): GET /metrics;
 * GET /health, 200 while the process serves HTTP (liveness); GET /ready, 200
 * when `readiness` finds nothing wrong, else 503 with the reason (readiness:
 * the Kafka listener accepts and PostgreSQL answers).
 */
export async function startMetricsServer(opts: MetricsServerOptions): Promise<MetricsServer> {
  const { lagStore, log } = opts;
  const registry = createMetricsRegistry(
    async () => {
      const [groups, partitions, deletedUnread] = await Promise.all([describeGroups(lagStore, { now: opts.now?.() }), lagStore.partitionOffsets(), lagStore.deletedUnread()]);
      return { groups, partitions, deletedUnread };
    },
    opts.registry,
    opts.leaderOf,
  );

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics' && path !== '/health' && path !== '/ready') {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Not Found: metrics are at /metrics, liveness at /health, readiness at /ready\n');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' }).end('Method Not Allowed\n');
      return;
    }
    if (path === '/health' || path === '/ready') {
      const notReady = path === '/ready' && opts.readiness ? await opts.readiness() : null;
      const body = notReady === null ? { status: path === '/health' ? 'alive' : 'ready' } : { status: 'not ready', reason: notReady };
      res.writeHead(notReady === null ? 200 : 503, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      res.end(req.method === 'HEAD' ? undefined : `${JSON.stringify(body)}\n`);
      return;
    }
    let body: string;
    try {
      body = await registry.metrics();
    } catch (err) {
      log.warn({ err: (err as Error).message, code: 'METRICS_SCRAPE_FAILED' }, 'metrics scrape failed');
      res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('metrics scrape failed\n');
      return;
    }
    res.writeHead(200, { 'content-type': registry.contentType });
    res.end(req.method === 'HEAD' ? undefined : body);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: Error) => {
      log.error({ err: err.message }, 'metrics request failed');
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', (err) => log.error({ err: err.message }, 'metrics server error'));
  const port = (server.address() as AddressInfo).port;
  log.info({ host: opts.host, port }, 'metrics endpoint listening');

  return {
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}
