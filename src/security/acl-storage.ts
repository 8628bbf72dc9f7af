// What the authorizer needs from storage: the ACL bindings every broker shares.
import type { AclBinding } from './acl.js';

export interface AclStorage {
  /** Every binding, sorted by its fields in order. */
  list(): Promise<AclBinding[]>;
  /** Adds the bindings at once; one that exists already stays as it is. Tells every broker. */
  create(bindings: readonly AclBinding[]): Promise<void>;
  /**
   * Deletes, atomically with respect to other creations and deletions, every
   * binding that `select` picks from the current set; returns them.
   */
  deleteWhere(select: (current: AclBinding[]) => AclBinding[]): Promise<AclBinding[]>;
}
