import type { AclBinding } from '../security-types.js';
import { compareText, key, MemoryStorageError, text, type MemoryDatabase } from './database.js';

const bindingKey = (b: AclBinding) => key(b.resourceType, b.resourceName, b.patternType, b.principal, b.host, b.operation, b.permissionType);

/** The table's order: resource type, name, pattern type, principal, host, operation, permission. */
const compare = (a: AclBinding, b: AclBinding) =>
  a.resourceType - b.resourceType ||
  compareText(a.resourceName, b.resourceName) ||
  a.patternType - b.patternType ||
  compareText(a.principal, b.principal) ||
  compareText(a.host, b.host) ||
  a.operation - b.operation ||
  a.permissionType - b.permissionType;

/** The table's CHECK constraints: LITERAL or PREFIXED patterns, DENY or ALLOW. */
function checked(b: AclBinding): AclBinding {
  if (b.patternType !== 3 && b.patternType !== 4) throw new MemoryStorageError('new row for relation "acls" violates check constraint "acls_pattern_type_check"', '23514');
  if (b.permissionType !== 2 && b.permissionType !== 3) throw new MemoryStorageError('new row for relation "acls" violates check constraint "acls_permission_type_check"', '23514');
  text(b.resourceName + b.principal + b.host);
  return { ...b };
}

/** ACL bindings in memory (table acls). */
export class MemoryAclStore {
  constructor(private readonly db: MemoryDatabase) {}

  async list(): Promise<AclBinding[]> {
    return [...this.db.acls.values()].sort(compare).map((b) => ({ ...b }));
  }

  async create(bindings: readonly AclBinding[]): Promise<void> {
    if (bindings.length === 0) return;
    const rows = bindings.map(checked); // every row checked before any is added: all or nothing
    for (const b of rows) if (!this.db.acls.has(bindingKey(b))) this.db.acls.set(bindingKey(b), b);
    this.db.notify('acls', 'create');
  }

  async deleteWhere(select: (current: AclBinding[]) => AclBinding[]): Promise<AclBinding[]> {
    const doomed = select([...this.db.acls.values()].map((b) => ({ ...b })));
    for (const b of doomed) this.db.acls.delete(bindingKey(b));
    if (doomed.length > 0) this.db.notify('acls', 'delete');
    return doomed;
  }
}
