// The structs of one message (top level, nested, common), their version hulls,
// TypeScript names and types, and what each field looks like on the wire.
import { type FieldSpec, type MessageSpec, type Range, intersect, parseRange } from './spec.js';

const PRIMS = new Set(['int8', 'int16', 'uint16', 'int32', 'uint32', 'int64', 'float64', 'bool', 'uuid', 'string', 'bytes', 'records']);

export interface Struct {
  specName: string;
  tsName: string;
  fields: FieldSpec[];
  hull: Range | null;
  needsDefault: boolean;
  needsIsDefault: boolean;
}

export interface Ctx {
  msg: MessageSpec;
  flex: Range | null;
  structs: Map<string, Struct>;
  order: Struct[];
}

export function camel(name: string): string {
  return name[0]!.toLowerCase() + name.slice(1);
}

export function kebab(name: string): string {
  return name
    .replace(/KRaft/g, 'Kraft')
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1-$2')
    .toLowerCase();
}

export function elemType(t: string): string {
  return t.startsWith('[]') ? t.slice(2) : t;
}

export function isArray(f: FieldSpec): boolean {
  return f.type.startsWith('[]');
}

export function isStructType(t: string): boolean {
  return !PRIMS.has(t);
}

export function structOf(ctx: Ctx, f: FieldSpec): Struct {
  const s = ctx.structs.get(elemType(f.type));
  if (!s) throw new Error(`${ctx.msg.name}: unknown struct ${f.type}`);
  return s;
}

export function collectStructs(msg: MessageSpec): Ctx {
  const ctx: Ctx = { msg, flex: parseRange(msg.flexibleVersions), structs: new Map(), order: [] };
  const add = (specName: string, fields: FieldSpec[], top: boolean) => {
    if (ctx.structs.has(specName)) throw new Error(`${msg.name}: struct ${specName} defined twice`);
    const s: Struct = {
      specName,
      tsName: top ? msg.name : msg.name + specName,
      fields,
      hull: null,
      needsDefault: false,
      needsIsDefault: false,
    };
    ctx.structs.set(specName, s);
    ctx.order.push(s);
  };
  add('', msg.fields ?? [], true);
  const walk = (fields: FieldSpec[]) => {
    for (const f of fields) {
      if (f.fields) {
        add(elemType(f.type), f.fields, false);
        walk(f.fields);
      }
    }
  };
  walk(msg.fields ?? []);
  for (const cs of msg.commonStructs ?? []) {
    add(cs.name, cs.fields, false);
    walk(cs.fields);
  }
  // Version hulls: where each struct can be reached.
  const top = ctx.structs.get('')!;
  const valid = parseRange(msg.validVersions)!;
  const start: Range = msg.type === 'header' ? { min: 0, max: valid.max } : valid;
  const visit = (s: Struct, r: Range) => {
    const old = s.hull;
    const h = old === null ? r : { min: Math.min(old.min, r.min), max: Math.max(old.max, r.max) };
    if (old !== null && old.min === h.min && old.max === h.max) return;
    s.hull = h;
    for (const f of s.fields) {
      const t = elemType(f.type);
      if (!isStructType(t)) continue;
      const fr = intersect(parseRange(f.versions), h);
      if (fr !== null) visit(structOf(ctx, f), fr);
    }
  };
  visit(top, start);
  // Which structs need default() and isDefault() helpers.
  const markDefault = (s: Struct) => {
    if (s.needsDefault) return;
    s.needsDefault = true;
    for (const f of s.fields) if (!isArray(f) && isStructType(f.type)) markDefault(structOf(ctx, f));
  };
  const markIsDefault = (s: Struct) => {
    if (s.needsIsDefault) return;
    s.needsIsDefault = true;
    for (const f of s.fields) if (!isArray(f) && isStructType(f.type)) markIsDefault(structOf(ctx, f));
  };
  for (const s of ctx.order) {
    for (const f of s.fields) {
      if (isArray(f) || !isStructType(f.type)) continue;
      const sub = structOf(ctx, f);
      if (f.default !== 'null') markDefault(sub);
      if (f.tag !== undefined && f.default !== 'null') markIsDefault(sub);
    }
  }
  return ctx;
}

function nullableAny(f: FieldSpec): boolean {
  return parseRange(f.nullableVersions) !== null;
}

export function primTs(t: string): string {
  switch (t) {
    case 'int8':
    case 'int16':
    case 'uint16':
    case 'int32':
    case 'uint32':
    case 'float64':
      return 'number';
    case 'int64':
      return 'bigint';
    case 'bool':
      return 'boolean';
    case 'uuid':
    case 'string':
      return 'string';
    case 'bytes':
      return 'Buffer';
    case 'records':
      return 'Records';
  }
  throw new Error(`not a primitive: ${t}`);
}

export function tsType(ctx: Ctx, f: FieldSpec): string {
  const t = elemType(f.type);
  const base = isStructType(t) ? structOf(ctx, f).tsName : primTs(t);
  if (isArray(f)) return `${base}[]` + (nullableAny(f) ? ' | null' : '');
  if (t === 'records') return 'Records';
  return base + (nullableAny(f) ? ' | null' : '');
}

export interface FieldInfo {
  f: FieldSpec;
  prop: string;
  local: string;
  present: Range | null; // versions on the wire (normal or tagged)
  tagged: Range | null; // versions where it is tagged
}

export function fieldInfo(s: Struct, f: FieldSpec): FieldInfo {
  const present = intersect(parseRange(f.versions), s.hull);
  let tagged: Range | null = null;
  if (f.tag !== undefined) {
    tagged = intersect(parseRange(f.taggedVersions), present);
    const pv = parseRange(f.versions);
    const tv = parseRange(f.taggedVersions);
    if (pv === null || tv === null || pv.min !== tv.min || pv.max !== tv.max) {
      throw new Error(`${f.name}: versions and taggedVersions differ; not supported`);
    }
  }
  return { f, prop: camel(f.name), local: '_' + camel(f.name), present, tagged };
}

export function flexRange(ctx: Ctx, f: FieldSpec): Range | null {
  return f.flexibleVersions !== undefined ? parseRange(f.flexibleVersions) : ctx.flex;
}
