// The handler registry refuses what kfake's regKey panics on: two handlers
// for one API key, and a version range beyond the codec's. The broker's own
// handlers pass, and ApiVersions advertises exactly their ranges.
import { describe, expect, it } from 'vitest';
import { handlers, HandlerRegistry } from '../../src/handlers/registry.js';
import type { Handler } from '../../src/handlers/types.js';
import { HeartbeatApi, ProduceApi } from '../../src/protocol/messages/index.js';

const handle = async () => null;
const heartbeat = (minVersion: number, maxVersion: number): Handler => ({ codec: HeartbeatApi, minVersion, maxVersion, handle });

describe('HandlerRegistry', () => {
  it("takes the broker's handlers and advertises their ranges", () => {
    const registry = new HandlerRegistry();
    expect(registry.apiVersions()).toHaveLength(handlers.length);
    expect(registry.apiVersions().find((a) => a.apiKey === HeartbeatApi.apiKey)).toEqual({ apiKey: 12, minVersion: 0, maxVersion: 4 });
  });

  it('refuses two handlers for one API key', () => {
    expect(() => new HandlerRegistry([heartbeat(0, 4), heartbeat(0, 2)])).toThrow(/two handlers for API key 12 \(Heartbeat and Heartbeat\)/);
  });

  it("refuses a version range beyond the codec's", () => {
    expect(() => new HandlerRegistry([heartbeat(0, HeartbeatApi.maxVersion + 1)])).toThrow(/Heartbeat handler serves versions 0-5, beyond its codec's 0-4/);
    expect(() => new HandlerRegistry([{ ...heartbeat(0, 4), codec: ProduceApi, minVersion: 2, maxVersion: ProduceApi.maxVersion + 1 }])).toThrow(/beyond its codec's 0-13/);
  });

  it('refuses an empty range, and an advertised minimum above the served one', () => {
    expect(() => new HandlerRegistry([heartbeat(3, 2)])).toThrow(/empty or malformed version range 3-2/);
    expect(() => new HandlerRegistry([{ ...heartbeat(1, 4), advertisedMinVersion: 2 }])).toThrow(/advertises from v2, above the v1 it serves/);
  });
});
