// One spec per message covering the union of Kafka 3.9.1's and 4.3.1's
// versions. Kafka 4.0 removed old versions (KIP-896); 3.9.1's definitions are
// the last to describe them. The two definitions must agree on the wire where
// their versions overlap: same fields in the same order, same types, same
// version, nullable and tagged ranges, same defaults. Everything that affects
// the bytes is compared; documentation keys (about, entityType, mapKey,
// ignorable, listeners, deprecatedVersions) are not.
import { type FieldSpec, type MessageSpec, type Range, parseRange } from './spec.js';

/**
 * Disagreements known to be harmless, by "Message.FieldPath" (a prefix of the
 * path covers its subfields), with the reason. Anything else is a generator
 * error. None of these messages is extended to 3.9-only versions.
 */
export const KNOWN_HARMLESS: ReadonlyMap<string, string> = new Map([
  // 4.x renamed v0-1's Candidate* fields Replica* (KIP-996); same types, same order, same bytes.
  ['VoteRequest.Topics.Partitions.Candidate', 'renamed Replica* in 4.x, same bytes'],
  ['VoteRequest.Topics.Partitions.Replica', 'renamed from Candidate* in 4.x, same bytes'],
  // KIP-1142 renamed the API ListConfigResources; v0 has the same bytes under other names.
  ['ListConfigResourcesResponse.ClientMetricsResources', 'renamed ConfigResources in 4.x, same bytes'],
  ['ListConfigResourcesResponse.ConfigResources', 'renamed from ClientMetricsResources in 4.x, same bytes'],
  // v0 was unstable in 3.9 (latestVersionUnstable, KIP-932 early access) and never served by a released broker.
  ['ReadShareGroupStateSummaryResponse.Results.Partitions.LeaderEpoch', '3.9 v0 was an unstable draft'],
]);

function knownHarmless(key: string): boolean {
  for (const k of KNOWN_HARMLESS.keys()) if (key === k || key.startsWith(k)) return true;
  return false;
}

type Versions = Set<number>;

function toSet(r: Range | null, within: Range | null): Versions {
  const out = new Set<number>();
  if (r === null || within === null) return out;
  const lo = Math.max(r.min, within.min);
  const hi = Math.min(r.max, within.max);
  for (let v = lo; v <= hi; v++) out.add(v);
  return out;
}

function only(s: Versions, keep: (v: number) => boolean): Versions {
  return new Set([...s].filter(keep));
}

function same(a: Versions, b: Versions): boolean {
  return a.size === b.size && [...a].every((v) => b.has(v));
}

function fmt(s: Versions): string {
  if (s.size === 0) return 'none';
  const xs = [...s].sort((x, y) => x - y);
  return xs.length === 1 ? `${xs[0]}` : `${xs[0]}-${xs[xs.length - 1]}`;
}

/** A version set written back as a spec range; open-ended when the 4.x range was. */
function toRange(s: Versions, openFrom: number | null, where: string): string | undefined {
  if (s.size === 0) return undefined;
  const xs = [...s].sort((x, y) => x - y);
  const lo = xs[0]!;
  const hi = xs[xs.length - 1]!;
  if (hi - lo + 1 !== xs.length) throw new Error(`${where}: merged versions ${xs.join(',')} are not one range`);
  if (openFrom !== null && hi >= openFrom) return `${lo}+`;
  return lo === hi ? `${lo}` : `${lo}-${hi}`;
}

interface Sides {
  oldValid: Range;
  newValid: Range;
  /** Highest version either side defines; open 4.x ranges stay open. */
  newMax: number;
}

class Merger {
  readonly errors: string[] = [];
  constructor(
    private readonly msg: string,
    private readonly sides: Sides,
  ) {}

  private overlap(v: number): boolean {
    const { oldValid: o, newValid: n } = this.sides;
    return v >= o.min && v <= o.max && v >= n.min && v <= n.max;
  }

  private fail(path: string, what: string): void {
    if (!knownHarmless(`${this.msg}.${path}`)) this.errors.push(`${this.msg}.${path}: ${what}`);
  }

  /** Merges one key's version range; checks the two agree within the overlap. */
  private range(path: string, key: string, o: string | undefined, n: string | undefined, present: { old: Versions; neu: Versions }): string | undefined {
    const os = toSet(parseRange(o), this.sides.oldValid);
    const ns = toSet(parseRange(n), this.sides.newValid);
    const ov = only(os, (v) => this.overlap(v) && present.old.has(v));
    const nv = only(ns, (v) => this.overlap(v) && present.neu.has(v));
    if (!same(ov, nv)) this.fail(path, `${key} ${fmt(ov)} (3.9) vs ${fmt(nv)} (4.x) in the overlap`);
    const merged = new Set([...ns, ...only(os, (v) => !this.overlap(v) && !(v >= this.sides.newValid.min && v <= this.sides.newValid.max))]);
    const open = n !== undefined && n.endsWith('+') ? Number(n.slice(0, -1)) : null;
    return toRange(merged, open, `${this.msg}.${path} ${key}`);
  }

  fields(path: string, olds: FieldSpec[] | undefined, news: FieldSpec[] | undefined): FieldSpec[] | undefined {
    if (olds === undefined && news === undefined) return undefined;
    const o = olds ?? [];
    const n = news ?? [];
    const oldByName = new Map(o.map((f, i) => [f.name, i]));
    const out: FieldSpec[] = [];
    let nextOld = 0;
    const takeOld = (upTo: number) => {
      for (; nextOld < upTo; nextOld++) out.push(this.field(`${path}${o[nextOld]!.name}`, o[nextOld]!, undefined));
    };
    for (const nf of n) {
      const oi = oldByName.get(nf.name);
      if (oi === undefined) {
        out.push(this.field(`${path}${nf.name}`, undefined, nf));
        continue;
      }
      if (oi < nextOld) {
        this.fail(`${path}${nf.name}`, 'field order differs');
        continue;
      }
      takeOld(oi);
      out.push(this.field(`${path}${nf.name}`, o[oi], nf));
      nextOld = oi + 1;
    }
    takeOld(o.length);
    return out;
  }

  private field(path: string, o: FieldSpec | undefined, n: FieldSpec | undefined): FieldSpec {
    const presentOld = toSet(parseRange(o?.versions), this.sides.oldValid);
    const presentNew = toSet(parseRange(n?.versions), this.sides.newValid);
    const present = { old: presentOld, neu: presentNew };
    const all = { old: toSet(this.sides.oldValid, this.sides.oldValid), neu: toSet(this.sides.newValid, this.sides.newValid) };
    const versions = this.range(path, 'versions', o?.versions, n?.versions, all);
    const base = n ?? o!;
    if (o !== undefined && n !== undefined) {
      const inOverlap = [...presentOld].some((v) => this.overlap(v));
      if (inOverlap && o.type !== n.type) this.fail(path, `type ${o.type} (3.9) vs ${n.type} (4.x)`);
      if (inOverlap && String(o.default) !== String(n.default)) this.fail(path, `default ${String(o.default)} (3.9) vs ${String(n.default)} (4.x)`);
      // 3.9.1's BrokerHeartbeatRequest writes one tag as the string "0".
      if (inOverlap && (o.tag === undefined ? undefined : Number(o.tag)) !== (n.tag === undefined ? undefined : Number(n.tag))) this.fail(path, `tag ${String(o.tag)} (3.9) vs ${String(n.tag)} (4.x)`);
      if (inOverlap && o.flexibleVersions !== n.flexibleVersions) this.fail(path, `flexibleVersions differ`);
    }
    const merged: FieldSpec = { ...base, versions: versions ?? 'none' };
    const nullable = this.range(path, 'nullableVersions', o?.nullableVersions, n?.nullableVersions, present);
    if (nullable === undefined) delete merged.nullableVersions;
    else merged.nullableVersions = nullable;
    const tagged = this.range(path, 'taggedVersions', o?.taggedVersions, n?.taggedVersions, present);
    if (tagged === undefined) delete merged.taggedVersions;
    else merged.taggedVersions = tagged;
    if (merged.tag === undefined && o?.tag !== undefined) merged.tag = o.tag;
    const sub = this.fields(`${path}.`, o?.fields, n?.fields);
    if (sub === undefined) delete merged.fields;
    else merged.fields = sub;
    return merged;
  }

  commonStructs(o: MessageSpec['commonStructs'], n: MessageSpec['commonStructs']): MessageSpec['commonStructs'] {
    if (o === undefined && n === undefined) return undefined;
    const names = [...new Set([...(n ?? []).map((s) => s.name), ...(o ?? []).map((s) => s.name)])];
    return names.map((name) => {
      const os = o?.find((s) => s.name === name);
      const ns = n?.find((s) => s.name === name);
      const all = { old: toSet(this.sides.oldValid, this.sides.oldValid), neu: toSet(this.sides.newValid, this.sides.newValid) };
      const versions = this.range(name, 'versions', os?.versions, ns?.versions, all) ?? 'none';
      return { name, versions, fields: this.fields(`${name}.`, os?.fields, ns?.fields) ?? [] };
    });
  }
}

/**
 * The 4.x spec extended down (or up) to the versions only 3.9.1 defines. Throws
 * with every disagreement in the overlap that is not a known-harmless one.
 */
export function mergeSpecs(old: MessageSpec, neu: MessageSpec): MessageSpec {
  const oldValid = parseRange(old.validVersions);
  const newValid = parseRange(neu.validVersions);
  if (oldValid === null || newValid === null) throw new Error(`${neu.name}: cannot merge a spec without versions`);
  if (old.type !== neu.type || old.apiKey !== neu.apiKey || ((old.type === 'header' || old.type === 'data') && old.name !== neu.name))
    throw new Error(`${neu.name}: the 3.9 and 4.x definitions are different messages`);
  if (oldValid.max < newValid.min - 1 || newValid.max < oldValid.min - 1) throw new Error(`${neu.name}: 3.9 ${old.validVersions} and 4.x ${neu.validVersions} leave a gap`);
  const m = new Merger(neu.name, { oldValid, newValid, newMax: newValid.max });
  const errors = m.errors;
  const flexOld = parseRange(old.flexibleVersions);
  const flexNew = parseRange(neu.flexibleVersions);
  if ((flexOld?.min ?? null) !== (flexNew?.min ?? null)) errors.push(`${neu.name}: flexibleVersions ${old.flexibleVersions} (3.9) vs ${neu.flexibleVersions} (4.x)`);
  const fields = m.fields('', old.fields, neu.fields);
  const commonStructs = m.commonStructs(old.commonStructs, neu.commonStructs);
  if (errors.length > 0) throw new Error(`the Kafka 3.9 and 4.x definitions disagree:\n  ${errors.join('\n  ')}`);
  const min = Math.min(oldValid.min, newValid.min);
  const max = Math.max(oldValid.max, newValid.max);
  const out: MessageSpec = { ...neu, validVersions: min === max ? `${min}` : `${min}-${max}`, kafka4ValidVersions: neu.validVersions };
  if (fields !== undefined) out.fields = fields;
  if (commonStructs !== undefined) out.commonStructs = commonStructs;
  return out;
}

/**
 * 3.9.1 definitions whose 3.9-only versions are not generated, with the reason.
 * Their overlap with 4.x is still checked.
 */
export const NOT_EXTENDED: ReadonlyMap<string, string> = new Map([
  ['RequestHeader', 'v0 (no ClientId) only carried ControlledShutdown v0, a ZooKeeper-mode API 4.x removed'],
  ['ShareGroupHeartbeatRequest', 'v0 was KIP-932 early access, unstable in 3.9; 4.1 replaced it with v1'],
  ['ShareGroupHeartbeatResponse', 'v0 was KIP-932 early access, unstable in 3.9; 4.1 replaced it with v1'],
  ['ShareGroupDescribeRequest', 'v0 was KIP-932 early access, unstable in 3.9; 4.1 replaced it with v1'],
  ['ShareGroupDescribeResponse', 'v0 was KIP-932 early access, unstable in 3.9; 4.1 replaced it with v1'],
  ['ShareFetchRequest', 'v0 was KIP-932 early access, unstable in 3.9; 4.1 replaced it with v1'],
  ['ShareFetchResponse', 'v0 was KIP-932 early access, unstable in 3.9; 4.1 replaced it with v1'],
  ['ShareAcknowledgeRequest', 'v0 was KIP-932 early access, unstable in 3.9; 4.1 replaced it with v1'],
  ['ShareAcknowledgeResponse', 'v0 was KIP-932 early access, unstable in 3.9; 4.1 replaced it with v1'],
]);

/**
 * The specs to generate from: each 4.x definition, extended to the versions
 * only its 3.9.1 counterpart defines. Requests and responses pair by API key
 * (4.x renamed ListClientMetricsResources), headers and data schemas by name.
 * APIs 4.x defines as "none" (the ZooKeeper-mode LeaderAndIsr, StopReplica,
 * UpdateMetadata, ControlledShutdown) stay out: no broker of this kind serves them.
 */
export function unionSpecs(olds: MessageSpec[], news: MessageSpec[]): MessageSpec[] {
  const key = (s: MessageSpec) => (s.type === 'request' || s.type === 'response' ? `${s.type}:${s.apiKey}` : s.name);
  const oldByKey = new Map(olds.map((s) => [key(s), s]));
  const errors: string[] = [];
  const out = news.map((neu) => {
    const old = oldByKey.get(key(neu));
    if (old === undefined || parseRange(neu.validVersions) === null || parseRange(old.validVersions) === null) return neu;
    try {
      const merged = mergeSpecs(old, neu);
      const o = parseRange(old.validVersions)!;
      const n = parseRange(neu.validVersions)!;
      const extends4x = o.min < n.min || o.max > n.max;
      return extends4x && !NOT_EXTENDED.has(neu.name) ? merged : neu;
    } catch (e) {
      errors.push((e as Error).message);
      return neu;
    }
  });
  if (errors.length > 0) throw new Error(errors.join('\n'));
  return out;
}
