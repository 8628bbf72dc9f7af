// Kafka's ACL model (KIP-11, KIP-290 prefixed patterns): a binding is a
// resource pattern (type, name, literal or prefixed) plus an entry
// (principal, host, operation, allow or deny). The codes are Kafka's
// ResourceType, PatternType, AclOperation and AclPermissionType bytes, so
// they travel through CreateAcls/DescribeAcls/DeleteAcls unchanged.
import type { AclBinding } from '../storage/security-types.js';

export const ResourceType = { UNKNOWN: 0, ANY: 1, TOPIC: 2, GROUP: 3, CLUSTER: 4, TRANSACTIONAL_ID: 5, DELEGATION_TOKEN: 6, USER: 7 } as const;
export const PatternType = { UNKNOWN: 0, ANY: 1, MATCH: 2, LITERAL: 3, PREFIXED: 4 } as const;
export const AclOperation = {
  UNKNOWN: 0,
  ANY: 1,
  ALL: 2,
  READ: 3,
  WRITE: 4,
  CREATE: 5,
  DELETE: 6,
  ALTER: 7,
  DESCRIBE: 8,
  CLUSTER_ACTION: 9,
  DESCRIBE_CONFIGS: 10,
  ALTER_CONFIGS: 11,
  IDEMPOTENT_WRITE: 12,
  CREATE_TOKENS: 13,
  DESCRIBE_TOKENS: 14,
} as const;
export const AclPermission = { UNKNOWN: 0, ANY: 1, DENY: 2, ALLOW: 3 } as const;

export type ResourceTypeCode = (typeof ResourceType)[keyof typeof ResourceType];
export type OperationCode = (typeof AclOperation)[keyof typeof AclOperation];

/** The name every CLUSTER resource has. */
export const CLUSTER_NAME = 'kafka-cluster';
/** A literal resource name, principal or host that matches every one. */
export const WILDCARD = '*';
export const WILDCARD_PRINCIPAL = 'User:*';

export type { AclBinding };

/** A DescribeAcls/DeleteAcls filter: null names, principals and hosts match any; ANY codes match any; pattern MATCH matches what would apply to the named resource. */
export interface AclFilter {
  resourceType: number;
  resourceName: string | null;
  patternType: number;
  principal: string | null;
  host: string | null;
  operation: number;
  permissionType: number;
}

const known = (codes: Record<string, number>, code: number) => Object.values(codes).includes(code) && code !== 0;

/** Why Kafka refuses to store a binding (INVALID_REQUEST), or null. */
export function bindingError(b: AclBinding): string | null {
  if (!known(ResourceType, b.resourceType) || b.resourceType === ResourceType.ANY) return `Invalid resource type ${b.resourceType}`;
  if (b.patternType !== PatternType.LITERAL && b.patternType !== PatternType.PREFIXED) return `Invalid patternType ${b.patternType}`;
  if (!known(AclOperation, b.operation) || b.operation === AclOperation.ANY) return `Invalid operation ${b.operation}`;
  if (b.permissionType !== AclPermission.ALLOW && b.permissionType !== AclPermission.DENY) return `Invalid permissionType ${b.permissionType}`;
  if (b.resourceName === '') return 'Resource name should not be empty';
  if (b.resourceType === ResourceType.CLUSTER && b.resourceName !== CLUSTER_NAME) return `The only valid name for the CLUSTER resource is ${CLUSTER_NAME}`;
  if (!/^[^:]+:.*$/.test(b.principal)) return `Could not parse principal from \`${b.principal}\` (no colon is present separating the principal type from the principal name)`;
  if (b.host === '') return 'Invalid empty host';
  if ([b.resourceName, b.principal, b.host].some((s) => s.includes('\0'))) return 'Invalid NUL character';
  return null;
}

/**
 * Whether a binding or filter holds the code UNKNOWN (0) as its resource type, pattern type, operation or
 * permission: Kafka's request classes refuse it as they parse the request, and the connection closes.
 */
export function hasUnknownCode(a: { resourceType: number; patternType: number; operation: number; permissionType: number }): boolean {
  return a.resourceType === ResourceType.UNKNOWN || a.patternType === PatternType.UNKNOWN || a.operation === AclOperation.UNKNOWN || a.permissionType === AclPermission.UNKNOWN;
}

/**
 * Whether a binding to create holds a filter-only value (ANY, MATCH), which Kafka's AclBinding constructor
 * throws on: the whole CreateAcls request then fails with UNKNOWN_SERVER_ERROR and no message.
 */
export function isFilterOnly(b: AclBinding): boolean {
  return b.resourceType === ResourceType.ANY || b.patternType === PatternType.ANY || b.patternType === PatternType.MATCH || b.operation === AclOperation.ANY || b.permissionType === AclPermission.ANY;
}

/** Why Kafka refuses a filter (INVALID_REQUEST: it holds UNKNOWN codes), or null. */
export function filterError(f: AclFilter): string | null {
  if (!known(ResourceType, f.resourceType) || !known(PatternType, f.patternType) || !known(AclOperation, f.operation) || !known(AclPermission, f.permissionType)) {
    return 'The filter contains UNKNOWN elements';
  }
  return null;
}

/** Kafka's ResourcePatternFilter.matches plus AccessControlEntryFilter.matches. */
export function filterMatches(f: AclFilter, b: AclBinding): boolean {
  if (f.resourceType !== ResourceType.ANY && f.resourceType !== b.resourceType) return false;
  if (f.patternType !== PatternType.ANY && f.patternType !== PatternType.MATCH && f.patternType !== b.patternType) return false;
  if (f.resourceName !== null) {
    if (f.patternType === PatternType.ANY || f.patternType === b.patternType) {
      if (f.resourceName !== b.resourceName) return false;
    } else if (b.patternType === PatternType.LITERAL) {
      if (f.resourceName !== b.resourceName && b.resourceName !== WILDCARD) return false;
    } else if (!f.resourceName.startsWith(b.resourceName)) {
      return false;
    }
  }
  if (f.principal !== null && f.principal !== b.principal) return false;
  if (f.host !== null && f.host !== b.host) return false;
  if (f.operation !== AclOperation.ANY && f.operation !== b.operation) return false;
  return f.permissionType === AclPermission.ANY || f.permissionType === b.permissionType;
}

/** An ALLOW for one of these operations also allows DESCRIBE (resp. DESCRIBE_CONFIGS), as in Kafka. */
const IMPLIES: Partial<Record<number, readonly number[]>> = {
  [AclOperation.DESCRIBE]: [AclOperation.DESCRIBE, AclOperation.READ, AclOperation.WRITE, AclOperation.DELETE, AclOperation.ALTER],
  [AclOperation.DESCRIBE_CONFIGS]: [AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS],
};

export interface AuthorizerOptions {
  /** Principals allowed everything ("User:admin"). */
  superUsers: ReadonlySet<string>;
  /** What a resource no ACL names answers (Kafka's `allow.everyone.if.no.acl.found`). */
  allowEveryoneIfNoAclFound: boolean;
}

export interface AuthorizationRequest {
  principal: string;
  /** The client's address, without Kafka's leading slash. */
  host: string;
}

/**
 * The ACLs in memory, indexed by resource type and literal name, answering
 * Kafka's StandardAuthorizer decisions synchronously: super users are
 * allowed; a matching DENY (for the operation or ALL) denies; a matching
 * ALLOW (the operation, ALL, or one implying it) allows; a resource no ACL
 * applies to at all follows allow.everyone.if.no.acl.found.
 */
export class AclIndex {
  private readonly literal = new Map<number, Map<string, AclBinding[]>>();
  private readonly prefixed = new Map<number, AclBinding[]>();
  private all: AclBinding[] = [];

  constructor(bindings: readonly AclBinding[] = []) {
    this.replace(bindings);
  }

  replace(bindings: readonly AclBinding[]): void {
    this.literal.clear();
    this.prefixed.clear();
    this.all = [...bindings];
    for (const b of bindings) {
      if (b.patternType === PatternType.PREFIXED) {
        const list = this.prefixed.get(b.resourceType) ?? [];
        list.push(b);
        this.prefixed.set(b.resourceType, list);
      } else {
        let byName = this.literal.get(b.resourceType);
        if (!byName) this.literal.set(b.resourceType, (byName = new Map()));
        const list = byName.get(b.resourceName) ?? [];
        list.push(b);
        byName.set(b.resourceName, list);
      }
    }
  }

  bindings(): readonly AclBinding[] {
    return this.all;
  }

  /** Every binding whose pattern applies to the resource. */
  private applicable(resourceType: number, name: string): AclBinding[] {
    const byName = this.literal.get(resourceType);
    const out = [...(byName?.get(name) ?? []), ...(name !== WILDCARD ? (byName?.get(WILDCARD) ?? []) : [])];
    for (const b of this.prefixed.get(resourceType) ?? []) if (name.startsWith(b.resourceName)) out.push(b);
    return out;
  }

  authorize(options: AuthorizerOptions, who: AuthorizationRequest, operation: number, resourceType: number, name: string): boolean {
    if (options.superUsers.has(who.principal)) return true;
    const acls = this.applicable(resourceType, name);
    if (acls.length === 0) return options.allowEveryoneIfNoAclFound;
    const implied = IMPLIES[operation] ?? [operation];
    let allowed = false;
    for (const acl of acls) {
      if (acl.principal !== who.principal && acl.principal !== WILDCARD_PRINCIPAL) continue;
      if (acl.host !== who.host && acl.host !== WILDCARD) continue;
      if (acl.permissionType === AclPermission.DENY) {
        if (acl.operation === operation || acl.operation === AclOperation.ALL) return false;
      } else if (acl.operation === AclOperation.ALL || implied.includes(acl.operation)) {
        allowed = true;
      }
    }
    return allowed;
  }

  /**
   * Kafka's authorizeByResourceType (KIP-679): whether the principal may
   * perform the operation on at least one resource of the type — an ALLOW
   * that no DENY of the same or a wider pattern cancels. With no ACL of the
   * type at all, allow.everyone.if.no.acl.found decides.
   */
  authorizeAny(options: AuthorizerOptions, who: AuthorizationRequest, operation: number, resourceType: number): boolean {
    if (options.superUsers.has(who.principal)) return true;
    const ofType = this.all.filter((b) => b.resourceType === resourceType);
    if (ofType.length === 0) return options.allowEveryoneIfNoAclFound;
    const applies = (b: AclBinding) =>
      (b.principal === who.principal || b.principal === WILDCARD_PRINCIPAL) && (b.host === who.host || b.host === WILDCARD) && (b.operation === operation || b.operation === AclOperation.ALL);
    const denies = ofType.filter((b) => b.permissionType === AclPermission.DENY && applies(b));
    if (denies.some((d) => d.patternType === PatternType.LITERAL && d.resourceName === WILDCARD)) return false;
    const deniedBy = (a: AclBinding) =>
      denies.some((d) => (d.patternType === PatternType.PREFIXED ? a.resourceName.startsWith(d.resourceName) : a.patternType === PatternType.LITERAL && d.resourceName === a.resourceName));
    return ofType.some((a) => a.permissionType === AclPermission.ALLOW && applies(a) && !deniedBy(a));
  }
}

/** Kafka's super.users syntax: principals separated by semicolons. */
export function parseSuperUsers(value: string): Set<string> {
  return new Set(
    value
      .split(';')
      .map((p) => p.trim())
      .filter((p) => p !== ''),
  );
}
