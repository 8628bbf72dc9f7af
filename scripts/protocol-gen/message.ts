// Per-message code: interfaces, default helpers and codecs of every struct, and
// the response shape the error-response builder echoes into.
import type { EchoStruct } from '../error-responses.js';
import { cond } from './cond.js';
import { defaultExpr, nonDefaultExpr } from './defaults.js';
import { genRead } from './reader.js';
import { type Ctx, type Struct, camel, elemType, fieldInfo, isArray, isStructType, structOf, tsType } from './structs.js';
import { genWrite } from './writer.js';

function genInterface(ctx: Ctx, s: Struct): string[] {
  const out = [`export interface ${s.tsName} {`];
  for (const f of s.fields) out.push(`  ${camel(f.name)}: ${tsType(ctx, f)};`);
  out.push('  unknownTaggedFields?: TaggedField[];', '}');
  return out;
}

function genDefault(ctx: Ctx, s: Struct): string[] {
  const out = [`function default${s.tsName}(): ${s.tsName} {`, '  return {'];
  for (const f of s.fields) out.push(`    ${camel(f.name)}: ${defaultExpr(ctx, f)},`);
  out.push('  };', '}');
  return out;
}

function genIsDefault(ctx: Ctx, s: Struct): string[] {
  const hull = s.hull!;
  const out = [`function isDefault${s.tsName}(m: Input<${s.tsName}>, version: number): boolean {`];
  for (const f of s.fields) {
    const fi = fieldInfo(s, f);
    const c = cond(fi.present, hull);
    if (c === false) continue;
    const nd = nonDefaultExpr(ctx, f, `m.${fi.prop}`);
    out.push(`  if (${c === true ? '' : `${c} && `}${nd}) return false;`);
  }
  out.push('  if (m.unknownTaggedFields !== undefined && m.unknownTaggedFields.length > 0) return false;');
  out.push('  return true;', '}');
  return out;
}

export function genMessage(ctx: Ctx): { interfaces: string[]; functions: string[] } {
  const interfaces: string[] = [];
  const functions: string[] = [];
  for (const s of ctx.order) {
    const top = s.specName === '';
    interfaces.push(...genInterface(ctx, s), '');
    if (s.needsDefault) functions.push(...genDefault(ctx, s), '');
    if (s.hull === null) continue; // unreachable struct: no codec functions
    if (s.needsIsDefault) functions.push(...genIsDefault(ctx, s), '');
    functions.push(...genRead(ctx, s, top), '');
    functions.push(...genWrite(ctx, s, top), '');
  }
  return { interfaces, functions };
}

/** A response struct as the error-response builder sees it (scripts/error-responses.ts). */
export function echoStruct(ctx: Ctx, s: Struct): EchoStruct {
  const fields = new Map<string, EchoStruct | 'scalar' | 'array'>();
  for (const f of s.fields) {
    const t = elemType(f.type);
    fields.set(camel(f.name), isArray(f) ? (isStructType(t) ? echoStruct(ctx, structOf(ctx, f)) : 'array') : 'scalar');
  }
  return { tsName: s.tsName, fields, hasErrorCode: s.fields.some((f) => f.name === 'ErrorCode') };
}
