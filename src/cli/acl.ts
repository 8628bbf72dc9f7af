// `pgkafka acl create|list|delete`, spelled as rpk security acl: principals
// allowed or denied, operations, a resource (--topic, --group, --cluster,
// --transactional-id) and its pattern type. CreateAcls, DescribeAcls,
// DeleteAcls; list and delete take the same flags as filters (unset: any).
import { flag, flagList, has, type FlagSpecs, type Parsed } from './args.js';
import type { Command, CommandTree } from './command.js';
import { CliError, UsageError } from './errors.js';
import { formatTable, toJson } from './format.js';
import { errorName } from '../protocol/errors.js';
import { CreateAclsApi, DeleteAclsApi, DescribeAclsApi } from '../protocol/messages/index.js';
import { AclOperation, AclPermission, CLUSTER_NAME, PatternType, ResourceType } from '../security/acl.js';

const FLAGS: FlagSpecs = {
  'allow-principal': { value: 'User:name', multiple: true, doc: 'principal to allow (repeatable)' },
  'deny-principal': { value: 'User:name', multiple: true, doc: 'principal to deny (repeatable)' },
  'allow-host': { value: 'host', multiple: true, doc: 'host the allow applies to (default *)' },
  'deny-host': { value: 'host', multiple: true, doc: 'host the deny applies to (default *)' },
  operation: { value: 'op', multiple: true, doc: 'read, write, create, delete, alter, describe, describe_configs, alter_configs, idempotent_write, cluster_action, all, … (repeatable)' },
  topic: { value: 'name', multiple: true, doc: 'topic resource (repeatable)' },
  group: { value: 'name', multiple: true, doc: 'group resource (repeatable)' },
  'transactional-id': { value: 'id', multiple: true, doc: 'transactional id resource (repeatable)' },
  cluster: { boolean: true, doc: 'the cluster resource' },
  'resource-pattern-type': { value: 'literal|prefixed|match|any', doc: 'how resource names match (default literal; list/delete: any)' },
  ...{ format: { short: 'f', value: 'text|json', doc: 'output format (default text)' } },
};

const byName = <T extends Record<string, number>>(table: T) => new Map(Object.entries(table).map(([k, v]) => [v, k]));
const RESOURCE_NAMES = byName(ResourceType);
const PATTERN_NAMES = byName(PatternType);
const OPERATION_NAMES = byName(AclOperation);
const PERMISSION_NAMES = byName(AclPermission);

function code(table: Record<string, number>, raw: string, what: string): number {
  const c = table[raw.toUpperCase().replace(/-/g, '_')];
  if (c === undefined || c <= 1) throw new UsageError(`acl: unknown ${what} ${raw}`);
  return c;
}

interface Filter {
  resourceType: number;
  resourceName: string | null;
  patternType: number;
}

function resources(p: Parsed, filter: boolean): Filter[] {
  const patternRaw = flag(p, 'resource-pattern-type');
  const patternType =
    patternRaw === undefined ? (filter ? PatternType.ANY : PatternType.LITERAL) : patternRaw.toLowerCase() === 'any' ? PatternType.ANY : code(PatternType, patternRaw, 'pattern type');
  const out: Filter[] = [
    ...flagList(p, 'topic').map((resourceName) => ({ resourceType: ResourceType.TOPIC, resourceName, patternType })),
    ...flagList(p, 'group').map((resourceName) => ({ resourceType: ResourceType.GROUP, resourceName, patternType })),
    ...flagList(p, 'transactional-id').map((resourceName) => ({ resourceType: ResourceType.TRANSACTIONAL_ID, resourceName, patternType })),
    ...(has(p, 'cluster') ? [{ resourceType: ResourceType.CLUSTER, resourceName: CLUSTER_NAME, patternType }] : []),
  ];
  if (out.length === 0 && filter) out.push({ resourceType: ResourceType.ANY, resourceName: null, patternType });
  if (out.length === 0) throw new UsageError('acl create: name a resource (--topic, --group, --transactional-id or --cluster)');
  return out;
}

/** (principal, host, permission) triples from the allow/deny flags; a filter without any matches every one. */
function principals(p: Parsed, filter: boolean): { principal: string | null; host: string | null; permissionType: number }[] {
  const hosts = (name: string) => (flagList(p, name).length > 0 ? flagList(p, name) : [filter ? null : '*']);
  const out: { principal: string | null; host: string | null; permissionType: number }[] = [
    ...flagList(p, 'allow-principal').flatMap((principal) => hosts('allow-host').map((host) => ({ principal, host, permissionType: AclPermission.ALLOW }))),
    ...flagList(p, 'deny-principal').flatMap((principal) => hosts('deny-host').map((host) => ({ principal, host, permissionType: AclPermission.DENY }))),
  ];
  if (out.length === 0 && filter) out.push({ principal: null, host: null, permissionType: AclPermission.ANY });
  if (out.length === 0) throw new UsageError('acl create: name a principal (--allow-principal or --deny-principal)');
  return out;
}

function operations(p: Parsed, filter: boolean): number[] {
  const ops = flagList(p, 'operation').map((o) => (filter && o.toLowerCase() === 'any' ? AclOperation.ANY : code(AclOperation, o, 'operation')));
  if (ops.length > 0) return ops;
  if (filter) return [AclOperation.ANY];
  throw new UsageError('acl create: name an operation (--operation)');
}

function filters(p: Parsed) {
  return resources(p, true).flatMap((r) =>
    principals(p, true).flatMap((pr) =>
      operations(p, true).map((operation) => ({
        resourceTypeFilter: r.resourceType,
        resourceNameFilter: r.resourceName,
        patternTypeFilter: r.patternType,
        principalFilter: pr.principal,
        hostFilter: pr.host,
        operation,
        permissionType: pr.permissionType,
      })),
    ),
  );
}

interface Row {
  principal: string;
  host: string;
  resourceType: string;
  resourceName: string;
  patternType: string;
  operation: string;
  permission: string;
}

function print(out: NodeJS.WritableStream, rows: Row[], asJson: boolean): void {
  if (asJson) out.write(`${toJson(rows)}\n`);
  else out.write(formatTable([['PRINCIPAL', 'HOST', 'RESOURCE-TYPE', 'RESOURCE-NAME', 'RESOURCE-PATTERN-TYPE', 'OPERATION', 'PERMISSION'], ...rows.map((r) => Object.values(r) as string[])], 2));
}

const row = (a: { resourceType: number; resourceName: string; patternType: number; principal: string; host: string; operation: number; permissionType: number }): Row => ({
  principal: a.principal,
  host: a.host,
  resourceType: RESOURCE_NAMES.get(a.resourceType) ?? String(a.resourceType),
  resourceName: a.resourceName,
  patternType: PATTERN_NAMES.get(a.patternType) ?? String(a.patternType),
  operation: OPERATION_NAMES.get(a.operation) ?? String(a.operation),
  permission: PERMISSION_NAMES.get(a.permissionType) ?? String(a.permissionType),
});

const create: Command = {
  summary: 'create ACLs: every principal × resource × operation given',
  flags: FLAGS,
  async run(ctx, p) {
    const creations = resources(p, false).flatMap((r) =>
      principals(p, false).flatMap((pr) =>
        operations(p, false).map((operation) => ({
          resourceType: r.resourceType,
          resourceName: r.resourceName!,
          resourcePatternType: r.patternType,
          principal: pr.principal!,
          host: pr.host!,
          operation,
          permissionType: pr.permissionType,
        })),
      ),
    );
    const answer = await (await ctx.client()).request(CreateAclsApi, { creations });
    const failed = answer.results.map((r, i) => ({ ...r, i })).filter((r) => r.errorCode !== 0);
    for (const f of failed)
      ctx.err.write(
        `pgkafka: acl ${JSON.stringify(row({ ...creations[f.i]!, patternType: creations[f.i]!.resourcePatternType }))}: ${errorName(f.errorCode)}${f.errorMessage ? ` (${f.errorMessage})` : ''}\n`,
      );
    print(
      ctx.out,
      creations.filter((_, i) => answer.results[i]?.errorCode === 0).map((c) => row({ ...c, patternType: c.resourcePatternType })),
      flag(p, 'format') === 'json',
    );
    return failed.length > 0 ? 1 : 0;
  },
};

const list: Command = {
  summary: 'list ACLs matching the flags (none: every ACL)',
  flags: FLAGS,
  async run(ctx, p) {
    const client = await ctx.client();
    const rows: Row[] = [];
    for (const f of filters(p)) {
      const answer = await client.request(DescribeAclsApi, f);
      if (answer.errorCode !== 0) throw new CliError(`DescribeAcls: ${errorName(answer.errorCode)}${answer.errorMessage ? ` (${answer.errorMessage})` : ''}`);
      for (const r of answer.resources) for (const a of r.acls) rows.push(row({ ...a, resourceType: r.resourceType, resourceName: r.resourceName, patternType: r.patternType }));
    }
    print(ctx.out, rows, flag(p, 'format') === 'json');
  },
};

const del: Command = {
  summary: 'delete the ACLs matching the flags (at least one resource or principal flag)',
  flags: FLAGS,
  async run(ctx, p) {
    const any = ['allow-principal', 'deny-principal', 'topic', 'group', 'transactional-id', 'cluster'].some((n) => has(p, n));
    if (!any) throw new UsageError('acl delete: give at least one resource or principal flag (deleting every ACL by accident is too easy)');
    const answer = await (await ctx.client()).request(DeleteAclsApi, { filters: filters(p) });
    const rows: Row[] = [];
    for (const r of answer.filterResults) {
      if (r.errorCode !== 0) throw new CliError(`DeleteAcls: ${errorName(r.errorCode)}${r.errorMessage ? ` (${r.errorMessage})` : ''}`);
      for (const m of r.matchingAcls) rows.push(row(m));
    }
    print(ctx.out, rows, flag(p, 'format') === 'json');
  },
};

export const aclCommands: CommandTree = { create, list, delete: del };
