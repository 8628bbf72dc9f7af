// What the storage layer keeps for security, in Kafka's terms: ACL bindings
// and SCRAM credentials. Defined here, below src/security/, so that every
// storage implementation and the security logic share one shape (src/security/
// re-exports them with the logic built on them).

/** One ACL: a resource pattern plus an entry, as Kafka's ResourceType, PatternType, AclOperation and AclPermissionType codes. */
export interface AclBinding {
  resourceType: number;
  resourceName: string;
  patternType: number;
  principal: string;
  host: string;
  operation: number;
  permissionType: number;
}

export type ScramMechanism = 'SCRAM-SHA-256' | 'SCRAM-SHA-512';

/** A SCRAM credential derived from a password: never the password itself. */
export interface ScramCredential {
  salt: Buffer;
  storedKey: Buffer;
  serverKey: Buffer;
  iterations: number;
}

/** A change to one user's credential for one mechanism (AlterUserScramCredentials, `pgkafka users`). */
export type CredentialAlteration = { kind: 'upsert'; user: string; mechanism: ScramMechanism; credential: ScramCredential } | { kind: 'delete'; user: string; mechanism: ScramMechanism };
