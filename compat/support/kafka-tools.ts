// Apache Kafka's command-line tools, run as a user runs them. Each of Kafka's
// bin/*.sh scripts is `kafka-run-class.sh <MainClass> "$@"`, that is
// `java -cp <Kafka's jars> <MainClass> args…`: the same main classes are run
// here on the classpath that Maven resolves for compat/java/kafka/pom.xml
// (Kafka 4.3.1), with a hard timeout. Without an SLF4J binding on that
// classpath the clients' logging is a no-op, so stdout carries exactly what
// the tool prints for the user; stderr has the tool's own warnings and errors.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { kafkaClasspath } from './apache-kafka.js';
import { run } from './spawn.js';

/** The main class behind each of Kafka's scripts (bin/<name>.sh). */
export const TOOLS = {
  'kafka-topics': 'org.apache.kafka.tools.TopicCommand',
  'kafka-console-producer': 'org.apache.kafka.tools.ConsoleProducer',
  'kafka-console-consumer': 'org.apache.kafka.tools.consumer.ConsoleConsumer',
  'kafka-consumer-groups': 'org.apache.kafka.tools.consumer.group.ConsumerGroupCommand',
  'kafka-configs': 'kafka.admin.ConfigCommand',
  'kafka-acls': 'org.apache.kafka.tools.AclCommand',
  'kafka-get-offsets': 'org.apache.kafka.tools.GetOffsetShell',
  'kafka-delete-records': 'org.apache.kafka.tools.DeleteRecordsCommand',
  'kafka-transactions': 'org.apache.kafka.tools.TransactionsCommand',
  'kafka-producer-perf-test': 'org.apache.kafka.tools.ProducerPerformance',
  'kafka-consumer-perf-test': 'org.apache.kafka.tools.ConsumerPerformance',
} as const;

export type Tool = keyof typeof TOOLS;

export interface ToolResult {
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

export interface ToolOptions {
  input?: string;
  timeoutMs?: number;
}

// Kafka's scripts default to -Xmx256M and G1; on two shared cores a tool's
// JVM starts fastest with the client compiler only, the serial collector and
// class-data sharing, and without the perf-data file. The JVM's own log
// lines go to stderr (by default its warnings go to stdout).
const JVM = [
  '-Xms32m',
  '-Xmx256m',
  '-XX:TieredStopAtLevel=1',
  '-XX:+UseSerialGC',
  '-Xshare:auto',
  '-XX:-UsePerfData',
  '-Djava.awt.headless=true',
  '-Xlog:disable',
  '-Xlog:all=warning,cds*=off:stderr',
];

const cdsDir = fileURLToPath(new URL('../java/kafka/target/cds', import.meta.url));

/**
 * Class-data sharing for one tool: its first successful run dumps the classes
 * it loaded (-XX:ArchiveClassesAtExit), and later runs map them instead of
 * loading them from the jars, which halves a start's CPU time. The archive is
 * named after the classpath, so a changed pom makes a new one; a stale or
 * unusable archive is ignored by the JVM (-Xshare:auto).
 */
function cdsArchive(mainClass: string, classpath: string): { args: string[]; keep(ok: boolean): void } {
  const archive = join(cdsDir, `${mainClass}-${createHash('sha256').update(classpath).digest('hex').slice(0, 12)}.jsa`);
  if (existsSync(archive)) return { args: [`-XX:SharedArchiveFile=${archive}`], keep: () => {} };
  mkdirSync(cdsDir, { recursive: true });
  // Dumped under a name of its own, so runs in parallel test files never read a half-written archive.
  const dump = `${archive}.${process.pid}.${Math.random().toString(36).slice(2)}`;
  return {
    args: [`-XX:ArchiveClassesAtExit=${dump}`],
    keep(ok) {
      if (ok && existsSync(dump)) renameSync(dump, archive);
      else rmSync(dump, { force: true });
    },
  };
}

/** SLF4J's notice that no binding is on the classpath (three lines on stderr of every run). */
const SLF4J_NOTICE = /^SLF4J: .*\n/gm;

/** Runs `bin/<tool>.sh args…` and returns what it printed; never throws for the tool's own failure. */
export async function runTool(tool: Tool, args: string[], opts: ToolOptions = {}): Promise<ToolResult> {
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const classpath = kafkaClasspath();
  const cds = cdsArchive(TOOLS[tool], classpath);
  const r = await run('java', [...JVM, ...cds.args, '-cp', classpath, TOOLS[tool], ...args], { input: opts.input, timeoutMs });
  cds.keep(r.code === 0 && !r.timedOut);
  return { code: r.code, stdout: r.stdout.toString('utf8'), stderr: r.stderr.replace(SLF4J_NOTICE, ''), timedOut: r.timedOut };
}

/** Like runTool, but fails with what the tool printed unless it exited 0 in time. */
export async function runToolOk(tool: Tool, args: string[], opts: ToolOptions = {}): Promise<ToolResult> {
  const r = await runTool(tool, args, opts);
  if (r.timedOut || r.code !== 0) {
    const why = r.timedOut ? `timed out after ${opts.timeoutMs ?? 30_000} ms` : `exited with ${r.code}`;
    throw new Error(`${tool}.sh ${args.join(' ')} ${why}\n--- stderr ---\n${r.stderr.slice(-4000)}\n--- stdout ---\n${r.stdout.slice(-4000)}`);
  }
  return r;
}

/** Writes a file a tool reads (`--command-config`, `--offset-json-file`…) into a fresh temporary directory and returns its path. */
export function toolFile(name: string, content: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'pgkafka-tools-')), name);
  writeFileSync(path, content);
  return path;
}

/** A properties file (`--command-config`, `--consumer.config`…) from key/value pairs. */
export const propertiesFile = (props: Record<string, string>): string =>
  toolFile(
    'client.properties',
    Object.entries(props)
      .map(([k, v]) => `${k}=${v}`)
      .join('\n') + '\n',
  );

/**
 * The rows of one of the tools' space-aligned tables (kafka-consumer-groups,
 * kafka-transactions): the first line whose first cell is `firstColumn` is the
 * header, and every following non-empty line up to a blank one is a row,
 * as an object keyed by the header's cells.
 */
export function table(stdout: string, firstColumn: string): Record<string, string>[] {
  const lines = stdout.split('\n');
  const start = lines.findIndex((l) => l.trim().split(/\s+/)[0] === firstColumn);
  if (start < 0) throw new Error(`no table with column ${firstColumn} in:\n${stdout}`);
  const header = lines[start]!.trim().split(/\s+/);
  const rows: Record<string, string>[] = [];
  for (const line of lines.slice(start + 1)) {
    if (line.trim() === '') break;
    const cells = line.trim().split(/\s+/);
    rows.push(Object.fromEntries(header.map((h, i) => [h, cells[i] ?? ''])));
  }
  return rows;
}
