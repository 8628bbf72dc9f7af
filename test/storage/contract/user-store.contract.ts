import { describe, expect, it } from 'vitest';
import type { ScramCredential } from '../../../src/security/scram.js';
import type { HarnessRef } from './harness.js';

const cred = (fill: number, iterations = 4096): ScramCredential => ({
  salt: Buffer.alloc(32, fill),
  storedKey: Buffer.alloc(32, fill + 1),
  serverKey: Buffer.alloc(32, fill + 2),
  iterations,
});

export function userStorageContract(h: HarnessRef): void {
  describe('UserStorage', () => {
    it('keeps a credential per user and mechanism; an upsert replaces it', async () => {
      const store = h().users;
      expect(
        await store.alter([
          { kind: 'upsert', user: 'alice', mechanism: 'SCRAM-SHA-256', credential: cred(1) },
          { kind: 'upsert', user: 'alice', mechanism: 'SCRAM-SHA-512', credential: cred(5) },
        ]),
      ).toEqual([true, true]);
      expect(await store.alter([{ kind: 'upsert', user: 'alice', mechanism: 'SCRAM-SHA-256', credential: cred(9, 8192) }])).toEqual([true]);
      expect(await store.credential('alice', 'SCRAM-SHA-256')).toEqual(cred(9, 8192));
      expect(await store.credential('alice', 'SCRAM-SHA-512')).toEqual(cred(5));
      expect(await store.credential('bob', 'SCRAM-SHA-256')).toBeNull();
    });

    it('lists credentials without keys, by user and mechanism, all or the named users', async () => {
      const store = h().users;
      await store.alter([
        { kind: 'upsert', user: 'bob', mechanism: 'SCRAM-SHA-512', credential: cred(1) },
        { kind: 'upsert', user: 'alice', mechanism: 'SCRAM-SHA-512', credential: cred(2, 5000) },
        { kind: 'upsert', user: 'alice', mechanism: 'SCRAM-SHA-256', credential: cred(3) },
        { kind: 'upsert', user: 'Zed', mechanism: 'SCRAM-SHA-256', credential: cred(4) },
      ]);
      expect(await store.list()).toEqual([
        { user: 'Zed', mechanism: 'SCRAM-SHA-256', iterations: 4096 },
        { user: 'alice', mechanism: 'SCRAM-SHA-256', iterations: 4096 },
        { user: 'alice', mechanism: 'SCRAM-SHA-512', iterations: 5000 },
        { user: 'bob', mechanism: 'SCRAM-SHA-512', iterations: 4096 },
      ]);
      expect(await store.list(['bob', 'nobody'])).toEqual([{ user: 'bob', mechanism: 'SCRAM-SHA-512', iterations: 4096 }]);
      expect(await store.list([])).toEqual([]);
    });

    it('a deletion says whether it removed a credential', async () => {
      const store = h().users;
      await store.alter([{ kind: 'upsert', user: 'alice', mechanism: 'SCRAM-SHA-256', credential: cred(1) }]);
      expect(
        await store.alter([
          { kind: 'delete', user: 'alice', mechanism: 'SCRAM-SHA-256' },
          { kind: 'delete', user: 'alice', mechanism: 'SCRAM-SHA-256' },
          { kind: 'delete', user: 'bob', mechanism: 'SCRAM-SHA-512' },
        ]),
      ).toEqual([true, false, false]);
      expect(await store.list()).toEqual([]);
    });

    it('a name holding NUL: no such user, and storing one fails as a whole', async () => {
      const store = h().users;
      expect(await store.credential('a\u0000b', 'SCRAM-SHA-256')).toBeNull();
      expect(await store.list(['a\u0000b'])).toEqual([]);
      await expect(
        store.alter([
          { kind: 'upsert', user: 'alice', mechanism: 'SCRAM-SHA-256', credential: cred(1) },
          { kind: 'upsert', user: 'a\u0000b', mechanism: 'SCRAM-SHA-256', credential: cred(2) },
        ]),
      ).rejects.toThrow();
      expect(await store.list()).toEqual([]);
    });
  });
}
