// Real Apache Kafka for the tests: a single-node KRaft broker (combined
// broker and controller) from the jars that Maven resolves for
// compat/java/kafka/pom.xml (4.3.1; compat/java/kafka39/pom.xml for 3.9.1, the
// last release serving the versions Kafka 4.0 removed), formatted fresh in a
// temporary directory and run with Kafka's own main classes. It is the oracle
// the differential scenarios compare pgkafka with.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MetadataApi } from '../../src/protocol/messages/index.js';
import { freePort } from '../../test/support/broker-process.js';
import { RawClient } from '../../test/support/raw-client.js';

/** Which Apache Kafka: the release the project's protocol follows, or 3.9.1 for the versions 4.0 removed. */
export type KafkaRelease = '4.3' | '3.9';
const POM_DIRS: Record<KafkaRelease, string> = { '4.3': 'kafka', '3.9': 'kafka39' };

/** The jars of Kafka's broker and tools, resolved by Maven once and cached beside the pom (target/ is not committed). */
export function kafkaClasspath(release: KafkaRelease = '4.3'): string {
  const pomDir = fileURLToPath(new URL(`../java/${POM_DIRS[release]}`, import.meta.url));
  const classpathFile = join(pomDir, 'target', 'classpath.txt');
  const pom = join(pomDir, 'pom.xml');
  if (!existsSync(classpathFile) || statSync(classpathFile).mtimeMs < statSync(pom).mtimeMs) {
    mkdirSync(join(pomDir, 'target'), { recursive: true });
    const mvn = spawnSync('mvn', ['-q', '-B', 'dependency:build-classpath', `-Dmdep.outputFile=${classpathFile}`], { cwd: pomDir, encoding: 'utf8', timeout: 600_000 });
    if (mvn.status !== 0) throw new Error(`mvn could not resolve Apache Kafka's jars:\n${mvn.stdout}${mvn.stderr}`);
  }
  return readFileSync(classpathFile, 'utf8').trim();
}

export interface ApacheKafka {
  bootstrap: string;
  /** host:port of each listener asked for in `opts.listeners` (SASL_PLAINTEXT, …), by protocol. */
  listeners: Record<string, string>;
  /** The broker's JVM, for measuring it from /proc. */
  pid: number;
  /** What the broker printed, for a failing test's message. */
  output(): string;
  stop(): Promise<void>;
}

const TEST_JVM = ['-Xms256m', '-Xmx768m', '-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC'];

/** What kafka-server-start.sh runs the broker with (KAFKA_HEAP_OPTS and KAFKA_JVM_PERFORMANCE_OPTS). */
export const KAFKA_START_JVM = [
  '-Xms1g',
  '-Xmx1g',
  '-server',
  '-XX:+UseG1GC',
  '-XX:MaxGCPauseMillis=20',
  '-XX:InitiatingHeapOccupancyPercent=35',
  '-XX:+ExplicitGCInvokesConcurrent',
  '-Djava.awt.headless=true',
];

/** Children still running when the test process exits are killed with it. */
const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/**
 * Starts a fresh single-node Kafka on free loopback ports and resolves once
 * it answers Metadata naming itself. `config` adds or overrides
 * server.properties entries (Kafka's own names).
 */
export async function startApacheKafka(
  config: Record<string, string | number | boolean> = {},
  opts: {
    jvm?: string[];
    /** Listeners besides PLAINTEXT (which the broker and the readiness check keep using), each named by its protocol. */
    listeners?: string[];
    /** Arguments added to kafka-storage format, e.g. `--add-scram SCRAM-SHA-256=[name=alice,password=…]`. */
    format?: string[];
    /** Kafka 3.9.1 instead of 4.3.1. */
    release?: KafkaRelease;
  } = {},
): Promise<ApacheKafka> {
  const release = opts.release ?? '4.3';
  const classpath = kafkaClasspath(release);
  const [port, controllerPort] = [await freePort(), await freePort()];
  const extra: Record<string, string> = {};
  for (const name of opts.listeners ?? []) extra[name] = `127.0.0.1:${await freePort()}`;
  const extraListeners = Object.entries(extra)
    .map(([name, at]) => `,${name}://${at}`)
    .join('');
  const extraProtocols = Object.keys(extra)
    .map((name) => `,${name}:${name}`)
    .join('');
  const dir = mkdtempSync(join(tmpdir(), 'pgkafka-apache-kafka-'));
  const properties: Record<string, string | number | boolean> = {
    'process.roles': 'broker,controller',
    'node.id': 1,
    'controller.quorum.voters': `1@127.0.0.1:${controllerPort}`,
    listeners: `PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}${extraListeners}`,
    'advertised.listeners': `PLAINTEXT://127.0.0.1:${port}${extraListeners}`,
    'controller.listener.names': 'CONTROLLER',
    // With more listeners, the broker keeps talking to itself over PLAINTEXT (its own principal, ANONYMOUS).
    ...(opts.listeners?.length ? { 'inter.broker.listener.name': 'PLAINTEXT' } : {}),
    'listener.security.protocol.map': `PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT${extraProtocols}`,
    'log.dirs': join(dir, 'log'),
    // One node: the internal topics can have only one replica.
    'offsets.topic.replication.factor': 1,
    'transaction.state.log.replication.factor': 1,
    'transaction.state.log.min.isr': 1,
    'share.coordinator.state.topic.replication.factor': 1,
    'share.coordinator.state.topic.min.isr': 1,
    ...config,
  };
  const file = join(dir, 'server.properties');
  writeFileSync(
    file,
    Object.entries(properties)
      .map(([k, v]) => `${k}=${v}`)
      .join('\n') + '\n',
  );

  // By default a small heap and the client compiler: the machines have two cores, and a test's broker
  // lives for one test file. The benchmark passes Kafka's own production settings instead.
  const jvm = [...(opts.jvm ?? TEST_JVM), '-cp', classpath];
  // Eligible leader replicas off: with it on, formatting writes a cluster-wide min.insync.replicas,
  // a replication setting that has no counterpart on a single-copy log.
  const format = spawnSync(
    'java',
    // 3.9 has no eligible leader replicas feature to turn off.
    [...jvm, 'kafka.tools.StorageTool', 'format', `--cluster-id=${clusterId()}`, '-c', file, ...(release === '4.3' ? ['--feature', 'eligible.leader.replicas.version=0'] : []), ...(opts.format ?? [])],
    { encoding: 'utf8', timeout: 120_000 },
  );
  if (format.status !== 0) throw new Error(`kafka-storage format failed:\n${format.stdout}${format.stderr}`);

  const child = spawn('java', [...jvm, 'kafka.Kafka', file], { stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let output = '';
  child.stdout!.on('data', (d) => (output = (output + d).slice(-200_000)));
  child.stderr!.on('data', (d) => (output = (output + d).slice(-200_000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const bootstrap = `127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    }
    running.delete(child);
    rmSync(dir, { recursive: true, force: true });
  };

  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) break;
    if (await answersMetadata(bootstrap)) return { bootstrap, listeners: extra, pid: child.pid!, output: () => output, stop };
    await new Promise((r) => setTimeout(r, 250));
  }
  await stop();
  throw new Error(`Apache Kafka did not start:\n${output.slice(-5000)}`);
}

/** Kafka's cluster ids are 16 random bytes in URL-safe base64 without padding (one may start with '-': passed as --cluster-id=…). */
function clusterId(): string {
  return Buffer.from(randomUUID().replace(/-/g, ''), 'hex').toString('base64url');
}

async function answersMetadata(bootstrap: string): Promise<boolean> {
  let client: RawClient | undefined;
  try {
    client = await RawClient.connect(bootstrap);
    const res = await client.request(MetadataApi, 12, { topics: [], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
    return res.brokers.length > 0 && res.controllerId >= 0;
  } catch {
    return false;
  } finally {
    client?.close();
  }
}
