import { describe, expect, it } from 'vitest';
import { AclOperation, AclPermission, PatternType, ResourceType, type AclBinding } from '../../../src/security/acl.js';
import type { HarnessRef } from './harness.js';

const acl = (over: Partial<AclBinding> = {}): AclBinding => ({
  resourceType: ResourceType.TOPIC,
  resourceName: 'orders',
  patternType: PatternType.LITERAL,
  principal: 'User:alice',
  host: '*',
  operation: AclOperation.READ,
  permissionType: AclPermission.ALLOW,
  ...over,
});

export function aclStorageContract(h: HarnessRef): void {
  describe('AclStorage', () => {
    it('lists bindings in the order of their fields; a binding created twice is kept once', async () => {
      const store = h().acls;
      const bindings = [
        acl({ resourceName: 'b' }),
        acl({ resourceType: ResourceType.GROUP, resourceName: 'a' }),
        acl({ resourceName: 'B' }),
        acl({ resourceName: 'b', principal: 'User:Bob' }),
        acl({ resourceName: 'b', operation: AclOperation.WRITE }),
        acl({ resourceName: 'b', permissionType: AclPermission.DENY }),
        acl({ resourceName: 'b', patternType: PatternType.PREFIXED }),
      ];
      await store.create(bindings);
      await store.create([acl({ resourceName: 'b' })]);
      await store.create([]);
      expect(await store.list()).toEqual([
        acl({ resourceName: 'B' }),
        acl({ resourceName: 'b', principal: 'User:Bob' }),
        acl({ resourceName: 'b', permissionType: AclPermission.DENY }),
        acl({ resourceName: 'b' }),
        acl({ resourceName: 'b', operation: AclOperation.WRITE }),
        acl({ resourceName: 'b', patternType: PatternType.PREFIXED }),
        acl({ resourceType: ResourceType.GROUP, resourceName: 'a' }),
      ]);
    });

    it('deletes what the selection picks from the current bindings, and returns it', async () => {
      const store = h().acls;
      await store.create([acl(), acl({ principal: 'User:bob' }), acl({ resourceName: 'payments' })]);
      let seen: AclBinding[] = [];
      const deleted = await store.deleteWhere((current) => {
        seen = current;
        return current.filter((b) => b.resourceName === 'orders');
      });
      expect(seen).toHaveLength(3);
      expect(deleted.sort((a, b) => a.principal.localeCompare(b.principal))).toEqual([acl(), acl({ principal: 'User:bob' })]);
      expect(await store.list()).toEqual([acl({ resourceName: 'payments' })]);
      expect(await store.deleteWhere(() => [])).toEqual([]);
    });

    it('concurrent deletions of one binding delete it once', async () => {
      const store = h().acls;
      await store.create([acl()]);
      const results = await Promise.all(Array.from({ length: 4 }, () => store.deleteWhere((current) => current.filter((b) => b.resourceName === 'orders'))));
      expect(results.flat()).toEqual([acl()]);
    });

    it('refuses, all or nothing, a binding of a pattern type that cannot be stored (ANY, MATCH)', async () => {
      const store = h().acls;
      await expect(store.create([acl({ resourceName: 'ok' }), acl({ patternType: PatternType.ANY })])).rejects.toThrow();
      await expect(store.create([acl({ permissionType: AclPermission.ANY })])).rejects.toThrow();
      expect(await store.list()).toEqual([]);
    });
  });
}
