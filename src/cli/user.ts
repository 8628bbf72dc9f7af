// `pgkafka user create|delete|list`, as rpk security user: SCRAM credentials
// over AlterUserScramCredentials and DescribeUserScramCredentials, so any
// broker (KRaft Kafka included) is managed the same way. The password never
// leaves this process: it is salted and hashed here (RFC 5802), as Kafka's
// AdminClient does. `pgkafka users` writes the database directly instead.
import { randomBytes } from 'node:crypto';
import { flag, flagList, intFlag, type Parsed } from './args.js';
import type { Command, CommandTree } from './command.js';
import { CliError, UsageError } from './errors.js';
import { formatTable, toJson } from './format.js';
import { errorName } from '../protocol/errors.js';
import { AlterUserScramCredentialsApi, DescribeUserScramCredentialsApi } from '../protocol/messages/index.js';
import { isScramMechanism, MAX_ITERATIONS, MIN_ITERATIONS, SCRAM_MECHANISM_TYPES, SCRAM_MECHANISMS, saltedPassword, scramMechanismOfType, type ScramMechanism } from '../security/scram.js';

const mechanismFlag = {
  mechanism: { value: 'SCRAM-SHA-256|SCRAM-SHA-512', multiple: true, doc: 'mechanism (repeatable; create: default SCRAM-SHA-256, delete: default every mechanism of the user)' },
};

function mechanisms(p: Parsed, command: string): ScramMechanism[] {
  return flagList(p, 'mechanism').map((m) => {
    const upper = m.toUpperCase();
    if (!isScramMechanism(upper)) throw new UsageError(`${command}: unknown mechanism ${m} (one of ${SCRAM_MECHANISMS.join(', ')})`);
    return upper;
  });
}

function oneUser(p: Parsed, command: string): string {
  if (p.positionals.length !== 1 || p.positionals[0] === '') throw new UsageError(`${command}: name one user`);
  return p.positionals[0]!;
}

const create: Command = {
  summary: 'create a SCRAM user, or change its password',
  args: '<user>',
  flags: {
    password: { short: 'p', value: 'password', doc: 'the password (required)' },
    ...mechanismFlag,
    iterations: { value: 'n', doc: `PBKDF2 iterations, ${MIN_ITERATIONS}-${MAX_ITERATIONS} (default ${MIN_ITERATIONS})` },
  },
  async run(ctx, p) {
    const name = oneUser(p, 'user create');
    const password = flag(p, 'password');
    if (!password) throw new UsageError('user create: --password is required');
    const iterations = intFlag(p, 'iterations', 'user create', MIN_ITERATIONS) ?? MIN_ITERATIONS;
    if (iterations > MAX_ITERATIONS) throw new UsageError(`user create: --iterations must be at most ${MAX_ITERATIONS}`);
    const chosen = mechanisms(p, 'user create');
    const list = chosen.length > 0 ? chosen : (['SCRAM-SHA-256'] as ScramMechanism[]);
    const upsertions = await Promise.all(
      list.map(async (mechanism) => {
        const salt = randomBytes(32);
        return { name, mechanism: SCRAM_MECHANISM_TYPES[mechanism], iterations, salt, saltedPassword: await saltedPassword(mechanism, password, salt, iterations) };
      }),
    );
    // One request per mechanism: Kafka refuses a user altered twice in one request (DUPLICATE_RESOURCE).
    const client = await ctx.client();
    for (const upsertion of upsertions) {
      const answer = await client.request(AlterUserScramCredentialsApi, { deletions: [], upsertions: [upsertion] });
      const failed = answer.results.find((r) => r.errorCode !== 0);
      if (failed) throw new CliError(`user ${name}: ${errorName(failed.errorCode)}${failed.errorMessage ? ` (${failed.errorMessage})` : ''}`);
    }
    ctx.out.write(`Created user ${name} (${list.join(', ')}).\n`);
  },
};

async function describe(ctx: Parameters<Command['run']>[0], users: string[] | null) {
  const answer = await (await ctx.client()).request(DescribeUserScramCredentialsApi, { users: users?.map((name) => ({ name })) ?? null });
  if (answer.errorCode !== 0) throw new CliError(`DescribeUserScramCredentials: ${errorName(answer.errorCode)}${answer.errorMessage ? ` (${answer.errorMessage})` : ''}`);
  return answer.results;
}

const del: Command = {
  summary: "delete a SCRAM user's credentials",
  args: '<user>',
  flags: { ...mechanismFlag },
  async run(ctx, p) {
    const name = oneUser(p, 'user delete');
    let chosen: number[] = mechanisms(p, 'user delete').map((m) => SCRAM_MECHANISM_TYPES[m]);
    if (chosen.length === 0) {
      const [found] = await describe(ctx, [name]);
      if (!found || found.errorCode !== 0) throw new CliError(`user ${name}: ${errorName(found?.errorCode ?? 91)}`);
      chosen = found.credentialInfos.map((c) => c.mechanism);
    }
    const client = await ctx.client();
    for (const mechanism of chosen) {
      const answer = await client.request(AlterUserScramCredentialsApi, { deletions: [{ name, mechanism }], upsertions: [] });
      const failed = answer.results.find((r) => r.errorCode !== 0);
      if (failed) throw new CliError(`user ${name}: ${errorName(failed.errorCode)}${failed.errorMessage ? ` (${failed.errorMessage})` : ''}`);
    }
    ctx.out.write(`Deleted user ${name} (${chosen.map((m) => scramMechanismOfType(m) ?? String(m)).join(', ')}).\n`);
  },
};

const list: Command = {
  summary: 'list SCRAM users and their mechanisms',
  flags: { format: { short: 'f', value: 'text|json', doc: 'output format (default text)' } },
  async run(ctx, p) {
    const results = await describe(ctx, null);
    const rows = results.flatMap((r) => r.credentialInfos.map((c) => ({ user: r.user, mechanism: scramMechanismOfType(c.mechanism) ?? String(c.mechanism), iterations: c.iterations })));
    rows.sort((a, b) => a.user.localeCompare(b.user) || a.mechanism.localeCompare(b.mechanism));
    if (flag(p, 'format') === 'json') ctx.out.write(`${toJson(rows)}\n`);
    else ctx.out.write(formatTable([['USER', 'MECHANISM', 'ITERATIONS'], ...rows.map((r) => [r.user, r.mechanism, String(r.iterations)])], 2));
  },
};

export const userCommands: CommandTree = { create, delete: del, list };
