// Apache Kafka's Java client (kafka-clients, from compat/java/client/pom.xml)
// driven by the runner in compat/java/client/src/main/java: Maven resolves the
// classpath once, javac compiles the runner once per version of its sources
// (both cached in compat/java/client/target/, not committed), and each
// call is one JVM that runs a list of operations read as JSON on stdin.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runOk } from './spawn.js';

const dir = fileURLToPath(new URL('../java/client', import.meta.url));
const target = join(dir, 'target');
const classpathFile = join(target, 'classpath.txt');

const sources = (d: string): string[] => readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(join(d, e.name)) : e.name.endsWith('.java') ? [join(d, e.name)] : []));

/**
 * The classpath of the compiled runner and kafka-clients with its
 * dependencies. Test files run in parallel, so every step writes under a
 * name of its own and renames into place: the classes live in a directory
 * named by a hash of the sources and the classpath, compiled once.
 */
export function javaClientClasspath(): string {
  const pom = join(dir, 'pom.xml');
  mkdirSync(target, { recursive: true });
  if (!existsSync(classpathFile) || statSync(pom).mtimeMs > statSync(classpathFile).mtimeMs) {
    const tmp = `${classpathFile}.${process.pid}`;
    const mvn = spawnSync('mvn', ['-q', '-B', 'dependency:build-classpath', `-Dmdep.outputFile=${tmp}`], { cwd: dir, encoding: 'utf8', timeout: 600_000 });
    if (mvn.status !== 0) throw new Error(`mvn could not resolve kafka-clients:\n${mvn.stdout}${mvn.stderr}`);
    renameSync(tmp, classpathFile);
  }
  const deps = readFileSync(classpathFile, 'utf8').trim();
  const files = sources(join(dir, 'src', 'main', 'java')).sort();
  const hash = createHash('sha256').update(deps);
  for (const f of files) hash.update(f).update(readFileSync(f));
  const classes = join(target, `classes-${hash.digest('hex').slice(0, 16)}`);
  if (!existsSync(classes)) {
    const tmp = `${classes}.${process.pid}`;
    rmSync(tmp, { recursive: true, force: true });
    const javac = spawnSync('javac', ['-Xlint:deprecation', '-Werror', '--release', '17', '-d', tmp, '-cp', deps, ...files], { encoding: 'utf8', timeout: 300_000 });
    if (javac.status !== 0) throw new Error(`javac could not compile the Java client runner:\n${javac.stdout}${javac.stderr}`);
    try {
      renameSync(tmp, classes);
    } catch {
      rmSync(tmp, { recursive: true, force: true }); // another test file compiled the same sources first
    }
  }
  return `${classes}:${deps}`;
}

/** The java command's arguments to run `mainClass` of the runner's sources: a small heap, quick start, the client's warnings on stderr. */
export function javaArgs(mainClass: string, ...args: string[]): string[] {
  const jvm = ['-Xms64m', '-Xmx256m', '-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC', '-Dorg.slf4j.simpleLogger.defaultLogLevel=warn', '-Dorg.slf4j.simpleLogger.logFile=System.err'];
  return [...jvm, '-cp', javaClientClasspath(), mainClass, ...args];
}

export interface JavaOp {
  /** The key of this operation's result (default: the op's name). */
  id?: string;
  op: string;
  /** Client properties for this operation only, over the run's. */
  config?: Record<string, string | number | boolean>;
  [param: string]: unknown;
}

/** What one operation answered: its result, or {error} when the client threw. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the shape is per operation; each test reads the fields it asserts
export type JavaResults = Record<string, any>;

/**
 * One JVM that runs `ops` in order against `bootstrap` with `config` for
 * every client, and answers each op's result by id. The client logs
 * warnings and errors on stderr, shown when the run fails.
 */
export async function runJavaClient(bootstrap: string, ops: JavaOp[], config: Record<string, string | number | boolean> = {}, timeoutMs = 120_000): Promise<JavaResults> {
  const r = await runOk('java', javaArgs('dev.pgkafka.compat.Runner'), { input: JSON.stringify({ bootstrap, config, ops }), timeoutMs });
  // COMPAT_JAVA_DUMP=prefix keeps each run's answer, to read what the client saw beyond what a test asserts.
  if (process.env.COMPAT_JAVA_DUMP) writeFileSync(`${process.env.COMPAT_JAVA_DUMP}.${ops[0]?.id ?? 'run'}.${Date.now()}.json`, r.stdout);
  return JSON.parse(r.stdout.toString('utf8')) as JavaResults;
}
