// DescribeUserScramCredentials (key 50), v0 (KIP-554), flexible. The
// mechanisms and iteration counts of the named users' SCRAM credentials (all
// users when the list is null or empty), never their keys. A user named twice
// gets DUPLICATE_RESOURCE, a user without credentials RESOURCE_NOT_FOUND.
import { DescribeUserScramCredentialsApi } from '../protocol/messages/index.js';
import { ErrorCode } from '../protocol/errors.js';
import { SCRAM_MECHANISM_TYPES } from '../security/scram.js';
import { AclOperation, clusterAllowed } from './authorization.js';
import { defineHandler } from './types.js';

export default defineHandler({
  codec: DescribeUserScramCredentialsApi,
  minVersion: 0,
  maxVersion: 0,
  async handle(ctx, request) {
    if (!clusterAllowed(ctx, AclOperation.DESCRIBE)) return { throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: 'Cluster authorization failed.', results: [] };
    const named = request.users && request.users.length > 0 ? request.users.map((u) => u.name) : null;
    const infos = await ctx.broker.users.list(named ?? undefined);
    const byUser = new Map<string, { mechanism: number; iterations: number }[]>();
    for (const i of infos) {
      const list = byUser.get(i.user) ?? [];
      list.push({ mechanism: SCRAM_MECHANISM_TYPES[i.mechanism], iterations: i.iterations });
      byUser.set(i.user, list);
    }
    const users = named ?? [...byUser.keys()];
    const results = [...new Set(users)].map((user) => {
      if (named && named.filter((n) => n === user).length > 1) {
        return { user, errorCode: ErrorCode.DUPLICATE_RESOURCE, errorMessage: `Cannot describe SCRAM credentials for the same user twice in a single request: ${user}`, credentialInfos: [] };
      }
      const credentialInfos = byUser.get(user);
      if (!credentialInfos) return { user, errorCode: ErrorCode.RESOURCE_NOT_FOUND, errorMessage: `Attempt to describe a user credential that does not exist: ${user}`, credentialInfos: [] };
      return { user, errorCode: ErrorCode.NONE, errorMessage: '', credentialInfos };
    });
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: '', results }; // Kafka's default message: empty
  },
});
