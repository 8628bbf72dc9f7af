// Writer emission: a `write<Struct>(w, version, m)` per struct, tagged fields in tag order.
import { type Cond, chooseStmts, cond, guard, indent } from './cond.js';
import { defaultExpr, nonDefaultExpr } from './defaults.js';
import { READ_INT } from './reader.js';
import { type Range, parseRange } from './spec.js';
import { type Ctx, type FieldInfo, type Struct, elemType, fieldInfo, flexRange, isArray, isStructType, structOf } from './structs.js';

/** Statements writing the field's input value `v` (maybe undefined) to `wv`. */
function writeStmts(ctx: Ctx, fi: FieldInfo, ctxR: Range, wv: string, v: string): string[] {
  const f = fi.f;
  const t = elemType(f.type);
  const fx = cond(flexRange(ctx, f), ctxR);
  const nl = cond(parseRange(f.nullableVersions), ctxR);
  const d = defaultExpr(ctx, f);
  if (isArray(f)) {
    const elemWrite = (e: string): string => {
      if (isStructType(t)) return `write${structOf(ctx, f).tsName}(${wv}, version, e);`;
      return writeScalar(t, wv, e, fx, false);
    };
    const len = (x: string): string[] => chooseStmts(fx, [`${wv}.compactArrayLength(${x});`], [`${wv}.arrayLength(${x});`]);
    const body = [
      `const a = ${v} === undefined ? ${d} : ${v};`,
      `if (a === null) {`,
      ...indent(chooseStmts(nl, len('-1'), len('0'))),
      '} else {',
      ...indent(len('a.length')),
      `  for (const e of a) ${elemWrite('e')}`,
      '}',
    ];
    // Nullable array with default [] but null given is kept null only where nullable.
    return body;
  }
  if (isStructType(t)) {
    const s = structOf(ctx, f);
    const wr = (x: string) => `write${s.tsName}(${wv}, version, ${x});`;
    const nullableBody = [
      `const s = ${d === 'null' ? `${v} === undefined ? null : ${v}` : `${v} === undefined ? {} : ${v}`};`,
      `if (s === null) {`,
      `  ${wv}.int8(-1);`,
      '} else {',
      `  ${wv}.int8(1);`,
      `  ${wr('s')}`,
      '}',
    ];
    return chooseStmts(nl, nullableBody, [wr(`${v} ?? {}`)]);
  }
  if (t === 'records') {
    const nullV = `${v} === undefined ? null : ${v}`;
    const fxExpr = fx === true ? 'true' : fx === false ? 'false' : fx;
    return chooseStmts(nl, [`${wv}.records(${nullV}, ${fxExpr});`], [`${wv}.records(${v} ?? EMPTY, ${fxExpr});`]);
  }
  if (t === 'string' || t === 'bytes') {
    const nonNullDefault = d === 'null' ? (t === 'string' ? '""' : 'EMPTY') : d;
    return chooseStmts(nl, [writeScalar(t, wv, `${v} === undefined ? ${d} : ${v}`, fx, true)], [writeScalar(t, wv, `${v} ?? ${nonNullDefault}`, fx, false)]);
  }
  return [writeScalar(t, wv, `${v} ?? ${d}`, fx, false)];
}

function writeScalar(t: string, wv: string, val: string, fx: Cond, nullable: boolean): string {
  if (READ_INT[t]) return `${wv}.${READ_INT[t]!.replace('()', '')}(${val});`;
  const kind = t === 'string' ? 'String' : 'Bytes';
  const m = (flex: boolean) => (flex ? `compact${nullable ? 'Nullable' : ''}${kind}` : nullable ? `nullable${kind}` : kind.toLowerCase());
  if (fx === true || fx === false) return `${wv}.${m(fx)}(${val});`;
  return `if (${fx}) { ${wv}.${m(true)}(${val}); } else { ${wv}.${m(false)}(${val}); }`;
}

export function genWrite(ctx: Ctx, s: Struct, exported: boolean): string[] {
  const hull = s.hull!;
  const infos = s.fields.map((f) => fieldInfo(s, f));
  const body: string[] = [];
  for (const fi of infos) {
    if (fi.present === null || fi.tagged !== null) continue;
    const c = cond(fi.present, hull);
    const stmts = writeStmts(ctx, fi, fi.present, 'w', `m.${fi.prop}`);
    if (c === true && stmts.length > 1) body.push('{', ...indent(stmts), '}');
    else body.push(...guard(c, stmts));
  }
  const flexC = cond(ctx.flex, hull);
  if (flexC !== false) {
    const tagged = infos.filter((fi) => fi.tagged !== null).sort((a, b) => a.f.tag! - b.f.tag!);
    let sec: string[];
    if (tagged.length === 0) {
      sec = ['w.unknownTaggedFields(m.unknownTaggedFields);'];
    } else {
      sec = ['const _u = m.unknownTaggedFields;', 'let _n = _u === undefined ? 0 : _u.length;'];
      for (const fi of tagged) {
        const tc = cond(fi.tagged, hull);
        const nd = nonDefaultExpr(ctx, fi.f, `m.${fi.prop}`);
        sec.push(`const _t${fi.f.tag} = ${tc === true ? '' : `${tc} && `}${nd};`, `if (_t${fi.f.tag}) _n++;`);
      }
      sec.push('w.uvarint(_n);', 'let _ui = 0;');
      for (const fi of tagged) {
        const ws = writeStmts(ctx, fi, fi.tagged!, 'tw', `m.${fi.prop}`);
        sec.push(`if (_t${fi.f.tag}) {`, `  _ui = w.unknownTagsBelow(_u, _ui, ${fi.f.tag});`, `  w.tagged(${fi.f.tag}, (tw) => {`, ...indent(ws, 2), '  });', '}');
      }
      sec.push('w.unknownTagsBelow(_u, _ui, Infinity);');
    }
    if (flexC === true) body.push(...sec);
    else body.push(`if (${flexC}) {`, ...indent(sec), '}');
  }
  return [`${exported ? 'export ' : ''}function write${s.tsName}(w: Writer, version: number, m: Input<${s.tsName}>): void {`, ...indent(body), '}'];
}
