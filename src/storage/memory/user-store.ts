import type { ScramCredential, ScramMechanism } from '../security-types.js';
import type { CredentialAlteration, CredentialInfo } from '../pg/user-store.js';
import { compareText, key, MemoryStorageError, text, type MemoryDatabase } from './database.js';

const copy = (c: ScramCredential): ScramCredential => ({ salt: Buffer.from(c.salt), storedKey: Buffer.from(c.storedKey), serverKey: Buffer.from(c.serverKey), iterations: c.iterations });

/** SCRAM credentials in memory (table scram_credentials), keyed by user\0mechanism. */
export class MemoryUserStore {
  constructor(private readonly db: MemoryDatabase) {}

  async credential(user: string, mechanism: ScramMechanism): Promise<ScramCredential | null> {
    const c = this.db.credentials.get(key(user, mechanism));
    return c ? copy(c) : null;
  }

  async list(users?: string[]): Promise<CredentialInfo[]> {
    const wanted = users ? new Set(users) : null;
    return [...this.db.credentials.entries()]
      .map(([k, c]) => {
        const [user, mechanism] = k.split('\u0000') as [string, ScramMechanism];
        return { user, mechanism, iterations: c.iterations };
      })
      .filter((c) => !wanted || wanted.has(c.user))
      .sort((a, b) => compareText(a.user, b.user) || compareText(a.mechanism, b.mechanism));
  }

  async alter(alterations: CredentialAlteration[]): Promise<boolean[]> {
    // Checked before anything changes: all or nothing, as one PostgreSQL transaction.
    for (const a of alterations) {
      text(a.user);
      if (a.kind === 'upsert' && a.mechanism !== 'SCRAM-SHA-256' && a.mechanism !== 'SCRAM-SHA-512') {
        throw new MemoryStorageError('new row for relation "scram_credentials" violates check constraint "scram_credentials_mechanism_check"', '23514');
      }
    }
    return alterations.map((a) => {
      const k = key(a.user, a.mechanism);
      if (a.kind === 'delete') return this.db.credentials.delete(k);
      this.db.credentials.set(k, copy(a.credential));
      return true;
    });
  }
}
