import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AclOperation, AclPermission, PatternType, ResourceType, type AclBinding } from '../../../src/security/acl.js';
import type { Announcement, HarnessRef } from './harness.js';

const acl: AclBinding = {
  resourceType: ResourceType.TOPIC,
  resourceName: 'orders',
  patternType: PatternType.LITERAL,
  principal: 'User:alice',
  host: '*',
  operation: AclOperation.READ,
  permissionType: AclPermission.ALLOW,
};

/** Every broker drops its cached copy when told: each change that matters is announced once it is stored, and only then. */
export function announcementContract(h: HarnessRef): void {
  describe('announcements of changes', () => {
    it('announce topic changes with the topic name, broker config changes with the resource, group config changes with the group, ACL changes; a change that leaves the stored values as they are is not announced', async () => {
      const { topics, brokerConfigs, groupConfigs, acls, listen } = h();
      const listener = await listen();
      try {
        const id = randomUUID();
        await topics.create({ topicId: id, name: 'orders', partitionCount: 1, configs: {} });
        await topics.create({ topicId: randomUUID(), name: 'orders', partitionCount: 1, configs: {} });
        await topics.updateConfigs(id, () => null);
        await topics.updateConfigs(id, () => ({ 'retention.ms': '1' }));
        await brokerConfigs.update('', () => null);
        await brokerConfigs.update('1', () => ({ a: '1' }));
        await groupConfigs.update('g', () => null);
        await groupConfigs.update('g', () => ({ a: '1' }));
        await groupConfigs.update('g', () => ({}));
        await acls.create([acl]);
        await acls.deleteWhere(() => []);
        await acls.deleteWhere((current) => current);
        await topics.delete(id);
        await topics.delete(id);
        const expected: Announcement[] = [
          { channel: 'topics', payload: 'orders' },
          // A creation refused for a taken name is announced too (PostgreSQL's statement notifies either way; brokers just re-read the topic).
          { channel: 'topics', payload: 'orders' },
          { channel: 'topics', payload: 'orders' },
          { channel: 'brokerConfigs', payload: '1' },
          { channel: 'groupConfigs', payload: 'g' },
          // Emptied: every broker drops the group's configs.
          { channel: 'groupConfigs', payload: 'g' },
          { channel: 'acls', payload: 'create' },
          { channel: 'acls', payload: 'delete' },
          { channel: 'topics', payload: 'orders' },
        ];
        await expect.poll(() => listener.seen.length, { timeout: 5000 }).toBeGreaterThanOrEqual(expected.length);
        expect(listener.seen).toEqual(expected);
      } finally {
        await listener.close();
      }
    });
  });
}
