import type pg from 'pg';
import { inTransaction } from './pool.js';
import type { AclBinding } from '../../security/acl.js';

interface AclRow {
  resource_type: number;
  resource_name: string;
  pattern_type: number;
  principal: string;
  host: string;
  operation: number;
  permission_type: number;
}

const COLUMNS = 'resource_type, resource_name, pattern_type, principal, host, operation, permission_type';

const toBinding = (r: AclRow): AclBinding => ({
  resourceType: r.resource_type,
  resourceName: r.resource_name,
  patternType: r.pattern_type,
  principal: r.principal,
  host: r.host,
  operation: r.operation,
  permissionType: r.permission_type,
});

const params = (b: AclBinding) => [b.resourceType, b.resourceName, b.patternType, b.principal, b.host, b.operation, b.permissionType];

/** ACL bindings (table acls). Every change notifies the channel, so every broker reloads its copy. */
export class AclStore {
  constructor(
    private readonly pool: pg.Pool,
    readonly channel: string,
  ) {}

  /** acls_select */
  async list(): Promise<AclBinding[]> {
    const { rows } = await this.pool.query<AclRow>(`SELECT ${COLUMNS} FROM acls ORDER BY resource_type, resource_name, pattern_type, principal, host, operation, permission_type`);
    return rows.map(toBinding);
  }

  /** acls_insert: all in one transaction; a binding that exists already stays as it is. */
  async create(bindings: readonly AclBinding[]): Promise<void> {
    if (bindings.length === 0) return;
    await inTransaction(this.pool, async (client) => {
      for (const b of bindings) {
        await client.query(`INSERT INTO acls (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING`, params(b));
      }
      await client.query('SELECT pg_notify($1, $2)', [this.channel, 'create']);
    });
  }

  /**
   * acls_delete: under a table lock (so concurrent deletions and creations
   * see one order), every binding that `select` picks from the current set
   * is deleted. Returns the deleted bindings.
   */
  async deleteWhere(select: (current: AclBinding[]) => AclBinding[]): Promise<AclBinding[]> {
    return inTransaction(this.pool, async (client) => {
      await client.query('LOCK TABLE acls IN SHARE ROW EXCLUSIVE MODE');
      const { rows } = await client.query<AclRow>(`SELECT ${COLUMNS} FROM acls`);
      const current = rows.map(toBinding);
      const doomed = select(current);
      for (const b of doomed) {
        await client.query(
          `DELETE FROM acls WHERE resource_type = $1 AND resource_name = $2 AND pattern_type = $3 AND principal = $4 AND host = $5 AND operation = $6 AND permission_type = $7`,
          params(b),
        );
      }
      if (doomed.length > 0) await client.query('SELECT pg_notify($1, $2)', [this.channel, 'delete']);
      return doomed;
    });
  }
}
