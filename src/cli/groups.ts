// `pgkafka groups`: consumer groups and their lag, read straight from the
// database, printed as kafka-consumer-groups --describe / --list print them
// (plus a LAG-TIME column, which the Kafka protocol cannot give: it needs the
// timestamp of the record at each committed offset). It needs DATABASE_URL, or
// the embedded database of the local data dir, running under its broker.
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config/schema.js';
import { describeGroups, formatLagTime, type GroupLag } from '../observability/lag.js';
import { LagStore } from '../storage/pg/lag-store.js';
import { createPool } from '../storage/pg/pool.js';
import { formatTable, toJson } from './format.js';
import { localDatabase } from './local-database.js';

export const GROUPS_USAGE = `Usage: pgkafka groups [--group <id>]... [--list] [--json]

Shows consumer groups, their committed offsets and lag, like
kafka-consumer-groups --describe, with the lag also expressed in time.

  -g, --group <id>   only this group (repeatable); default: every group
      --list         only the group ids and their states
      --json         JSON instead of tables
  -h, --help         this text

Connects with DATABASE_URL and PGKAFKA_SCHEMA (default pgkafka); without
DATABASE_URL, to the running embedded database of PGKAFKA_DATA_DIR.
pgkafka group describe gives the same offsets over the Kafka protocol.
`;

const MISSING = '-';

/**
 * Runs `pgkafka groups` with the arguments after the subcommand. Returns the
 * exit code: 0, 1 (a requested group does not exist, or the database query
 * failed), 2 (bad usage or configuration).
 */
export async function runGroupsCommand(args: string[], env: NodeJS.ProcessEnv, out: NodeJS.WritableStream, err: NodeJS.WritableStream = process.stderr): Promise<number> {
  let values: { group?: string[]; list?: boolean; json?: boolean; help?: boolean };
  try {
    ({ values } = parseArgs({
      args,
      allowPositionals: false,
      strict: true,
      options: {
        group: { type: 'string', short: 'g', multiple: true },
        list: { type: 'boolean' },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (e) {
    err.write(`pgkafka groups: ${(e as Error).message}\n\n${GROUPS_USAGE}`);
    return 2;
  }
  if (values.help) {
    out.write(GROUPS_USAGE);
    return 0;
  }

  let config;
  try {
    config = loadConfig(env);
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    err.write(`pgkafka groups: invalid configuration: ${e.message}\n`);
    return 2;
  }
  const database = localDatabase(config);
  if ('error' in database) {
    err.write(`pgkafka groups: ${database.error}\n`);
    return 2;
  }

  const pool = createPool({ connectionString: database.url, schema: config.schema, max: 2, applicationName: 'pgkafka-groups' });
  // An idle connection lost (PostgreSQL restarted): the next statement fails with a message; nothing else to do.
  pool.on('error', () => {});
  try {
    const requested = values.group && values.group.length > 0 ? [...new Set(values.group)] : undefined;
    const groups = await describeGroups(new LagStore(pool), { groupId: requested });
    const missing = (requested ?? []).filter((id) => !groups.some((g) => g.group === id));
    for (const id of missing) err.write(`Error: Consumer group '${id}' does not exist.\n`);

    if (values.json) out.write(`${values.list ? listJson(groups) : describeJson(groups)}\n`);
    else out.write(values.list ? formatList(groups) : formatDescribe(groups));
    return missing.length > 0 ? 1 : 0;
  } catch (e) {
    const code = (e as { code?: string }).code;
    const hint = code === '42P01' ? ` (no pgkafka tables in schema '${config.schema}': check PGKAFKA_SCHEMA)` : '';
    err.write(`pgkafka groups: ${(e as Error).message}${hint}\n`);
    return 1;
  } finally {
    await pool.end();
  }
}

/** kafka-consumer-groups --list --state. */
export function formatList(groups: readonly GroupLag[]): string {
  if (groups.length === 0) return '';
  return formatTable([['GROUP', 'STATE'], ...groups.map((g) => [g.group, g.state])]);
}

/** kafka-consumer-groups --describe, one block per group, blocks separated by a blank line. */
export function formatDescribe(groups: readonly GroupLag[]): string {
  return groups
    .map((g) => {
      let block = '';
      if (g.state === 'Dead') return `Consumer group '${g.group}' does not exist.\n`;
      if (g.state === 'Empty' || g.members === 0) block += `Consumer group '${g.group}' has no active members.\n`;
      else if (g.state === 'PreparingRebalance' || g.state === 'CompletingRebalance') block += `Warning: Consumer group '${g.group}' is rebalancing.\n`;
      if (g.partitions.length === 0) return block;
      const header = ['GROUP', 'TOPIC', 'PARTITION', 'CURRENT-OFFSET', 'LOG-END-OFFSET', 'LAG', 'CONSUMER-ID', 'HOST', 'CLIENT-ID', 'LAG-TIME'];
      const cell = (v: bigint | string | null) => (v === null || v === '' ? MISSING : String(v));
      const body = g.partitions.map((r) => [
        r.group,
        r.topic,
        String(r.partition),
        cell(r.currentOffset),
        cell(r.logEndOffset),
        cell(r.lag),
        cell(r.consumerId),
        cell(r.host),
        cell(r.clientId),
        formatLagTime(r.lagMs),
      ]);
      return block + formatTable([header, ...body]);
    })
    .join('\n');
}

function listJson(groups: readonly GroupLag[]): string {
  return toJson(groups.map((g) => ({ group: g.group, state: g.state })));
}

function describeJson(groups: readonly GroupLag[]): string {
  return toJson(
    groups.map((g) => ({
      group: g.group,
      state: g.state,
      members: g.members,
      partitions: g.partitions.map(({ group: _group, ...r }) => r),
    })),
  );
}
