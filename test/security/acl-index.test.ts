// Kafka's authorizer decisions and filter matching, on the in-memory index
// alone (no broker): the rules CreateAcls users rely on.
import { describe, expect, it } from 'vitest';
import { AclIndex, AclOperation as Op, AclPermission, PatternType, ResourceType, bindingError, filterMatches, parseSuperUsers, type AclBinding, type AclFilter } from '../../src/security/acl.js';

const acl = (over: Partial<AclBinding>): AclBinding => ({
  resourceType: ResourceType.TOPIC,
  resourceName: 'orders',
  patternType: PatternType.LITERAL,
  principal: 'User:alice',
  host: '*',
  operation: Op.READ,
  permissionType: AclPermission.ALLOW,
  ...over,
});
const strict = { superUsers: new Set<string>(), allowEveryoneIfNoAclFound: false };
const alice = { principal: 'User:alice', host: '127.0.0.1' };
const bob = { principal: 'User:bob', host: '127.0.0.1' };

describe('authorize', () => {
  it('allows what a matching ALLOW names, and nothing else', () => {
    const index = new AclIndex([acl({})]);
    expect(index.authorize(strict, alice, Op.READ, ResourceType.TOPIC, 'orders')).toBe(true);
    expect(index.authorize(strict, alice, Op.WRITE, ResourceType.TOPIC, 'orders')).toBe(false);
    expect(index.authorize(strict, bob, Op.READ, ResourceType.TOPIC, 'orders')).toBe(false);
    expect(index.authorize(strict, alice, Op.READ, ResourceType.TOPIC, 'orders2')).toBe(false);
    expect(index.authorize(strict, alice, Op.READ, ResourceType.GROUP, 'orders')).toBe(false);
  });

  it('lets READ, WRITE, DELETE and ALTER imply DESCRIBE, and ALTER_CONFIGS imply DESCRIBE_CONFIGS', () => {
    for (const op of [Op.READ, Op.WRITE, Op.DELETE, Op.ALTER]) {
      expect(new AclIndex([acl({ operation: op })]).authorize(strict, alice, Op.DESCRIBE, ResourceType.TOPIC, 'orders')).toBe(true);
    }
    expect(new AclIndex([acl({ operation: Op.CREATE })]).authorize(strict, alice, Op.DESCRIBE, ResourceType.TOPIC, 'orders')).toBe(false);
    expect(new AclIndex([acl({ operation: Op.ALTER_CONFIGS })]).authorize(strict, alice, Op.DESCRIBE_CONFIGS, ResourceType.TOPIC, 'orders')).toBe(true);
    expect(new AclIndex([acl({ operation: Op.DESCRIBE })]).authorize(strict, alice, Op.READ, ResourceType.TOPIC, 'orders')).toBe(false);
  });

  it('lets DENY win over ALLOW, and DENY ALL deny everything', () => {
    const index = new AclIndex([acl({ operation: Op.ALL }), acl({ operation: Op.WRITE, permissionType: AclPermission.DENY })]);
    expect(index.authorize(strict, alice, Op.READ, ResourceType.TOPIC, 'orders')).toBe(true);
    expect(index.authorize(strict, alice, Op.WRITE, ResourceType.TOPIC, 'orders')).toBe(false);
    const denyAll = new AclIndex([acl({ operation: Op.READ }), acl({ resourceName: '*', operation: Op.ALL, permissionType: AclPermission.DENY })]);
    expect(denyAll.authorize(strict, alice, Op.READ, ResourceType.TOPIC, 'orders')).toBe(false);
    // A denied READ does not deny the DESCRIBE it would imply.
    const denyRead = new AclIndex([acl({ operation: Op.DESCRIBE }), acl({ operation: Op.READ, permissionType: AclPermission.DENY })]);
    expect(denyRead.authorize(strict, alice, Op.DESCRIBE, ResourceType.TOPIC, 'orders')).toBe(true);
  });

  it('matches wildcard names, principals and hosts, prefixed patterns and exact hosts', () => {
    expect(new AclIndex([acl({ resourceName: '*' })]).authorize(strict, alice, Op.READ, ResourceType.TOPIC, 'anything')).toBe(true);
    expect(new AclIndex([acl({ principal: 'User:*' })]).authorize(strict, bob, Op.READ, ResourceType.TOPIC, 'orders')).toBe(true);
    const prefixed = new AclIndex([acl({ resourceName: 'ord', patternType: PatternType.PREFIXED })]);
    expect(prefixed.authorize(strict, alice, Op.READ, ResourceType.TOPIC, 'orders')).toBe(true);
    expect(prefixed.authorize(strict, alice, Op.READ, ResourceType.TOPIC, 'ord')).toBe(true);
    expect(prefixed.authorize(strict, alice, Op.READ, ResourceType.TOPIC, 'or')).toBe(false);
    const hosts = new AclIndex([acl({ host: '10.0.0.1' })]);
    expect(hosts.authorize(strict, alice, Op.READ, ResourceType.TOPIC, 'orders')).toBe(false);
    expect(hosts.authorize(strict, { ...alice, host: '10.0.0.1' }, Op.READ, ResourceType.TOPIC, 'orders')).toBe(true);
  });

  it('follows allow.everyone.if.no.acl.found only where no ACL applies, and lets super users do anything', () => {
    const lenient = { superUsers: new Set(['User:root']), allowEveryoneIfNoAclFound: true };
    const index = new AclIndex([acl({})]);
    expect(index.authorize(lenient, bob, Op.WRITE, ResourceType.TOPIC, 'unguarded')).toBe(true);
    expect(index.authorize(strict, bob, Op.WRITE, ResourceType.TOPIC, 'unguarded')).toBe(false);
    // An ACL for alice on orders means bob is denied there even when lenient.
    expect(index.authorize(lenient, bob, Op.READ, ResourceType.TOPIC, 'orders')).toBe(false);
    const denyRoot = new AclIndex([acl({ principal: 'User:root', operation: Op.ALL, permissionType: AclPermission.DENY })]);
    expect(denyRoot.authorize(lenient, { principal: 'User:root', host: '1.2.3.4' }, Op.DELETE, ResourceType.TOPIC, 'orders')).toBe(true);
  });

  it('answers authorizeByResourceType (KIP-679): some allowed resource not cancelled by a deny', () => {
    expect(new AclIndex([acl({ operation: Op.WRITE, resourceName: 'a' })]).authorizeAny(strict, alice, Op.WRITE, ResourceType.TOPIC)).toBe(true);
    expect(new AclIndex([acl({ operation: Op.WRITE, resourceName: 'a' })]).authorizeAny(strict, bob, Op.WRITE, ResourceType.TOPIC)).toBe(false);
    const denied = new AclIndex([
      acl({ operation: Op.WRITE, resourceName: 'ab' }),
      acl({ operation: Op.WRITE, resourceName: 'a', patternType: PatternType.PREFIXED, permissionType: AclPermission.DENY }),
    ]);
    expect(denied.authorizeAny(strict, alice, Op.WRITE, ResourceType.TOPIC)).toBe(false);
    const wildcardDeny = new AclIndex([acl({ operation: Op.WRITE }), acl({ resourceName: '*', operation: Op.ALL, permissionType: AclPermission.DENY })]);
    expect(wildcardDeny.authorizeAny(strict, alice, Op.WRITE, ResourceType.TOPIC)).toBe(false);
  });
});

describe('filters', () => {
  const any: AclFilter = { resourceType: ResourceType.ANY, resourceName: null, patternType: PatternType.ANY, principal: null, host: null, operation: Op.ANY, permissionType: AclPermission.ANY };
  const literal = acl({});
  const wildcard = acl({ resourceName: '*' });
  const prefix = acl({ resourceName: 'ord', patternType: PatternType.PREFIXED });

  it('ANY matches every binding; names match exactly under ANY and exact pattern types', () => {
    for (const b of [literal, wildcard, prefix]) expect(filterMatches(any, b)).toBe(true);
    expect(filterMatches({ ...any, resourceName: 'orders' }, literal)).toBe(true);
    expect(filterMatches({ ...any, resourceName: 'orders' }, wildcard)).toBe(false);
    expect(filterMatches({ ...any, resourceName: 'ord', patternType: PatternType.PREFIXED }, prefix)).toBe(true);
    expect(filterMatches({ ...any, resourceName: 'ord', patternType: PatternType.LITERAL }, prefix)).toBe(false);
  });

  it('MATCH finds every binding that applies to the named resource', () => {
    const match = { ...any, resourceName: 'orders', patternType: PatternType.MATCH };
    expect([literal, wildcard, prefix].map((b) => filterMatches(match, b))).toEqual([true, true, true]);
    expect(filterMatches({ ...match, resourceName: 'payments' }, prefix)).toBe(false);
    expect(filterMatches({ ...match, resourceName: 'payments' }, wildcard)).toBe(true);
  });

  it('filters on principal, host, operation and permission', () => {
    expect(filterMatches({ ...any, principal: 'User:bob' }, literal)).toBe(false);
    expect(filterMatches({ ...any, host: '*' }, literal)).toBe(true);
    expect(filterMatches({ ...any, operation: Op.WRITE }, literal)).toBe(false);
    expect(filterMatches({ ...any, permissionType: AclPermission.DENY }, literal)).toBe(false);
  });
});

describe('validation', () => {
  it('refuses bindings Kafka refuses', () => {
    expect(bindingError(acl({}))).toBeNull();
    expect(bindingError(acl({ resourceType: ResourceType.ANY }))).toMatch(/resource type/);
    expect(bindingError(acl({ patternType: PatternType.MATCH }))).toMatch(/patternType/);
    expect(bindingError(acl({ operation: Op.ANY }))).toMatch(/operation/);
    expect(bindingError(acl({ permissionType: AclPermission.ANY }))).toMatch(/permissionType/);
    expect(bindingError(acl({ resourceName: '' }))).toMatch(/empty/);
    expect(bindingError(acl({ resourceType: ResourceType.CLUSTER, resourceName: 'other' }))).toMatch(/kafka-cluster/);
    expect(bindingError(acl({ principal: 'alice' }))).toMatch(/principal/);
    expect(bindingError(acl({ operation: 99 }))).toMatch(/operation/);
  });

  it('parses super.users', () => {
    expect([...parseSuperUsers(' User:a ; User:b;;')]).toEqual(['User:a', 'User:b']);
  });
});
