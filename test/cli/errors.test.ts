// What a user meets first: --version, --help for every command, and every
// mistake answered with one line (a suggestion where one is close), exit
// code 2 for usage and 1 for a broker that cannot be reached, never a stack trace.
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../support/broker.js';
import { pgkafka } from '../support/cli-process.js';

const run = (...args: string[]) => pgkafka(args, { env: { PGKAFKA_BROKERS: '127.0.0.1:1' } });

/** Runs the commands a few at a time (each is a node process; the machine may be small). */
async function runAll(commands: string[][]) {
  const results = [];
  for (let i = 0; i < commands.length; i += 4) results.push(...(await Promise.all(commands.slice(i, i + 4).map((c) => run(...c)))));
  return results;
}

/** A port nothing listens on: bound, then closed. */
let closedPort: number;
/** A listener that accepts connections and never answers. */
let silent: Server;

beforeAll(async () => {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  closedPort = (probe.address() as { port: number }).port;
  await new Promise((resolve) => probe.close(resolve));
  silent = createServer(() => {});
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
});
afterAll(() => {
  silent?.close();
});

describe('pgkafka usage and errors', () => {
  it('prints its version and its help', async () => {
    const version = await run('--version');
    expect(version).toMatchObject({ code: 0, out: expect.stringMatching(/^pgkafka \d+\.\d+\.\d+\n$/) as unknown });
    const help = await run('--help');
    expect(help.code).toBe(0);
    for (const command of ['start', 'topic', 'produce', 'consume', 'group', 'acl', 'user', 'cluster', 'groups', 'users']) expect(help.out).toMatch(new RegExp(`^  ${command} `, 'm'));
    expect((await run()).out).toBe(help.out);
  });

  it('prints --help for every command, with its flags', { timeout: 300_000 }, async () => {
    const commands = [
      ['topic', 'create'],
      ['topic', 'list'],
      ['topic', 'describe'],
      ['topic', 'alter-config'],
      ['topic', 'delete'],
      ['topic', 'add-partitions'],
      ['produce'],
      ['consume'],
      ['group', 'list'],
      ['group', 'describe'],
      ['group', 'seek'],
      ['group', 'delete'],
      ['acl', 'create'],
      ['acl', 'list'],
      ['acl', 'delete'],
      ['user', 'create'],
      ['user', 'delete'],
      ['user', 'list'],
      ['cluster', 'info'],
    ];
    const results = await runAll(commands.map((c) => [...c, '--help']));
    results.forEach((r, i) => {
      expect(r.code, commands[i]!.join(' ')).toBe(0);
      expect(r.out).toMatch(new RegExp(`^Usage: pgkafka ${commands[i]!.join(' ')}\\b`));
      expect(r.out).toMatch(/--brokers <host:port,…>/);
    });
    expect(results[0]!.out).toMatch(/-p, --partitions <n>/);
    expect(results[7]!.out).toMatch(/-o, --offset <start\|end\|N\|\+N\|-N\|@time\[:end\]>/);
    expect(results[10]!.out).toMatch(/--execute/);
    const group = await run('group', '--help');
    expect(group.out).toMatch(/^ {2}seek {2}/m);
    expect((await run('start', '--help')).out).toMatch(/^Usage: pgkafka start\n[\s\S]*PGKAFKA_PORT/);
    expect((await run('groups', '--help')).out).toMatch(/^Usage: pgkafka groups/);
    expect((await run('users', '--help')).out).toMatch(/^Usage: pgkafka users/);
  });

  it('answers unknown commands and flags with one line, a suggestion and exit code 2', { timeout: 300_000 }, async () => {
    const cases: [string[], string][] = [
      [['topc', 'list'], 'pgkafka: unknown command "topc" (did you mean topic?); see pgkafka --help\n'],
      [['topic', 'lst'], 'pgkafka: unknown command "topic lst" (did you mean topic list?); see pgkafka topic --help\n'],
      [['consum', 'x'], 'pgkafka: unknown command "consum" (did you mean consume?); see pgkafka --help\n'],
      [['frobnicate'], 'pgkafka: unknown command "frobnicate"; see pgkafka --help\n'],
      [['topic', 'create', 'x', '--partitons', '3'], 'pgkafka: topic create: unknown flag --partitons (did you mean --partitions?)\n'],
      [['consume', 'x', '--ofset', 'start'], 'pgkafka: consume: unknown flag --ofset (did you mean --offset?)\n'],
      [['group', 'seek', 'g', '--exec'], 'pgkafka: group seek: unknown flag --exec (did you mean --execute?)\n'],
      [['consume', 'x', '-x'], 'pgkafka: consume: unknown flag -x; see pgkafka consume --help\n'],
      [['topic'], 'pgkafka: topic: a subcommand is required (one of create, list, describe, alter-config, delete, add-partitions)\n'],
      [['topic', 'create', 'x', '-p', 'many'], 'pgkafka: topic create: --partitions must be an integer ≥ 1, not many\n'],
      [['consume', 'x', '-n'], 'pgkafka: consume: --num needs a value\n'],
      [['start', '--port', '9'], 'pgkafka: start: unexpected argument --port (the broker is configured by environment variables or PGKAFKA_CONFIG)\n'],
    ];
    const results = await runAll(cases.map(([args]) => args));
    results.forEach((r, i) => {
      expect({ args: cases[i]![0], code: r.code, err: r.err, out: r.out }).toEqual({ args: cases[i]![0], code: 2, err: cases[i]![1], out: '' });
    });
  });

  it('answers a broker that cannot be reached with one line and exit code 1', async () => {
    const refused = await pgkafka(['topic', 'list', '--brokers', `127.0.0.1:${closedPort}`]);
    expect(refused).toMatchObject({ code: 1, out: '', err: `pgkafka: cannot reach broker 127.0.0.1:${closedPort}: ECONNREFUSED\n` });
    const both = await pgkafka(['cluster', 'info'], { env: { PGKAFKA_BROKERS: `127.0.0.1:${closedPort},127.0.0.1:${closedPort}` } });
    expect(both.err).toBe(`pgkafka: cannot reach any broker: cannot reach broker 127.0.0.1:${closedPort}: ECONNREFUSED; cannot reach broker 127.0.0.1:${closedPort}: ECONNREFUSED\n`);
    expect(both.code).toBe(1);
    const unknownHost = await pgkafka(['produce', 'x', '--brokers', 'no-such-host.invalid:9092'], { stdin: 'v\n' });
    expect(unknownHost).toMatchObject({ code: 1, err: 'pgkafka: cannot reach broker no-such-host.invalid:9092: ENOTFOUND\n' });
    const badAddress = await pgkafka(['topic', 'list', '--brokers', 'localhost:http']);
    expect(badAddress).toMatchObject({ code: 2, err: 'pgkafka: bad broker address localhost:http: expected host:port\n' });
  });

  it('finds the local broker from its own configuration when no broker is named', async () => {
    const viaConfig = await pgkafka(['topic', 'list'], { env: { PGKAFKA_ADVERTISED_HOST: '127.0.0.1', PGKAFKA_PORT: String(closedPort) } });
    expect(viaConfig.err).toBe(`pgkafka: cannot reach broker 127.0.0.1:${closedPort}: ECONNREFUSED\n`);
  });

  it("answers a broker's error with one line naming Kafka's error and exit code 1", async () => {
    let broker: TestBroker | undefined;
    try {
      broker = await startTestBroker({ autoCreateTopicsEnable: false });
      const missing = await pgkafka(['produce', 'missing'], { stdin: 'v\n', env: { PGKAFKA_BROKERS: broker.bootstrap } });
      expect(missing).toMatchObject({ code: 1, out: '', err: 'pgkafka: topic missing: UNKNOWN_TOPIC_OR_PARTITION\n' });
    } finally {
      await broker?.destroy();
    }
  });

  it('gives up on a broker that accepts and never answers', { timeout: 60_000 }, async () => {
    const port = (silent.address() as { port: number }).port;
    const r = await pgkafka(['topic', 'list', '--brokers', `127.0.0.1:${port}`], { timeoutMs: 50_000 });
    expect(r).toMatchObject({ code: 1, err: `pgkafka: broker 127.0.0.1:${port} did not answer ApiVersions within 10000 ms\n` });
  });
});
