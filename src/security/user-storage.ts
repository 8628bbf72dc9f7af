// What SASL/SCRAM and the user APIs need from storage: salted credentials, never passwords.
import type { ScramCredential, ScramMechanism } from './scram.js';
import type { CredentialAlteration, CredentialInfo } from '../storage/pg/user-store.js';

export type { CredentialAlteration, CredentialInfo } from '../storage/pg/user-store.js';

export interface UserStorage {
  credential(user: string, mechanism: ScramMechanism): Promise<ScramCredential | null>;
  /** Every credential of the named users (all users when `users` is undefined), by user and mechanism, without keys. */
  list(users?: string[]): Promise<CredentialInfo[]>;
  /** Applies the alterations at once; per alteration, whether it changed anything (deleting a missing credential does not). */
  alter(alterations: CredentialAlteration[]): Promise<boolean[]>;
}
