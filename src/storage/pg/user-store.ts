import type pg from 'pg';
import { inTransaction } from './pool.js';
import type { ScramCredential, ScramMechanism } from '../../security/scram.js';

export interface CredentialInfo {
  user: string;
  mechanism: ScramMechanism;
  iterations: number;
}

export type CredentialAlteration =
  | { kind: 'upsert'; user: string; mechanism: ScramMechanism; credential: ScramCredential }
  | { kind: 'delete'; user: string; mechanism: ScramMechanism };

/** SCRAM credentials (table scram_credentials): salted keys, never passwords. */
export class UserStore {
  constructor(private readonly pool: pg.Pool) {}

  /** scram_credentials_select */
  async credential(user: string, mechanism: ScramMechanism): Promise<ScramCredential | null> {
    if (user.includes('\0')) return null; // PostgreSQL text holds no NUL, so no such user exists
    const { rows } = await this.pool.query<{ salt: Buffer; stored_key: Buffer; server_key: Buffer; iterations: number }>(
      'SELECT salt, stored_key, server_key, iterations FROM scram_credentials WHERE user_name = $1 AND mechanism = $2',
      [user, mechanism],
    );
    const r = rows[0];
    return r ? { salt: r.salt, storedKey: r.stored_key, serverKey: r.server_key, iterations: r.iterations } : null;
  }

  /** scram_credentials_list: every credential of the named users (all users when `users` is undefined), without keys. */
  async list(users?: string[]): Promise<CredentialInfo[]> {
    const { rows } = await this.pool.query<{ user_name: string; mechanism: ScramMechanism; iterations: number }>(
      `SELECT user_name, mechanism, iterations FROM scram_credentials
       WHERE $1::text[] IS NULL OR user_name = ANY($1::text[]) ORDER BY user_name, mechanism`,
      // PostgreSQL text holds no NUL: names with one cannot exist.
      [users ? users.filter((u) => !u.includes('\0')) : null],
    );
    return rows.map((r) => ({ user: r.user_name, mechanism: r.mechanism, iterations: r.iterations }));
  }

  /**
   * scram_credentials_upsert / scram_credentials_delete, all in one
   * transaction. Returns, per alteration, whether it changed a row (a
   * deletion of a credential that does not exist changes none).
   */
  async alter(alterations: CredentialAlteration[]): Promise<boolean[]> {
    return inTransaction(this.pool, async (client) => {
      const changed: boolean[] = [];
      for (const a of alterations) {
        if (a.kind === 'delete') {
          const { rowCount } = await client.query('DELETE FROM scram_credentials WHERE user_name = $1 AND mechanism = $2', [a.user, a.mechanism]);
          changed.push((rowCount ?? 0) > 0);
        } else {
          const c = a.credential;
          await client.query(
            `INSERT INTO scram_credentials (user_name, mechanism, salt, stored_key, server_key, iterations) VALUES ($1, $2, $3, $4, $5, $6)
             ON CONFLICT (user_name, mechanism) DO UPDATE SET salt = $3, stored_key = $4, server_key = $5, iterations = $6, updated_at = now()`,
            [a.user, a.mechanism, c.salt, c.storedKey, c.serverKey, c.iterations],
          );
          changed.push(true);
        }
      }
      return changed;
    });
  }
}
