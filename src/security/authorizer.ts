import type { Logger } from '../observability/logger.js';
import { AclIndex, CLUSTER_NAME, ResourceType, filterMatches, type AclBinding, type AclFilter, type AuthorizationRequest, type AuthorizerOptions } from './acl.js';
import type { AclStorage } from './acl-storage.js';
import { LogCode } from '../observability/log-codes.js';

const OPERATION_NAMES = [
  'UNKNOWN',
  'ANY',
  'ALL',
  'READ',
  'WRITE',
  'CREATE',
  'DELETE',
  'ALTER',
  'DESCRIBE',
  'CLUSTER_ACTION',
  'DESCRIBE_CONFIGS',
  'ALTER_CONFIGS',
  'IDEMPOTENT_WRITE',
  'CREATE_TOKENS',
  'DESCRIBE_TOKENS',
];
const RESOURCE_NAMES = ['UNKNOWN', 'ANY', 'Topic', 'Group', 'Cluster', 'TransactionalId', 'DelegationToken', 'User'];

/**
 * The broker's authorizer (Kafka's `authorizer.class.name`). Disabled, it
 * allows everything and the ACL APIs answer SECURITY_DISABLED. Enabled, its
 * decisions come from the ACLs in memory, which every broker sharing the
 * database reloads when one of them changes the table.
 */
export class Authorizer {
  private readonly index = new AclIndex();
  private loading: Promise<void> | null = null;

  constructor(
    readonly enabled: boolean,
    private readonly options: AuthorizerOptions,
    private readonly store: AclStorage,
    private readonly log: Logger,
  ) {}

  async load(): Promise<void> {
    if (!this.enabled) return;
    this.index.replace(await this.store.list());
  }

  /** Reloads after another broker's change (or a missed notification); loads run one at a time, the last one wins. */
  reload(): void {
    if (!this.enabled) return;
    const run = async () => {
      await (this.loading ?? Promise.resolve()).catch(() => {});
      await this.load();
    };
    const loading = run();
    this.loading = loading;
    loading.catch((err: Error) => this.log.warn({ err: err.message, code: LogCode.ACL_RELOAD_FAILED }, 'ACL reload failed; decisions use the previous ACLs'));
  }

  /** Whether the principal may perform the operation on the resource; a denial is logged as Kafka's authorizer logs it. */
  authorize(who: AuthorizationRequest, operation: number, resourceType: number, name: string, logDenial = true): boolean {
    if (!this.enabled) return true;
    const allowed = this.index.authorize(this.options, who, operation, resourceType, name);
    if (!allowed && logDenial) {
      this.log.info(
        { principal: who.principal, host: who.host, operation: OPERATION_NAMES[operation], resourceType: RESOURCE_NAMES[resourceType], resourceName: name, code: LogCode.AUTHORIZATION_DENIED },
        'principal is denied the operation on the resource',
      );
    }
    return allowed;
  }

  authorizeCluster(who: AuthorizationRequest, operation: number, logDenial = true): boolean {
    return this.authorize(who, operation, ResourceType.CLUSTER, CLUSTER_NAME, logDenial);
  }

  /** Whether the operation is allowed on at least one resource of the type (KIP-679). */
  authorizeAny(who: AuthorizationRequest, operation: number, resourceType: number): boolean {
    if (!this.enabled) return true;
    return this.index.authorizeAny(this.options, who, operation, resourceType);
  }

  describe(filter: AclFilter): AclBinding[] {
    return this.index.bindings().filter((b) => filterMatches(filter, b));
  }

  async create(bindings: readonly AclBinding[]): Promise<void> {
    await this.store.create(bindings);
    await this.load();
  }

  /** Deletes every binding any filter matches; returns, per filter, the bindings it matched. */
  async delete(filters: readonly AclFilter[]): Promise<AclBinding[][]> {
    let matched: AclBinding[][] = [];
    await this.store.deleteWhere((current) => {
      matched = filters.map((f) => current.filter((b) => filterMatches(f, b)));
      return [...new Set(matched.flat())];
    });
    await this.load();
    return matched;
  }
}
