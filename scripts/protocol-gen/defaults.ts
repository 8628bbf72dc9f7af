// Default values: what decoders fill in for absent fields and writers compare against.
import type { FieldSpec } from './spec.js';
import { type Ctx, elemType, isArray, isStructType, structOf } from './structs.js';

function intLiteral(d: string | number | boolean | undefined, f: FieldSpec): string {
  if (d === undefined || d === '') return '0';
  const s = String(d).trim();
  const neg = s.startsWith('-');
  const body = neg ? s.slice(1) : s;
  const v = /^0x/i.test(body) ? parseInt(body.slice(2), 16) : Number(body);
  if (!Number.isFinite(v)) throw new Error(`bad default ${s} for ${f.name}`);
  return String(neg ? -v : v);
}

function bigLiteral(d: string | number | boolean | undefined, f: FieldSpec): string {
  if (d === undefined || d === '') return '0n';
  const s = String(d).trim();
  const neg = s.startsWith('-');
  const body = neg ? s.slice(1) : s;
  let v: bigint;
  try {
    v = BigInt(body);
  } catch {
    throw new Error(`bad default ${s} for ${f.name}`);
  }
  return `${neg ? -v : v}n`;
}

/** Default value expression for a field (for decoders and writers). */
export function defaultExpr(ctx: Ctx, f: FieldSpec): string {
  const t = elemType(f.type);
  const d = f.default;
  if (isArray(f)) return d === 'null' ? 'null' : '[]';
  if (isStructType(t)) return d === 'null' ? 'null' : `default${structOf(ctx, f).tsName}()`;
  switch (t) {
    case 'int8':
    case 'int16':
    case 'uint16':
    case 'int32':
    case 'uint32':
    case 'float64':
      return intLiteral(d, f);
    case 'int64':
      return bigLiteral(d, f);
    case 'bool':
      return String(d).toLowerCase() === 'true' ? 'true' : 'false';
    case 'uuid':
      return 'ZERO_UUID';
    case 'string':
      return d === 'null' ? 'null' : JSON.stringify(d === undefined ? '' : String(d));
    case 'bytes':
      return d === 'null' ? 'null' : 'EMPTY';
    case 'records':
      return 'null';
  }
  throw new Error(`no default for ${f.type}`);
}

/** Expression: true when input value `v` (maybe undefined) differs from the default. */
export function nonDefaultExpr(ctx: Ctx, f: FieldSpec, v: string): string {
  const t = elemType(f.type);
  const d = defaultExpr(ctx, f);
  if (isArray(f) || t === 'bytes' || t === 'records') {
    if (d === 'null') return `${v} != null`;
    return `${v} !== undefined && (${v} === null || ${v}.length > 0)`;
  }
  if (isStructType(t)) {
    if (d === 'null') return `${v} != null`;
    return `${v} !== undefined && (${v} === null || !isDefault${structOf(ctx, f).tsName}(${v}, version))`;
  }
  return `${v} !== undefined && ${v} !== ${d}`;
}
