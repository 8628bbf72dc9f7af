// `pgkafka groups`: consumer groups and their lag, read straight from the
// database, printed as kafka-consumer-groups --describe / --list print them
// (plus a LAG-TIME column). It needs no running broker, but it does need
// DATABASE_URL: an embedded database belongs to the broker that started it.
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config/schema.js';
import { describeGroups, formatLagTime, type GroupLag } from '../observability/lag.js';
import { LagStore } from '../storage/pg/lag-store.js';
import { createPool } from '../storage/pg/pool.js';

export const GROUPS_USAGE = `Usage: pgkafka groups [--group <id>]... [--list] [--json]

Shows consumer groups, their committed offsets and lag, like
kafka-consumer-groups --describe, with the lag also expressed in time.

  -g, --group <id>   only this group (repeatable); default: every group
      --list         only the group ids and their states
      --json         JSON instead of tables
  -h, --help         this text

Connects with DATABASE_URL and PGKAFKA_SCHEMA (default pgkafka).
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
  if (!config.databaseUrl) {
    err.write('pgkafka groups: DATABASE_URL is not set. Set it to the PostgreSQL database the broker uses ' + '(a broker without DATABASE_URL runs an embedded database that only it can reach).\n');
    return 2;
  }

  const pool = createPool({ connectionString: config.databaseUrl, schema: config.schema, max: 2, applicationName: 'pgkafka-groups' });
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

/** Columns left-aligned, each padded to its widest cell plus one space; the last one unpadded. */
export function formatTable(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]! + 1))).join('') + '\n').join('');
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

// Offsets are written as JSON numbers of any size (jq and most parsers keep
// int64 exactly): bigints go through a marker string that is unquoted after.
const BIGINT_MARK = '\u0000bigint:';
function toJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? `${BIGINT_MARK}${v}` : v), 2).replace(/"\\u0000bigint:(-?\d+)"/g, '$1');
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
