// AlterUserScramCredentials (key 51), v0 (KIP-554), flexible. Deletions name
// a user and mechanism; upsertions carry the salt, iteration count and
// salted password the client derived (the password never travels), from
// which the broker keeps the stored and server keys. One result per user, as
// Kafka's controller checks it: empty name or iterations outside 4096-16384:
// UNACCEPTABLE_CREDENTIAL; unknown mechanism: UNSUPPORTED_SASL_MECHANISM;
// the same user twice (any mechanisms): DUPLICATE_RESOURCE, and neither
// applies; deleting a missing credential: RESOURCE_NOT_FOUND.
import { AlterUserScramCredentialsApi } from '../protocol/messages/index.js';
import { ErrorCode } from '../protocol/errors.js';
import { credentialFromSaltedPassword, MAX_ITERATIONS, MIN_ITERATIONS, scramMechanismOfType, type CredentialAlteration, type ScramMechanism } from '../security/scram.js';
import { AclOperation, clusterAllowed } from './authorization.js';
import { defineHandler } from './types.js';

interface UserOutcome {
  errorCode: number;
  errorMessage: string | null;
  alterations: CredentialAlteration[];
}

export default defineHandler({
  codec: AlterUserScramCredentialsApi,
  minVersion: 0,
  maxVersion: 0,
  async handle(ctx, request) {
    if (!clusterAllowed(ctx, AclOperation.ALTER)) {
      const users = [...new Set([...request.deletions, ...request.upsertions].map((a) => a.name))];
      return { throttleTimeMs: 0, results: users.map((user) => ({ user, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: 'Cluster authorization failed.' })) };
    }
    // As Kafka's ScramControlManager: a user is altered at most once per request (a second alteration of any
    // mechanism is DUPLICATE_RESOURCE), deletions are checked before upsertions, and a user's first error stands.
    const named = [...new Set([...request.deletions, ...request.upsertions].map((a) => a.name))].filter((u) => u !== '');
    const existing = new Set((named.length > 0 ? await ctx.broker.users.list(named) : []).map((c) => `${c.user}\u0000${c.mechanism}`));
    const outcomes = new Map<string, UserOutcome>();
    const invalid = (name: string, mechanism: ScramMechanism | null): [number, string] | null => {
      if (name === '') return [ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Username must not be empty'];
      // PostgreSQL text cannot hold NUL (Kafka would store the name).
      if (name.includes('\0')) return [ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Username must not contain a NUL character'];
      if (!mechanism) return [ErrorCode.UNSUPPORTED_SASL_MECHANISM, 'Unknown SCRAM mechanism'];
      return null;
    };
    const record = (name: string, error: [number, string] | null, alteration: CredentialAlteration | null) => {
      const o = outcomes.get(name);
      if (o && o.errorCode !== ErrorCode.NONE) return;
      if (o) [o.errorCode, o.errorMessage, o.alterations] = [ErrorCode.DUPLICATE_RESOURCE, 'A user credential cannot be altered twice in the same request', []];
      else if (error) outcomes.set(name, { errorCode: error[0], errorMessage: error[1], alterations: [] });
      else outcomes.set(name, { errorCode: ErrorCode.NONE, errorMessage: null, alterations: [alteration!] });
    };
    for (const d of request.deletions) {
      const mechanism = scramMechanismOfType(d.mechanism);
      const error = outcomes.has(d.name)
        ? null
        : (invalid(d.name, mechanism) ?? (existing.has(`${d.name}\u0000${mechanism}`) ? null : [ErrorCode.RESOURCE_NOT_FOUND, 'Attempt to delete a user credential that does not exist']));
      record(d.name, error, mechanism && { kind: 'delete', user: d.name, mechanism });
    }
    for (const u of request.upsertions) {
      const mechanism = scramMechanismOfType(u.mechanism);
      const error = outcomes.has(u.name)
        ? null
        : (invalid(u.name, mechanism) ??
          (u.iterations < MIN_ITERATIONS
            ? [ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Too few iterations']
            : u.iterations > MAX_ITERATIONS
              ? [ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Too many iterations']
              : null));
      // Kafka derives the keys from whatever salted password it is given, whatever its length.
      record(u.name, error, mechanism && { kind: 'upsert', user: u.name, mechanism, credential: credentialFromSaltedPassword(mechanism, u.saltedPassword, Buffer.from(u.salt), u.iterations) });
    }
    const apply: CredentialAlteration[] = [];
    for (const o of outcomes.values()) if (o.errorCode === ErrorCode.NONE) apply.push(...o.alterations);
    if (apply.length > 0) await ctx.broker.users.alter(apply);
    ctx.log.info({ users: [...outcomes.keys()], principal: ctx.principal }, 'SCRAM credentials altered');
    return {
      throttleTimeMs: 0,
      results: [...outcomes.entries()].map(([user, o]) => ({ user, errorCode: o.errorCode, errorMessage: o.errorMessage })),
    };
  },
});
