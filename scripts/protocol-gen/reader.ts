// Reader emission: a `read<Struct>(r, version)` per struct, straight-line on the version.
import { type Cond, choose, chooseStmts, cond, guard, indent } from './cond.js';
import { defaultExpr } from './defaults.js';
import { type Range, parseRange } from './spec.js';
import { type Ctx, type FieldInfo, type Struct, elemType, fieldInfo, flexRange, isArray, isStructType, primTs, structOf, tsType } from './structs.js';

/** Reader calls for fixed-size scalars; the writer's methods have the same names. */
export const READ_INT: Record<string, string> = {
  int8: 'int8()',
  int16: 'int16()',
  uint16: 'uint16()',
  int32: 'int32()',
  uint32: 'uint32()',
  int64: 'int64()',
  float64: 'float64()',
  bool: 'bool()',
  uuid: 'uuid()',
};

/** Read expression for a scalar (non-array, non-struct) value. */
function readScalar(t: string, rv: string, fx: Cond, nl: Cond): string {
  if (READ_INT[t]) return `${rv}.${READ_INT[t]}`;
  const pick = (flex: boolean, nullable: boolean): string => {
    const kind = t === 'string' ? 'String' : 'Bytes';
    let m = flex ? `compact${nullable ? 'Nullable' : ''}${kind}` : nullable ? `nullable${kind}` : kind.toLowerCase();
    if (!flex && !nullable) m = kind === 'String' ? 'string' : 'bytes';
    return `${rv}.${m}()`;
  };
  return choose(fx, choose(nl, pick(true, true), pick(true, false)), choose(nl, pick(false, true), pick(false, false)));
}

/**
 * Statements assigning the field's value (read from `rv`) to `target`,
 * valid within context range `ctxR` (where the field is present).
 */
function readStmts(ctx: Ctx, fi: FieldInfo, ctxR: Range, rv: string, target: string): string[] {
  const f = fi.f;
  const t = elemType(f.type);
  const fx = cond(flexRange(ctx, f), ctxR);
  const nl = cond(parseRange(f.nullableVersions), ctxR);
  if (isArray(f)) {
    const elemTs = isStructType(t) ? structOf(ctx, f).tsName : primTs(t);
    const elemRead = isStructType(t) ? `read${structOf(ctx, f).tsName}(${rv}, version)` : readScalar(t, rv, fx, false);
    const n = `${target.replace(/[^A-Za-z0-9]/g, '')}N`;
    return [
      `const ${n} = ${choose(fx, `${rv}.compactArrayLength()`, `${rv}.arrayLength()`)};`,
      `if (${n} < 0) {`,
      ...indent(chooseStmts(nl, [`${target} = null;`], [`${rv}.fail("null for non-nullable array ${f.name}");`, `${target} = [];`])),
      '} else {',
      `  const a: ${elemTs}[] = [];`,
      `  for (let i = 0; i < ${n}; i++) a.push(${elemRead});`,
      `  ${target} = a;`,
      '}',
    ];
  }
  if (isStructType(t)) {
    const s = structOf(ctx, f);
    const rd = `read${s.tsName}(${rv}, version)`;
    return chooseStmts(nl, [`${target} = ${rv}.int8() < 0 ? null : ${rd};`], [`${target} = ${rd};`]);
  }
  if (t === 'records') {
    const pick = (flex: boolean, nullable: boolean) => `${rv}.${flex ? (nullable ? 'compactNullableBytes' : 'compactBytes') : nullable ? 'nullableBytes' : 'bytes'}()`;
    return [`${target} = ${choose(fx, choose(nl, pick(true, true), pick(true, false)), choose(nl, pick(false, true), pick(false, false)))};`];
  }
  return [`${target} = ${readScalar(t, rv, fx, nl)};`];
}

export function genRead(ctx: Ctx, s: Struct, exported: boolean): string[] {
  const hull = s.hull!;
  const infos = s.fields.map((f) => fieldInfo(s, f));
  const body: string[] = [];
  for (const fi of infos) {
    const ts = tsType(ctx, fi.f);
    const d = defaultExpr(ctx, fi.f);
    if (fi.present === null || fi.tagged !== null) {
      body.push(`let ${fi.local}: ${ts} = ${d};`);
      continue;
    }
    const c = cond(fi.present, hull);
    const stmts = readStmts(ctx, fi, fi.present, 'r', fi.local);
    if (c === true) {
      if (stmts.length === 1 && stmts[0]!.startsWith(`${fi.local} = `)) {
        body.push(`const ${fi.local}: ${ts} = ${stmts[0]!.slice(fi.local.length + 3)}`);
      } else {
        body.push(`let ${fi.local}: ${ts};`, ...stmts);
      }
    } else {
      body.push(`let ${fi.local}: ${ts} = ${d};`, ...guard(c, stmts));
    }
  }
  const flexC = cond(ctx.flex, hull);
  const hasUnknown = flexC !== false;
  if (hasUnknown) {
    body.push('let _unknown: TaggedField[] | undefined;');
    const tagged = infos.filter((fi) => fi.tagged !== null).sort((a, b) => a.f.tag! - b.f.tag!);
    const loop: string[] = ['const _nt = r.uvarint();', 'for (let _i = 0; _i < _nt && r.error === null; _i++) {', '  const _tag = r.uvarint();', '  const _size = r.uvarint();'];
    const unknownPush = '(_unknown ??= []).push({ tag: _tag, data: r.raw(_size) });';
    if (tagged.length === 0) {
      loop.push(`  ${unknownPush}`);
    } else {
      loop.push('  switch (_tag) {');
      for (const fi of tagged) {
        const tc = cond(fi.tagged, hull);
        const rd = ['const _s = r.sub(_size);', ...readStmts(ctx, fi, fi.tagged!, '_s', fi.local), `r.endSub(_s, ${fi.f.tag});`];
        loop.push(`    case ${fi.f.tag}: {`);
        if (tc === true) {
          loop.push(...indent(rd, 3), '      break;', '    }');
        } else {
          loop.push(`      if (${tc}) {`, ...indent(rd, 4), '        break;', '      }', `      ${unknownPush}`, '      break;', '    }');
        }
      }
      loop.push('    default:', `      ${unknownPush}`, '  }');
    }
    loop.push('}');
    body.push(...guard(flexC, loop));
  }
  const props = infos.map((fi) => `${fi.prop}: ${fi.local}`);
  body.push(`const o: ${s.tsName} = {`, ...props.map((p) => `  ${p},`), '};');
  if (hasUnknown) body.push('if (_unknown !== undefined) o.unknownTaggedFields = _unknown;');
  body.push('return o;');
  return [`${exported ? 'export ' : ''}function read${s.tsName}(r: Reader, version: number): ${s.tsName} {`, ...indent(body), '}'];
}
