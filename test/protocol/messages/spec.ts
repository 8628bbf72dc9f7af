// Test-side reading of protocol-spec/messages, independent of the generator:
// random values per version, and the value a decoder should produce for them.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

export interface FieldSpec {
  name: string;
  type: string;
  versions: string;
  nullableVersions?: string;
  taggedVersions?: string;
  tag?: number;
  default?: string | number | boolean;
  flexibleVersions?: string;
  fields?: FieldSpec[];
}

export interface MessageSpec {
  apiKey?: number;
  type: string;
  name: string;
  validVersions: string;
  flexibleVersions?: string;
  latestVersionUnstable?: boolean;
  fields?: FieldSpec[];
  commonStructs?: { name: string; fields: FieldSpec[] }[];
}

const SPEC_DIR = join(import.meta.dirname, '..', '..', '..', 'protocol-spec', 'messages');
/** Kafka 3.9.1's definitions: the only description of the versions Kafka 4.0 removed. */
const OLD_SPEC_DIR = join(import.meta.dirname, '..', '..', '..', 'protocol-spec', 'kafka-3.9', 'messages');

export function loadSpecs(dir: string = SPEC_DIR): Map<string, MessageSpec> {
  const out = new Map<string, MessageSpec>();
  for (const f of readdirSync(dir).sort()) {
    if (!f.endsWith('.json')) continue;
    const text = readFileSync(join(dir, f), 'utf8')
      .split('\n')
      .filter((l) => !l.trim().startsWith('//'))
      .join('\n');
    const m = JSON.parse(text) as MessageSpec;
    out.set(m.name, m);
  }
  return out;
}

/** Kafka 3.9.1's requests and responses, by "request:<apiKey>" / "response:<apiKey>" (4.x renamed one API). */
export function loadOldSpecs(): Map<string, MessageSpec> {
  const out = new Map<string, MessageSpec>();
  for (const m of loadSpecs(OLD_SPEC_DIR).values()) if (m.type === 'request' || m.type === 'response') out.set(`${m.type}:${m.apiKey}`, m);
  return out;
}

export function inRange(spec: string | undefined, v: number): boolean {
  if (spec === undefined || spec === 'none') return false;
  if (spec.endsWith('+')) return v >= Number(spec.slice(0, -1));
  const [a, b] = spec.split('-');
  return v >= Number(a) && v <= Number(b ?? a);
}

export function rangeOf(spec: string): [number, number] | null {
  if (spec === 'none') return null;
  const [a, b] = spec.split('-');
  return [Number(a), Number(b ?? a)];
}

/** PRNG (mulberry32). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const STRINGS = ['', 'a', 'topic-1', 'héllo wörld', '日本語のトピック', 'emoji 🎉🚀', 'x'.repeat(40), '__consumer_offsets'];

type Struct = FieldSpec[];

export class SpecModel {
  private structs = new Map<string, Struct>();
  constructor(readonly msg: MessageSpec) {
    const walk = (fields: FieldSpec[]) => {
      for (const f of fields) {
        if (f.fields) {
          this.structs.set(f.type.replace(/^\[\]/, ''), f.fields);
          walk(f.fields);
        }
      }
    };
    walk(msg.fields ?? []);
    for (const cs of msg.commonStructs ?? []) {
      this.structs.set(cs.name, cs.fields);
      walk(cs.fields);
    }
  }

  private struct(f: FieldSpec): Struct {
    const s = this.structs.get(f.type.replace(/^\[\]/, ''));
    if (!s) throw new Error(`no struct ${f.type}`);
    return s;
  }

  private isFlex(v: number): boolean {
    return inRange(this.msg.flexibleVersions, v);
  }

  defaultOf(f: FieldSpec): unknown {
    const d = f.default;
    if (f.type.startsWith('[]')) return d === 'null' ? null : [];
    switch (f.type) {
      case 'int8':
      case 'int16':
      case 'uint16':
      case 'int32':
      case 'float64': {
        if (d === undefined) return 0;
        const s = String(d);
        return s.startsWith('0x') ? parseInt(s.slice(2), 16) : Number(s);
      }
      case 'int64':
        return d === undefined ? 0n : BigInt(String(d));
      case 'bool':
        return String(d).toLowerCase() === 'true';
      case 'uuid':
        return '00000000-0000-0000-0000-000000000000';
      case 'string':
        return d === 'null' ? null : d === undefined ? '' : String(d);
      case 'bytes':
        return d === 'null' ? null : Buffer.alloc(0);
      case 'records':
        return null;
    }
    return d === 'null' ? null : this.defaultStruct(this.struct(f));
  }

  defaultStruct(s: Struct): Record<string, unknown> {
    const o: Record<string, unknown> = {};
    for (const f of s) o[camel(f.name)] = this.defaultOf(f);
    return o;
  }

  /** A random value with every field of every version. */
  random(v: number, rnd: () => number, fields: Struct = this.msg.fields ?? [], depth = 0): Record<string, unknown> {
    const o: Record<string, unknown> = {};
    const knownTags = new Set<number>();
    for (const f of fields) {
      if (f.tag !== undefined) knownTags.add(f.tag);
      o[camel(f.name)] = this.randomField(f, v, rnd, depth);
    }
    if (this.isFlex(v) && rnd() < 0.35) {
      const tags = new Set<number>();
      const n = 1 + Math.floor(rnd() * 2);
      for (let i = 0; i < n; i++) {
        const t = Math.floor(rnd() * 40);
        if (!knownTags.has(t)) tags.add(t);
      }
      const list = [...tags].sort((a, b) => a - b).map((tag) => ({ tag, data: randBytes(rnd, 6) }));
      if (list.length > 0) o.unknownTaggedFields = list;
    }
    return o;
  }

  private randomField(f: FieldSpec, v: number, rnd: () => number, depth: number): unknown {
    const nullable = inRange(f.nullableVersions, v);
    if (nullable && rnd() < 0.2) return null;
    // Sometimes leave the value at its default (tests the "only when != default" tagged rule).
    if (f.tag !== undefined && rnd() < 0.25) return this.defaultOf(f);
    if (f.type.startsWith('[]')) {
      const et = f.type.slice(2);
      const r = rnd();
      const n = r < 0.2 ? 0 : r < 0.6 ? 1 : depth > 2 ? 1 : 2 + Math.floor(rnd() * 2);
      const a: unknown[] = [];
      for (let i = 0; i < n; i++) {
        a.push(this.structs.has(et) && !PRIM.has(et) ? this.random(v, rnd, this.struct(f), depth + 1) : randPrim(et, rnd));
      }
      return a;
    }
    if (!PRIM.has(f.type)) return this.random(v, rnd, this.struct(f), depth + 1);
    return randPrim(f.type, rnd);
  }

  /** What a decoder of version v yields for a value written at version v. */
  normalize(value: Record<string, unknown>, v: number, fields: Struct = this.msg.fields ?? []): Record<string, unknown> {
    const o: Record<string, unknown> = {};
    for (const f of fields) {
      const k = camel(f.name);
      const x = value[k];
      if (!inRange(f.versions, v) || x === undefined) {
        o[k] = this.defaultOf(f);
        continue;
      }
      if (x === null) {
        o[k] = null;
      } else if (f.type.startsWith('[]')) {
        const et = f.type.slice(2);
        o[k] = (x as unknown[]).map((e) => (PRIM.has(et) ? e : this.normalize(e as Record<string, unknown>, v, this.struct(f))));
      } else if (f.type === 'records') {
        o[k] = Array.isArray(x) ? Buffer.concat(x as Buffer[]) : x;
      } else if (!PRIM.has(f.type)) {
        o[k] = this.normalize(x as Record<string, unknown>, v, this.struct(f));
      } else {
        o[k] = x;
      }
    }
    if (this.isFlex(v) && value.unknownTaggedFields !== undefined) {
      const u = value.unknownTaggedFields as unknown[];
      if (u.length > 0) o.unknownTaggedFields = u;
    }
    return o;
  }
}

const PRIM = new Set(['int8', 'int16', 'uint16', 'int32', 'int64', 'float64', 'bool', 'uuid', 'string', 'bytes', 'records']);

export function camel(s: string): string {
  return s[0]!.toLowerCase() + s.slice(1);
}

function randInt(rnd: () => number, bits: number, signed: boolean): number {
  const r = rnd();
  if (r < 0.15) return 0;
  if (r < 0.25) return signed ? -1 : 2 ** bits - 1;
  if (r < 0.3) return signed ? -(2 ** (bits - 1)) : 0;
  if (r < 0.35) return signed ? 2 ** (bits - 1) - 1 : 1;
  const u = Math.floor(rnd() * 2 ** bits);
  return signed ? u - 2 ** (bits - 1) : u;
}

function randBytes(rnd: () => number, max: number): Buffer {
  const n = Math.floor(rnd() * (max + 1));
  const b = Buffer.alloc(n);
  for (let i = 0; i < n; i++) b[i] = Math.floor(rnd() * 256);
  return b;
}

function randPrim(t: string, rnd: () => number): unknown {
  switch (t) {
    case 'int8':
      return randInt(rnd, 8, true);
    case 'int16':
      return randInt(rnd, 16, true);
    case 'uint16':
      return randInt(rnd, 16, false);
    case 'int32':
      return randInt(rnd, 32, true);
    case 'int64': {
      const r = rnd();
      if (r < 0.1) return -1n;
      if (r < 0.15) return -(2n ** 63n);
      if (r < 0.2) return 2n ** 63n - 1n;
      return BigInt.asIntN(64, (BigInt(Math.floor(rnd() * 2 ** 32)) << 32n) | BigInt(Math.floor(rnd() * 2 ** 32)));
    }
    case 'float64':
      return rnd() < 0.2 ? 0 : (rnd() - 0.5) * 1e9;
    case 'bool':
      return rnd() < 0.5;
    case 'uuid': {
      if (rnd() < 0.15) return '00000000-0000-0000-0000-000000000000';
      const h = randBytesN(rnd, 16).toString('hex');
      return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
    }
    case 'string':
      return STRINGS[Math.floor(rnd() * STRINGS.length)]!;
    case 'bytes':
      return randBytes(rnd, 24);
    case 'records': {
      const r = rnd();
      if (r < 0.3) return [randBytes(rnd, 30), randBytesN(rnd, 1500), randBytes(rnd, 10)];
      return randBytes(rnd, 60);
    }
  }
  throw new Error(`prim ${t}`);
}

function randBytesN(rnd: () => number, n: number): Buffer {
  const b = Buffer.alloc(n);
  for (let i = 0; i < n; i++) b[i] = Math.floor(rnd() * 256);
  return b;
}

/** Every error-code field present at `version` in `m` (a decoded message of `msg`), depth first, the top level last. */
export function errorCodes(msg: MessageSpec, m: Record<string, unknown>, version: number, fields: FieldSpec[] = msg.fields ?? [], out: number[] = []): number[] {
  for (const f of fields) {
    if (!inRange(f.versions, version)) continue;
    const v = m[camel(f.name)];
    if (f.fields && Array.isArray(v)) for (const e of v) errorCodes(msg, e as Record<string, unknown>, version, f.fields, out);
  }
  // CreateTopics' TopicConfigErrorCode is about DescribeConfigs of the new topic, not the request.
  for (const f of fields) if (inRange(f.versions, version) && /ErrorCode$/.test(f.name) && f.name !== 'TopicConfigErrorCode') out.push(m[camel(f.name)] as number);
  return out;
}
