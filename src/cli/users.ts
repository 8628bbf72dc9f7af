// `pgkafka users add|remove|list`: SASL users, i.e. SCRAM credentials in the
// database (salt, iterations, stored and server keys; never the password),
// as kafka-configs --alter --add-config 'SCRAM-SHA-256=[password=…]' keeps
// them. SASL/PLAIN checks passwords against the same credentials. Needs
// DATABASE_URL (and PGKAFKA_SCHEMA), not a running broker; `add` applies
// pending migrations first, so users can exist before the first start.
// Without DATABASE_URL it uses the running embedded database of the data dir.
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config/schema.js';
import { createLogger } from '../observability/logger.js';
import { credentialFromPassword, isScramMechanism, MAX_ITERATIONS, MIN_ITERATIONS, SCRAM_MECHANISMS, type ScramMechanism } from '../security/scram.js';
import { migrate } from '../storage/pg/migrate.js';
import { createPool } from '../storage/pg/pool.js';
import { UserStore } from '../storage/pg/user-store.js';
import { formatTable } from './format.js';
import { localDatabase } from './local-database.js';

export const USERS_USAGE = `Usage: pgkafka users add <name> --password <password> [--mechanism SCRAM-SHA-256]... [--iterations 4096]
       pgkafka users remove <name> [--mechanism <mechanism>]...
       pgkafka users list [--json]

Manages the SCRAM credentials SASL clients authenticate with (PLAIN,
SCRAM-SHA-256 and SCRAM-SHA-512 all check them). Passwords are stored only
as salted keys (RFC 5802).

  -m, --mechanism <m>   SCRAM-SHA-256 (default for add) or SCRAM-SHA-512; repeatable.
                        remove without it removes every mechanism of the user
  -p, --password <pw>   the password (add)
      --iterations <n>  PBKDF2 iterations, ${MIN_ITERATIONS}-${MAX_ITERATIONS} (default ${MIN_ITERATIONS})
      --json            list as JSON
  -h, --help            this text

Connects with DATABASE_URL and PGKAFKA_SCHEMA (default pgkafka); without
DATABASE_URL, to the running embedded database of PGKAFKA_DATA_DIR. Unlike
pgkafka user (the Kafka protocol), it works with no broker reachable, so
users can exist before a SASL-only broker's first client connects.
`;

/** Runs `pgkafka users …`. Exit code 0, 1 (no such user, or the database failed), 2 (bad usage or configuration). */
export async function runUsersCommand(args: string[], env: NodeJS.ProcessEnv, out: NodeJS.WritableStream, err: NodeJS.WritableStream = process.stderr): Promise<number> {
  const usage = (message: string) => {
    err.write(`pgkafka users: ${message}\n\n${USERS_USAGE}`);
    return 2;
  };
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      strict: true,
      options: {
        mechanism: { type: 'string', short: 'm', multiple: true },
        password: { type: 'string', short: 'p' },
        iterations: { type: 'string' },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (e) {
    return usage((e as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    out.write(USERS_USAGE);
    return 0;
  }
  const [command, name, ...extra] = positionals;
  if (command !== 'add' && command !== 'remove' && command !== 'list') return usage(command ? `unknown command: ${command}` : 'a command is required');
  if (command === 'list' ? name !== undefined : name === undefined || name === '' || extra.length > 0) {
    return usage(command === 'list' ? 'list takes no user name' : `${command} takes one user name`);
  }
  const mechanisms = values.mechanism?.map((m) => m.toUpperCase()) ?? [];
  const unknown = mechanisms.find((m) => !isScramMechanism(m));
  if (unknown) return usage(`unknown mechanism ${unknown} (one of ${SCRAM_MECHANISMS.join(', ')})`);
  const iterations = values.iterations === undefined ? MIN_ITERATIONS : Number(values.iterations);
  if (!Number.isInteger(iterations) || iterations < MIN_ITERATIONS || iterations > MAX_ITERATIONS) {
    return usage(`--iterations must be an integer from ${MIN_ITERATIONS} to ${MAX_ITERATIONS}`);
  }
  if (command === 'add' && !values.password) return usage('add needs --password');

  let config;
  try {
    config = loadConfig(env);
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    err.write(`pgkafka users: invalid configuration: ${e.message}\n`);
    return 2;
  }
  const database = localDatabase(config);
  if ('error' in database) {
    err.write(`pgkafka users: ${database.error}\n`);
    return 2;
  }
  const pool = createPool({ connectionString: database.url, schema: config.schema, max: 2, applicationName: 'pgkafka-users' });
  // An idle connection lost (PostgreSQL restarted): the next statement fails with a message; nothing else to do.
  pool.on('error', () => {});
  const users = new UserStore(pool);
  try {
    if (command === 'add') {
      await migrate(database.url, config.schema, createLogger('silent'));
      const chosen = (mechanisms.length > 0 ? mechanisms : ['SCRAM-SHA-256']) as ScramMechanism[];
      const alterations = await Promise.all(
        chosen.map(async (mechanism) => ({ kind: 'upsert' as const, user: name!, mechanism, credential: await credentialFromPassword(mechanism, values.password!, iterations) })),
      );
      await users.alter(alterations);
      out.write(`User ${name}: ${chosen.join(', ')} credential stored (${iterations} iterations).\n`);
      return 0;
    }
    if (command === 'remove') {
      const existing = await users.list([name!]);
      const removing = existing.filter((c) => mechanisms.length === 0 || mechanisms.includes(c.mechanism));
      if (removing.length === 0) {
        err.write(`pgkafka users: user ${name} has no ${mechanisms.length > 0 ? mechanisms.join('/') + ' ' : ''}credential\n`);
        return 1;
      }
      await users.alter(removing.map((c) => ({ kind: 'delete' as const, user: c.user, mechanism: c.mechanism })));
      out.write(`User ${name}: ${removing.map((c) => c.mechanism).join(', ')} credential removed.\n`);
      return 0;
    }
    const all = await users.list();
    if (values.json) {
      out.write(`${JSON.stringify(all, null, 2)}\n`);
    } else if (all.length > 0) {
      out.write(formatTable([['USER', 'MECHANISM', 'ITERATIONS'], ...all.map((c) => [c.user, c.mechanism, String(c.iterations)])]));
    }
    return 0;
  } catch (e) {
    const code = (e as { code?: string }).code;
    const hint = code === '42P01' ? ` (no pgkafka tables in schema '${config.schema}': check PGKAFKA_SCHEMA, or start the broker once)` : '';
    err.write(`pgkafka users: ${(e as Error).message}${hint}\n`);
    return 1;
  } finally {
    await pool.end();
  }
}
