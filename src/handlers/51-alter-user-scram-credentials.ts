// AlterUserScramCredentials (key 51), v0 (KIP-554), flexible. Deletions name
// a user and mechanism; upsertions carry the salt, iteration count and
// salted password the client derived (the password never travels), from
// which the broker keeps the stored and server keys. One result per user: an
// error in any of a user's alterations applies none of them (empty name,
// unknown mechanism, iterations outside 4096-16384: UNACCEPTABLE_CREDENTIAL /
// UNSUPPORTED_SASL_MECHANISM; the same user and mechanism twice:
// DUPLICATE_RESOURCE; deleting a missing credential: RESOURCE_NOT_FOUND).
import { AlterUserScramCredentialsApi } from '../protocol/messages/index.js';
import { ErrorCode } from '../protocol/errors.js';
import { credentialFromSaltedPassword, MAX_ITERATIONS, MIN_ITERATIONS, scramMechanismOfType, type CredentialAlteration, type ScramMechanism } from '../security/scram.js';
import { AclOperation, clusterAllowed } from './authorization.js';
import { defineHandler } from './types.js';

const HASH_BYTES: Record<ScramMechanism, number> = { 'SCRAM-SHA-256': 32, 'SCRAM-SHA-512': 64 };

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
    const outcomes = new Map<string, UserOutcome>();
    const seen = new Set<string>();
    const outcome = (user: string) => {
      let o = outcomes.get(user);
      if (!o) outcomes.set(user, (o = { errorCode: ErrorCode.NONE, errorMessage: null, alterations: [] }));
      return o;
    };
    const fail = (o: UserOutcome, errorCode: number, errorMessage: string) => {
      if (o.errorCode === ErrorCode.NONE) [o.errorCode, o.errorMessage] = [errorCode, errorMessage];
    };
    const check = (name: string, type: number): [UserOutcome, ScramMechanism | null] => {
      const o = outcome(name);
      const mechanism = scramMechanismOfType(type);
      if (name === '') fail(o, ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Username must not be empty');
      else if (name.includes('\0')) fail(o, ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Username must not contain a NUL character');
      else if (!mechanism) fail(o, ErrorCode.UNSUPPORTED_SASL_MECHANISM, 'Unknown SCRAM mechanism');
      else if (seen.has(`${name}\u0000${mechanism}`)) fail(o, ErrorCode.DUPLICATE_RESOURCE, 'A user credential cannot be altered twice in the same request');
      if (mechanism) seen.add(`${name}\u0000${mechanism}`);
      return [o, mechanism];
    };
    for (const d of request.deletions) {
      const [o, mechanism] = check(d.name, d.mechanism);
      if (mechanism) o.alterations.push({ kind: 'delete', user: d.name, mechanism });
    }
    for (const u of request.upsertions) {
      const [o, mechanism] = check(u.name, u.mechanism);
      if (!mechanism) continue;
      if (u.iterations < MIN_ITERATIONS) fail(o, ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Too few iterations');
      else if (u.iterations > MAX_ITERATIONS) fail(o, ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Too many iterations');
      else if (u.salt.length === 0 || u.saltedPassword.length !== HASH_BYTES[mechanism]) fail(o, ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Invalid salt or salted password');
      else o.alterations.push({ kind: 'upsert', user: u.name, mechanism, credential: credentialFromSaltedPassword(mechanism, u.saltedPassword, Buffer.from(u.salt), u.iterations) });
    }
    const users = [...outcomes.keys()].filter((u) => u !== '');
    const existing = new Set((users.length > 0 ? await ctx.broker.users.list(users) : []).map((c) => `${c.user}\u0000${c.mechanism}`));
    const apply: CredentialAlteration[] = [];
    for (const o of outcomes.values()) {
      for (const a of o.alterations) {
        if (a.kind === 'delete' && !existing.has(`${a.user}\u0000${a.mechanism}`)) fail(o, ErrorCode.RESOURCE_NOT_FOUND, 'Attempt to delete a user credential that does not exist');
      }
      if (o.errorCode === ErrorCode.NONE) apply.push(...o.alterations);
    }
    if (apply.length > 0) await ctx.broker.users.alter(apply);
    ctx.log.info({ users: [...outcomes.keys()], principal: ctx.principal }, 'SCRAM credentials altered');
    return {
      throttleTimeMs: 0,
      results: [...outcomes.entries()].map(([user, o]) => ({ user, errorCode: o.errorCode, errorMessage: o.errorMessage })),
    };
  },
});
