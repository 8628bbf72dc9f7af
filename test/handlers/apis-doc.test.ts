// docs/apis.md stays true: it lists every API key Kafka's broker advertises
// (the specs whose listeners include "broker"), with Kafka's versions, and
// marks as served exactly the APIs the registry serves, at the versions
// ApiVersions advertises.
import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { HandlerRegistry } from '../../src/handlers/registry.js';

const specDir = new URL('../../protocol-spec/messages/', import.meta.url);
const doc = readFileSync(new URL('../../docs/apis.md', import.meta.url), 'utf8');

interface Spec {
  apiKey: number;
  name: string;
  validVersions: string;
  listeners?: string[];
  latestVersionUnstable?: boolean;
}

const brokerApis = readdirSync(specDir)
  .filter((f) => f.endsWith('Request.json'))
  .map((f) => JSON.parse(readFileSync(new URL(f, specDir), 'utf8').replace(/^\s*\/\/.*$/gm, '')) as Spec)
  .filter((s) => s.listeners?.includes('broker'))
  .sort((a, b) => a.apiKey - b.apiKey);

const range = (min: number, max: number) => (min === max ? `${min}` : `${min}–${max}`);

/** The table rows: key → [name, Kafka's versions, pgkafka's versions]. */
const rows = new Map([...doc.matchAll(/^\| (\d+) \| (\w+) \| ([^|]+) \| ([^|]+) \|/gm)].map((m) => [Number(m[1]), [m[2], m[3]!.trim(), m[4]!.trim()]]));

describe('docs/apis.md', () => {
  it("lists every API Kafka's broker advertises, with its versions", () => {
    expect([...rows.keys()]).toEqual(brokerApis.map((s) => s.apiKey));
    for (const s of brokerApis) {
      const [min, max] = s.validVersions.split('-').map(Number);
      expect(rows.get(s.apiKey)!.slice(0, 2), s.name).toEqual([s.name.replace(/Request$/, ''), range(min!, max ?? min!)]);
    }
  });

  it('marks as served exactly what ApiVersions advertises', () => {
    const served = new Map(new HandlerRegistry().apiVersions().map((a) => [a.apiKey, range(a.minVersion, a.maxVersion)]));
    for (const [key, [name, , ours]] of rows) expect(ours, name).toBe(served.get(key) ?? '—');
    for (const key of served.keys()) expect(rows.has(key), `key ${key}`).toBe(true);
  });
});
